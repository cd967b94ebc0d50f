package io.meridian.shm;

import java.util.concurrent.locks.LockSupport;

/**
 * How a waiter spends time between polls of a mapped counter: a short spin, then yields, then parks. A park lasts
 * about 1/16 of the time waited so far (at least 1 us, at most the cap), so a short wait stays responsive and a long
 * one (a rank still computing) costs few wake-ups, while the added latency stays near 6% of the wait. On a machine
 * with more processes than cores the yields and parks hand the core to whoever we wait for.
 * Mutable, one per waiting thread, reset before each wait; allocation-free. The collectives' member of the
 * {@link IdleStrategy} family: the transport's pollers idle per poll ({@link IdleStrategy.Backoff}), a collective waits
 * for one event with slow checks in between ({@link #idle()}).
 */
public final class ProportionalBackoff implements IdleStrategy {
    private static final int SPINS = 200;
    private static final int YIELDS = 200;
    private static final long MIN_PARK_NANOS = 1_000;
    private final long maxParkNanos;
    private int polls;
    private long parkingSince;

    public ProportionalBackoff(long maxParkNanos) {
        this.maxParkNanos = maxParkNanos;
    }

    public void reset() {
        polls = 0;
        parkingSince = 0;
    }

    @Override
    public void idle(int workCount) {
        if (workCount > 0) {
            reset();
        } else {
            idle();
        }
    }

    /** Waits a little; returns true when the caller should also run its slow checks (time, liveness). */
    public boolean idle() {
        int n = polls++;
        if (n < SPINS) {
            Thread.onSpinWait();
            return (n & 63) == 63;
        }
        if (n < SPINS + YIELDS) {
            Thread.yield();
            return (n & 15) == 15;
        }
        long now = System.nanoTime();
        if (parkingSince == 0) {
            parkingSince = now;
        }
        LockSupport.parkNanos(parkNanos(now - parkingSince, 4, MIN_PARK_NANOS, maxParkNanos));
        return true;
    }

    /**
     * The rule every idle wait of Meridian follows (collectives here; Storm executors and idle map rounds): after
     * waiting {@code waitedNanos}, park for {@code 1/2^shift} of it, clamped to {@code [minNanos, maxNanos]}. What
     * ends the wait is then noticed at most that fraction (and the cap) late, and a long wait wakes rarely.
     */
    public static long parkNanos(long waitedNanos, int shift, long minNanos, long maxNanos) {
        return Math.min(maxNanos, Math.max(minNanos, waitedNanos >> shift));
    }
}
