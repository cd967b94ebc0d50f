package io.meridian.collective;

import io.meridian.shm.Doorbell;
import io.meridian.shm.ProcessIdentity;
import io.meridian.shm.ProportionalBackoff;
import java.io.IOException;
import java.nio.DoubleBuffer;
import java.nio.LongBuffer;
import java.nio.channels.ClosedSelectorException;
import java.util.concurrent.locks.LockSupport;

/**
 * The leader's side of one call on a group region: wait until every member has published call {@code seq} (acquire
 * on the members' arrived counters), check they agree on the operation, reduce locally where the operation reduces,
 * run the inter-group step on the result area in place, then publish {@code released = seq} (release). Used in-process
 * by member 0 when the processes are MPI ranks, and in a loop by a leader daemon when they are not.
 */
final class GroupLeader {
    private final SharedRegion region;
    private final LeaderExchange exchange;
    private final long timeoutNanos;
    private final boolean daemon;
    private final int members;
    private final int groups;
    private final int[] groupCounts;
    private final int[] groupDispls;
    private final Await await = new Await(ProportionalBackoff.forThisLaunch(1_000_000), System::nanoTime);
    private final Arrivals arrivals = new Arrivals();
    /** A daemon's: it sleeps on it between a quiet job's calls (null: not a daemon, or no Unix sockets: it parks). */
    private volatile Doorbell bell; // closed by the daemon's shutdown hook
    private final Await.Sleeper onBell = this::sleepOnBell;
    private final CollectiveMetrics metrics = CollectiveMetrics.get();
    /** Time spent waiting for the members to arrive, and in the inter-group exchange (MPI among the leaders). */
    private long waitNanos;
    private long exchangeNanos;
    /** Doubles the last allgatherv among the leaders moved in all. */
    private int gathered;
    /** Made at the first allgatherv with sums among the leaders. */
    private PackedSums packed;

    /* The duty cycle's state ({@link #doWork}): the call served, whether its exchange is in flight, and since when. */
    private long dutySeq;
    private boolean exchanging;
    private int dutyCode;
    private int dutyCount;
    private long firstArrivalAt;
    private long exchangeStartedAt;
    private long nextLivenessCheck;

    GroupLeader(SharedRegion region, LeaderExchange exchange, long timeoutNanos, boolean daemon) {
        this.region = region;
        this.exchange = exchange;
        this.timeoutNanos = timeoutNanos;
        this.daemon = daemon;
        this.members = region.shape.members();
        this.groups = region.shape.groups();
        this.groupCounts = new int[groups];
        this.groupDispls = new int[groups];
        if (daemon) {
            try {
                bell = Doorbell.bind(region.bellPath());
            } catch (IOException e) {
                System.err.println("meridian leader: group " + region.shape.group() + ": no doorbell at "
                        + region.bellPath() + " (" + e.getMessage() + "); it parks between calls instead of sleeping");
            }
        }
    }

    SharedRegion region() {
        return region;
    }

    /** Time spent waiting for the members to arrive at the calls served so far. */
    long waitNanos() {
        return waitNanos;
    }

    /** Time spent in the exchange with the other groups' leaders (MPI), local reductions excluded. */
    long exchangeNanos() {
        return exchangeNanos;
    }

    /** Serves call {@code seq}; on any failure marks the region failed (members then fail with the same message). */
    void serve(long seq) {
        long t0 = System.nanoTime();
        awaitMembers(seq);
        long t1 = System.nanoTime();
        waitNanos += t1 - t0;
        int code = region.op(0);
        int count = region.count(0);
        int root = region.root(0);
        checkAgreement(seq, code, count, root);
        try {
            reduceLocally(seq, code, count);
            long t2 = System.nanoTime();
            exchange(seq, code, count, root);
            if (groups > 1) {
                long took = System.nanoTime() - t2;
                exchangeNanos += took;
                metrics.mpiExchange(code, took, 8L * (Ops.kind(code) == Ops.ALLGATHERV_SUM ? count + gathered : count));
            }
        } catch (RuntimeException e) {
            throw failed(seq, code, e.getMessage());
        }
        region.release(seq);
    }

