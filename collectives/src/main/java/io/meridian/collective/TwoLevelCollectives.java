package io.meridian.collective;

import io.meridian.shm.Doorbell;
import io.meridian.shm.ProcessIdentity;
import io.meridian.shm.ProportionalBackoff;
import java.nio.DoubleBuffer;
import java.nio.LongBuffer;
import java.nio.file.Path;
import java.time.Duration;

/**
 * A member of a memory group: it writes its input into the group's shared region, publishes its arrival on its
 * mapped counter, and reads the result in place once the leader has released the call. The leader is either this
 * process itself (member 0 of a group of MPI ranks, see {@link MpiCollectives#twoLevel}) or a leader daemon (see
 * {@link LeaderDaemon}) when the members are not MPI ranks ({@link #attach}).
 */
public final class TwoLevelCollectives implements Collectives {
    private final SharedRegion region;
    private final int member;
    private final int rank;
    private final int size;
    private final GroupLeader leader;
    private final AutoCloseable onClose;
    private final long timeoutNanos;
    private final Await await = new Await(ProportionalBackoff.forThisLaunch(1_000_000), System::nanoTime);
    private final Release release = new Release();
    private final CollectiveMetrics metrics = CollectiveMetrics.get();
    private long seq;
    /** Rings the leader daemon's doorbell when it sleeps (null until the first ring; never for an MPI-rank leader). */
    private Doorbell.Ringer leaderBell;
    private boolean closed;
    private long waitNanos;
    private long callNanos;

    TwoLevelCollectives(SharedRegion region, int member, GroupLeader leader, long timeoutNanos, AutoCloseable onClose) {
        this.region = region;
        this.member = member;
        this.rank = region.firstBlock(region.shape.group()) + member;
        this.size = region.blocks();
        this.leader = leader;
        this.timeoutNanos = timeoutNanos;
        this.onClose = onClose;
        this.seq = region.claim(member);
        if (leader != null) {
            region.setLeader(ProcessIdentity.SELF_PID, ProcessIdentity.SELF_START);
        }
    }

    /**
     * Attaches a process that is not an MPI rank to the region of its node's group {@code nodeGroup} of job
     * {@code jobId}, served by a leader daemon ({@code ./meridian leaders start}). Waits up to {@code timeout} for the
     * region to appear; refuses a region of another job or layout.
     */
    public static TwoLevelCollectives attach(String jobId, int nodeGroup, int member, Path regionRoot, Duration timeout) {
        Path path = RegionFiles.pathOf(regionRoot, jobId, nodeGroup);
        SharedRegion region = RegionFiles.attach(path, jobId, timeout.toNanos());
        if (!region.shape.daemonLeader()) {
            throw new RegionMismatchException(region + " is led by an MPI rank, not a leader daemon: it is not for attaching");
        }
        return new TwoLevelCollectives(region, member, null, timeout.toNanos(), null);
    }

    /**
     * Collectives among {@code members} processes or threads of one host that are not MPI ranks, with no other host to
     * exchange with (one memory group): member 0 creates the region of group 0 of job {@code jobId} and leads it
     * in-process, as the lowest MPI rank of a group does ({@link MpiCollectives#twoLevel}); the others attach to it,
     * waiting up to {@code timeout} for it to appear. A member that attaches late is waited for by the leader's
     * first call (up to the timeout), so the members need no barrier of their own.
     */
    public static TwoLevelCollectives singleHost(String jobId, int member, int members, int capacity, int reduceCapacity,
                                                 Path regionRoot, Duration timeout) {
        if (member < 0 || member >= members) {
            throw new IllegalArgumentException("member " + member + " of " + members);
        }
        Path path = RegionFiles.pathOf(regionRoot, jobId, 0);
        long timeoutNanos = timeout.toNanos();
        if (member == 0) {
            RegionShape shape = new RegionShape(0, 1, members, RegionShape.table(new int[] {members}), capacity,
                    reduceCapacity, false);
            SharedRegion region = RegionFiles.create(path, jobId, shape);
            GroupLeader leader = new GroupLeader(region, LeaderExchange.NONE, timeoutNanos, false);
            return new TwoLevelCollectives(region, 0, leader, timeoutNanos, null);
        }
        SharedRegion region = RegionFiles.attach(path, jobId, timeoutNanos);
        if (region.shape.groups() != 1 || region.shape.members() != members || region.shape.daemonLeader()) {
            throw new RegionMismatchException(region + " is not a single-host group of " + members + " members led by"
                    + " its member 0");
        }
        return new TwoLevelCollectives(region, member, null, timeoutNanos, null);
    }

    /** Where the region of node group {@code nodeGroup} of job {@code jobId} lives under {@code regionRoot}. */
    public static Path regionPath(Path regionRoot, String jobId, int nodeGroup) {
        return RegionFiles.pathOf(regionRoot, jobId, nodeGroup);
    }

    /**
     * Removes what job {@code jobId} left under {@code regionRoot} when no live process owns it any more (a group
     * whose leader was killed): its region files and directory. Returns how many regions it removed.
     */
    public static int removeStaleRegions(Path regionRoot, String jobId) {
        return RegionFiles.removeStale(regionRoot, jobId);
    }

