package io.meridian.perf.ingest;

import io.meridian.engine.BadInputException;
import io.meridian.matrix.RowBlock;
import io.meridian.stream.ingest.FileRowSpout;
import io.meridian.stream.row.RowFormat;
import java.io.IOException;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The rows of an N-point matrix (uniform random points, {@link FileRowSpout#writeRandomMatrix}) in the wire format,
 * as {@code ./meridian feed --distances} sends them: row {@code id} carries its 16-bit distances to points
 * {@code 0..id-1}, keyed by the id as text. Every stream of the benchmark is made of these rows: ids are point ids, so
 * a row sent again is a replay of the same point, which the row store finds already stored (a duplicate).
 */
public final class RowUniverse {
    private final byte[][] rows;
    private final String[] keys;
    private final long bytes;

    private RowUniverse(byte[][] rows) {
        this.rows = rows;
        this.keys = new String[rows.length];
        long total = 0;
        for (int id = 0; id < rows.length; id++) {
            keys[id] = Integer.toString(id);
            total += rows[id].length;
        }
        this.bytes = total;
    }

    /** The rows of {@code n} random points (seed {@code seed}); the matrix file is written to {@code dir} and deleted. */
    public static RowUniverse random(Path dir, int n, long seed) throws IOException {
        Path file = dir.resolve("matrix.bin");
        FileRowSpout.writeRandomMatrix(file, n, seed);
        RowBlock matrix = RowBlock.mapAll(BadInputException.Input.DISTANCES, file, n, ByteOrder.LITTLE_ENDIAN);
        byte[][] rows = new byte[n][];
        short[] buf = new short[n];
        for (int id = 0; id < n; id++) {
            matrix.copyRow(id, 0, id, buf, 0);
            rows[id] = RowFormat.encodeInt16(id, buf, 0, id, false);
        }
        Files.deleteIfExists(file);
        return new RowUniverse(rows);
    }

    public int n() {
        return rows.length;
    }

    public byte[] row(int id) {
        return rows[id];
    }

    public String key(int id) {
        return keys[id];
    }

    /** Bytes of all N rows on the wire (a pass over the universe). */
    public long passBytes() {
        return bytes;
    }

    public double meanRowBytes() {
        return (double) bytes / rows.length;
    }
}
