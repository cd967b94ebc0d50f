package io.meridian.stream.row;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.function.IntPredicate;

/**
 * The row blocks one writer owns in a directory: point {@code id} lives in block {@code id / blockRows}. Blocks are
 * opened when their first row arrives, or at start for blocks already on disk that {@code owned} accepts (so a
 * restarted task knows what it stored before).
 */
public final class RowStores implements AutoCloseable {
    private final Path directory;
    private final int blockRows;
    private final BlockRowStore[] blocks;
    private final RowImage image = new RowImage();
    private int highestId = -1;

    /**
     * @param capacity the most points, {@code ingest.maxPoints}: ids are {@code 0 .. capacity - 1}; it costs one
     *                 reference per block until rows arrive
     */
    public RowStores(Path directory, int blockRows, int capacity, IntPredicate owned) {
        this.directory = directory;
        this.blockRows = blockRows;
        this.blocks = new BlockRowStore[(capacity + blockRows - 1) / blockRows];
        try {
            Files.createDirectories(directory);
            refuseSquareLayout(directory);
            try (DirectoryStream<Path> files =
                         Files.newDirectoryStream(directory, "block-*" + RowStoreLayout.MARKERS)) {
                for (Path f : files) {
                    String name = f.getFileName().toString();
                    int block = Integer.parseInt(name.substring(6, name.length() - RowStoreLayout.MARKERS.length()));
                    if (block < blocks.length && owned.test(block)) {
                        open(block);
                    }
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("row store directory " + directory + ": " + e.getMessage(), e);
        }
    }

    /**
     * Refuses a directory that holds a store of the square layout (rows of {@code ingest.maxPoints} values, Meridian
     * before the triangle store): its marker files look the same, and its rows would be read as other rows.
     */
    public static void refuseSquareLayout(Path directory) throws IOException {
        try (DirectoryStream<Path> old =
                     Files.newDirectoryStream(directory, "block-*" + RowStoreLayout.SQUARE_VALUES)) {
            for (Path f : old) {
                throw new IllegalStateException("row store " + directory + " holds " + f.getFileName() + ": rows of the"
                        + " square layout of an older Meridian, which this one does not read (it stores the lower"
                        + " triangle, block-NNNNNN" + RowStoreLayout.VALUES + "); ingest the rows again into an empty"
                        + " ingest.rowStore.directory, or remove this one");
            }
        }
    }

    public int blockOf(int id) {
        return id / blockRows;
    }

    /** The highest id stored in the blocks this writer has opened, or -1. */
    public int highestId() {
        return highestId;
    }

    public Path directory() {
        return directory;
    }

    public BlockRowStore.Outcome store(DistanceRow row) {
        BlockRowStore.Outcome outcome = block(blockOf(row.id())).store(row, image);
        if (outcome == BlockRowStore.Outcome.STORED && row.id() > highestId) {
            highestId = row.id();
        }
        return outcome;
    }

    public BlockRowStore block(int block) {
        BlockRowStore b = blocks[block];
        return b != null ? b : open(block);
    }

    /**
     * Drops block {@code block}: unmaps it and deletes its files (the marker file first, so a reader no longer finds
     * the block before its values go). For a copy of rows kept only for a while (the mirror on the publishing task's
     * host, {@code MapLayout#mirrorStore}); a row of the block stored afterwards makes it anew. True if the block
     * was there.
     */
    public boolean drop(int block) {
        BlockRowStore b = blocks[block];
        blocks[block] = null;
        if (b != null) {
            b.close();
        }
        String base = RowStoreLayout.fileBase(block);
        try {
            boolean present = Files.deleteIfExists(directory.resolve(base + RowStoreLayout.MARKERS));
            present |= Files.deleteIfExists(directory.resolve(base + RowStoreLayout.VALUES));
            present |= Files.deleteIfExists(directory.resolve(base + RowStoreLayout.WEIGHTS));
            return present || b != null;
        } catch (IOException e) {
            throw new UncheckedIOException("row store " + directory + ": cannot drop block " + base + ": "
                    + e.getMessage(), e);
        }
    }

    /** Whether block {@code block} is open for writing here. */
    public boolean holds(int block) {
        return blocks[block] != null;
    }

    public long storedRows() {
        long n = 0;
        for (BlockRowStore b : blocks) {
            if (b != null) {
                n += b.storedRows();
            }
        }
        return n;
    }

    public void force() {
        for (BlockRowStore b : blocks) {
            if (b != null) {
                b.force();
            }
        }
    }

    private BlockRowStore open(int block) {
        BlockRowStore b = new BlockRowStore(directory, block, blockRows);
        blocks[block] = b;
        highestId = Math.max(highestId, b.highestId());
        return b;
    }

    @Override
    public void close() {
        for (BlockRowStore b : blocks) {
            if (b != null) {
                b.close();
            }
        }
    }
}
