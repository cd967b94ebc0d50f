package io.meridian.perf;

import io.meridian.collective.CollectiveBlockSync;
import io.meridian.collective.TwoLevelCollectives;
import io.meridian.live.ArrivalPlacer;
import io.meridian.live.Arrivals;
import io.meridian.live.BackgroundPriority;
import io.meridian.live.Frame;
import io.meridian.live.FrameListener;
import io.meridian.live.LiveMap;
import io.meridian.live.LiveMapSettings;
import io.meridian.live.Snapshot;
import io.meridian.live.SnapshotSummary;
import io.meridian.mds.MdsOptions;
import io.meridian.metrics.ResidentMemory;
import io.meridian.mds.TriangleSmacof;
import io.meridian.shm.OwnerOnlyFiles;
import io.meridian.stream.live.IdleRounds;
import io.meridian.stream.live.LiveMapBolt;
import io.meridian.stream.row.RowStoreReader;
import io.meridian.stream.row.RowStores;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

/**
 * {@code bench scale --part placement}: how soon a new point shows in a live map of N points while the map refines.
 * The real engines without Storm, as the live-map bolt runs them: the map's tasks as threads of one process (the
 * shared-memory collectives, rounds at nice {@value #ROUNDS_NICE} as {@code map.roundsNice}), task 0's arrival
 * placer on a thread of its own ({@link ArrivalPlacer}, woken by each stored row and each frame, as the bolt's), over
 * row-store files; DA-PWC distributed over a second group of the same tasks, and a round that shows nothing followed
 * by the bolt's wait ({@link IdleRounds}, {@code map.idleMs} {@value #IDLE_MS} and {@code map.idleMaxMs}
 * {@value #IDLE_MAX_MS}; task 0 woken by each stored row, as by the row store's notification). N - M rows are stored first and the map resumes from a layout of them (their principal axes; a
 * cold anneal of 100K points would take an hour), so its rounds are refining when the last M rows are stored at
 * {@value #RATE} rows/s. Per row: stored -> its point first published (by the arrival placer or in a frame of the
 * rounds, whichever comes first: what a viewer sees) and stored -> the first frame of the rounds holding it (what the
 * snapshot shows). Runs in a JVM of its own, so that the clustering the resumed map starts in the background (DA-PWC
 * of N points, which does not stop when asked) ends with it, and the heap and RSS are this part's.
 */
final class ScalePlacement {
    static final double RATE = 50;
    private static final int ROUNDS_NICE = 10;
    /** map.idleMs and map.idleMaxMs, the defaults. */
    private static final int IDLE_MS = 5;
    private static final int IDLE_MAX_MS = 50;
    /** As the live-map bolt: an arrival older than this is left to the rounds. */
    private static final long MAX_AGE_MS = 1000;
    private static final long IDLE_NANOS = TimeUnit.MILLISECONDS.toNanos(100);
    private static final String FIGURE = "figure ";

    private ScalePlacement() {
    }

    /**
     * Runs the part in a child JVM for {@code n} points, the last {@code m} streamed, under {@code root}; puts its
     * figures into {@code figures} with {@code key} before each name.
     */
    static void run(int n, int tasks, int m, Path root, Figures figures, String key) throws Exception {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> command = new ArrayList<>(List.of(java, "-Xmx2g"));
        for (String jvmArg : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
            if (jvmArg.startsWith("--add-") || jvmArg.startsWith("-Dmeridian.")) {
                command.add(jvmArg); // among them --add-modules jdk.incubator.vector: the placement's vector pass
            }
        }
        command.addAll(List.of("-cp", System.getProperty("java.class.path"), ScalePlacement.class.getName(),
                Integer.toString(n), Integer.toString(tasks), Integer.toString(m),
                root.resolve("placement-n" + n).toString()));
        Process child = new ProcessBuilder(command).redirectErrorStream(true).start();
        try (BufferedReader in = new BufferedReader(new InputStreamReader(child.getInputStream(),
                StandardCharsets.UTF_8))) {
            String line;
            while ((line = in.readLine()) != null) {
                if (line.startsWith(FIGURE)) {
                    String[] f = line.substring(FIGURE.length()).split(" ");
                    double value = Double.parseDouble(f[1]);
                    figures.put(key + f[0], value == Math.rint(value) && Math.abs(value) < 1e15 ? (Object) (long) value
                            : (Object) value);
                } else if (!line.equals("WARNING: Using incubator modules: jdk.incubator.vector")) {
                    System.out.println(line);
                }
            }
        }
        int status = child.waitFor();
        if (status != 0) {
            throw new IllegalStateException("bench scale: the placement part's JVM (N = " + n + ") exited with status "
                    + status + " (its output is above)");
        }
    }

