package io.meridian.perf;

import io.meridian.collective.CollectiveBlockSync;
import io.meridian.collective.TwoLevelCollectives;
import io.meridian.stream.live.LiveMapBolt;
import io.meridian.live.Frame;
import io.meridian.live.LiveMap;
import io.meridian.live.LiveMapSettings;
import io.meridian.mds.DaMds;
import io.meridian.mds.MdsOptions;
import io.meridian.mds.MdsResult;
import io.meridian.mds.TriangleSmacof;
import io.meridian.pwc.Ari;
import io.meridian.pwc.PwcEngine;
import io.meridian.pwc.PwcProgress;
import io.meridian.pwc.PwcResult;
import io.meridian.pwc.PwcSettings;
import io.meridian.shm.OwnerOnlyFiles;
import io.meridian.stream.row.RowStoreReader;
import io.meridian.stream.row.RowStores;
import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.IntStream;

/**
 * {@code bench scale --part quality}: the streamed map against batch on the same rows, at a size batch can check.
 * The rows of N points (blobs, 8-D, 10 centres) stream into a live map of P tasks (threads, shared-memory
 * collectives, row-store files; the first {@code initialPoints} at once, the rest at a fixed rate) until it publishes
 * a settled frame of all N points (refined to convergence, its pause's fresh anneal tried, its DA-PWC run over every
 * point, distributed over a second group of the same tasks as the live map bolt runs it on one host); then batch
 * DA-MDS ({@link DaMds} over the same row stores, P ranks as threads through the same collectives) and batch DA-PWC
 * ({@link PwcEngine#overLowerRows}, P ranks) run on the same rows. Reports the stress ratio (goal at most 1.02) and
 * the ARI of the streamed clustering against batch's (goal at least 0.98).
 */
final class ScaleQuality {
    private static final Path REGIONS = Path.of("/dev/shm");
    private static final long PROGRESS_NANOS = TimeUnit.SECONDS.toNanos(30);
    private static final Duration COLLECTIVE_TIMEOUT = Duration.ofMinutes(10);

    private ScaleQuality() {
    }