    /**
     * One step of serving calls without blocking, for a daemon that leads several groups on one thread
     * ({@link LeaderAgent}): notices the members' arrival at the next call, reduces locally and starts the exchange
     * among the leaders, or sees a started exchange complete and releases the call. Returns the work done (0: nothing
     * changed, the caller may idle). A quiet job's next call is waited for without limit; from its first member's
     * arrival the others have the timeout. On a failure it marks the region failed (members then fail with the same
     * message) and throws. Allocation-free but for MPI's request per started exchange.
     */
    int doWork(long now) {
        if (dutySeq == 0) {
            dutySeq = region.released() + 1;
            nextLivenessCheck = now + Await.LIVENESS_INTERVAL_NANOS;
        }
        if (exchanging) {
            return finishExchange(now);
        }
        arrivals.seq = dutySeq;
        arrivals.anyIsEnough = false;
        if (!arrivals.met()) {
            arrivals.checkState();
            if (firstArrivalAt == 0 && (arrivals.seen > 0 || anyArrived(dutySeq))) {
                firstArrivalAt = now;
            }
            if (now - nextLivenessCheck > 0) {
                nextLivenessCheck = now + Await.LIVENESS_INTERVAL_NANOS;
                arrivals.checkLiveness();
            }
            if (firstArrivalAt != 0 && now - firstArrivalAt > timeoutNanos) {
                throw arrivals.timedOut(timeoutNanos);
            }
            return 0;
        }
        long seq = dutySeq;
        if (firstArrivalAt != 0) {
            waitNanos += now - firstArrivalAt;
        }
        int code = region.op(0);
        int count = region.count(0);
        int root = region.root(0);
        checkAgreement(seq, code, count, root);
        try {
            reduceLocally(seq, code, count);
            exchangeStartedAt = System.nanoTime();
            startExchange(seq, code, count, root);
        } catch (RuntimeException e) {
            throw failed(seq, code, e.getMessage());
        }
        dutyCode = code;
        dutyCount = count;
        exchanging = true;
        return 1 + finishExchange(now);
    }

    /** Whether this leader waits for nothing but its members' next call (no member arrived, nothing in flight). */
    boolean idleBetweenCalls() {
        return !exchanging && (dutySeq == 0 || !anyArrived(dutySeq));
    }

    private int finishExchange(long now) {
        long seq = dutySeq;
        try {
            if (!exchange.complete()) {
                arrivals.seq = seq;
                arrivals.checkState(); // a member that failed the call fails the region
                return 0;
            }
            if (Ops.kind(dutyCode) == Ops.ALLGATHERV_SUM && groups > 1) {
                packed.unpack(region.result(seq), groupCounts, groupDispls, region.shape.group(), region.sums(seq),
                        dutyCount);
            }
        } catch (CollectiveException e) {
            if (region.state() != RegionDescriptor.STATE_READY) {
                throw e;
            }
            throw failed(seq, dutyCode, e.getMessage());
        } catch (RuntimeException e) {
            throw failed(seq, dutyCode, e.getMessage());
        }
        if (groups > 1) {
            long took = System.nanoTime() - exchangeStartedAt;
            exchangeNanos += took;
            metrics.mpiExchange(dutyCode, took, 8L * (Ops.kind(dutyCode) == Ops.ALLGATHERV_SUM ? dutyCount + gathered
                    : dutyCount));
        }
        exchanging = false;
        firstArrivalAt = 0;
        arrivals.seen = 0;
        dutySeq = seq + 1;
        region.release(seq);
        return 1;
    }

