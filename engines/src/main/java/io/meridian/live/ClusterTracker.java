package io.meridian.live;

import io.meridian.collective.BlockSync;
import io.meridian.collective.CollectiveException;
import io.meridian.collective.SingleProcessSync;
import io.meridian.matrix.LowerRows;
import io.meridian.mds.GrowingArrays;
import io.meridian.pwc.PwcEngine;
import io.meridian.pwc.PwcProgress;
import io.meridian.pwc.PwcResult;
import io.meridian.pwc.PwcSettings;
import io.meridian.shm.TmpfsSpace;
import java.util.Arrays;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The live map's clustering: DA-PWC runs in the background on the points the map held when it was asked (over their
 * lower-triangle rows read in place from the row stores, {@link PwcEngine#overLowerRows}: neither an N x N work file
 * nor a heap copy of the rows, which at N = 32,768 were 2.1 GB each), while the map goes on; each point that arrives
 * later gets its cluster from the frozen DA-PWC state ({@link FrozenClusters}) as soon as it is placed. Re-run as the
 * map grows, so that a cluster whose first points arrived late becomes a cluster of its own.
 *
 * <p>Two ways to run it:
 * <ul>
 *   <li>{@link #distributed}, as SPIDAL's dapwc: every task of the map holds a tracker and runs its part of each run
 *   over the rows it owns (their share of every product; M, C and A exchanged through a collective group of the
 *   clustering's own, separate from the rounds', which go on meanwhile). Nothing O(N^2) is in one process. Task 0
 *   decides when a run starts ({@link #startCommand}), the round carries its decision to the others in an allreduce it
 *   makes anyway ({@link LiveMap}), and every task {@link #start}s the same run in the same round. The engine gathers
 *   every point's label into every task's result; task 0 keeps them and the frozen state, the others only learn that
 *   their part succeeded;</li>
 *   <li>{@link #onTaskZero}: task 0 alone, reading every row (one participant).</li>
 * </ul>
 * Either way task 0 labels the points placed since a run started from its frozen state, reading their rows: each is
 * readable on task 0's host (its own, or, once it has come, the copy the row stores keep there across hosts, from
 * {@link #rowsNeededFrom} on).
 */
final class ClusterTracker implements AutoCloseable {
    private final LowerRows rows;
    private final PwcSettings settings;
    /** The most points (the map's capacity): labels and row grow up to it with the points (round thread only). */
    private final int capacity;
    /** How the map's rows are owned, for a distributed run; null: task 0 alone, over every row. */
    private final LiveMapSettings ownership;
    private final BlockSync sync;
    /** Task 0: keeps the labels and decides when a run starts. */
    private final boolean leads;
    /** One thread runs the runs one after the other, so the clustering group has one caller on this task. */
    private final ExecutorService runner;
    private int[] labels = new int[0];
    /** Task 0: the most points asked to be labelled ({@link #labelUpTo}). */
    private int labelsWanted;
    private short[] row = new short[0];
    private final double[] membership;
    private final AtomicReference<Finished> finished = new AtomicReference<>();
    private static volatile boolean priorityWarned;
    private Future<?> running;
    private FrozenClusters frozen;
    /** The frozen state for a thread other than the rounds' ({@link #frozenForAnotherThread}). */
    private volatile FrozenClusters shared;
    private int clusteredPoints;
    private int labelledPoints;
    private int clusters;
    private int requested;
    private int started;
    /** Runs whose result task 0 has taken ({@link #poll}): a new one asks for DA-VS on the frame showing it. */
    private long runsTaken;

    private record Finished(int n, PwcResult result, FrozenClusters frozen, RuntimeException error) {
    }

    private ClusterTracker(LowerRows rows, int capacity, PwcSettings settings, LiveMapSettings ownership,
                           BlockSync sync, boolean leads, String threadName) {
        this.rows = rows;
        this.settings = settings;
        this.capacity = capacity;
        this.ownership = ownership;
        this.sync = sync;
        this.leads = leads;
        this.membership = new double[settings.maxClusters];
        this.runner = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(() -> {
                lowerPriority();
                r.run();
            }, threadName);
            t.setDaemon(true);
            return t;
        });
    }

    /** Task 0 alone runs DA-PWC, reading every row (one participant). */
    static ClusterTracker onTaskZero(LowerRows rows, int capacity, PwcSettings settings) {
        return new ClusterTracker(rows, capacity, settings, null, SingleProcessSync.INSTANCE, true,
                "meridian-live-pwc");
    }

    /**
     * Task {@code task}'s part of DA-PWC distributed over every task of the map: it reads only the rows it owns
     * ({@link LiveMapSettings#ownedBelow}) and exchanges through {@code clusterSync}, whose block is the task's.
     */
    static ClusterTracker distributed(LowerRows rows, LiveMapSettings map, int task, BlockSync clusterSync,
                                      PwcSettings settings) {
        if (clusterSync.blocks() != map.tasks() || clusterSync.block() != task) {
            throw new IllegalArgumentException("task " + task + " of " + map.tasks() + " but the clustering group has"
                    + " block " + clusterSync.block() + " of " + clusterSync.blocks());
        }
        return new ClusterTracker(rows, map.capacity(), settings, map, clusterSync, task == 0,
                "meridian-live-pwc-" + task);
    }

    /** Room for the labels of points {@code 0 .. n-1}; a new point's label is -1 until it has one. */
    private void reserveLabels(int n) {
        int had = labels.length;
        if (leads && n > had) {
            labels = Arrays.copyOf(labels, GrowingArrays.grownLength(had, n, capacity));
            Arrays.fill(labels, had, labels.length, -1);
        }
    }

    /**
     * Takes the clusters of points {@code 0 .. n-1} from a resumed frame; they stand until a DA-PWC run finishes
     * (points after them wait for it, as they have no frozen state to be labelled from).
     */
    void preset(int[] frameLabels, int n) {
        reserveLabels(n);
        System.arraycopy(frameLabels, 0, labels, 0, n);
        int k = 0;
        for (int i = 0; i < n; i++) {
            k = Math.max(k, frameLabels[i] + 1);
        }
        clusters = k;
    }

    /** Whether each task's part reads only the rows it owns ({@link #distributed}). */
    boolean distributed() {
        return ownership != null;
    }

    boolean running() {
        return running != null && !running.isDone();
    }

    /** Whether no run is under way or wanted: the last one covered every point asked for. */
    boolean settled() {
        return !running() && finished.get() == null && clusteredPoints >= requested && !labelsWaiting();
    }

    /**
     * Task 0: the lowest id whose row the labelling may still read ({@link #labelUpTo}, and the points placed while a
     * run was under way once it ends). Rows below it are covered: labelled from a frozen state, or to be clustered by
     * a run that reads them where their owners keep them. So the publishing host's copies of other hosts' rows are
     * needed only from here on. It never falls (LiveMapClusteringTest deletes task 0's copies below it).
     */
    int rowsNeededFrom() {
        // the next run covers the points below its size, at least requested; from there on its end labels them again
        // (so not labelledPoints alone: a run asked for at n, started after more points were labelled, ends by
        // labelling from n on)
        int from = requested;
        if (frozen != null) {
            from = Math.min(from, labelledPoints);
        }
        if (running() || finished.get() != null) {
            from = Math.min(from, started); // a run's end labels the points placed since it started
        }
        return from;
    }

    /** Task 0: the runs whose result it has taken; grows by one with each run's labels. */
    long runsTaken() {
        return runsTaken;
    }

    /** The most points a DA-PWC run was asked for. */
    int requested() {
        return requested;
    }

    int clusters() {
        return clusters;
    }

    int label(int i) {
        return i < labels.length ? labels[i] : -1;
    }

    /**
     * Asks for DA-PWC on points {@code 0 .. n-1}: on task 0 alone it starts in the background now, or once the run
     * under way ends ({@link #poll}); distributed, task 0's {@link #startCommand} says when.
     */
    void request(int n) {
        requested = Math.max(requested, n);
        startIfWanted();
    }

    private boolean wanted() {
        return requested > started && !running() && finished.get() == null;
    }

    private void startIfWanted() {
        if (ownership == null && wanted()) {
            start(requested);
        }
    }

    /**
     * Distributed, task 0: the points of the run every task is to start now, or -1 for none. A run is started only
     * once task 0 has taken the last one's result, which the others' parts then have finished too (its last
     * exchange was theirs).
     */
    int startCommand() {
        return ownership != null && leads && wanted() ? requested : -1;
    }

    /**
     * Starts the run over points {@code 0 .. n-1} on this task's runner thread: distributed, every task calls it in
     * the same round with the same n ({@link #startCommand}).
     */
    void start(int n) {
        requested = Math.max(requested, n);
        started = n;
        int[][] owned = ownership == null ? new int[][] {every(n)} : ownership.ownedBelow(n);
        running = runner.submit(() -> finished.set(cluster(n, owned)));
    }

    private static int[] every(int n) {
        int[] ids = new int[n];
        Arrays.setAll(ids, i -> i);
        return ids;
    }

    /**
     * DA-PWC takes the CPU the rounds leave: at normal priority, on 2 cores shared with the workers' other threads, it
     * took a core's share from the rounds that new points wait for (bench stream, blobs N = 4000).
     */
    private static void lowerPriority() {
        String failure = BackgroundPriority.lowerCurrentThread();
        if (failure != null && !priorityWarned) {
            priorityWarned = true;
            System.getLogger(ClusterTracker.class.getName()).log(System.Logger.Level.WARNING,
                    "live map: DA-PWC runs at normal priority: " + failure);
        }
    }

    private Finished cluster(int n, int[][] owned) {
        try {
            PwcResult result = PwcEngine.overLowerRows(rows, n, owned, sync, settings, PwcProgress.NONE).run();
            return new Finished(n, result, leads ? FrozenClusters.of(result) : null, null);
        } catch (CollectiveException e) {
            return new Finished(n, null, null, new CollectiveException("live map: DA-PWC of the first " + n
                    + " points failed on block " + sync.block() + " of " + sync.blocks() + ": " + e.getMessage(), e));
        } catch (RuntimeException e) {
            return new Finished(n, null, null, e);
        } catch (InternalError e) {
            if (!TmpfsSpace.isMappedWriteFault(e)) {
                throw e;
            }
            // a store into the clustering region's tmpfs that could not be backed: the group re-forms, as for any
            // failed exchange, instead of this thread's Error halting the worker
            return new Finished(n, null, null, new CollectiveException("live map: DA-PWC of the first " + n
                    + " points failed on block " + sync.block() + " of " + sync.blocks() + ": a write into its"
                    + " shared memory faulted (its tmpfs is full)", e));
        }
    }

    /**
     * Takes a finished run, if any: on task 0 its labels for the points it covered, then frozen-state labels for the
     * points placed since (true: the labels changed); on another task, only whether its part succeeded (false).
     * Throws the run's error (a {@link CollectiveException} when the clustering group failed: the group re-forms).
     */
    boolean poll(int n) {
        Finished f = finished.getAndSet(null);
        if (f == null) {
            startIfWanted();
            return labelledPoints < n && labelUpTo(n); // rows that had not come here before
        }
        // handing over its result is the run's last act, but its thread may not have exited yet: were it still
        // counted as running, the frame these clusters are shown in would say "not settled", and an idle map
        // publishes no other (LiveMapTest's settled-frame test failed so once in CI; TwoHostClusterIT's reference map
        // cycled 11 minutes)
        running = null;
        if (f.error() != null) {
            throw f.error();
        }
        clusteredPoints = f.n();
        if (!leads) {
            return false;
        }
        frozen = f.frozen();
        shared = frozen.forAnotherThread();
        row = GrowingArrays.atLeast(row, clusteredPoints, capacity);
        reserveLabels(Math.max(n, f.n()));
        clusters = f.result().clusters();
        for (int i = 0; i < f.n(); i++) {
            labels[i] = f.result().label(i);
        }
        labelledPoints = f.n();
        labelUpTo(n);
        runsTaken++;
        startIfWanted();
        return true;
    }

    /**
     * Task 0: gives every point below {@code n} not yet labelled its cluster from the frozen state, in id order up to
     * the first whose row is not here yet: across hosts the publishing host's copy of another host's row comes by a
     * tuple of its own, which can come after the row is stored where it belongs (a lost link delays it until Storm
     * replays the row, up to the message timeout: TwoHostFaultsIT stopped the rounds reading such a row). That point
     * and those after it keep the label they had (-1 if none) until a later round finds its row. True if any point got
     * a label.
     */
    boolean labelUpTo(int n) {
        if (!leads) {
            return false;
        }
        reserveLabels(n);
        labelsWanted = Math.max(labelsWanted, n);
        if (frozen == null) {
            return false;
        }
        int from = labelledPoints;
        int i = from;
        for (; i < n && rows.isStored(i); i++) {
            rows.copy(i, 0, clusteredPoints, row);
            labels[i] = frozen.assign(row, membership);
        }
        labelledPoints = Math.max(labelledPoints, i);
        return i > from;
    }

    /** Task 0: whether a point the map holds waits for its row to be labelled from the frozen state. */
    private boolean labelsWaiting() {
        return leads && frozen != null && labelledPoints < labelsWanted;
    }

    /**
     * The frozen state of the last DA-PWC run installed, for one thread other than the rounds' (its own working array;
     * null before the first run, and on tasks other than 0): the arrival placement labels new points with it.
     */
    FrozenClusters frozenForAnotherThread() {
        return shared;
    }

    void copyLabels(int n, int[] out) {
        reserveLabels(n);
        System.arraycopy(labels, 0, out, 0, n);
    }

    @Override
    public void close() {
        runner.shutdownNow();
    }
}