    /**
     * Runs the part for {@code n} points streamed at {@code rate} rows/s after the first ones, under {@code root};
     * puts its figures into {@code figures} with keys {@code n<N>_quality_*}.
     */
    static void run(int n, int tasks, double rate, Path root, Figures figures) throws Exception {
        Path dir = root.resolve("quality-n" + n);
        Path stores = dir.resolve("rows");
        String key = "n" + n + "_quality_";
        OwnerOnlyFiles.deleteTree(dir);
        try {
            ScaleRows rows = new ScaleRows(n);
            int initial = Math.max(4, Math.min(2000, n / 10));
            System.out.printf(Locale.ROOT, "  quality N = %d: rows 0..%d at once, then %.0f rows/s into a live map of"
                    + " %d tasks, until it settles; then batch DA-MDS and DA-PWC (%d ranks) on the same rows; load"
                    + " average %.2f%n", n, initial - 1, rate, tasks, tasks, load());
            long t0 = System.nanoTime();
            Streamed live = stream(rows, tasks, initial, rate, stores, dir.resolve("work"));
            double liveSeconds = (System.nanoTime() - t0) / 1e9;
            System.out.printf(Locale.ROOT, "  quality N = %d: the live map settled after %.0f s at stress %.6f, %d"
                    + " clusters; load average %.2f%n", n, liveSeconds, live.stress, live.clusters, load());

            long t1 = System.nanoTime();
            MdsResult mds = batchMds(n, tasks, stores);
            double mdsSeconds = (System.nanoTime() - t1) / 1e9;
            System.out.printf(Locale.ROOT, "  quality N = %d: batch DA-MDS %.0f s, %d SMACOF iterations, stress %.6f;"
                    + " load average %.2f%n", n, mdsSeconds, mds.smacofIterations, mds.normalizedStress, load());

            long t2 = System.nanoTime();
            PwcResult pwc = batchPwc(n, tasks, stores, "    batch DA-PWC").result();
            double pwcSeconds = (System.nanoTime() - t2) / 1e9;
            int[] truth = rows.truth();
            double ari = Ari.adjustedRandIndex(live.labels, pwc.labels());
            double ratio = live.stress / mds.normalizedStress;
            System.out.printf(Locale.ROOT, "  quality N = %d: batch DA-PWC %.0f s, %d clusters; load average %.2f%n",
                    n, pwcSeconds, pwc.clusters(), load());
            System.out.printf(Locale.ROOT, "  quality N = %d: streamed stress %.6f vs batch %.6f: %.4fx (goal <= 1.02);"
                    + " ARI of the streamed clusters against batch DA-PWC %.4f (goal >= 0.98; against the blobs:"
                    + " streamed %.4f, batch %.4f)%n", n, live.stress, mds.normalizedStress, ratio, ari,
                    Ari.adjustedRandIndex(truth, live.labels), Ari.adjustedRandIndex(truth, pwc.labels()));
            figures.put(key + "n", n).put(key + "rate", rate).put(key + "initial_points", initial)
                    .put(key + "stress", live.stress).put(key + "batch_stress", mds.normalizedStress)
                    .put(key + "stress_ratio", ratio).put(key + "ari", ari)
                    .put(key + "ari_truth", Ari.adjustedRandIndex(truth, live.labels))
                    .put(key + "batch_ari_truth", Ari.adjustedRandIndex(truth, pwc.labels()))
                    .put(key + "clusters", live.clusters).put(key + "batch_clusters", pwc.clusters())
                    .put(key + "live_seconds", liveSeconds).put(key + "batch_mds_seconds", mdsSeconds)
                    .put(key + "batch_mds_iterations", mds.smacofIterations).put(key + "batch_pwc_seconds", pwcSeconds)
                    .put(key + "load_after", load());
        } finally {
            OwnerOnlyFiles.deleteTree(dir);
        }
    }

    /** The settled frame of all the points: its stress, clusters and labels. */
    private record Streamed(double stress, int clusters, int[] labels) {
    }