    /** The started form of {@link #exchange}: the same calls, left in flight for {@link #finishExchange}. */
    private void startExchange(long seq, int code, int count, int root) {
        switch (Ops.kind(code)) {
            case Ops.ALLGATHERV -> {
                if (groups > 1) {
                    groupLayout();
                    exchange.startAllgatherv(region.result(seq), groupCounts, groupDispls);
                }
            }
            case Ops.ALLGATHERV_SUM -> {
                if (groups == 1) {
                    gathered = 0;
                    return;
                }
                groupLayout();
                if (packed == null) {
                    packed = new PackedSums(groups, region.shape.capacity(), region.shape.reduceCapacity());
                }
                packed.pack(region.result(seq), groupCounts, groupDispls, region.shape.group(), region.sums(seq), count);
                exchange.startAllgatherv(packed.buffer(), packed.counts(), packed.displs());
            }
            case Ops.ALLREDUCE_DOUBLE -> exchange.startAllreduce(region.result(seq), count, Ops.reduceOp(code));
            case Ops.ALLREDUCE_LONG -> exchange.startAllreduce(region.resultLongs(seq), count, Ops.reduceOp(code));
            case Ops.BROADCAST -> {
                if (groups > 1) {
                    exchange.startBroadcast(region.result(seq), count, groupOf(root));
                }
            }
            case Ops.BARRIER -> exchange.startBarrier();
            default -> throw new CollectiveException("unknown operation code " + code);
        }
    }

    private void checkAgreement(long seq, int code, int count, int root) {
        for (int m = 1; m < members; m++) {
            if (region.op(m) != code || region.count(m) != count || region.root(m) != root) {
                throw failed(seq, code, "member " + m + " called " + Ops.name(region.op(m)) + " (count " + region.count(m)
                        + ", root " + region.root(m) + ") but member 0 called " + Ops.name(code) + " (count " + count
                        + ", root " + root + ")");
            }
        }
    }

    /** An allreduce's first step: the members' slots into the result area. */
    private void reduceLocally(long seq, int code, int count) {
        switch (Ops.kind(code)) {
            case Ops.ALLREDUCE_DOUBLE -> reduceLocally(region.result(seq), count, Ops.reduceOp(code));
            case Ops.ALLGATHERV_SUM -> reduceLocally(region.sums(seq), count, ReduceOp.SUM);
            case Ops.ALLREDUCE_LONG -> reduceLocally(region.resultLongs(seq), count, Ops.reduceOp(code));
            default -> { }
        }
    }

    /** The call among the groups' leaders, in place on the result area (nothing to do with one group). */
    private void exchange(long seq, int code, int count, int root) {
        switch (Ops.kind(code)) {
            case Ops.ALLGATHERV -> allgatherv(seq);
            case Ops.ALLGATHERV_SUM -> allgathervWithSums(seq, count);
            case Ops.ALLREDUCE_DOUBLE -> exchange.allreduce(region.result(seq), count, Ops.reduceOp(code));
            case Ops.ALLREDUCE_LONG -> exchange.allreduce(region.resultLongs(seq), count, Ops.reduceOp(code));
            case Ops.BROADCAST -> {
                if (groups > 1) {
                    exchange.broadcast(region.result(seq), count, groupOf(root));
                }
            }
            case Ops.BARRIER -> exchange.barrier();
            default -> throw new CollectiveException("unknown operation code " + code);
        }
    }

    /** Each group's parts as one piece among the leaders, as the descriptor member 0 wrote lays them out. */
    private void allgatherv(long seq) {
        if (groups > 1) {
            groupLayout();
            exchange.allgatherv(region.result(seq), groupCounts, groupDispls);
        }
    }

