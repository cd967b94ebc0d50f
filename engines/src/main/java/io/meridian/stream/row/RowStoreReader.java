package io.meridian.stream.row;

import io.meridian.matrix.LowerRows;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.nio.MappedByteBuffer;
import java.nio.ShortBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * Read-only view of the row stores in a directory while their writers (the row store tasks) keep adding rows: which
 * rows are stored, and a stored row's values, read in place from the mapped block files (see {@link BlockRowStore}
 * for the layout). A row counts as stored once its marker byte is set; the writer stores the values first and fences,
 * this reader reads the marker and fences, so a row seen as stored is seen whole. Block files grow as rows arrive:
 * a block is mapped again, larger, when a stored row lies beyond its current mapping. One reading thread.
 */
public final class RowStoreReader implements LowerRows, AutoCloseable {
    private final Path directory;
    private final int blockRows;
    private final int width;
    private final long rowBytes;
    private final MappedByteBuffer[] present;
    private final ShortBuffer[] rows;
    private final int[] mappedRows;
    /** Each block's marker file, looked for with a stat while it is absent (no exception, no path built per call). */
    private final java.io.File[] markFiles;

    public RowStoreReader(Path directory, int blockRows, int width) {
        if (blockRows < 1 || width < 1) {
            throw new IllegalArgumentException("block rows " + blockRows + " and width " + width + " must be positive");
        }
        this.directory = directory;
        this.blockRows = blockRows;
        this.width = width;
        this.rowBytes = 2L * width;
        int blocks = (width + blockRows - 1) / blockRows;
        this.present = new MappedByteBuffer[blocks];
        this.rows = new ShortBuffer[blocks];
        this.mappedRows = new int[blocks];
        this.markFiles = new java.io.File[blocks];
        for (int b = 0; b < blocks; b++) {
            markFiles[b] = directory.resolve(BlockRowStore.fileBase(b) + ".rows").toFile();
        }
    }

    public Path directory() {
        return directory;
    }

    /** The row capacity: ids are {@code 0 .. width - 1}. */
    public int width() {
        return width;
    }

    public int blockRows() {
        return blockRows;
    }

    /**
     * Whether row {@code id} is stored (and whole). Cheap once its block's marker file exists; before, one stat (an
     * open that failed threw and built its path each time: a map task scanning the ids of its absent blocks spent
     * 65 % of a core on it with no row stored).
     */
    public boolean isStored(int id) {
        int block = id / blockRows;
        MappedByteBuffer marks = present[block];
        if (marks == null) {
            marks = openMarks(block);
            if (marks == null) {
                return false;
            }
        }
        boolean stored = marks.get(id - block * blockRows) == 1;
        VarHandle.acquireFence();
        return stored;
    }

    /** The raw 16-bit entry {@code column} of stored row {@code id} (negative: missing). */
    @Override
    public short get(int id, int column) {
        int block = id / blockRows;
        int local = id - block * blockRows;
        return values(block, local).get(local * width + column);
    }

    /** Copies entries {@code [from, to)} of stored row {@code id} into {@code dst} from 0. Allocates nothing. */
    @Override
    public void copy(int id, int from, int to, short[] dst) {
        int block = id / blockRows;
        int local = id - block * blockRows;
        values(block, local).get(local * width + from, dst, 0, to - from);
    }

    private ShortBuffer values(int block, int local) {
        if (local >= mappedRows[block]) {
            mapValues(block, local + 1);
        }
        return rows[block];
    }

    /** Whether block {@code block} has been created (its marker file exists whole). */
    public boolean hasBlock(int block) {
        return present[block] != null || openMarks(block) != null;
    }

    private MappedByteBuffer openMarks(int block) {
        if (!markFiles[block].exists()) {
            return null;
        }
        Path file = markFiles[block].toPath();
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            if (ch.size() < blockRows) {
                return null; // being created
            }
            present[block] = ch.map(FileChannel.MapMode.READ_ONLY, 0, blockRows);
            return present[block];
        } catch (NoSuchFileException e) {
            return null;
        } catch (IOException e) {
            throw new UncheckedIOException("row store " + file + ": " + e.getMessage(), e);
        }
    }

    /** Maps at least {@code minRows} rows of the block's value file (all the rows the file holds now). */
    private void mapValues(int block, int minRows) {
        Path file = directory.resolve(BlockRowStore.fileBase(block) + ".dist");
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            int fileRows = (int) Math.min(blockRows, ch.size() / rowBytes);
            if (fileRows < minRows) {
                throw new IllegalStateException("row store " + file + " holds " + fileRows + " rows, but row "
                        + (block * blockRows + minRows - 1) + " is marked stored");
            }
            MappedByteBuffer map = ch.map(FileChannel.MapMode.READ_ONLY, 0, fileRows * rowBytes);
            rows[block] = map.order(ByteOrder.LITTLE_ENDIAN).asShortBuffer();
            mappedRows[block] = fileRows;
        } catch (IOException e) {
            throw new UncheckedIOException("row store " + file + ": " + e.getMessage(), e);
        }
    }

    @Override
    public void close() {
        // mapped buffers are released when collected; drop the references so they can be
        java.util.Arrays.fill(present, null);
        java.util.Arrays.fill(rows, null);
        java.util.Arrays.fill(mappedRows, 0);
    }
}
