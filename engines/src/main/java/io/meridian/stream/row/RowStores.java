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
    private final int width;
    private final BlockRowStore[] blocks;
    private final RowImage image;
    private int highestId = -1;

    /** @param width the row width, i.e. the universe capacity {@code ingest.maxPoints} */
    public RowStores(Path directory, int blockRows, int width, IntPredicate owned) {
        this.directory = directory;
        this.blockRows = blockRows;
        this.width = width;
        this.blocks = new BlockRowStore[(width + blockRows - 1) / blockRows];
        this.image = new RowImage(width);
        try {
            Files.createDirectories(directory);
            try (DirectoryStream<Path> files = Files.newDirectoryStream(directory, "block-*.dist")) {
                for (Path f : files) {
                    String name = f.getFileName().toString();
                    int block = Integer.parseInt(name.substring(6, name.length() - 5));
                    if (block < blocks.length && owned.test(block)) {
                        open(block);
                    }
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("row store directory " + directory + ": " + e.getMessage(), e);
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
        BlockRowStore b = new BlockRowStore(directory, block, blockRows, width);
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
