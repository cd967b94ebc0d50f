package io.meridian.stream.ingest;

import io.meridian.config.MeridianConfig;
import io.meridian.engine.BadInputException;
import io.meridian.matrix.LowerRows;
import io.meridian.matrix.RowBlock;
import io.meridian.matrix.ShortMatrixWriter;
import io.meridian.matrix.TriangleFile;
import io.meridian.stream.WorkingDirectories;
import io.meridian.stream.row.RowFormat;
import io.meridian.synthetic.GeneratedRows;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayDeque;
import java.util.Map;
import org.apache.storm.spout.SpoutOutputCollector;
import org.apache.storm.task.TopologyContext;
import org.apache.storm.topology.OutputFieldsDeclarer;
import org.apache.storm.topology.base.BaseRichSpout;
import org.apache.storm.tuple.Values;

/**
 * The row source of {@code ./meridian local}: the lower-triangle rows of a 16-bit N x N matrix file, in id order, as the
 * same encoded values Kafka would carry, with {@code ingest.local.badRows} bad rows mixed in; a file named
 * {@code *.tri} holds only the lower triangle ({@link TriangleFile}). Without
 * {@code ingest.local.distances} (an N x N file, N = {@code ingest.local.n}) the rows are those of N uniform random
 * points ({@link GeneratedRows}, seed {@code ingest.local.seed}), computed from the points as they are emitted: no
 * file is written (the N x N file it wrote before was 2 GB at N = 32,768). Failed rows are emitted again; once every
 * row is acked it writes {@code <output>/source.done} (emitted and acked counts). Run it with parallelism 1.
 */
public final class FileRowSpout extends BaseRichSpout {
    private static final long serialVersionUID = 1L;
    public static final String DONE_FILE = "source.done";
    /** A file of {@code ingest.local.distances} named so holds the lower triangle, not the N x N matrix. */
    public static final String TRIANGLE_SUFFIX = ".tri";

    private transient SpoutOutputCollector collector;
    private transient LowerRows rows;
    /** The triangle file {@link #rows} reads, unmapped by {@link #close()}; null for a square file or no file. */
    private transient TriangleFile triangle;
    private transient int n;
    private transient int badRows;
    private transient int total;
    private transient int next;
    private transient int acked;
    private transient ArrayDeque<Integer> retry;
    private transient short[] rowBuffer;
    private transient Path output;
    private transient String sourcePrefix;
    private transient boolean doneWritten;