    /**
     * Removes every region under {@code regionRoot} whose creator is gone, of any job (what creating a region sweeps
     * too), and job directories empty for a minute. A group that re-forms removes its old generations' regions on its
     * own host only; a host whose leader daemon died after the next generation's region was made there keeps them
     * until this runs (the cluster's sweeper daemon, on every host). Returns how many regions it removed.
     */
    public static int sweepStaleRegions(Path regionRoot) {
        return RegionFiles.sweepStale(regionRoot);
    }

    @Override
    public int size() {
        return size;
    }

    @Override
    public int rank() {
        return rank;
    }

    /**
     * Time this member's calls took, in total (from arriving to reading the result; the copies in and out of the
     * region by {@link CollectiveBlockSync} are not included).
     */
    public long callNanos() {
        return callNanos;
    }

    /**
     * Of {@link #callNanos}, the time spent waiting for others: a member waits for the leader's release, which
     * includes the other members' arrival and the inter-group step; the leader waits for its members' arrival.
     */
    public long waitNanos() {
        return leader != null ? leader.waitNanos() : waitNanos;
    }

    /** Of {@link #callNanos}, the leader's inter-group exchange (MPI among the leaders); 0 for a member, or one group. */
    public long interGroupNanos() {
        return leader != null ? leader.exchangeNanos() : 0;
    }

    /** This member's index within its group (0 .. members - 1). */
    public int member() {
        return member;
    }

    public int group() {
        return region.shape.group();
    }

    public int groups() {
        return region.shape.groups();
    }

    public Path regionPath() {
        return region.path;
    }

    @Override
    public int capacity() {
        return region.shape.capacity();
    }

    @Override
    public int reduceCapacity() {
        return region.shape.reduceCapacity();
    }

    @Override
    public DoubleBuffer allgathervInput() {
        return region.result(seq + 1);
    }

    @Override
    public DoubleBuffer allgatherv(int[] counts, int[] displs) {
        int total = checkGatherLayout(counts, displs);
        long s = seq + 1;
        if (member == 0) {
            region.writeDescriptor(counts, displs);
        }
        call(s, Ops.code(Ops.ALLGATHERV, null), total, -1, 8L * total);
        return region.result(s);
    }

    /**
     * One hand-off through the leader instead of two: the members' parts and sums go into the region together, the
     * leader adds the sums up and runs both exchanges with the other groups' leaders before it releases the call.
     * The count the members publish (and the leader checks they agree on) is the number of sums.
     */
    @Override
    public DoubleBuffer allgathervSum(int[] counts, int[] displs, int sumCount) {
        int total = checkGatherLayout(counts, displs);
        checkCount(sumCount, region.shape.reduceCapacity(), "allgatherv's sum");
        long s = seq + 1;
        if (member == 0) {
            region.writeDescriptor(counts, displs);
        }
        call(s, Ops.code(Ops.ALLGATHERV_SUM, ReduceOp.SUM), sumCount, -1, 8L * (total + sumCount));
        return region.result(s);
    }

    @Override
    public DoubleBuffer sums() {
        return region.sums(seq);
    }

    @Override
    public DoubleBuffer reduceInput() {
        return region.reduceSlot(member);
    }

    @Override
    public DoubleBuffer allreduce(int count, ReduceOp op) {
        checkReduce(count);
        long s = seq + 1;
        call(s, Ops.code(Ops.ALLREDUCE_DOUBLE, op), count, -1, 8L * count);
        return region.result(s);
    }

    @Override
    public LongBuffer reduceInputLongs() {
        return region.reduceSlotLongs(member);
    }

    @Override
    public LongBuffer allreduceLongs(int count, ReduceOp op) {
        checkReduce(count);
        long s = seq + 1;
        call(s, Ops.code(Ops.ALLREDUCE_LONG, op), count, -1, 8L * count);
        return region.resultLongs(s);
    }

    @Override
    public DoubleBuffer broadcastInput() {
        return region.result(seq + 1);
    }

    @Override
    public DoubleBuffer broadcast(int count, int root) {
        checkCount(count, region.shape.capacity(), "broadcast");
        if (root < 0 || root >= size) {
            throw new IllegalArgumentException("broadcast root " + root + " of " + size + " ranks");
        }
        long s = seq + 1;
        call(s, Ops.code(Ops.BROADCAST, null), count, root, 8L * count);
        return region.result(s);
    }

    @Override
    public void barrier() {
        call(seq + 1, Ops.code(Ops.BARRIER, null), 0, -1, 0);
    }

    private void call(long s, int code, int count, int root, long bytes) {
        if (closed) {
            throw new IllegalStateException("collectives of " + region + " are closed");
        }
        long t0 = System.nanoTime();
        region.arrive(member, s, code, count, root);
        if (region.shape.daemonLeader() && region.leaderSleeping()) {
            ringLeader();
        }
        long waited;
        if (leader != null) {
            long leaderWait = leader.waitNanos();
            leader.serve(s);
            waited = leader.waitNanos() - leaderWait;
        } else {
            awaitRelease(s, code);
            waited = System.nanoTime() - t0;
            waitNanos += waited;
        }
        long took = System.nanoTime() - t0;
        callNanos += took;
        metrics.sharedMemoryCall(code, took, waited, bytes);
        seq = s;
    }

