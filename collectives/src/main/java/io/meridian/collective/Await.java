package io.meridian.collective;

import io.meridian.shm.ProportionalBackoff;
import java.util.function.LongSupplier;

/**
 * The one way a process of a memory group waits on the region: a member for the leader's release, a leader for its
 * members' arrival. It polls the condition, idles between polls by the back-off, and on the back-off's slow passes
 * checks the region's state, every {@link #LIVENESS_INTERVAL_NANOS} whether the processes waited for are alive, and
 * the deadline. The checks throw; {@link Condition#timedOut} makes what is thrown at the deadline.
 * Owned by one waiting thread; a wait allocates nothing (the condition is a reused object of the waiter's).
 */
final class Await {
    /** How often a waiter looks at the pids of those it waits for: a /proc read each, rare next to the polls. */
    static final long LIVENESS_INTERVAL_NANOS = 100_000_000L;
    /** A timeout that never comes: a leader daemon waiting for a quiet job's next call. */
    static final long NO_TIMEOUT = Long.MAX_VALUE;

    /** What one wait polls and checks; a waiter keeps one per kind of wait and sets its call's fields before it. */
    interface Condition {
        /** The fast poll: true when the wait is over. May advance the waiter's own cursor (members seen so far). */
        boolean met();

        /** On each slow pass: throws when the call cannot complete any more (the region failed or was closed). */
        void checkState();

        /** Every {@link #LIVENESS_INTERVAL_NANOS}: throws when a process waited for is gone. */
        void checkLiveness();

        /** The exception to throw after {@code timeoutNanos} of waiting; also fails the region for the others. */
        RuntimeException timedOut(long timeoutNanos);
    }

    /**
     * How a waiter blocks once its back-off has parked for {@link #SLEEP_AFTER_NANOS}: it announces that it sleeps,
     * looks at the condition once more, and blocks for at most the given time unless it is met or it is woken.
     */
    interface Sleeper {
        void sleep(Condition condition, long maxNanos);
    }

    /**
     * Parking this long before a sleeper blocks: a wait that short is a call in progress (the members of a busy job
     * arrive within microseconds of each other), one longer is a job between calls.
     */
    static final long SLEEP_AFTER_NANOS = 1_000_000L;

    private final ProportionalBackoff backoff;
    private final LongSupplier nanoClock;

    Await(ProportionalBackoff backoff, LongSupplier nanoClock) {
        this.backoff = backoff;
        this.nanoClock = nanoClock;
    }

    /** Returns once {@code condition} is met; throws what its checks throw, or its timeout after timeoutNanos. */
    void until(Condition condition, long timeoutNanos) {
        until(condition, timeoutNanos, null);
    }

    /**
     * As {@link #until(Condition, long)}; once the back-off has parked for {@link #SLEEP_AFTER_NANOS}, each idle step
     * is {@code sleeper}'s sleep of at most {@link #LIVENESS_INTERVAL_NANOS} instead (null: parks only).
     */
    void until(Condition condition, long timeoutNanos, Sleeper sleeper) {
        if (condition.met()) {
            return;
        }
        backoff.reset();
        long start = nanoClock.getAsLong();
        long nextLivenessCheck = start + LIVENESS_INTERVAL_NANOS;
        while (!condition.met()) {
            if (sleeper != null && backoff.parkingLongerThan(SLEEP_AFTER_NANOS)) {
                sleeper.sleep(condition, LIVENESS_INTERVAL_NANOS);
            } else if (!backoff.idle()) {
                continue;
            }
            condition.checkState();
            long now = nanoClock.getAsLong();
            if (now - nextLivenessCheck > 0) {
                nextLivenessCheck = now + LIVENESS_INTERVAL_NANOS;
                condition.checkLiveness();
            }
            if (now - start > timeoutNanos) {
                throw condition.timedOut(timeoutNanos);
            }
        }
    }
}