    @Override
    public void open(Map<String, Object> conf, TopologyContext context, SpoutOutputCollector collector) {
        this.collector = collector;
        MeridianConfig config = MeridianConfig.parse((String) conf.get(IngestStreams.CONFIG_KEY), "topology config");
        MeridianConfig.LocalSource local = config.ingest().local();
        this.output = local.output();
        try {
            WorkingDirectories.create(output, "ingest.local.output");
            Files.deleteIfExists(output.resolve(DONE_FILE));
            Path file = local.distances();
            this.n = local.n();
            String source = file == null ? n + " generated points (seed " + local.seed() + ")" : file.toString();
            if (n > config.ingest().maxPoints()) {
                throw new IllegalStateException(source + ": " + n + " points, more than ingest.maxPoints ("
                        + config.ingest().maxPoints() + ")");
            }
            this.rows = file == null ? GeneratedRows.uniform(n, local.seed()) : mapRows(file, n);
            this.sourcePrefix = source + "#";
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        this.badRows = local.badRows();
        this.nanosPerRow = local.rate() > 0 ? 1_000_000_000L / local.rate() : 0;
        this.started = System.nanoTime();
        this.total = n + badRows;
        this.retry = new ArrayDeque<>();
        this.rowBuffer = new short[n];
    }

    /**
     * The rows of {@code file}: a lower triangle ({@link TriangleFile}) when its name ends in {@value #TRIANGLE_SUFFIX}
     * (as {@code gen --layout triangle} writes it), else the N x N matrix; mapped, read in place.
     */
    private LowerRows mapRows(Path file, int points) {
        if (file.getFileName().toString().endsWith(TRIANGLE_SUFFIX)) {
            triangle = new TriangleFile(file, points);
            return triangle;
        }
        return LowerRows.of(RowBlock.mapAll(BadInputException.Input.DISTANCES, file, points, ByteOrder.LITTLE_ENDIAN));
    }

    @Override
    public void close() {
        if (triangle != null) {
            triangle.close();
        }
    }

    /**
     * Writes the 16-bit N x N matrix of {@link GeneratedRows#uniform} (what this source emits without a file), for
     * tests and benchmarks that need the rows as a file; this source itself writes none.
     */
    public static void writeRandomMatrix(Path file, int n, long seed) throws IOException {
        GeneratedRows points = GeneratedRows.uniform(n, seed);
        Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
        double[] row = new double[n];
        try (ShortMatrixWriter writer = new ShortMatrixWriter(tmp, n, ByteOrder.LITTLE_ENDIAN)) {
            for (int i = 0; i < n; i++) {
                for (int j = 0; j < n; j++) {
                    row[j] = points.value(i, j);
                }
                writer.writeRow(row);
            }
        }
        Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }

    /** {@code ingest.local.rate}: rows per second, 0 for as fast as the topology takes them. */
    private long nanosPerRow;
    private long started;

    @Override
    public void nextTuple() {
        int index;
        if (!retry.isEmpty()) {
            index = retry.poll();
        } else if (next < total) {
            if (nanosPerRow > 0) {
                long due = started + next * nanosPerRow;
                if (System.nanoTime() < due) {
                    return; // paced: Storm's spout wait strategy idles until the next call
                }
            }
            index = next++;
        } else {
            return;
        }
        RowBatch row = new RowBatch(1); // one row per tuple: the file source paces rows one by one
        row.add(encode(index), System.currentTimeMillis(), sourcePrefix, index);
        collector.emit(new Values(row), index);
    }

    /** Emission index -> row: bad row number k sits after valid row (k+1)*n/(badRows+1). */
    private byte[] encode(int index) {
        int validBefore = 0;
        int bad = -1;
        if (badRows > 0) {
            // emission order: valid rows with bad ones spread evenly; index = id + number of bad rows emitted before it
            long period = (long) n + badRows;
            for (int k = 0; k < badRows; k++) {
                long at = (k + 1) * period / (badRows + 1);
                if (at == index) {
                    bad = k;
                    break;
                }
                if (at < index) {
                    validBefore++;
                }
            }
        }
        if (bad >= 0) {
            return badRow(bad, Math.max(1, Math.min(n - 1, index - validBefore)));
        }
        int id = index - validBefore;
        rows.copy(id, 0, id, rowBuffer);
        return RowFormat.encodeInt16(id, rowBuffer, 0, id, false);
    }

    private byte[] badRow(int k, int id) {
        float[] d = new float[id];
        java.util.Arrays.fill(d, 0.5f);
        switch (k % 6) {
            case 0: d[id / 2] = Float.NaN; return RowFormat.encodeFloat32(id, d, id, null, false);
            case 1: d[0] = -0.25f; return RowFormat.encodeFloat32(id, d, id, null, false);
            case 2: return RowFormat.encodeFloat32(id, d, id - 1, null, false);
            case 3: return "not a row".getBytes(StandardCharsets.UTF_8);
            case 4: d[id - 1] = 1.5f; return RowFormat.encodeFloat32(id, d, id, null, false);
            default: return RowFormat.encodeFloat32(-id, new float[0], 0, null, false);
        }
    }

    @Override
    public void ack(Object msgId) {
        acked++;
        if (acked == total && !doneWritten) {
            doneWritten = true;
            try {
                Path tmp = output.resolve(DONE_FILE + ".tmp");
                Files.writeString(tmp, "rows=" + total + "\nvalid=" + n + "\nbad=" + badRows + "\n");
                Files.move(tmp, output.resolve(DONE_FILE), StandardCopyOption.ATOMIC_MOVE);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }

    @Override
    public void fail(Object msgId) {
        retry.add((Integer) msgId);
    }

    @Override
    public void declareOutputFields(OutputFieldsDeclarer declarer) {
        declarer.declare(IngestStreams.SOURCE_FIELDS);
    }
}
