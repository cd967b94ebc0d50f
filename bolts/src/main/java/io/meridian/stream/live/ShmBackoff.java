package io.meridian.stream.live;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/**
 * How long the live map waits before it re-forms after its regions' tmpfs was full: 0.5 s, doubling to 8 s while the
 * tmpfs stays full, back to 0.5 s once a generation has formed. Each try makes a region and sweeps stale ones, so a
 * tight loop would be a worker that spins while /dev/shm is full; 8 s bounds the time to recover once space is back.
 */
final class ShmBackoff {
    static final long FIRST_MS = 500;
    static final long MAX_MS = 8000;
    private static final long STOP_CHECK_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

    private long nextMs = FIRST_MS;
    private long pendingMs;

    /** A failure: returns the wait before the next try, which {@link #park} then waits. */
    long next() {
        pendingMs = nextMs;
        nextMs = Math.min(nextMs * 2, MAX_MS);
        return pendingMs;
    }

    void reset() {
        nextMs = FIRST_MS;
    }

    /** Waits what {@link #next} returned (nothing after a success or another failure), or until {@code stop}. */
    void park(BooleanSupplier stop) {
        long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(pendingMs);
        pendingMs = 0;
        long left;
        while (!stop.getAsBoolean() && (left = end - System.nanoTime()) > 0) {
            LockSupport.parkNanos(Math.min(left, STOP_CHECK_NANOS));
        }
    }
}
