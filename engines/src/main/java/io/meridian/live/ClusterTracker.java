package io.meridian.live;

import io.meridian.collective.SingleProcessSync;
import io.meridian.matrix.LowerRows;
import io.meridian.mds.GrowingArrays;
import io.meridian.pwc.PwcEngine;
import io.meridian.pwc.PwcProgress;
import io.meridian.pwc.PwcResult;
import io.meridian.pwc.PwcSettings;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The live map's clustering, kept by its publishing task: DA-PWC runs in the background on the points the map held
 * when it was asked (over their lower-triangle rows read in place from the row stores, {@link PwcEngine#overLowerRows}:
 * neither an N x N work file nor a heap copy of the rows, which at N = 32,768 were 2.1 GB each), while the map goes
 * on; each point that arrives later gets its cluster from the frozen DA-PWC state
 * ({@link FrozenClusters}) as soon as it is placed. Re-run as the map grows, so that a cluster whose first points
 * arrived late becomes a cluster of its own. Single host: it reads every row store block.
 */
final class ClusterTracker implements AutoCloseable {
    private final LowerRows rows;
    private final PwcSettings settings;
    /** The most points (the map's capacity): labels and row grow up to it with the points (round thread only). */
    private final int capacity;
    private int[] labels = new int[0];
    private short[] row = new short[0];
    private final double[] membership;
    private final AtomicReference<Finished> finished = new AtomicReference<>();
    private static volatile boolean priorityWarned;
    private Thread running;
    private FrozenClusters frozen;
    /** The frozen state for a thread other than the rounds' ({@link #frozenForAnotherThread}). */
    private volatile FrozenClusters shared;
    private int clusteredPoints;
    private int labelledPoints;
    private int clusters;
    private int requested;
    private int started;

    private record Finished(int n, PwcResult result, FrozenClusters frozen, RuntimeException error) {
    }

    ClusterTracker(LowerRows rows, int capacity, PwcSettings settings) {
        this.rows = rows;
        this.settings = settings;
        this.capacity = capacity;
        this.membership = new double[settings.maxClusters];
    }

    /** Room for the labels of points {@code 0 .. n-1}; a new point's label is -1 until it has one. */
    private void reserveLabels(int n) {
        int had = labels.length;
        if (n > had) {
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

    boolean running() {
        return running != null && running.isAlive();
    }

    /** Whether no run is under way or wanted: the last one covered every point asked for. */
    boolean settled() {
        return !running() && finished.get() == null && clusteredPoints >= requested;
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
     * Asks for DA-PWC on points {@code 0 .. n-1}: starts it in the background now, or once the run under way ends
     * ({@link #poll}).
     */
    void request(int n) {
        requested = Math.max(requested, n);
        startIfWanted();
    }

    private void startIfWanted() {
        if (requested <= started || running() || finished.get() != null) {
            return;
        }
        int n = requested;
        started = n;
        Thread t = new Thread(() -> {
            lowerPriority();
            finished.set(cluster(n));
        }, "meridian-live-pwc");
        t.setDaemon(true);
        running = t;
        t.start();
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

    private Finished cluster(int n) {
        try {
            int[] every = new int[n];
            Arrays.setAll(every, i -> i);
            PwcResult result = PwcEngine.overLowerRows(rows, n, new int[][] {every}, SingleProcessSync.INSTANCE,
                    settings, PwcProgress.NONE).run();
            return new Finished(n, result, FrozenClusters.of(result), null);
        } catch (RuntimeException e) {
            return new Finished(n, null, null, e);
        }
    }

    /**
     * Installs a finished run, if any: its labels for the points it covered, then frozen-state labels for the points
     * placed since. Returns true when the labels changed. Throws the run's error.
     */
    boolean poll(int n) {
        Finished f = finished.getAndSet(null);
        if (f == null) {
            startIfWanted();
            return false;
        }
        // handing over its result is the run's last act, but its thread may not have exited yet: were it still
        // counted as running, the frame these clusters are shown in would say "not settled", and an idle map
        // publishes no other (LiveMapTest's settled-frame test failed so once in CI; TwoHostClusterIT's reference map
        // cycled 11 minutes)
        running = null;
        if (f.error() != null) {
            throw f.error();
        }
        frozen = f.frozen();
        shared = frozen.forAnotherThread();
        clusteredPoints = f.n();
        row = GrowingArrays.atLeast(row, clusteredPoints, capacity);
        reserveLabels(Math.max(n, f.n()));
        clusters = f.result().clusters();
        for (int i = 0; i < f.n(); i++) {
            labels[i] = f.result().label(i);
        }
        labelledPoints = f.n();
        labelUpTo(n);
        startIfWanted();
        return true;
    }

    /** Gives every point below {@code n} not yet labelled its cluster from the frozen state. */
    void labelUpTo(int n) {
        reserveLabels(n);
        if (frozen == null) {
            return;
        }
        for (int i = labelledPoints; i < n; i++) {
            rows.copy(i, 0, clusteredPoints, row);
            labels[i] = frozen.assign(row, membership);
        }
        labelledPoints = Math.max(labelledPoints, n);
    }

    /**
     * The frozen state of the last DA-PWC run installed, for one thread other than the rounds' (its own working array;
     * null before the first run): the arrival placement labels new points with it.
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
        if (running != null) {
            running.interrupt();
        }
    }
}
