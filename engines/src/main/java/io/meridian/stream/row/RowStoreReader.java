package io.meridian.stream.row;

import io.meridian.matrix.LowerRows;
import io.meridian.shm.FileMapping;
import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.invoke.VarHandle;
import java.nio.MappedByteBuffer;
import java.nio.ShortBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.function.IntPredicate;

/**
 * Read-only view of the row stores in a directory while their writers (the row store tasks) keep adding rows: which
 * rows are stored, and a stored row's lower-triangle values, read in place from the mapped block files
 * ({@link RowStoreLayout}). A row counts as stored once its marker byte is set; the writer stores the values first and
 * fences, this reader reads the marker and fences, so a row seen as stored is seen whole.
 *
 * <p>Each block is mapped once, when its marker file first appears whole, at its final size (the value files are
 * sized for the whole block from their creation): no block is ever remapped as the store grows, so the mappings are
 * two per block, each owned by this reader and unmapped by {@link #close()}. Any number of threads may read; the
 * first to need a block maps it.
 */
public final class RowStoreReader implements LowerRows, AutoCloseable {
    private final Path directory;
    private final int blockRows;
    private final int capacity;
    private final AtomicReferenceArray<MappedBlock> blocks;
    /** Each block's marker file, looked for with a stat while it is absent (no exception, no path built per call). */
    private final File[] markerFiles;
    private volatile boolean closed;
    /** {@link #releaseBelow}'s cursor: every block below it has been released or kept. */
    private int releasedBelowBlock;

    /** One block's mappings; final fields, so a block seen through the array is seen whole by any thread. */
    private record MappedBlock(FileMapping markerMapping, FileMapping valueMapping, MappedByteBuffer markers,
                               ShortBuffer values) {
    }

    public RowStoreReader(Path directory, int blockRows, int capacity) {
        if (blockRows < 1 || capacity < 1) {
            throw new IllegalArgumentException("block rows " + blockRows + " and capacity " + capacity
                    + " must be positive");
        }
        this.directory = directory;
        this.blockRows = blockRows;
        this.capacity = capacity;
        int count = (capacity + blockRows - 1) / blockRows;
        this.blocks = new AtomicReferenceArray<>(count);
        this.markerFiles = new File[count];
    }

    public Path directory() {
        return directory;
    }

    /** The most points: ids are {@code 0 .. capacity - 1}. */
    public int capacity() {
        return capacity;
    }

    public int blockRows() {
        return blockRows;
    }

    /**
     * Whether row {@code id} is stored (and whole). Cheap once its block's marker file exists; before, one stat (an
     * open that failed threw and built its path each time: a map task scanning the ids of its absent blocks spent
     * 65 % of a core on it with no row stored).
     */
    @Override
    public boolean isStored(int id) {
        int block = id / blockRows;
        MappedBlock b = blocks.getPlain(block);
        if (b == null) {
            b = open(block);
            if (b == null) {
                return false;
            }
        }
        boolean stored = b.markers.get(id - block * blockRows) == 1;
        VarHandle.acquireFence();
        return stored;
    }

    /** The raw 16-bit entry {@code column} ({@code < id}) of stored row {@code id} (negative: missing). */
    @Override
    public short get(int id, int column) {
        return block(id).values.get((int) RowStoreLayout.rowOffset(id, blockRows) + column);
    }

    /** Copies entries {@code [from, to)} ({@code to <= id}) of stored row {@code id} into {@code dst} from 0. */
    @Override
    public void copy(int id, int from, int to, short[] dst) {
        block(id).values.get((int) RowStoreLayout.rowOffset(id, blockRows) + from, dst, 0, to - from);
    }

    private MappedBlock block(int id) {
        int block = id / blockRows;
        MappedBlock b = blocks.getPlain(block);
        if (b == null) {
            b = open(block);
            if (b == null) {
                throw new IllegalStateException("row store " + directory + ": row " + id + " read before its block "
                        + RowStoreLayout.fileBase(block) + " exists");
            }
        }
        return b;
    }

    /** Whether block {@code block} has been created (its marker file exists whole). */
    public boolean hasBlock(int block) {
        return blocks.getPlain(block) != null || open(block) != null;
    }

