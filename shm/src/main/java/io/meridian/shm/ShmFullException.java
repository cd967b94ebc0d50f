package io.meridian.shm;

import java.io.IOException;
import java.nio.file.Path;

/**
 * The tmpfs of the transport's queues or the collectives' regions had no room for a file's pages: a reservation at
 * creation failed with ENOSPC, or a write into a mapped page without backing faulted (the JVM turns that SIGBUS into an
 * {@link InternalError}, {@link TmpfsSpace#isMappedWriteFault}). The message names the file system, the bytes, the
 * file, the host and what was free.
 */
public final class ShmFullException extends IOException {
    private static final long serialVersionUID = 1L;

    private final transient Path path;
    private final long bytes;
    private final long freeBytes;

    ShmFullException(String message, Path path, long bytes, long freeBytes, Throwable cause) {
        super(message, cause);
        this.path = path;
        this.bytes = bytes;
        this.freeBytes = freeBytes;
    }

    /** The file that could not have its pages. */
    public Path path() {
        return path;
    }

    /** The bytes asked for (0 when a mapped write faulted: its size is not known). */
    public long bytes() {
        return bytes;
    }

    /** The bytes free on the file system when it failed, -1 if that could not be read. */
    public long freeBytes() {
        return freeBytes;
    }

    /** The {@link ShmFullException} in {@code t}'s causes, or null. */
    public static ShmFullException in(Throwable t) {
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (c instanceof ShmFullException s) {
                return s;
            }
            if (c.getCause() == c) {
                break;
            }
        }
        return null;
    }
}
