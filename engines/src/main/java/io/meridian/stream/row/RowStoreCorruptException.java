package io.meridian.stream.row;

import java.nio.file.Path;

/**
 * A row store file that is not what the store wrote: a value or marker file of the wrong size (truncated), or a marker
 * byte that is neither 0 (not stored) nor 1 (stored). Found when a block is opened for writing (a row store task's
 * start); the block is refused, never read as data. The message names the file and what is wrong, and how to recover.
 */
public final class RowStoreCorruptException extends IllegalStateException {
    private static final long serialVersionUID = 1L;

    private final transient Path file;

    RowStoreCorruptException(Path file, int block, int blockRows, String what) {
        super("row store " + file + " is corrupt: " + what + "; its block " + block + " holds rows "
                + (long) block * blockRows + ".." + ((long) (block + 1) * blockRows - 1) + ": restore the block's files"
                + " (" + RowStoreLayout.fileBase(block) + ".*) from a copy, or remove them and feed those rows again"
                + " (./meridian feed --from)");
        this.file = file;
    }

    public Path file() {
        return file;
    }
}