    /** Maps block {@code block} if its files are there; null if not (yet). */
    private synchronized MappedBlock open(int block) {
        if (closed) {
            throw new IllegalStateException("row store reader of " + directory + " used after close");
        }
        MappedBlock b = blocks.get(block);
        if (b != null) {
            return b;
        }
        File markerFile = markerFiles[block];
        if (markerFile == null) { // made on first use: a reader of capacity 1,000,000 has 3,907 blocks of 256 rows
            markerFile = directory.resolve(RowStoreLayout.fileBase(block) + RowStoreLayout.MARKERS).toFile();
            markerFiles[block] = markerFile;
        }
        if (!markerFile.exists()) {
            return null;
        }
        Path markerPath = markerFile.toPath();
        Path valuePath = directory.resolve(RowStoreLayout.fileBase(block) + RowStoreLayout.VALUES);
        FileMapping markerMapping = null;
        try (FileChannel markerChannel = FileChannel.open(markerPath, StandardOpenOption.READ)) {
            if (markerChannel.size() < blockRows) {
                return null; // not a whole block: the writer renames marker files into place whole
            }
            long valueBytes = 2 * RowStoreLayout.blockValues(block, blockRows);
            try (FileChannel valueChannel = FileChannel.open(valuePath, StandardOpenOption.READ)) {
                if (valueChannel.size() != valueBytes) {
                    throw new IllegalStateException("row store " + valuePath + " has " + valueChannel.size()
                            + " bytes, not the " + valueBytes + " of a block of " + blockRows + " rows (another"
                            + " ingest.rowStore.blockRows?)");
                }
                markerMapping = FileMapping.map(markerChannel, FileChannel.MapMode.READ_ONLY, 0, blockRows);
                FileMapping valueMapping = FileMapping.map(valueChannel, FileChannel.MapMode.READ_ONLY, 0, valueBytes);
                b = new MappedBlock(markerMapping, valueMapping, markerMapping.buffer(),
                        valueMapping.buffer().asShortBuffer());
            }
            blocks.set(block, b);
            return b;
        } catch (NoSuchFileException e) {
            if (markerMapping != null) {
                markerMapping.close();
            }
            if (e.getFile() != null && e.getFile().endsWith(RowStoreLayout.VALUES)) {
                refuseSquare(block, e);
            }
            return null;
        } catch (IOException e) {
            throw new UncheckedIOException("row store " + markerPath + ": " + e.getMessage(), e);
        }
    }

    /** A marker file without its triangle value file: a store of the square layout, or a broken one. */
    private void refuseSquare(int block, NoSuchFileException e) {
        try {
            RowStores.refuseSquareLayout(directory);
        } catch (IOException io) {
            throw new UncheckedIOException(io);
        }
        throw new IllegalStateException("row store " + directory + ": block " + RowStoreLayout.fileBase(block)
                + " has its marker file but no " + RowStoreLayout.VALUES + " file", e);
    }

    /**
     * Unmaps block {@code block} if it is mapped (its rows are no longer wanted here): a block whose files were deleted
     * keeps its disk space while any mapping of it lives. Only while no other thread reads that block through this
     * reader (a read of an unmapped block is a crash of the JVM); a later read maps the block again if its files are
     * still there. True if it was mapped.
     */
    public synchronized boolean release(int block) {
        MappedBlock b = blocks.getAndSet(block, null);
        if (b == null) {
            return false;
        }
        b.markerMapping.close();
        b.valueMapping.close();
        return true;
    }

    /**
     * Releases ({@link #release}) the blocks whose every row is below {@code id} and that {@code keep} does not hold,
     * each at most once: {@code id} is a bound that never falls, so the blocks below the last call's are not looked at
     * again. The same condition as {@link #release}: no other thread reads those blocks through this reader. Returns
     * the blocks unmapped.
     */
    public synchronized int releaseBelow(int id, IntPredicate keep) {
        int released = 0;
        for (; (releasedBelowBlock + 1L) * blockRows <= Math.min(id, capacity); releasedBelowBlock++) {
            if (!keep.test(releasedBelowBlock) && release(releasedBelowBlock)) {
                released++;
            }
        }
        return released;
    }

    /**
     * Unmaps every block. Only once no thread reads through this reader any more: a read after it is a crash of the
     * JVM, not an exception (mapping a block afterwards fails with one).
     */
    @Override
    public synchronized void close() {
        closed = true;
        for (int b = 0; b < blocks.length(); b++) {
            MappedBlock block = blocks.getAndSet(b, null);
            if (block != null) {
                block.markerMapping.close();
                block.valueMapping.close();
            }
        }
    }
}