    private static Streamed stream(ScaleRows rows, int tasks, int initial, double rate, Path stores, Path work)
            throws Exception {
        int n = rows.n();
        String job = "bench-scale-quality-" + ProcessHandle.current().pid();
        String clusterJob = "bench-scale-quality-pwc-" + ProcessHandle.current().pid();
        LiveMapSettings settings = new LiveMapSettings(n, ScaleRows.BLOCK_ROWS, tasks, initial, 20, 1e-4, 2.0, 1.0,
                MdsOptions.DEFAULT_ALPHA, MdsOptions.DEFAULT_TMIN_FACTOR, ScaleRows.CENTRES, 1);
        AtomicReference<Streamed> settled = new AtomicReference<>();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        long start = System.nanoTime();
        AtomicLong lastProgress = new AtomicLong(start);
        int doubles = TriangleSmacof.reduceCapacity(n);
        boolean[] stop = new boolean[1];
        // every task leaves after the same round: the decision is taken once all have finished it
        CyclicBarrier afterRound = new CyclicBarrier(tasks, () -> stop[0] = settled.get() != null
                || failure.get() != null);
        TwoLevelCollectives.removeStaleRegions(REGIONS, job);
        TwoLevelCollectives.removeStaleRegions(REGIONS, clusterJob);
        int clusterDoubles = LiveMapBolt.clusterDoubles(settings);
        rows.store(stores, 0, initial, tasks, "quality N = " + n);
        Thread[] threads = new Thread[tasks];
        for (int t = 0; t < tasks; t++) {
            int task = t;
            threads[t] = new Thread(() -> {
                // DA-PWC distributed over a second group of the same tasks, as the live map bolt runs it on one host
                try (TwoLevelCollectives clustering = TwoLevelCollectives.singleHost(clusterJob, task, tasks,
                        clusterDoubles, clusterDoubles, REGIONS, COLLECTIVE_TIMEOUT);
                     TwoLevelCollectives c = TwoLevelCollectives.singleHost(job, task, tasks, doubles, doubles,
                        REGIONS, COLLECTIVE_TIMEOUT);
                     LiveMap live = new LiveMap(settings, task, new RowStoreReader(stores, ScaleRows.BLOCK_ROWS, n),
                             new CollectiveBlockSync(c), new CollectiveBlockSync(clustering), work,
                             task != 0 ? null : f -> {
                                 if (f.n() == n && f.settled()) {
                                     settled.compareAndSet(null, new Streamed(f.stress(), f.clusters(),
                                             f.labels().clone()));
                                 }
                                 progress(f, start, lastProgress);
                             })) {
                    while (!stop[0]) {
                        // idle too, not only when awaiting rows: an idle map waiting for its DA-PWC run looped
                        // through rounds and the barrier without a pause, 0.6 of a core each at nice 0 while the
                        // run's threads (nice 19) got what was left (the 50K run, jstack and top)
                        if (live.round() == null) {
                            LockSupport.parkNanos(5_000_000);
                        }
                        afterRound.await(COLLECTIVE_TIMEOUT.toMinutes(), TimeUnit.MINUTES);
                    }
                } catch (Throwable e) {
                    failure.compareAndSet(null, e);
                }
            }, "scale-quality-task-" + t);
            threads[t].start();
        }
        short[] scratch = new short[n];
        try (RowStores out = new RowStores(stores, ScaleRows.BLOCK_ROWS, n, b -> true)) {
            long feedStart = System.nanoTime();
            for (int i = initial; i < n && failure.get() == null; i++) {
                long due = feedStart + (long) ((i - initial) * 1e9 / rate);
                for (long wait = due - System.nanoTime(); wait > 0; wait = due - System.nanoTime()) {
                    LockSupport.parkNanos(wait);
                }
                out.store(rows.row(i, scratch));
            }
        }
        for (Thread t : threads) {
            // a pause's fresh anneal and the clustering publish no frame for minutes at 50K: say that it goes on
            for (t.join(PROGRESS_NANOS / 1_000_000); t.isAlive(); t.join(PROGRESS_NANOS / 1_000_000)) {
                if (System.nanoTime() - lastProgress.get() >= PROGRESS_NANOS) {
                    System.out.printf(Locale.ROOT, "    live map, %.0f s: all %d rows stored, not settled yet (a"
                            + " fresh anneal out of sight, or DA-PWC); load average %.2f%n",
                            (System.nanoTime() - start) / 1e9, n, load());
                }
            }
        }
        if (failure.get() != null) {
            throw new IllegalStateException("quality N = " + n + ": the live map failed: " + failure.get(),
                    failure.get());
        }
        TwoLevelCollectives.removeStaleRegions(REGIONS, job);
        TwoLevelCollectives.removeStaleRegions(REGIONS, clusterJob);
        return settled.get();
    }

    /** A progress line every 30 s from the publishing task's frames. */
    private static void progress(Frame f, long start, AtomicLong lastProgress) {
        long now = System.nanoTime();
        if (now - lastProgress.get() >= PROGRESS_NANOS) {
            lastProgress.set(now);
            System.out.printf(Locale.ROOT, "    live map, %.0f s: frame %d, %d points (%d rows stored), stress %.6f,"
                    + " %d clusters, round %.2f s; load average %.2f%n", (now - start) / 1e9, f.frame(), f.n(),
                    f.storedRows(), f.stress(), f.clusters(), f.roundSeconds(), load());
        }
    }

    /** Batch DA-MDS over the row stores, {@code tasks} ranks as threads; rank 0's result. */
    private static MdsResult batchMds(int n, int tasks, Path stores) throws Exception {
        String job = "bench-scale-quality-mds-" + ProcessHandle.current().pid();
        MdsResult[] results = new MdsResult[tasks];
        runRanks(tasks, job, DaMds.allgatherCapacity(n, 3), DaMds.triangleReduceCapacity(n, 3), (rank, sync) -> {
            MdsOptions options = new MdsOptions().seed(1);
            if (rank == 0) {
                options.progress(System.out, PROGRESS_NANOS / 1_000_000);
            }
            try (RowStoreReader rows = new RowStoreReader(stores, ScaleRows.BLOCK_ROWS, n)) {
                results[rank] = new DaMds(rows, n, stores, options, sync).run();
            }
        });
        return results[0];
    }