    /** The child: {@code N TASKS M DIR}. */
    public static void main(String[] args) throws Exception {
        int n = Integer.parseInt(args[0]);
        int tasks = Integer.parseInt(args[1]);
        int m = Integer.parseInt(args[2]);
        Path dir = Path.of(args[3]);
        int status = 0;
        try {
            new Run(n, tasks, m, dir).measure();
        } catch (Exception e) {
            System.out.println("bench scale: placement failed: " + e);
            e.printStackTrace(System.out);
            status = 1;
        } finally {
            OwnerOnlyFiles.deleteTree(dir);
        }
        System.exit(status); // the resumed map's DA-PWC thread does not stop when asked
    }

    private static void figure(String name, double value) {
        System.out.println(FIGURE + name + " " + value);
    }

    private static final class Run {
        private final int n;
        private final int tasks;
        private final int first;
        private final Path stores;
        private final Path work;
        private final String job = "bench-scale-placement-" + ProcessHandle.current().pid();
        private final ScaleRows rows;
        /** Per id: stored (ns, stamped once the row is written), first shown, first frame of the rounds, placed here. */
        private final AtomicLongArray storedAt;
        private final AtomicLongArray shownAt;
        private final AtomicLongArray frameAt;
        private final AtomicLongArray arrivalAt;
        /** What the arrival placer reads: when a row was stored, in ms, set once the row is in the store. */
        private final AtomicLongArray storedAtMillis;
        private volatile int highestStored = -1;
        private volatile Frame last;
        private volatile LiveMap publishing;
        private volatile Thread arrivals;
        /** Task 0's round thread, and whether it waits after a round that showed nothing (the feeder wakes it). */
        private volatile Thread taskZero;
        private volatile boolean taskZeroIdle;
        private volatile boolean stopRequested;
        private volatile boolean stop;
        private volatile boolean warm;
        private final List<double[]> roundFigures = new ArrayList<>();
        private final List<Long> placeNanosPerPoint = new ArrayList<>();
        private final List<Long> waitNanos = new ArrayList<>();
        private final List<Long> placeCpuNanosPerPoint = new ArrayList<>();
        /** Per streamed row: how long its store took (the feeding thread's). */
        private final long[] storeNanos;

        Run(int n, int tasks, int m, Path dir) {
            this.n = n;
            this.tasks = tasks;
            this.first = n - m;
            this.stores = dir.resolve("rows");
            this.work = dir.resolve("work");
            this.rows = new ScaleRows(n);
            this.storedAt = new AtomicLongArray(n);
            this.shownAt = new AtomicLongArray(n);
            this.frameAt = new AtomicLongArray(n);
            this.arrivalAt = new AtomicLongArray(n);
            this.storedAtMillis = new AtomicLongArray(n);
            this.storeNanos = new long[m];
        }

        void measure() throws Exception {
            OwnerOnlyFiles.deleteTree(stores.getParent());
            long t0 = System.nanoTime();
            rows.store(stores, 0, first, tasks, "placement N = " + n);
            System.out.printf(Locale.ROOT, "  placement N = %d: stored rows 0..%d in %.1f s; the map resumes from"
                    + " their principal axes, %d tasks; load average %.2f%n", n, first - 1,
                    (System.nanoTime() - t0) / 1e9, tasks, load());
            Snapshot resume = new Snapshot(new SnapshotSummary(job, 1, first, 1.0, 0, ScaleRows.CENTRES, 0, 0, 0,
                    0, false, 0, 0, first, System.currentTimeMillis(), false), rows.principalLayout(first),
                    Arrays.copyOf(rows.truth(), first), new boolean[first]);
            AtomicReference<Throwable> failure = new AtomicReference<>();
            Thread placer = new Thread(() -> placeArrivals(failure), "scale-placement-arrivals");
            placer.setDaemon(true);
            arrivals = placer;
            placer.start();
            Thread[] threads = startTasks(resume, failure);
            try {
                long waitStart = System.nanoTime();
                while ((last == null || !warm) && failure.get() == null) {
                    LockSupport.parkNanos(10_000_000);
                }
                System.out.printf(Locale.ROOT, "  placement N = %d: the first frame after %.1f s; now %d rows at %.0f"
                        + " rows/s; load average %.2f%n", n, (System.nanoTime() - waitStart) / 1e9, n - first, RATE,
                        load());
                double loadBefore = load();
                feed(failure);
                long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(10);
                while (failure.get() == null && !allInFrames() && System.nanoTime() < deadline) {
                    LockSupport.parkNanos(20_000_000);
                }
                report(loadBefore);
            } finally {
                stopRequested = true;
                for (Thread t : threads) {
                    t.join(TimeUnit.MINUTES.toMillis(5));
                }
                arrivals = null;
                LockSupport.unpark(placer);
                placer.join(5000);
                TwoLevelCollectives.removeStaleRegions(Path.of("/dev/shm"), job);
                TwoLevelCollectives.removeStaleRegions(Path.of("/dev/shm"), job + "-pwc");
            }
            if (failure.get() != null) {
                throw new IllegalStateException("placement N = " + n + ": " + failure.get(), failure.get());
            }
        }

