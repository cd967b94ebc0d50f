package io.meridian.live;

import io.meridian.davs.FrozenSponge;
import io.meridian.mds.GrowingArrays;
import java.util.Arrays;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The live map's outlier flags, on the publishing task (task 0): after each DA-PWC run the frame that shows its
 * clusters is handed here ({@link #request}), and DA-VS runs on that frame's points in the background
 * ({@link MapOutliers}, on a low-priority thread of its own, as DA-PWC does), while the rounds go on. Its labels flag
 * the points it covered; every point placed since, and every later one, is flagged from the run's frozen state
 * ({@link FrozenSponge}) at its place in the frame that first shows it ({@link #flagUpTo}). A request made while a run
 * is under way waits for it, only the newest one. Round thread, except the runs themselves.
 */
final class OutlierTracker implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(OutlierTracker.class.getName());

    private final OutlierSettings settings;
    private final int capacity;
    private final int maxClusters;
    private final AtomicReference<Finished> finished = new AtomicReference<>();
    private ExecutorService runner;
    private Future<?> running;
    /** The newest request made while a run was under way: started when it ends. */
    private Request waiting;
    /** Read by the arrival placement's thread too. */
    private volatile FrozenSponge frozen;
    private boolean[] flags = new boolean[0];
    /** Points below it have their flag (from a run's labels or its frozen state). */
    private int flaggedPoints;
    private long runs;
    private long failures;
    private double lastRunSeconds = Double.NaN;

    private record Request(double[] xyz, int[] labels, int n) {
    }

    private record Finished(int n, MapOutliers.Detection detection, double seconds, RuntimeException error) {
    }

    /** @param pwcClusters DA-PWC's most clusters: DA-VS's limit follows ({@link MapOutliers#davsClusters}) */
    OutlierTracker(OutlierSettings settings, int capacity, int pwcClusters) {
        this.settings = settings;
        this.capacity = capacity;
        this.maxClusters = MapOutliers.davsClusters(pwcClusters);
    }

    /**
     * A DA-VS run over the first {@code n} points of a frame, {@code xyz} (n x 3) and their DA-PWC clusters
     * {@code labels}: the arrays are the tracker's to keep.
     */
    void request(double[] xyz, int[] labels, int n) {
        Request r = new Request(xyz, labels, n);
        if (running()) {
            waiting = r;
            return;
        }
        start(r);
    }

    private void start(Request r) {
        if (runner == null) {
            runner = Executors.newSingleThreadExecutor(task -> {
                Thread t = new Thread(() -> {
                    BackgroundPriority.lowerCurrentThread();
                    task.run();
                }, "meridian-live-davs");
                t.setDaemon(true);
                return t;
            });
        }
        running = runner.submit(() -> finished.set(detect(r)));
    }

    private Finished detect(Request r) {
        long t0 = System.nanoTime();
        try {
            MapOutliers.Detection d = MapOutliers.detect(r.xyz(), r.labels(), r.n(), settings, maxClusters);
            return new Finished(r.n(), d, (System.nanoTime() - t0) / 1e9, null);
        } catch (RuntimeException e) {
            return new Finished(r.n(), null, (System.nanoTime() - t0) / 1e9, e);
        }
    }

    boolean running() {
        return running != null && !running.isDone();
    }

    /** Whether no run is under way, waiting, or finished and not yet taken. */
    boolean settled() {
        return !running() && waiting == null && finished.get() == null;
    }

    /**
     * Takes a finished run, if any: its labels flag the points it covered, the points after them are flagged again
     * by the next {@link #flagUpTo}. True when the flags changed. A failed run is logged and counted; the flags stand.
     */
    boolean poll() {
        Finished f = finished.getAndSet(null);
        if (f == null) {
            return false;
        }
        running = null;
        if (waiting != null) {
            Request next = waiting;
            waiting = null;
            start(next);
        }
        runs++;
        lastRunSeconds = f.seconds();
        if (f.error() != null) {
            failures++;
            LOG.log(System.Logger.Level.WARNING, "live map: DA-VS over the first " + f.n() + " points failed; the"
                    + " outlier flags stand as they were", f.error());
            return false;
        }
        if (f.detection() == null) {
            return false; // nothing to scale by: no flags yet
        }
        frozen = f.detection().frozen();
        reserve(f.n());
        for (int i = 0; i < f.n(); i++) {
            flags[i] = f.detection().outlier(i);
        }
        flaggedPoints = f.n();
        return true;
    }

    /**
     * Flags every point below {@code n} not flagged yet from the frozen state, at its place in {@code xyz} (the frame
     * being published, n x 3). O(K) a point; allocates nothing once the flags have room.
     */
    void flagUpTo(int n, double[] xyz) {
        reserve(n);
        if (frozen == null) {
            return;
        }
        for (int i = flaggedPoints; i < n; i++) {
            flags[i] = frozen.inSponge(xyz, MapOutliers.DIM * i);
        }
        flaggedPoints = Math.max(flaggedPoints, n);
    }

    /** Takes the flags of a resumed frame's points; they stand until a DA-VS run finishes. */
    void preset(boolean[] frameFlags, int n) {
        reserve(n);
        System.arraycopy(frameFlags, 0, flags, 0, n);
        flaggedPoints = frozen == null ? 0 : n;
    }

    private void reserve(int n) {
        if (n > flags.length) {
            flags = Arrays.copyOf(flags, GrowingArrays.grownLength(flags.length, n, capacity));
        }
    }

    /** Copies the flags of points {@code 0 .. n-1} into {@code out} (null: counts only); returns how many are set. */
    int copyFlags(int n, boolean[] out) {
        reserve(n);
        if (out != null) {
            System.arraycopy(flags, 0, out, 0, n);
        }
        int count = 0;
        for (int i = 0; i < n; i++) {
            count += flags[i] ? 1 : 0;
        }
        return count;
    }

    /** The last run's frozen state, for any thread ({@link FrozenSponge} is immutable), or null before the first. */
    FrozenSponge frozen() {
        return frozen;
    }

    long runs() {
        return runs;
    }

    long failures() {
        return failures;
    }

    double lastRunSeconds() {
        return lastRunSeconds;
    }

    @Override
    public void close() {
        if (runner != null) {
            runner.shutdownNow();
        }
    }
}
