package io.meridian.stream.live;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;

/**
 * How long the live map waits before it re-forms after its regions' tmpfs was full: 0.5 s, doubling to 8 s while the
 * tmpfs stays full, back to 0.5 s once a generation has formed; but no longer than it takes the tmpfs to have
 * {@link #ROOM_BACK_BYTES} more free than at the failure (looked at every 100 ms, one statvfs). Each try makes a region
 * and sweeps stale ones, so a tight loop would be a worker that spins while /dev/shm is full; with the wait alone the
 * map re-formed 7.7 s and 8.1 s after the tmpfs had room (ShmFullIT, the 8 s wait being under way).
 */
final class ShmBackoff {
    static final long FIRST_MS = 500;
    static final long MAX_MS = 8000;
    /** More than a region's control part and the data pages a round touches at 10,000s of points. */
    static final long ROOM_BACK_BYTES = 1L << 20;
    private static final long LOOK_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

    private final LongSupplier freeBytes;
    private long nextMs = FIRST_MS;
    private long pendingMs;
    private long freeAtFailure = -1;

    /** {@code freeBytes}: the regions' tmpfs's free bytes now, -1 if unknown. */
    ShmBackoff(LongSupplier freeBytes) {
        this.freeBytes = freeBytes;
    }

    /** A failure that saw {@code freeAtFailure} bytes free (-1: unknown): returns the longest wait before a try. */
    long next(long freeAtFailure) {
        this.freeAtFailure = freeAtFailure;
        pendingMs = nextMs;
        nextMs = Math.min(nextMs * 2, MAX_MS);
        return pendingMs;
    }

    void reset() {
        nextMs = FIRST_MS;
    }

    /**
     * Waits what {@link #next} returned (nothing after a success or another failure), until the tmpfs has room again,
     * or until {@code stop}.
     */
    void park(BooleanSupplier stop) {
        long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(pendingMs);
        pendingMs = 0;
        long left;
        while (!stop.getAsBoolean() && (left = end - System.nanoTime()) > 0 && !roomBack()) {
            LockSupport.parkNanos(Math.min(left, LOOK_NANOS));
        }
    }

    private boolean roomBack() {
        if (freeAtFailure < 0) {
            return false;
        }
        long free = freeBytes.getAsLong();
        return free >= 0 && free >= freeAtFailure + ROOM_BACK_BYTES;
    }
}
