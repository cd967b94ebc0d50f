package io.meridian.collective;

import io.meridian.shm.Doorbell;
import io.meridian.shm.ProportionalBackoff;
import java.io.IOException;
import java.nio.channels.ClosedSelectorException;
import java.util.List;

/**
 * A leader daemon's one thread when it leads several groups (the live map's rounds and its clustering): a duty cycle
 * that steps each group's {@link GroupLeader#doWork} in turn, so the groups' calls are served in whatever order their
 * members make them on each host, and no two threads are ever in MPI. Each group's exchange among the leaders is a
 * non-blocking collective on a communicator of its own, polled here; while one group's call waits for another host,
 * the other group's calls go on.
 *
 * <p>Why not a thread per group with blocking collectives: under {@code MPI_THREAD_MULTIPLE} two threads in blocking
 * calls on two communicators stalled whenever another process kept the 2 cores busy (stop 40: LeaderDaemonIT's
 * two-group case timed out in both groups at calls 25-48, three runs in a row), and a live map's host always has that
 * load.
 *
 * <p>Idle: while a call is in progress it polls with the collectives' proportional back-off (a park of 1/16 of the time
 * waited, at most 1 ms); once every group waits only for its members' next call, it announces its sleep in every
 * region and blocks on their doorbells, which share one selector, until a member of any group rings.
 */
final class LeaderAgent {
    private final GroupLeader[] leaders;
    /** One per group, on the first one's selector; null once closed (then it parks). Elements written on close only. */
    private final Doorbell[] bells;
    private final ProportionalBackoff backoff = ProportionalBackoff.forThisLaunch(1_000_000);
    private final CollectiveMetrics metrics = CollectiveMetrics.get();

    /** @param leaders each built without a doorbell of its own; the agent binds one per region, on one selector */
    LeaderAgent(List<GroupLeader> leaders) {
        this.leaders = leaders.toArray(new GroupLeader[0]);
        this.bells = new Doorbell[this.leaders.length];
        Doorbell first = null;
        for (int g = 0; g < bells.length; g++) {
            SharedRegion region = this.leaders[g].region();
            try {
                bells[g] = Doorbell.bind(region.bellPath(), first);
                first = first == null ? bells[g] : first;
            } catch (IOException e) {
                System.err.println("meridian leader: group " + region.shape.group() + " of job " + region.jobId
                        + ": no doorbell at " + region.bellPath() + " (" + e.getMessage() + "); it parks between calls"
                        + " instead of sleeping");
                closeBells();
                break;
            }
        }
    }

    /**
     * Serves every group's calls until one fails or is closed: throws the first failure (that group's region is
     * failed already; the caller fails the others' and ends the job).
     */
    void run() {
        while (true) {
            long now = System.nanoTime();
            int work = 0;
            for (GroupLeader leader : leaders) {
                work += leader.doWork(now);
            }
            if (work > 0) {
                backoff.reset();
            } else if (bells[0] != null && backoff.parkingLongerThan(Await.SLEEP_AFTER_NANOS) && allIdle()) {
                sleep();
            } else {
                backoff.idle(0);
            }
        }
    }

    private boolean allIdle() {
        for (GroupLeader leader : leaders) {
            if (!leader.idleBetweenCalls()) {
                return false;
            }
        }
        return true;
    }

    /**
     * Announces the sleep in every region, looks for an arrival once more, then blocks on the shared selector for at
     * most the liveness interval (the members' pids are checked between sleeps, as a one-group daemon does).
     */
    private void sleep() {
        Doorbell selector = bells[0];
        if (selector == null) {
            backoff.idle(0);
            return;
        }
        for (GroupLeader leader : leaders) {
            leader.region().announceLeaderSleep();
        }
        try {
            if (allIdle()) {
                long rings = rings();
                selector.await(Await.LIVENESS_INTERVAL_NANOS / 1_000_000);
                metrics.leaderSlept(rings() - rings);
            }
        } catch (IOException | ClosedSelectorException e) {
            closeBells(); // closed by the shutdown hook, or broken: park from now on
        } finally {
            for (GroupLeader leader : leaders) {
                leader.region().leaderAwake();
            }
        }
    }

    /** Rings counted on every group's doorbell. */
    long rings() {
        long sum = 0;
        for (Doorbell b : bells) {
            sum += b == null ? 0 : b.rings();
        }
        return sum;
    }

    /** Wakes a sleeping {@link #run} (the shutdown hook, before it closes the regions). */
    void interrupt() {
        Doorbell b = bells[0];
        if (b != null) {
            b.interrupt();
        }
    }

    /** Closes the doorbells (deletes their sockets), the sharers before the selector's owner. */
    void closeBells() {
        for (int g = bells.length - 1; g >= 0; g--) {
            Doorbell b = bells[g];
            bells[g] = null;
            if (b != null) {
                try {
                    b.close();
                } catch (IOException | ClosedSelectorException e) {
                    System.err.println("meridian leader: closing the doorbell of " + leaders[g].region().bellPath()
                            + ": " + e.getMessage());
                }
            }
        }
    }
}
