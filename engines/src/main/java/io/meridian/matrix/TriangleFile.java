package io.meridian.matrix;

import io.meridian.engine.BadInputException;
import io.meridian.engine.BadInputException.Input;
import io.meridian.shm.FileMapping;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ShortBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;

/**
 * The lower triangle of a distance matrix in one file, read in place: rows 1, 2, ... back to back, row i its i
 * values d(i, j), j &lt; i, 16-bit little-endian (value / 32767, negative: missing), no header. It is what the row
 * stores' value files ({@code block-NNNNNN.tri}) give when concatenated in block order: a triangle of M points, M the
 * blocks' rows, of which the first N are read. Mapped read-only in chunks of whole rows below 1 GiB (a mapping holds
 * at most 2 GiB); {@link #close()} unmaps them.
 */
public final class TriangleFile implements LowerRows, AutoCloseable {
    private static final long CHUNK_BYTES = 1L << 30;

    private final Path file;
    private final int n;
    private final List<FileMapping> mappings = new ArrayList<>();
    /** Per chunk: its first row, and its values as 16-bit entries from that row's first value. */
    private final int[] chunkRows;
    private final ShortBuffer[] chunks;

    /** The bytes of the lower triangle of {@code points} points: points (points - 1) / 2 values of 2 bytes. */
    public static long bytes(long points) {
        return points * (points - 1);
    }

    /**
     * Maps points {@code 0 .. n-1} of the triangle in {@code file}; a file that is not the triangle of some number of
     * points, or of fewer than n, is a {@link BadInputException} naming its size and the expected one.
     */
    public TriangleFile(Path file, int n) {
        this.file = file;
        this.n = n;
        long size;
        try {
            size = Files.size(file);
        } catch (IOException e) {
            throw new BadInputException(Input.DISTANCES, file, "cannot read " + file + ": " + e.getMessage());
        }
        long points = (long) Math.floor((1 + Math.sqrt(1 + 4.0 * size)) / 2);
        while (bytes(points) > size) {
            points--;
        }
        while (bytes(points + 1) <= size) {
            points++;
        }
        if (bytes(points) != size || points < n) {
            throw new BadInputException(Input.DISTANCES, file, file + " has " + size + " bytes, not the lower triangle"
                    + " of N = " + n + " points (" + bytes(n) + " bytes: rows 1.." + (n - 1) + " of i 16-bit values"
                    + " each) or of more points");
        }
        List<Integer> firstRows = new ArrayList<>();
        List<ShortBuffer> buffers = new ArrayList<>();
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ)) {
            int row = 1;
            while (row < n) {
                int end = row + 1;
                while (end < n && 2 * (valuesBefore(end + 1) - valuesBefore(row)) <= CHUNK_BYTES) {
                    end++;
                }
                long offset = 2 * valuesBefore(row);
                FileMapping mapping = FileMapping.map(channel, FileChannel.MapMode.READ_ONLY, offset,
                        2 * valuesBefore(end) - offset);
                mappings.add(mapping);
                firstRows.add(row);
                buffers.add(mapping.buffer().asShortBuffer());
                row = end;
            }
        } catch (IOException e) {
            close();
            throw new UncheckedIOException("cannot map " + file + ": " + e.getMessage(), e);
        }
        this.chunkRows = firstRows.stream().mapToInt(Integer::intValue).toArray();
        this.chunks = buffers.toArray(new ShortBuffer[0]);
    }

    private static long valuesBefore(int row) {
        return (long) row * (row - 1) / 2;
    }

    public Path file() {
        return file;
    }

    public int n() {
        return n;
    }

    private int chunkOf(int id) {
        int c = chunks.length - 1;
        while (chunkRows[c] > id) {
            c--;
        }
        return c;
    }

    @Override
    public void copy(int id, int from, int to, short[] dst) {
        if (to == from) {
            return; // row 0 lies in no chunk
        }
        int c = chunkOf(id);
        chunks[c].get((int) (valuesBefore(id) - valuesBefore(chunkRows[c])) + from, dst, 0, to - from);
    }

    @Override
    public short get(int id, int column) {
        int c = chunkOf(id);
        return chunks[c].get((int) (valuesBefore(id) - valuesBefore(chunkRows[c])) + column);
    }

    /** Unmaps the file; no read may follow. */
    @Override
    public void close() {
        for (FileMapping mapping : mappings) {
            mapping.close();
        }
        mappings.clear();
    }
}