        private Thread[] startTasks(Snapshot resume, AtomicReference<Throwable> failure) {
            LiveMapSettings settings = new LiveMapSettings(n, ScaleRows.BLOCK_ROWS, tasks, first, 20, 1e-4, 2.0, 1.0,
                    MdsOptions.DEFAULT_ALPHA, MdsOptions.DEFAULT_TMIN_FACTOR, ScaleRows.CENTRES, 1);
            int doubles = TriangleSmacof.reduceCapacity(n);
            int clusterDoubles = LiveMapBolt.clusterDoubles(settings);
            String clusterJob = job + "-pwc";
            // every task leaves after the same round: the decision is taken once all have finished it
            CyclicBarrier afterRound = new CyclicBarrier(tasks, () -> stop = stopRequested);
            TwoLevelCollectives.removeStaleRegions(Path.of("/dev/shm"), job);
            TwoLevelCollectives.removeStaleRegions(Path.of("/dev/shm"), clusterJob);
            Thread[] threads = new Thread[tasks];
            for (int t = 0; t < tasks; t++) {
                int task = t;
                threads[t] = new Thread(() -> {
                    BackgroundPriority.lowerCurrentThread(ROUNDS_NICE);
                    if (task == 0) {
                        taskZero = Thread.currentThread();
                    }
                    // DA-PWC distributed over a second group of the same tasks, as the live map bolt runs it
                    try (TwoLevelCollectives clustering = TwoLevelCollectives.singleHost(clusterJob, task, tasks,
                            clusterDoubles, clusterDoubles, Path.of("/dev/shm"), Duration.ofMinutes(5));
                         TwoLevelCollectives c = TwoLevelCollectives.singleHost(job, task, tasks, doubles, doubles,
                            Path.of("/dev/shm"), Duration.ofMinutes(5));
                         LiveMap live = new LiveMap(settings, task, new RowStoreReader(stores, ScaleRows.BLOCK_ROWS, n),
                                 new CollectiveBlockSync(c), new CollectiveBlockSync(clustering), work,
                                 task == 0 ? listener() : null)) {
                        if (task == 0) {
                            live.resume(resume);
                            publishing = live;
                        }
                        IdleRounds idle = new IdleRounds(IDLE_MS, IDLE_MAX_MS);
                        while (!stop) {
                            if (live.round() == null) {
                                long park = idle.parkNanos(live.awaitingRows(), System.nanoTime());
                                taskZeroIdle = task == 0;
                                LockSupport.parkNanos(park);
                                taskZeroIdle = false;
                            } else {
                                idle.reset();
                            }
                            afterRound.await(5, TimeUnit.MINUTES);
                        }
                    } catch (Throwable e) {
                        failure.compareAndSet(null, e);
                        stopRequested = true;
                        stop = true;
                    }
                }, "scale-placement-task-" + t);
                threads[t].start();
            }
            return threads;
        }

        private FrameListener listener() {
            return new FrameListener() {
                @Override
                public void onFrame(Frame f) {
                    long now = System.nanoTime();
                    for (int i = Math.max(first, f.n() - f.placed()); i < f.n(); i++) {
                        frameAt.compareAndSet(i, 0, now);
                        shownAt.compareAndSet(i, 0, now);
                    }
                    synchronized (roundFigures) {
                        roundFigures.add(new double[] {f.n(), f.iterations(), f.roundSeconds(), f.computeSeconds(),
                                f.placed()});
                    }
                    last = f; // its points are a copy of its own (the publishing task's frames)
                    Thread placer = arrivals;
                    if (placer != null) {
                        LockSupport.unpark(placer);
                    }
                }
            };
        }

