package io.meridian.transport.mmap;

import java.io.IOException;
import java.nio.file.FileStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The free bytes of the tmpfs under a context's queues, one budget for all of its senders. Each send takes its batch's
 * bytes before it appends (one CAS) and gives them back once written; the poller reads the file system's free bytes
 * again every {@value #CHECK_MILLIS} ms and counts the bytes taken but not yet written against them. A headroom per
 * sender (stop 38) let twelve senders that each saw room in the same 10 ms append together past it, and a store into
 * a page the tmpfs cannot back is a SIGBUS that halts the worker. What can still get past: batches taken in the instant
 * between a read of the free bytes and its publication, each at most a batch, which the headroom covers.
 */
final class TmpfsBudget {
    private static final Logger LOG = LoggerFactory.getLogger(TmpfsBudget.class);
    /** How often the free bytes are read (a statvfs). */
    static final long CHECK_MILLIS = 10;

    private final LongSupplier freeBytes;
    private final long headroom;
    /** Free bytes at the last read, less what was taken since and what was in flight then. */
    private final AtomicLong available = new AtomicLong(Long.MAX_VALUE);
    private final AtomicLong inFlight = new AtomicLong();
    private long checkedAtMillis = Long.MIN_VALUE / 2; // guarded by this; far back, and no overflow in now - it

    /**
     * @param freeBytes reads the file system's free bytes; throws {@link IllegalStateException} when it cannot (the
     *                  budget is then unlimited until the next read: a failed write still falls back)
     * @param headroom  bytes left free beyond every batch: a new cycle file's header and index pages, the reader's
     */
    TmpfsBudget(LongSupplier freeBytes, long headroom) {
        this.freeBytes = freeBytes;
        this.headroom = headroom;
    }

    /** The budget of {@code dir}'s file system; unlimited when it cannot be looked up. */
    static TmpfsBudget of(Path dir, long headroom) {
        FileStore store;
        try {
            store = Files.getFileStore(dir);
        } catch (IOException | RuntimeException e) {
            LOG.warn("mmap transport: cannot look up the file system of {} ({}): a full tmpfs is found only when a"
                + " write fails", dir, e.toString());
            return new TmpfsBudget(() -> Long.MAX_VALUE, headroom);
        }
        return new TmpfsBudget(() -> {
            try {
                return store.getUsableSpace();
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
        }, headroom);
    }

    long headroom() {
        return headroom;
    }

    /** Takes {@code bytes} for a batch about to be written; false: writing them would leave less than the headroom. */
    boolean take(long bytes) {
        inFlight.addAndGet(bytes); // first: a read of the free bytes from now on counts them
        for (long a = available.get(); ; a = available.get()) {
            if (a - headroom < bytes) {
                inFlight.addAndGet(-bytes);
                return false;
            }
            if (available.compareAndSet(a, a - bytes)) {
                return true;
            }
        }
    }

    /** The batch of {@code bytes} taken is written (or failed): its pages are counted by the next read. */
    void written(long bytes) {
        inFlight.addAndGet(-bytes);
    }

    /** Poller (and a new sender): reads the free bytes again if the last read is {@value #CHECK_MILLIS} ms old. */
    synchronized void refresh(long nowMillis) {
        if (nowMillis - checkedAtMillis < CHECK_MILLIS) {
            return;
        }
        checkedAtMillis = nowMillis;
        long free;
        try {
            free = freeBytes.getAsLong();
        } catch (IllegalStateException e) {
            free = Long.MAX_VALUE;
        }
        available.set(free == Long.MAX_VALUE ? free : free - inFlight.get());
    }

    /** Bytes a batch may still take (free less headroom and bytes in flight), as last known. */
    long available() {
        long a = available.get();
        return a == Long.MAX_VALUE ? a : Math.max(0, a - headroom);
    }
}