    /** A batch DA-PWC run's result and the heap used after a GC while its ranks held their engines. */
    record Clustered(PwcResult result, long heapUsed) {
    }

    /**
     * Batch DA-PWC over the row stores, {@code tasks} ranks as threads owning the blocks as the map's tasks do; rank
     * 0's result. Progress lines every 30 s start with {@code prefix}.
     */
    static Clustered batchPwc(int n, int tasks, Path stores, String prefix) throws Exception {
        String job = "bench-scale-pwc-" + ProcessHandle.current().pid();
        PwcSettings settings = PwcSettings.builder().maxClusters(ScaleRows.CENTRES).build();
        int[][] owned = new int[tasks][];
        for (int t = 0; t < tasks; t++) {
            int task = t;
            owned[t] = IntStream.range(0, n)
                    .filter(i -> LiveMapSettings.ownerOfBlock(i / ScaleRows.BLOCK_ROWS, tasks) == task).toArray();
        }
        PwcResult[] results = new PwcResult[tasks];
        long[] heapUsed = {-1};
        int capacity = n * ScaleRows.CENTRES + 1024;
        long start = System.nanoTime();
        runRanks(tasks, job, capacity, capacity, (rank, sync) -> {
            long[] lastProgress = {System.nanoTime()};
            PwcProgress progress = rank != 0 ? PwcProgress.NONE : engine -> {
                if (heapUsed[0] < 0 && engine.emIterations() > 0) {
                    heapUsed[0] = ScaleBench.Memory.now().heapUsed(); // once, both ranks' engines held
                }
                long now = System.nanoTime();
                if (now - lastProgress[0] >= PROGRESS_NANOS) {
                    lastProgress[0] = now;
                    System.out.printf(Locale.ROOT, "%s, %.0f s: %d EM iterations, %d clusters, T %.4g; load average"
                            + " %.2f%n", prefix, (now - start) / 1e9, engine.emIterations(), engine.clusters(),
                            engine.temperature(), load());
                }
            };
            try (RowStoreReader rows = new RowStoreReader(stores, ScaleRows.BLOCK_ROWS, n)) {
                results[rank] = PwcEngine.overLowerRows(rows, n, owned, sync, settings, progress).run();
            }
        });
        return new Clustered(results[0], heapUsed[0]);
    }

    private interface Rank {
        void run(int rank, CollectiveBlockSync sync) throws Exception;
    }

    /** Runs {@code body} on {@code tasks} threads, each a rank of one shared-memory group. */
    private static void runRanks(int tasks, String job, int capacity, int reduceCapacity, Rank body)
            throws Exception {
        AtomicReference<Throwable> failure = new AtomicReference<>();
        TwoLevelCollectives.removeStaleRegions(REGIONS, job);
        Thread[] threads = new Thread[tasks];
        for (int t = 0; t < tasks; t++) {
            int rank = t;
            threads[t] = new Thread(() -> {
                try (TwoLevelCollectives c = TwoLevelCollectives.singleHost(job, rank, tasks, capacity,
                        reduceCapacity, REGIONS, COLLECTIVE_TIMEOUT)) {
                    body.run(rank, new CollectiveBlockSync(c));
                } catch (Throwable e) {
                    failure.compareAndSet(null, e);
                }
            }, job + "-" + t);
            threads[t].start();
        }
        for (Thread t : threads) {
            t.join();
        }
        TwoLevelCollectives.removeStaleRegions(REGIONS, job);
        if (failure.get() != null) {
            throw new IllegalStateException(job + ": a rank failed: " + failure.get(), failure.get());
        }
    }

    private static double load() {
        return ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();
    }
}