    /**
     * The leaders' half of an allgatherv with sums: each group's part and its partial sums travel as one piece of one
     * allgatherv ({@link PackedSums}: on two hosts one message each way instead of an allreduce's and an allgatherv's).
     * The two copies this costs are cheaper than the message they save for DA-MDS's exchange: on the testbed 0.069-0.091
     * ms per call against 0.088-0.112 with the leaders' allreduce and allgatherv in turn (three runs each).
     */
    private void allgathervWithSums(long seq, int sumCount) {
        if (groups == 1) {
            gathered = 0;
            return;
        }
        groupLayout();
        if (packed == null) {
            packed = new PackedSums(groups, region.shape.capacity(), region.shape.reduceCapacity());
        }
        int me = region.shape.group();
        DoubleBuffer result = region.result(seq);
        DoubleBuffer sums = region.sums(seq);
        packed.pack(result, groupCounts, groupDispls, me, sums, sumCount);
        exchange.allgatherv(packed.buffer(), packed.counts(), packed.displs());
        packed.unpack(result, groupCounts, groupDispls, me, sums, sumCount);
    }

    /** Fills groupCounts and groupDispls from the descriptor member 0 wrote. */
    private void groupLayout() {
        gathered = 0;
        for (int g = 0; g < groups; g++) {
            int b0 = region.firstBlock(g);
            int b1 = region.firstBlock(g + 1);
            int total = 0;
            for (int b = b0; b < b1; b++) {
                total += region.descriptorCount(b);
            }
            groupCounts[g] = total;
            groupDispls[g] = region.descriptorDispl(b0);
            gathered += total;
        }
    }

    private int groupOf(int block) {
        int g = 0;
        while (region.firstBlock(g + 1) <= block) {
            g++;
        }
        return g;
    }

    private void reduceLocally(DoubleBuffer out, int count, ReduceOp op) {
        out.put(0, region.reduceSlot(0), 0, count);
        for (int m = 1; m < members; m++) {
            DoubleBuffer in = region.reduceSlot(m);
            switch (op) {
                case SUM -> {
                    for (int i = 0; i < count; i++) {
                        out.put(i, out.get(i) + in.get(i));
                    }
                }
                case MAX -> {
                    for (int i = 0; i < count; i++) {
                        out.put(i, Math.max(out.get(i), in.get(i)));
                    }
                }
                case MIN -> {
                    for (int i = 0; i < count; i++) {
                        out.put(i, Math.min(out.get(i), in.get(i)));
                    }
                }
            }
        }
    }

    private void reduceLocally(LongBuffer out, int count, ReduceOp op) {
        out.put(0, region.reduceSlotLongs(0), 0, count);
        for (int m = 1; m < members; m++) {
            LongBuffer in = region.reduceSlotLongs(m);
            for (int i = 0; i < count; i++) {
                out.put(i, op.apply(out.get(i), in.get(i)));
            }
        }
    }

    /**
     * Waits for every member's arrival at {@code seq}. A daemon waits without limit for the first arrival (an idle
     * job; the back-off parks for 1/16 of the time waited so far, at most 1 ms); from then on, and always for an
     * in-process leader, the others have the timeout. A member whose process is gone fails the call at once.
     */
    private void awaitMembers(long seq) {
        arrivals.seq = seq;
        arrivals.seen = 0;
        if (daemon) {
            arrivals.anyIsEnough = true;
            await.until(arrivals, Await.NO_TIMEOUT, bell == null ? null : onBell);
        }
        arrivals.anyIsEnough = false;
        await.until(arrivals, timeoutNanos);
    }

    /**
     * An idle daemon between calls: announces its sleep in the region (a member that arrives from then on rings the
     * bell), looks for an arrival once more, then blocks on the bell. Measured with two daemons whose members are
     * attached but quiet: 2.5-2.7 % of a core each while parking every millisecond, 0.7 % asleep (the JVM's own
     * threads and the wake-ups for the liveness checks every 100 ms).
     */
    private void sleepOnBell(Await.Condition firstArrival, long maxNanos) {
        Doorbell b = bell;
        if (b == null) {
            LockSupport.parkNanos(Await.SLEEP_AFTER_NANOS); // closed meanwhile: the back-off's longest park
            return;
        }
        region.announceLeaderSleep();
        try {
            if (!firstArrival.met()) {
                long rings = b.rings();
                b.await(maxNanos / 1_000_000);
                metrics.leaderSlept(b.rings() - rings);
            }
        } catch (IOException | ClosedSelectorException e) {
            // closed by the shutdown hook, or broken: park from now on; the region's state says whether to go on
            bell = null;
        } finally {
            region.leaderAwake();
        }
    }

