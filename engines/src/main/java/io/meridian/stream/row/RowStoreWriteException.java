package io.meridian.stream.row;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;

/**
 * A row could not be written to its row store file (a full disk, most often): the row is not stored (its marker is
 * not set, so nothing reads what part of it reached the file), and storing it again once the cause is gone stores it
 * whole. The message names the file and the operating system's reason.
 */
public final class RowStoreWriteException extends UncheckedIOException {
    private static final long serialVersionUID = 1L;

    private final transient Path file;

    RowStoreWriteException(Path file, String what, IOException cause) {
        super("row store " + file + ": " + what + ": " + cause.getMessage(), cause);
        this.file = file;
    }

    /** The file that could not be written. */
    public Path file() {
        return file;
    }
}
