package io.meridian.perf.ingest;

import io.meridian.stream.row.RowFormat;
import io.meridian.synthetic.GeneratedRows;
import java.util.SplittableRandom;

/**
 * The rows of an N-point matrix (uniform random points, {@link GeneratedRows}: the file source's rows) in the wire
 * format, as {@code ./meridian feed --distances} sends them: row {@code id} carries its 16-bit distances to points
 * {@code 0..id-1}, keyed by the id as text. Every stream of the benchmark is made of these rows: ids are point ids, so
 * a row sent again is a replay of the same point, which the row store finds already stored (a duplicate).
 */
public final class RowUniverse {
    private final byte[][] rows;
    private final String[] keys;
    private final long bytes;
    private final int firstId;

    private RowUniverse(byte[][] rows, int firstId) {
        this.rows = rows;
        this.firstId = firstId;
        this.keys = new String[rows.length];
        long total = 0;
        for (int i = 0; i < rows.length; i++) {
            keys[i] = Integer.toString(firstId + i);
            total += rows[i].length;
        }
        this.bytes = total;
    }

    /** The rows of {@code n} random points (seed {@code seed}), computed from the points: no matrix file. */
    public static RowUniverse random(int n, long seed) {
        GeneratedRows points = GeneratedRows.uniform(n, seed);
        byte[][] rows = new byte[n][];
        short[] buf = new short[n];
        for (int id = 0; id < n; id++) {
            points.copy(id, 0, id, buf);
            rows[id] = RowFormat.encodeInt16(id, buf, 0, id, false);
        }
        return new RowUniverse(rows, 0);
    }

    /**
     * Wide rows: the rows of points {@code width .. width + n - 1} of a larger matrix, each with its 16-bit distances
     * (random, 0..1 on the matrix scale) to every point before it, so about {@code width} distances ({@code 2 x width}
     * bytes) each, as {@code ./meridian feed --distances --from width} sends them.
     */
    public static RowUniverse wide(int n, int width, long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        byte[][] rows = new byte[n][];
        short[] buf = new short[width + n];
        for (int i = 0; i < n; i++) {
            int id = width + i;
            for (int j = 0; j < id; j++) {
                buf[j] = (short) random.nextInt(RowFormat.SCALE + 1);
            }
            rows[i] = RowFormat.encodeInt16(id, buf, 0, id, false);
        }
        return new RowUniverse(rows, width);
    }

    /** Rows in the universe; the {@code i}-th ({@code 0 <= i < n}) is the row of point {@link #id}{@code (i)}. */
    public int n() {
        return rows.length;
    }

    /** The point id of the {@code i}-th row. */
    public int id(int i) {
        return firstId + i;
    }

    /** The {@code ingest.maxPoints} the rows need: one more than the last point's id. */
    public int maxPoints() {
        return firstId + rows.length;
    }

    /** The {@code i}-th row's bytes on the wire. */
    public byte[] row(int i) {
        return rows[i];
    }

    /** The {@code i}-th row's Kafka key: its id as text. */
    public String key(int i) {
        return keys[i];
    }

    /** Bytes of all N rows on the wire (a pass over the universe). */
    public long passBytes() {
        return bytes;
    }

    public double meanRowBytes() {
        return (double) bytes / rows.length;
    }
}