    /** Closes a daemon's doorbell (deletes its socket); the daemon parks if it waits again. */
    void closeBell() {
        Doorbell b = bell;
        bell = null;
        if (b != null) {
            b.interrupt();
            try {
                b.close();
            } catch (IOException e) {
                System.err.println("meridian leader: closing the doorbell " + region.bellPath() + ": "
                        + e.getMessage());
            }
        }
    }

    /** The members' arrival at call {@code seq}: the condition of {@link #awaitMembers}, reused every call. */
    private final class Arrivals implements Await.Condition {
        long seq;
        /** Members 0 .. seen - 1 have arrived. */
        int seen;
        /** Met by the first arrival (an idle daemon's wait), else by the last. */
        boolean anyIsEnough;

        @Override
        public boolean met() {
            if (anyIsEnough) {
                return anyArrived(seq);
            }
            while (seen < members && region.arrived(seen) >= seq) {
                seen++;
            }
            return seen == members;
        }

        @Override
        public void checkState() {
            if (region.state() != RegionDescriptor.STATE_READY) {
                throw new CollectiveException(region.failure()); // a member failed the call: its message says why
            }
        }

        @Override
        public void checkLiveness() {
            // also while idle: a daemon whose members were all killed (their workers, their host) fails, so that
            // its MPI job ends instead of waiting for members that will not come back
            for (int k = seen; k < members; k++) {
                long pid = region.memberPid(k);
                if (region.arrived(k) < seq && pid != 0 && !ProcessIdentity.alive(pid, region.memberStart(k))) {
                    metrics.memberFailure();
                    int block = region.firstBlock(region.shape.group()) + k;
                    throw failed(seq, arrivedOp(seq), "member " + k + " (block " + block + ", pid " + pid
                            + ") is gone");
                }
            }
        }

        @Override
        public RuntimeException timedOut(long timeoutNanos) {
            return failedTimeout(seq, "timed out after " + timeoutNanos / 1_000_000 + " ms waiting for "
                    + missing(region, seq));
        }
    }

    /** The operation of call {@code seq} as published by a member that arrived (0 if none did). */
    private int arrivedOp(long seq) {
        for (int k = 0; k < members; k++) {
            if (region.arrived(k) >= seq) {
                return region.op(k);
            }
        }
        return 0;
    }

    private boolean anyArrived(long seq) {
        for (int k = 0; k < members; k++) {
            if (region.arrived(k) >= seq) {
                return true;
            }
        }
        return false;
    }

    /** "member 2 (block 5, pid 123, gone), member 3 (block 6, not attached)", empty when all arrived; slow path. */
    static String missing(SharedRegion region, long seq) {
        StringBuilder out = new StringBuilder();
        int first = region.firstBlock(region.shape.group());
        for (int k = 0; k < region.shape.members(); k++) {
            if (region.arrived(k) < seq) {
                out.append(out.length() == 0 ? "" : ", ").append("member ").append(k).append(" (block ").append(first + k)
                        .append(", ").append(ProcessIdentity.describe(region.memberPid(k), region.memberStart(k))).append(')');
            }
        }
        return out.toString();
    }

    private String where(long seq, int code) {
        return "collective call #" + seq + (code == 0 ? "" : " (" + Ops.name(code) + ")") + " in group "
                + region.shape.group() + " of job " + region.jobId + ": ";
    }

    private CollectiveException failed(long seq, int code, String what) {
        return new CollectiveException(region.fail(where(seq, code) + what));
    }

    private CollectiveException failedTimeout(long seq, String what) {
        metrics.timeout();
        return new CollectiveTimeoutException(region.fail(where(seq, arrivedOp(seq)) + what));
    }
}