    private void awaitRelease(long s, int code) {
        release.seq = s;
        release.code = code;
        await.until(release, timeoutNanos);
    }

    /** The leader's release of call {@code seq}: the condition of {@link #awaitRelease}, reused every call. */
    private final class Release implements Await.Condition {
        long seq;
        int code;

        @Override
        public boolean met() {
            return region.released() >= seq;
        }

        @Override
        public void checkState() {
            // the leader releases before it may close or fail the region: look at released again after the state
            long state = region.state();
            if (state != RegionDescriptor.STATE_READY && region.released() < seq) {
                throw new CollectiveException(state == RegionDescriptor.STATE_CLOSED
                        ? where(seq, code) + "the leader of group " + group() + " stopped"
                                + region.otherGroupsFailures()
                        : region.failure());
            }
        }

        @Override
        public void checkLiveness() {
            long leaderPid = region.leaderPid();
            if (leaderPid != 0 && !ProcessIdentity.alive(leaderPid, region.leaderStart())) {
                metrics.memberFailure();
                throw new CollectiveException(region.fail(where(seq, code) + "the leader of group " + group()
                        + " (pid " + leaderPid + ") is gone" + region.otherGroupsFailures()));
            }
        }

        @Override
        public RuntimeException timedOut(long timeoutNanos) {
            String leader = "the leader (" + ProcessIdentity.describe(region.leaderPid(), region.leaderStart()) + ")";
            String missing = GroupLeader.missing(region, seq);
            metrics.timeout();
            String waitedFor = missing.isEmpty()
                    ? leader + " to release the call: every member arrived, so it waits in MPI for another group's"
                            + " leader"
                    : missing;
            return new CollectiveTimeoutException(region.fail(where(seq, code) + "timed out after "
                    + timeoutNanos / 1_000_000 + " ms waiting for " + waitedFor));
        }
    }

    /**
     * Wakes a leader daemon that sleeps between calls. A daemon that restarted has a new socket: the old connection
     * fails, and one new connection is tried at once. Without a doorbell to ring (none bound, or the daemon gone)
     * the daemon polls or the liveness checks find it gone.
     */
    private void ringLeader() {
        for (int attempt = 0; attempt < 2; attempt++) {
            if (leaderBell == null) {
                leaderBell = Doorbell.Ringer.connect(region.bellPath());
                if (leaderBell == null) {
                    return;
                }
            }
            if (leaderBell.ring()) {
                return;
            }
            leaderBell.close();
            leaderBell = null;
        }
    }

    private String where(long s, int code) {
        return "collective call #" + s + " (" + Ops.name(code) + ") in group " + group() + " of job " + region.jobId
                + ", seen by member " + member + ": ";
    }

    /** Checks the layout fits and each group's parts are adjacent; returns the total count (all members agree on it). */
    private int checkGatherLayout(int[] counts, int[] displs) {
        if (counts.length != size || displs.length != size) {
            throw new IllegalArgumentException("allgatherv: counts and displs need " + size + " entries, got "
                    + counts.length + " and " + displs.length);
        }
        int capacity = region.shape.capacity();
        int total = 0;
        for (int b = 0; b < size; b++) {
            total += counts[b];
            if (counts[b] < 0 || displs[b] < 0 || (long) displs[b] + counts[b] > capacity) {
                throw new IllegalArgumentException("allgatherv: block " + b + " has " + counts[b] + " at " + displs[b]
                        + ", outside the capacity of " + capacity + " doubles");
            }
        }
        // the leaders move each group's parts as one piece: they must be adjacent, in block order
        for (int g = 0; g < region.shape.groups(); g++) {
            for (int b = region.firstBlock(g) + 1; b < region.firstBlock(g + 1); b++) {
                if (displs[b] != displs[b - 1] + counts[b - 1]) {
                    throw new IllegalArgumentException("allgatherv: block " + b + " starts at " + displs[b]
                            + " but block " + (b - 1) + " ends at " + (displs[b - 1] + counts[b - 1])
                            + "; blocks of one group must be adjacent");
                }
            }
        }
        return total;
    }

    /** An allreduce's inputs sit in the reduce slots, its result in the result area: both must hold it. */
    private void checkReduce(int count) {
        checkCount(count, Math.min(region.shape.reduceCapacity(), region.shape.capacity()), "allreduce");
    }

    private static void checkCount(int count, int capacity, String what) {
        if (count < 0 || count > capacity) {
            throw new IllegalArgumentException(what + " of " + count + " values: capacity is " + capacity);
        }
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (leaderBell != null) {
            leaderBell.close();
            leaderBell = null;
        }
        region.leave(member);
        if (leader != null) {
            region.markClosed();
            region.unlink();
        }
        if (onClose != null) {
            try {
                onClose.close();
            } catch (Exception e) {
                throw new IllegalStateException("closing " + region + ": " + e.getMessage(), e);
            }
        }
    }
}
