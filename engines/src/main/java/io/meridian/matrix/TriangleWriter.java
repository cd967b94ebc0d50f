package io.meridian.matrix;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * Writes a {@link TriangleFile} of N points row by row (rows in order, from 0; row i holds its i values d(i, j),
 * j &lt; i, so row 0 holds none), 16-bit little-endian, through one reused direct buffer. Values are encoded with
 * {@link ShortMatrixFormat#encode}: [0, 1] scaled by 32767, NaN or negative = missing.
 */
public final class TriangleWriter implements AutoCloseable {
    private final FileChannel channel;
    private final int n;
    private final ByteBuffer rowBuffer;
    private int rowsWritten;

    public TriangleWriter(Path file, int n) throws IOException {
        if (n <= 0) {
            throw new IllegalArgumentException("n must be positive, got " + n);
        }
        this.channel = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                StandardOpenOption.TRUNCATE_EXISTING);
        this.n = n;
        this.rowBuffer = ByteBuffer.allocateDirect(2 * Math.max(1, n - 1)).order(ByteOrder.LITTLE_ENDIAN);
    }

    public int rowsWritten() {
        return rowsWritten;
    }

    /** Writes the next row, row i, from {@code values[0 .. i)} in [0, 1] (NaN or negative: missing). */
    public void writeRow(double[] values) throws IOException {
        if (rowsWritten >= n) {
            throw new IllegalStateException("all " + n + " rows are already written");
        }
        rowBuffer.clear();
        for (int j = 0; j < rowsWritten; j++) {
            rowBuffer.putShort(ShortMatrixFormat.encode(values[j]));
        }
        rowBuffer.flip();
        while (rowBuffer.hasRemaining()) {
            channel.write(rowBuffer);
        }
        rowsWritten++;
    }

    @Override
    public void close() throws IOException {
        channel.close();
    }
}
