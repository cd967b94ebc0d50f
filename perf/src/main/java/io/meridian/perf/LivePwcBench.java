package io.meridian.perf;

import io.meridian.collective.BlockSync;
import io.meridian.collective.CollectiveBlockSync;
import io.meridian.collective.SingleProcessSync;
import io.meridian.collective.TwoLevelCollectives;
import io.meridian.config.CommandLine;
import io.meridian.live.LiveMapSettings;
import io.meridian.pwc.Ari;
import io.meridian.pwc.PwcEngine;
import io.meridian.pwc.PwcProgress;
import io.meridian.pwc.PwcResult;
import io.meridian.pwc.PwcSettings;
import io.meridian.pwc.TriangleKernel;
import io.meridian.shm.OwnerOnlyFiles;
import io.meridian.stream.row.DistanceRow;
import io.meridian.stream.row.RowFormat;
import io.meridian.stream.row.RowStoreReader;
import io.meridian.stream.row.RowStores;
import io.meridian.synthetic.SyntheticDataset;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * {@code ./meridian bench live-pwc}: the live map's DA-PWC run as it is distributed now, P tasks each over the row
 * blocks it owns ({@link LiveMapSettings#ownedBelow}), exchanging through a two-level shared-memory group as the map's
 * tasks do (threads of this JVM, one region), against the run as it was, one task over every row
 * ({@link SingleProcessSync}), on the same row stores in the same run, one after the other; the load average is
 * printed before and after (the machine is shared). Reports each run's median EM iteration (wall time), the whole run's
 * time and whether both give the same labels. {@link #measure} is the entry point for another benchmark (bench
 * scale).
 */
public final class LivePwcBench implements Benchmark {
    private static final int BLOCK_ROWS = 256;

    @Override
    public String description() {
        return "the live map's DA-PWC over P tasks' own rows (two-level group) vs one task over every row, same row"
                + " stores, same run: median EM iteration and whole run [--n 20000] [--tasks 2] [--clusters 10]"
                + " [--em-only K] (K EM iterations of each instead of whole runs) [--dir /tmp/meridian-bench-live-pwc]"
                + " [--keep]";
    }

    /**
     * One task's run: wall seconds, seconds before the first EM iteration ended (the mean distance's pass, the first
     * E-step), EM iterations, the median wall and thread-CPU ms of one EM iteration, clusters and labels.
     */
    public record Run(double seconds, double firstSeconds, int emIterations, double emMedianMs, double emMedianCpuMs,
                      int clusters, int[] labels) {
    }

    /**
     * What the distributed and the single-process run give on the same rows: the single run, task 0's part of the
     * distributed one and the largest median CPU ms of an EM iteration over its tasks (its critical path when every
     * task has a core).
     */
    public record Comparison(Run single, Run distributed, double distributedWorstCpuMs, double ari) {
    }

    @Override
    public void run(String[] args) throws Exception {
        CommandLine cl = CommandLine.parse("bench live-pwc", args, Set.of("n", "tasks", "clusters", "em-only", "dir"),
                Set.of("keep"));
        cl.requireNoPositional();
        int n = cl.intValue("n", 20_000, 100, 1_000_000);
        int tasks = cl.intValue("tasks", 2, 1, 64);
        int clusters = cl.intValue("clusters", 10, 1, 100);
        int emOnly = cl.intValue("em-only", 0, 0, 100_000);
        Path stores = Path.of(cl.string("dir", "/tmp/meridian-bench-live-pwc")).resolve("n" + n);
        System.out.printf(Locale.ROOT, "bench live-pwc: N = %d blobs (10 centers, std 2, 8-D), up to %d clusters, %d"
                + " tasks vs 1, %s; load average %.2f%n", n, clusters, tasks,
                emOnly > 0 ? emOnly + " EM iterations each" : "whole runs", loadAverage());
        try {
            long t0 = System.nanoTime();
            if (allStored(stores, n)) {
                System.out.printf(Locale.ROOT, "  reusing the %d rows stored under %s%n", n, stores);
            } else {
                storeBlobs(n, stores);
                System.out.printf(Locale.ROOT, "  stored %d rows in %.1f s under %s%n", n,
                        (System.nanoTime() - t0) / 1e9, stores);
            }
            Comparison c = measure(stores, BLOCK_ROWS, n, tasks, clusters, emOnly);
            Run one = c.single();
            Run part = c.distributed();
            Figures figures = new Figures("live-pwc").put("n", n).put("tasks", tasks).put("max_clusters", clusters)
                    .put("em_only", emOnly)
                    .put("single_seconds", one.seconds()).put("single_first_em_seconds", one.firstSeconds())
                    .put("single_em_iterations", one.emIterations()).put("single_em_wall_ms", one.emMedianMs())
                    .put("single_em_cpu_ms", one.emMedianCpuMs())
                    .put("distributed_seconds", part.seconds()).put("distributed_first_em_seconds", part.firstSeconds())
                    .put("distributed_em_iterations", part.emIterations())
                    .put("distributed_em_wall_ms", part.emMedianMs())
                    .put("distributed_em_cpu_ms_worst_task", c.distributedWorstCpuMs())
                    .put("clusters", part.clusters()).put("ari_distributed_vs_single", c.ari())
                    .put("load_average", loadAverage());
            System.out.printf(Locale.ROOT, "  1 task:  %.1f s (%.1f s to the first EM iteration's end), %d EM"
                    + " iterations, an EM iteration: median %.1f ms wall, %.1f ms CPU%n", one.seconds(),
                    one.firstSeconds(), one.emIterations(), one.emMedianMs(), one.emMedianCpuMs());
            System.out.printf(Locale.ROOT, "  %d tasks: %.1f s (%.1f s to the first EM iteration's end), %d EM"
                    + " iterations, an EM iteration: median %.1f ms wall, %.1f ms CPU on the busiest task%n", tasks,
                    part.seconds(), part.firstSeconds(), part.emIterations(), part.emMedianMs(),
                    c.distributedWorstCpuMs());
            System.out.printf(Locale.ROOT, "  1 task / %d tasks: run %.2fx, EM iteration %.2fx wall, %.2fx CPU of the"
                    + " busiest task%n", tasks, one.seconds() / part.seconds(), one.emMedianMs() / part.emMedianMs(),
                    one.emMedianCpuMs() / c.distributedWorstCpuMs());
            if (emOnly == 0) {
                System.out.printf(Locale.ROOT, "  labels: %d clusters; adjusted Rand index distributed vs single"
                        + " %.6f%n", part.clusters(), c.ari());
            }
            System.out.printf(Locale.ROOT, "  load average at the end %.2f%n", loadAverage());
            figures.print();
        } finally {
            if (!cl.flag("keep")) {
                OwnerOnlyFiles.deleteTree(stores);
            }
        }
    }

    /**
     * The comparison on row stores of at least n rows (blocks of {@code blockRows}): one task over every row, then
     * {@code tasks} tasks each over the blocks the live map gives it, exchanging through a two-level group of threads.
     * {@code emOnly} > 0: each stops after that many EM iterations (no labels to compare; ARI is NaN).
     */
    public static Comparison measure(Path stores, int blockRows, int n, int tasks, int clusters, int emOnly)
            throws Exception {
        PwcSettings settings = PwcSettings.builder().maxClusters(clusters).build();
        int[] every = new int[n];
        Arrays.setAll(every, i -> i);
        Run single;
        try (RowStoreReader rows = new RowStoreReader(stores, blockRows, n)) {
            warmUp(rows, n, clusters);
            single = timed(rows, n, new int[][] {every}, SingleProcessSync.INSTANCE, settings, emOnly);
        }
        LiveMapSettings map = new LiveMapSettings(n, blockRows, tasks, Math.min(n, 4), 1, 0.5, 2, 1, 0.95, 0.5,
                clusters, 1);
        int[][] owned = map.ownedBelow(n);
        String job = "bench-live-pwc-" + ProcessHandle.current().pid();
        Path regionRoot = Path.of("/dev/shm");
        int doubles = n * clusters;
        ExecutorService pool = Executors.newFixedThreadPool(tasks);
        Run distributed;
        double worstCpu = 0;
        try {
            @SuppressWarnings("unchecked")
            Future<Run>[] runs = new Future[tasks];
            for (int t = 0; t < tasks; t++) {
                int task = t;
                runs[t] = pool.submit(() -> {
                    try (TwoLevelCollectives c = TwoLevelCollectives.singleHost(job, task, tasks, doubles, doubles,
                            regionRoot, Duration.ofMinutes(10));
                         RowStoreReader rows = new RowStoreReader(stores, blockRows, n)) {
                        return timed(rows, n, owned, new CollectiveBlockSync(c), settings, emOnly);
                    }
                });
            }
            distributed = runs[0].get();
            for (Future<Run> f : runs) {
                worstCpu = Math.max(worstCpu, f.get().emMedianCpuMs());
            }
        } finally {
            pool.shutdownNow();
            TwoLevelCollectives.removeStaleRegions(regionRoot, job);
        }
        double ari = emOnly > 0 ? Double.NaN : Ari.adjustedRandIndex(single.labels(), distributed.labels());
        return new Comparison(single, distributed, worstCpu, ari);
    }

    /**
     * Runs the product's vector pass until C2 has compiled it, on a small kernel (it waits for that, some 30
     * products): without it the run timed first would take the scalar pass, the second the vector one.
     */
    private static void warmUp(RowStoreReader rows, int n, int clusters) {
        int few = Math.min(n, 256);
        int[] first = new int[few];
        Arrays.setAll(first, i -> i);
        TriangleKernel small = new TriangleKernel(rows, few, new int[][] {first}, SingleProcessSync.INSTANCE,
                clusters);
        double[] x = new double[few * clusters];
        Arrays.setAll(x, i -> (i % 7) / 7.0);
        double[] y = new double[few * clusters];
        for (int w = 0; w < 200; w++) {
            small.multiply(x, clusters, y);
        }
    }

    /** Whether rows 0 .. n-1 are all stored under {@code stores} (a kept directory of an earlier run). */
    private static boolean allStored(Path stores, int n) {
        if (!Files.isDirectory(stores)) {
            return false;
        }
        try (RowStoreReader rows = new RowStoreReader(stores, BLOCK_ROWS, n)) {
            for (int i = 0; i < n; i++) {
                if (!rows.isStored(i)) {
                    return false;
                }
            }
            return true;
        }
    }

    /** Thrown by the progress listener after the EM iterations asked for: every task stops at the same one. */
    private static final class Enough extends RuntimeException {
        Enough() {
            super(null, null, false, false);
        }
    }

    private static Run timed(RowStoreReader rows, int n, int[][] owned, BlockSync sync, PwcSettings settings,
                             int emOnly) {
        EmTimes times = new EmTimes(emOnly);
        long t0 = System.nanoTime();
        PwcResult result = null;
        try {
            result = PwcEngine.overLowerRows(rows, n, owned, sync, settings, times).run();
        } catch (Enough stop) {
            // the iterations asked for are timed
        }
        double seconds = (System.nanoTime() - t0) / 1e9;
        return new Run(seconds, (times.firstNanos - t0) / 1e9, times.emIterations, median(times.ms, times.count),
                median(times.cpuMs, times.count), result == null ? 0 : result.clusters(),
                result == null ? new int[0] : result.labels());
    }

    /**
     * Wall ms of each interval between two progress calls in which exactly one EM iteration ran (no split test's EM
     * iteration, no power-method iteration).
     */
    private static final class EmTimes implements PwcProgress {
        private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();
        private final int limit;
        private double[] ms = new double[1024];
        private double[] cpuMs = new double[1024];
        private int count;
        private int emIterations;
        private int lastEm = -1;
        private int lastOther;
        private long lastNanos;
        private long lastCpu;
        private long firstNanos;

        EmTimes(int limit) {
            this.limit = limit;
        }

        @Override
        public void update(PwcEngine engine) {
            long now = System.nanoTime();
            long cpu = THREADS.getCurrentThreadCpuTime();
            int em = engine.emIterations();
            int other = engine.duplicateEmIterations() + engine.powerIterations();
            if (lastEm < 0) {
                firstNanos = now;
            } else if (em == lastEm + 1 && other == lastOther) {
                if (count == ms.length) {
                    ms = Arrays.copyOf(ms, 2 * count);
                    cpuMs = Arrays.copyOf(cpuMs, 2 * count);
                }
                ms[count] = (now - lastNanos) / 1e6;
                cpuMs[count++] = (cpu - lastCpu) / 1e6;
            }
            emIterations = em;
            lastEm = em;
            lastOther = other;
            lastNanos = System.nanoTime();
            lastCpu = THREADS.getCurrentThreadCpuTime();
            if (limit > 0 && em >= limit) {
                throw new Enough();
            }
        }
    }

    private static double median(double[] values, int count) {
        if (count == 0) {
            return Double.NaN;
        }
        double[] sorted = Arrays.copyOf(values, count);
        Arrays.sort(sorted);
        return sorted[count / 2];
    }

    /** Rows of n blob points (8-D, 10 centers, std 2, seed 1: bench scale's) into row stores, one writer. */
    static void storeBlobs(int n, Path stores) {
        OwnerOnlyFiles.deleteTree(stores);
        SyntheticDataset data = SyntheticDataset.blobs(n, 8, 10, 2, 1);
        double inv = 1 / data.maxDistance();
        try (RowStores out = new RowStores(stores, BLOCK_ROWS, n, b -> true)) {
            short[] row = new short[n];
            for (int i = 0; i < n; i++) {
                for (int j = 0; j < i; j++) {
                    row[j] = RowFormat.quantize((float) (data.distance(i, j) * inv));
                }
                out.store(DistanceRow.decode(RowFormat.encodeInt16(i, row, 0, i, false), null));
            }
            out.force();
        }
    }

    private static double loadAverage() {
        return ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();
    }
}
