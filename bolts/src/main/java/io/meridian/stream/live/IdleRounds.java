package io.meridian.stream.live;

import io.meridian.shm.ProportionalBackoff;
import java.util.concurrent.TimeUnit;

/**
 * How long a map task's round thread waits after a round that had nothing to show: {@code map.idleMs} while the map
 * is still working towards its settled state (rows arriving, refinement, anneals, a reveal: a round every few ms keeps
 * new rows' wait short), and once only a new row gives it something to do, 1/8 of the time it has been so, at most
 * {@code map.idleMaxMs}. Every round is a collective of all map tasks (and, across hosts, an MPI exchange between the
 * leader daemons, which poll while they wait): an idle map of 4 tasks ran 200 of them a second.
 * Task 0 is woken early by a store notification; the other tasks' next round waits for it in its first collective.
 * One per round thread; allocation-free. {@code bench scale --part placement} waits as the bolt does.
 */
public final class IdleRounds {
    private static final int IDLE_SHIFT = 3;
    private final long firstParkNanos;
    private final long maxParkNanos;
    private boolean awaiting;
    private long awaitingSinceNanos;

    public IdleRounds(int idleMs, int idleMaxMs) {
        this.firstParkNanos = TimeUnit.MILLISECONDS.toNanos(idleMs);
        this.maxParkNanos = TimeUnit.MILLISECONDS.toNanos(Math.max(idleMs, idleMaxMs));
    }

    /** How long to wait after a round with nothing to show, {@code awaitingRows} as the map says after it. */
    public long parkNanos(boolean awaitingRows, long nowNanos) {
        if (!awaitingRows) {
            awaiting = false;
            return firstParkNanos;
        }
        if (!awaiting) {
            awaiting = true;
            awaitingSinceNanos = nowNanos;
        }
        return ProportionalBackoff.parkNanos(nowNanos - awaitingSinceNanos, IDLE_SHIFT, firstParkNanos, maxParkNanos);
    }

    /** A round showed something: the next wait starts from {@code map.idleMs} again. */
    public void reset() {
        awaiting = false;
    }
}