        /** The bolt's arrival thread: places new points against the last frame as soon as they are stored. */
        private void placeArrivals(AtomicReference<Throwable> failure) {
            ThreadMXBean threads = ManagementFactory.getThreadMXBean();
            try (ArrivalPlacer placer = new ArrivalPlacer(new RowStoreReader(stores, ScaleRows.BLOCK_ROWS, n))) {
                placer.warmUp();
                warm = true;
                while (arrivals == Thread.currentThread()) {
                    LockSupport.parkNanos(IDLE_NANOS);
                    Arrivals a;
                    do {
                        Frame f = last;
                        LiveMap map = publishing;
                        if (f == null) {
                            break;
                        }
                        long start = System.nanoTime();
                        long cpuStart = threads.getCurrentThreadCpuTime();
                        a = placer.place(f, map == null ? null : map.frozenClusters(),
                                map == null ? null : map.frozenOutliers(), highestStored + 1, storedAtMillis::get,
                                System.currentTimeMillis() - MAX_AGE_MS);
                        if (a != null) {
                            long now = System.nanoTime();
                            long cpu = threads.getCurrentThreadCpuTime() - cpuStart;
                            synchronized (placeNanosPerPoint) {
                                placeNanosPerPoint.add((now - start) / a.count());
                                placeCpuNanosPerPoint.add(cpu / a.count());
                                for (int id : a.ids()) {
                                    waitNanos.add(start - storedAt.get(id));
                                }
                            }
                            for (int id : a.ids()) {
                                arrivalAt.compareAndSet(id, 0, now);
                                shownAt.compareAndSet(id, 0, now);
                            }
                        }
                    } while (a != null);
                }
            } catch (Throwable e) {
                failure.compareAndSet(null, e);
            }
        }

        /** Stores rows first .. n-1 at {@link #RATE} rows/s, waking the arrival placer after each (as the bolt is). */
        private void feed(AtomicReference<Throwable> failure) throws Exception {
            short[] scratch = new short[n];
            try (RowStores out = new RowStores(stores, ScaleRows.BLOCK_ROWS, n, b -> true)) {
                long start = System.nanoTime();
                for (int i = first; i < n && failure.get() == null; i++) {
                    long due = start + (long) ((i - first) * 1e9 / RATE);
                    for (long wait = due - System.nanoTime(); wait > 0; wait = due - System.nanoTime()) {
                        LockSupport.parkNanos(wait);
                    }
                    var row = rows.row(i, scratch);
                    long storeStart = System.nanoTime();
                    out.store(row);
                    // stored once written, as the row-store bolt announces a row after its write
                    long stored = System.nanoTime();
                    storeNanos[i - first] = stored - storeStart;
                    storedAt.set(i, stored);
                    storedAtMillis.set(i, System.currentTimeMillis()); // the placer may take it once it is stored
                    highestStored = i;
                    Thread placer = arrivals;
                    if (placer != null) {
                        LockSupport.unpark(placer);
                    }
                    if (taskZeroIdle) {
                        LockSupport.unpark(taskZero); // as the bolt's notification wakes an idle task 0
                    }
                }
            }
        }

        private boolean allInFrames() {
            for (int i = first; i < n; i++) {
                if (frameAt.get(i) == 0) {
                    return false;
                }
            }
            return true;
        }

