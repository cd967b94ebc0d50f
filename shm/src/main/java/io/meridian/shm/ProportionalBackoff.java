package io.meridian.shm;

import java.util.concurrent.locks.LockSupport;

/**
 * How a waiter spends time between polls of a mapped counter: a short spin, then yields, then parks. A park lasts
 * about 1/16 of the time waited so far (at least 1 us, at most the cap), so a short wait stays responsive and a long
 * one (a rank still computing) costs few wake-ups, while the added latency stays near 6% of the wait. On a machine
 * with more processes than cores the yields and parks hand the core to whoever we wait for.
 * Under an mpirun told to yield when idle the spins are left out ({@link #forThisLaunch}), as Open MPI leaves out its
 * own: a spinning rank holds the core its leader needs.
 * Mutable, one per waiting thread, reset before each wait; allocation-free. The collectives' member of the
 * {@link IdleStrategy} family: the transport's pollers idle per poll ({@link IdleStrategy.Backoff}), a collective waits
 * for one event with slow checks in between ({@link #idle()}).
 */
public final class ProportionalBackoff implements IdleStrategy {
    private static final int SPINS = 200;
    private static final int YIELDS = 200;
    private static final long MIN_PARK_NANOS = 1_000;
    private final long maxParkNanos;
    private final int spins;
    private int polls;
    private long parkingSince;

    public ProportionalBackoff(long maxParkNanos) {
        this(maxParkNanos, true);
    }

    /** @param spin whether a wait starts with spins (a core per waiter) or goes straight to yields */
    public ProportionalBackoff(long maxParkNanos, boolean spin) {
        this.maxParkNanos = maxParkNanos;
        this.spins = spin ? SPINS : 0;
    }

    /**
     * A back-off that spins unless this process was launched by an mpirun that tells Open MPI to yield when idle
     * ({@code mpi_yield_when_idle}, else {@code mpi_oversubscribe}, which mpirun sets when a node has more ranks than
     * slots): then its waits yield from the first poll, as Open MPI's own do. Measured on the two-host testbed (2
     * cores, 2 ranks per host, DA-MDS N = 4000's exchange): 0.059-0.060 ms per iteration without the spins against
     * 0.066-0.120 ms with them. Processes that are not MPI ranks (the live map's Storm workers, whose collective waits
     * are mostly short and whose round threads run at nice 10) keep their spins: with the rule applied to them by a
     * count of processes against cores, {@code bench stream}'s rounds took 14-41 ms at the median against 12-33 ms
     * (five runs each).
     */
    public static ProportionalBackoff forThisLaunch(long maxParkNanos) {
        return new ProportionalBackoff(maxParkNanos, !yieldWhenIdle(System.getenv("OMPI_MCA_mpi_yield_when_idle"),
                System.getenv("OMPI_MCA_mpi_oversubscribe")));
    }

    /** The rule of {@link #forThisLaunch}, Open MPI's settings given as their environment values (null: not set). */
    static boolean yieldWhenIdle(String yieldWhenIdle, String oversubscribe) {
        if (yieldWhenIdle != null && !yieldWhenIdle.isBlank()) {
            return isTrue(yieldWhenIdle);
        }
        return oversubscribe != null && isTrue(oversubscribe);
    }

    private static boolean isTrue(String mcaValue) {
        String v = mcaValue.trim();
        return v.equals("1") || v.equalsIgnoreCase("true") || v.equalsIgnoreCase("yes");
    }

    /** Whether this wait has parked for longer than {@code nanos} (reads the clock only then). */
    public boolean parkingLongerThan(long nanos) {
        return parkingSince != 0 && System.nanoTime() - parkingSince > nanos;
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
        if (n < spins) {
            Thread.onSpinWait();
            return (n & 63) == 63;
        }
        if (n < spins + YIELDS) {
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
