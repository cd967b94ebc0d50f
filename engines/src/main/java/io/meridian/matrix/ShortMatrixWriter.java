package io.meridian.matrix;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * Writes an N x N SPIDAL 16-bit matrix row by row (rows in order, from 0), through one reused direct buffer.
 * Values are encoded with {@link ShortMatrixFormat#encode}: [0, 1] scaled by 32767, NaN or negative = missing.
 */
public final class ShortMatrixWriter implements AutoCloseable {
    private final FileChannel channel;
    private final int n;
    private final ByteBuffer rowBuffer;
    private int rowsWritten;

    public ShortMatrixWriter(Path file, int n, ByteOrder order) throws IOException {
        if (n <= 0) {
            throw new IllegalArgumentException("n must be positive, got " + n);
        }
        this.channel = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                StandardOpenOption.TRUNCATE_EXISTING);
        this.n = n;
        this.rowBuffer = ByteBuffer.allocateDirect(2 * n).order(order);
    }

    public int rowsWritten() {
        return rowsWritten;
    }

    /** Writes the next row from values in [0, 1] (NaN or negative: missing). */
    public void writeRow(double[] values) throws IOException {
        rowBuffer.clear();
        for (int j = 0; j < n; j++) {
            rowBuffer.putShort(ShortMatrixFormat.encode(values[j]));
        }
        flushRow();
    }

    /** Writes the next row from raw 16-bit entries. */
    public void writeRow(short[] raw) throws IOException {
        rowBuffer.clear();
        for (int j = 0; j < n; j++) {
            rowBuffer.putShort(raw[j]);
        }
        flushRow();
    }

    private void flushRow() throws IOException {
        if (rowsWritten >= n) {
            throw new IllegalStateException("all " + n + " rows are already written");
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