        private void report(double loadBefore) {
            long[] shown = latencies(shownAt);
            long[] inFrame = latencies(frameAt);
            long byArrival = 0;
            for (int i = first; i < n; i++) {
                if (arrivalAt.get(i) != 0 && arrivalAt.get(i) == shownAt.get(i)) {
                    byArrival++;
                }
            }
            long[] placeNs;
            long[] waitNs;
            long[] placeCpuNs;
            synchronized (placeNanosPerPoint) {
                placeCpuNs = placeCpuNanosPerPoint.stream().mapToLong(Long::longValue).sorted().toArray();
                placeNs = placeNanosPerPoint.stream().mapToLong(Long::longValue).sorted().toArray();
                waitNs = waitNanos.stream().mapToLong(Long::longValue).sorted().toArray();
            }
            double[] iterationSeconds;
            synchronized (roundFigures) {
                iterationSeconds = roundFigures.stream().filter(r -> r[1] > 0).mapToDouble(r -> r[3] / r[1])
                        .sorted().toArray();
            }
            long[] storeNs = storeNanos.clone();
            Arrays.sort(storeNs);
            double load = load();
            System.out.printf(Locale.ROOT, "  placement N = %d, %d rows at %.0f rows/s: row stored -> point published"
                    + " p50 %.1f ms, p99 %.1f ms, max %.1f ms (goal p99 <= 100 ms; %d of %d first shown by the arrival"
                    + " placer); -> first frame of the rounds p50 %.0f ms, p99 %.0f ms, max %.0f ms%n", n, n - first,
                    RATE, ms(quantile(shown, 0.5)), ms(quantile(shown, 0.99)), ms(quantile(shown, 1)), byArrival,
                    n - first, ms(quantile(inFrame, 0.5)), ms(quantile(inFrame, 0.99)), ms(quantile(inFrame, 1)));
            System.out.printf(Locale.ROOT, "    where it goes: storing a row (before 'stored') p50 %.1f ms, p99 %.1f ms,"
                    + " max %.1f ms; stored -> the placer starts on it p50 %.1f ms, p99 %.1f ms; placing one point against the frame (its whole row) p50 %.1f ms, p99 %.1f ms wall, p50"
                    + " %.1f ms of CPU; a round's work per SMACOF iteration (median) %.2f s; load average %.2f before,"
                    + " %.2f after%n", ms(quantile(storeNs, 0.5)), ms(quantile(storeNs, 0.99)), ms(quantile(storeNs, 1)),
                    ms(quantile(waitNs, 0.5)), ms(quantile(waitNs, 0.99)),
                    ms(quantile(placeNs, 0.5)), ms(quantile(placeNs, 0.99)), ms(quantile(placeCpuNs, 0.5)),
                    median(iterationSeconds), loadBefore, load);
            System.gc();
            long heap = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
            ResidentMemory resident = ResidentMemory.read();
            figure("placement_rows", n - first);
            figure("placement_rate", RATE);
            figure("placement_p50_ms", ms(quantile(shown, 0.5)));
            figure("placement_p99_ms", ms(quantile(shown, 0.99)));
            figure("placement_max_ms", ms(quantile(shown, 1)));
            figure("placement_by_arrival_placer", byArrival);
            figure("placement_frame_p50_ms", ms(quantile(inFrame, 0.5)));
            figure("placement_frame_p99_ms", ms(quantile(inFrame, 0.99)));
            figure("placement_frame_max_ms", ms(quantile(inFrame, 1)));
            figure("placement_wait_p99_ms", ms(quantile(waitNs, 0.99)));
            figure("placement_store_p99_ms", ms(quantile(storeNs, 0.99)));
            figure("placement_store_max_ms", ms(quantile(storeNs, 1)));
            figure("placement_place_p50_ms", ms(quantile(placeNs, 0.5)));
            figure("placement_place_p99_ms", ms(quantile(placeNs, 0.99)));
            figure("placement_place_cpu_p50_ms", ms(quantile(placeCpuNs, 0.5)));
            figure("placement_iteration_seconds", median(iterationSeconds));
            figure("placement_load_before", loadBefore);
            figure("placement_load_after", load);
            figure("placement_heap_used_bytes", heap);
            figure("placement_rss_anon_bytes", resident.anonymousBytes());
            figure("placement_rss_file_bytes", resident.fileBytes());
        }

        /** Per streamed row, {@code at} - stored in ns, sorted; a row never reached counts as Long.MAX_VALUE. */
        private long[] latencies(AtomicLongArray at) {
            long[] out = new long[n - first];
            for (int i = first; i < n; i++) {
                long t = at.get(i);
                out[i - first] = t == 0 ? Long.MAX_VALUE : t - storedAt.get(i);
            }
            Arrays.sort(out);
            return out;
        }
    }

    private static double ms(long nanos) {
        return nanos == Long.MAX_VALUE ? Double.POSITIVE_INFINITY : nanos / 1e6;
    }

    private static long quantile(long[] sorted, double q) {
        return sorted.length == 0 ? Long.MAX_VALUE : sorted[Math.min(sorted.length - 1, (int) (q * sorted.length))];
    }

    private static double median(double[] sorted) {
        return sorted.length == 0 ? Double.NaN : sorted[sorted.length / 2];
    }

    private static double load() {
        return ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();
    }
}
