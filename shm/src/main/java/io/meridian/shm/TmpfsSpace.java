package io.meridian.shm;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.FileStore;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Room on the tmpfs of the transport's queues and the collectives' regions. A write into a mapped tmpfs page that the
 * file system cannot back is a SIGBUS, which the JVM delivers as an {@link InternalError} ("a fault occurred in a
 * recent unsafe memory access operation") on whatever thread wrote, possibly a Storm executor's, whose uncaught Error
 * halts the worker: full tmpfs became a worker crash loop. {@link #reserve} allocates a fresh file's pages with
 * ordinary writes before it is mapped, so a full tmpfs is an {@link ShmFullException} at creation instead; a write
 * fault later (a sparse area that grows with the data, a queue's next cycle) is recognised by
 * {@link #isMappedWriteFault} and named by {@link #fault}.
 */
public final class TmpfsSpace {
    /** Reserving writes this many zero bytes at a time (one direct buffer per call: creation only, never hot). */
    private static final int CHUNK = 1 << 16;
    private static final String HOST = hostName();

    private TmpfsSpace() {
    }

    /**
     * Allocates the pages of {@code [offset, offset + bytes)} of a file just created (the range must hold no data: it
     * is written with zeros) by writing through the channel, so that later writes through a mapping never fault.
     *
     * @throws ShmFullException naming the file system, the bytes, the file, the host and the free bytes
     */
    public static void reserve(FileChannel channel, Path path, long offset, long bytes) throws IOException {
        ByteBuffer zeros = ByteBuffer.allocateDirect((int) Math.min(CHUNK, Math.max(bytes, 1)));
        long sizeBefore = channel.size();
        long at = offset;
        long end = offset + bytes;
        try {
            while (at < end) {
                zeros.clear().limit((int) Math.min(zeros.capacity(), end - at));
                at += channel.write(zeros, at);
            }
        } catch (IOException e) {
            // ENOSPC by its text, or by the free space when the text is another locale's (strerror follows LANG)
            long free = freeBytes(path);
            if (!isNoSpace(e) && (free < 0 || free >= end - at)) {
                throw e;
            }
            // give back what was reserved: a refused 64 MiB ring left 60 MiB written and the tmpfs full for good
            channel.truncate(Math.max(sizeBefore, offset));
            throw full(path, bytes, e);
        }
    }

    /** The exception for a reservation of {@code bytes} for {@code path} that the file system refused. */
    public static ShmFullException full(Path path, long bytes, Throwable cause) {
        long free = freeBytes(path);
        return new ShmFullException(mountOf(path) + " full: cannot reserve " + bytes + " bytes for " + path + " (host "
                + HOST + "): free " + free + " bytes", path, bytes, free, cause);
    }

    /** The exception for a write into {@code path}'s mapping that faulted (the page could not be backed). */
    public static ShmFullException fault(Path path, Throwable cause) {
        long free = freeBytes(path);
        return new ShmFullException(mountOf(path) + " full: a write into " + path + " faulted, its page could not be"
                + " backed (host " + HOST + "): free " + free + " bytes", path, 0, free, cause);
    }

    /** True for the {@link InternalError} the JVM raises for a SIGBUS in a write to mapped memory. */
    public static boolean isMappedWriteFault(Throwable t) {
        return t instanceof InternalError && t.getMessage() != null
                && t.getMessage().contains("fault occurred in") && t.getMessage().contains("unsafe memory access");
    }

    /** True when {@code e} (or a cause) is ENOSPC. */
    public static boolean isNoSpace(Throwable e) {
        for (Throwable c = e; c != null; c = c.getCause()) {
            if (c instanceof ShmFullException || (c.getMessage() != null
                    && c.getMessage().contains("No space left on device"))) {
                return true;
            }
            if (c.getCause() == c) {
                break;
            }
        }
        return false;
    }

    /** Bytes free for this user on the file system of {@code path} (or its nearest existing parent); -1: unknown. */
    public static long freeBytes(Path path) {
        Path p = existing(path);
        try {
            return p == null ? -1 : Files.getFileStore(p).getUsableSpace();
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }

    /** The mount point of the file system holding {@code path}: the top directory with the same file store. */
    public static Path mountOf(Path path) {
        Path p = existing(path.toAbsolutePath());
        if (p == null) {
            return path;
        }
        try {
            FileStore store = Files.getFileStore(p);
            Path parent = p.getParent();
            while (parent != null && Files.getFileStore(parent).equals(store)) {
                p = parent;
                parent = p.getParent();
            }
            return p;
        } catch (IOException | RuntimeException e) {
            return p;
        }
    }

    public static String host() {
        return HOST;
    }

    private static Path existing(Path path) {
        Path p = path;
        while (p != null && !Files.exists(p)) {
            p = p.getParent();
        }
        return p;
    }

    private static String hostName() {
        try {
            return java.net.InetAddress.getLocalHost().getHostName();
        } catch (IOException e) {
            return "localhost";
        }
    }
}
