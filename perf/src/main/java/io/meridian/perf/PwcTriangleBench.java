package io.meridian.perf;

import io.meridian.collective.SingleProcessSync;
import io.meridian.config.CommandLine;
import io.meridian.engine.BadInputException;
import io.meridian.matrix.LowerRows;
import io.meridian.matrix.RowBlock;
import io.meridian.matrix.RowPartition;
import io.meridian.mds.TriangleSmacof;
import io.meridian.pwc.Ari;
import io.meridian.pwc.PwcEngine;
import io.meridian.pwc.PwcProgress;
import io.meridian.pwc.PwcResult;
import io.meridian.pwc.PwcSettings;
import io.meridian.pwc.TriangleKernel;
import io.meridian.synthetic.SyntheticDataset;
import java.lang.management.ManagementFactory;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Locale;
import java.util.Random;
import java.util.Set;

/**
 * {@code ./meridian bench pwc-triangle}: one DA-PWC EM iteration over the lower triangle
 * ({@link PwcEngine#overLowerRows}, the live map's layout) against one live-map SMACOF iteration
 * ({@link TriangleSmacof}) at the same N, one task, one thread, in the same run: SMACOF iterations, then a whole DA-PWC
 * run whose EM iterations are timed one by one from its progress calls (an interval counts when exactly one EM
 * iteration and nothing else happened in it), then SMACOF again, so a change of machine load shows. Both read the
 * same memory-mapped matrix file through {@link LowerRows}. Reports the median ms per EM iteration at each number of
 * clusters, the SMACOF median, their ratio (goal: at most 1.5x), the whole run's time and the bytes an EM iteration
 * allocates. Ratios are of the thread's CPU time (the machine is shared: at a load average of 14 on 2 cores wall
 * times were 7x the CPU times); wall medians are printed beside them.
 */
public final class PwcTriangleBench implements Benchmark {
    @Override
    public String description() {
        return "DA-PWC EM iteration over the lower triangle vs live-map SMACOF iteration, same N, 1 thread, and the"
                + " whole DA-PWC run's time [--n 20000] [--clusters 10] [--std 2] [--rounds 7] [--dir DIR]"
                + " [--full-rows] (then the same run over full rows, dapwc's layout, EM iterations side by side)"
                + " [--pass-only] (instead of a whole run, time an EM iteration's pass over the triangle, gather +"
                + " product, at k = 1..clusters between SMACOF iterations: for an N a whole run takes too long at)";
    }

    @Override
    public void run(String[] args) throws Exception {
        CommandLine cl = CommandLine.parse("bench pwc-triangle", args, Set.of("n", "clusters", "std", "rounds", "dir"),
                Set.of("full-rows", "pass-only"));
        cl.requireNoPositional();
        int n = cl.intValue("n", 20_000, 100, 60_000);
        int clusters = cl.intValue("clusters", 10, 1, 100);
        double std = cl.doubleValue("std", 2.0, 0, 1e6, false);
        int rounds = cl.intValue("rounds", 7, 3, 1000);
        String home = System.getenv().getOrDefault("MERIDIAN_HOME", ".");
        String name = "pwc-triangle-blobs" + clusters + "-std" + std + "-8d-" + n;
        Path dir = Path.of(cl.string("dir", Path.of(home, ".meridian", "bench", name).toString()));
        SyntheticDataset data = SyntheticDataset.blobs(n, 8, clusters, std, 42);
        Path matrix = dir.resolve(SyntheticDataset.DISTANCES_FILE);
        if (!Files.exists(matrix) || Files.size(matrix) != 2L * n * n) {
            System.out.println("bench pwc-triangle: generating " + name + " into " + dir);
            data.write(dir, ByteOrder.LITTLE_ENDIAN);
        }
        RowBlock full = RowBlock.mapAll(BadInputException.Input.DISTANCES, matrix, n, ByteOrder.LITTLE_ENDIAN);
        LowerRows rows = LowerRows.of(full);
        int[] all = new int[n];
        for (int i = 0; i < n; i++) {
            all[i] = i;
        }
        System.out.println("bench pwc-triangle: N = " + n + ", " + clusters + " blobs (std " + std + ", 8-D), up to "
                + clusters + " clusters, 1 task, 1 thread; load average " + loadAverage());

        TriangleSmacof smacof = new TriangleSmacof(n, rows, SingleProcessSync.INSTANCE, all);
        smacof.distanceRange(n);
        Random random = new Random(1);
        for (int i = 0; i < n; i++) {
            smacof.setPoint(i, random.nextDouble(), random.nextDouble(), random.nextDouble());
        }
        // SMACOF's vector pass, too, waits for C2 (a shared machine's compiler threads took up to 50 passes at N =
        // 20,000, so the first ratios were against its scalar twin): a small map's passes get it there, then warm-up
        int few = Math.min(n, 256);
        TriangleSmacof small = new TriangleSmacof(few, rows, SingleProcessSync.INSTANCE, Arrays.copyOf(all, few));
        for (int i = 0; i < few; i++) {
            small.setPoint(i, i % 7, i % 5, i % 3);
        }
        for (int w = 0; w < 400; w++) {
            small.iterate(few, 0);
        }
        for (int w = 0; w < 20; w++) {
            smacof.iterate(n, 0);
        }
        double[][] before = smacofMs(smacof, n, rounds);
        System.out.printf(Locale.ROOT, "  SMACOF iteration, before: median %.1f ms CPU, %.1f ms wall%n",
                median(before[0]), median(before[1]));

        if (cl.flag("pass-only")) {
            passes(rows, n, clusters, rounds, smacof, median(before[0]));
            return;
        }
        EmTimer timer = new EmTimer(clusters);
        PwcSettings settings = PwcSettings.builder().maxClusters(clusters).build();
        PwcEngine engine = PwcEngine.overLowerRows(rows, n, new int[][] {all}, SingleProcessSync.INSTANCE, settings,
                timer);
        long t0 = System.nanoTime();
        PwcResult result = engine.run();
        double runSeconds = (System.nanoTime() - t0) / 1e9;

        double[][] after = smacofMs(smacof, n, rounds);
        System.out.printf(Locale.ROOT, "  SMACOF iteration, after:  median %.1f ms CPU, %.1f ms wall%n",
                median(after[0]), median(after[1]));
        double[] both = new double[2 * rounds];
        System.arraycopy(before[0], 0, both, 0, rounds);
        System.arraycopy(after[0], 0, both, rounds, rounds);
        double smacofMs = median(both);

        int[] truth = new int[n];
        for (int i = 0; i < n; i++) {
            truth[i] = data.label(i);
        }
        double ari = Ari.adjustedRandIndex(truth, result.labels());
        System.out.printf(Locale.ROOT, "  DA-PWC run: %.1f s wall, %d EM iterations (+%d in split tests,"
                        + " %d power-method iterations), %d clusters, sizes %s, ARI vs blobs %.4f%n", runSeconds,
                result.emIterations(), result.duplicateEmIterations(), result.powerIterations(), result.clusters(),
                Arrays.toString(result.sizes()), ari);
        double worstRatio = 0;
        int worstK = 0;
        Figures figures = new Figures("pwc-triangle");
        for (int k = 1; k <= clusters; k++) {
            double[] times = timer.cpuTimes(k);
            if (times.length == 0) {
                continue;
            }
            double ms = median(times);
            double ratio = ms / smacofMs;
            if (ratio > worstRatio) {
                worstRatio = ratio;
                worstK = k;
            }
            System.out.printf(Locale.ROOT, "  EM iteration at k = %d: median %.1f ms CPU (%.1f ms wall) over %d"
                    + " iterations, %.2fx SMACOF%n", k, ms, median(timer.wallTimes(k)), times.length, ratio);
            figures.put("em_cpu_ms_k" + k, ms);
        }
        if (cl.flag("full-rows")) {
            EmTimer fullTimer = new EmTimer(clusters);
            long f0 = System.nanoTime();
            PwcResult fullResult = new PwcEngine(full, RowPartition.of(n, 1), SingleProcessSync.INSTANCE, settings,
                    fullTimer).run();
            double fullSeconds = (System.nanoTime() - f0) / 1e9;
            System.out.printf(Locale.ROOT, "  DA-PWC over full rows: %.1f s wall, %d EM iterations, %d clusters, ARI vs"
                            + " the triangle's labels %.4f%n", fullSeconds, fullResult.emIterations(),
                    fullResult.clusters(), Ari.adjustedRandIndex(result.labels(), fullResult.labels()));
            for (int k = 1; k <= clusters; k++) {
                double[] times = fullTimer.cpuTimes(k);
                double[] triangle = timer.cpuTimes(k);
                if (times.length == 0 || triangle.length == 0) {
                    continue;
                }
                double ms = median(times);
                System.out.printf(Locale.ROOT, "  EM iteration at k = %d over full rows: median %.1f ms CPU; triangle /"
                        + " full rows %.2fx%n", k, ms, median(triangle) / ms);
                figures.put("full_rows_em_cpu_ms_k" + k, ms);
            }
            figures.put("full_rows_run_seconds", fullSeconds);
        }
        double bytes = (double) timer.steadyBytes / Math.max(1, timer.steadyIterations);
        System.out.printf(Locale.ROOT, "  EM / SMACOF at most %.2fx (k = %d; goal <= 1.5x: %s); %.1f bytes"
                + " allocated per EM iteration; load average %s%n", worstRatio, worstK,
                worstRatio <= 1.5 ? "met" : "NOT met", bytes, loadAverage());
        figures.put("n", n).put("maxClusters", clusters).put("clusters", result.clusters())
                .put("smacof_cpu_ms_per_iteration", smacofMs).put("worst_em_over_smacof", worstRatio)
                .put("worst_em_k", worstK).put("goal_ratio", 1.5).put("run_seconds", runSeconds)
                .put("em_iterations", result.emIterations()).put("power_iterations", result.powerIterations())
                .put("ari", ari).put("em_alloc_bytes_per_iteration", bytes).print();
    }

    /**
     * The pass over the triangle an EM iteration makes (gather M, then B = D M: all of its O(N^2) work) at k = 1 ..
     * {@code clusters}, {@code rounds} times each, CPU ms, against SMACOF iterations run again after each k.
     */
    private static void passes(LowerRows rows, int n, int clusters, int rounds, TriangleSmacof smacof,
                               double smacofBefore) {
        int[] all = new int[n];
        Arrays.setAll(all, i -> i);
        TriangleKernel kernel = new TriangleKernel(rows, n, new int[][] {all}, SingleProcessSync.INSTANCE, clusters);
        double[] m = new double[n * clusters];
        Random random = new Random(2);
        for (int p = 0; p < m.length; p++) {
            m[p] = random.nextDouble();
        }
        double[] mAll = new double[n * clusters];
        double[] b = new double[n * clusters];
        // the kernel's vector pass waits until C2 has compiled it (some 30 products); a small kernel gets it there
        int few = Math.min(n, 256);
        int[] first = Arrays.copyOf(all, few);
        TriangleKernel small = new TriangleKernel(rows, few, new int[][] {first}, SingleProcessSync.INSTANCE, clusters);
        double[] smallOut = new double[few * clusters];
        for (int w = 0; w < 200; w++) {
            small.multiply(m, clusters, smallOut);
        }
        java.lang.management.ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        Figures figures = new Figures("pwc-triangle-pass");
        double worst = 0;
        for (int k = 1; k <= clusters; k++) {
            kernel.gather(m, k, mAll); // warm-up
            kernel.multiply(mAll, k, b);
            double[] ms = new double[rounds];
            for (int r = 0; r < rounds; r++) {
                long c0 = threads.getCurrentThreadCpuTime();
                kernel.gather(m, k, mAll);
                kernel.multiply(mAll, k, b);
                ms[r] = (threads.getCurrentThreadCpuTime() - c0) / 1e6;
            }
            double smacofMs = median(smacofMs(smacof, n, Math.max(3, rounds / 2))[0]);
            double ratio = median(ms) / smacofMs;
            worst = Math.max(worst, ratio);
            System.out.printf(Locale.ROOT, "  EM pass at k = %d: median %.1f ms CPU; SMACOF iteration beside it %.1f ms"
                    + " CPU; %.2fx%n", k, median(ms), smacofMs, ratio);
            figures.put("pass_cpu_ms_k" + k, median(ms)).put("smacof_cpu_ms_k" + k, smacofMs);
        }
        System.out.printf(Locale.ROOT, "  EM pass / SMACOF iteration at most %.2fx (goal <= 1.5x: %s); SMACOF before"
                + " the passes %.1f ms CPU; load average %s%n", worst, worst <= 1.5 ? "met" : "NOT met", smacofBefore,
                loadAverage());
        figures.put("n", n).put("maxClusters", clusters).put("worst_pass_over_smacof", worst).print();
    }

    /** CPU ms and wall ms of each of {@code rounds} SMACOF iterations. */
    private static double[][] smacofMs(TriangleSmacof smacof, int n, int rounds) {
        java.lang.management.ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        double[][] ms = new double[2][rounds];
        for (int r = 0; r < rounds; r++) {
            long c0 = threads.getCurrentThreadCpuTime();
            long t0 = System.nanoTime();
            smacof.iterate(n, 0);
            ms[1][r] = (System.nanoTime() - t0) / 1e6;
            ms[0][r] = (threads.getCurrentThreadCpuTime() - c0) / 1e6;
        }
        return ms;
    }

    /**
     * Times the intervals between progress calls in which exactly one EM iteration of the annealing ran (no split
     * test's EM or power iteration), by the number of clusters, and the bytes the engine's thread allocated in them
     * after the first 10.
     */
    private static final class EmTimer implements PwcProgress {
        private final com.sun.management.ThreadMXBean threads =
                (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        private final double[][] wallMs;
        private final double[][] cpuMs;
        private final int[] counts;
        private long lastNanos;
        private long lastCpu;
        private long lastBytes;
        private int lastEm;
        private int lastOther = -1;
        long steadyBytes;
        int steadyIterations;

        EmTimer(int maxClusters) {
            wallMs = new double[maxClusters + 1][100_000];
            cpuMs = new double[maxClusters + 1][100_000];
            counts = new int[maxClusters + 1];
        }

        @Override
        public void update(PwcEngine engine) {
            long now = System.nanoTime();
            long cpu = threads.getCurrentThreadCpuTime();
            long bytes = threads.getCurrentThreadAllocatedBytes();
            int em = engine.emIterations();
            int other = engine.duplicateEmIterations() + engine.powerIterations();
            if (lastOther == other && em == lastEm + 1 && engine.phase() != PwcEngine.Phase.SPLIT_TEST) {
                int k = engine.clusters();
                wallMs[k][counts[k]] = (now - lastNanos) / 1e6;
                cpuMs[k][counts[k]++] = (cpu - lastCpu) / 1e6;
                if (em > 10) {
                    steadyBytes += bytes - lastBytes;
                    steadyIterations++;
                }
            }
            lastNanos = now;
            lastCpu = cpu;
            lastBytes = bytes;
            lastEm = em;
            lastOther = other;
        }

        double[] wallTimes(int k) {
            return Arrays.copyOf(wallMs[k], counts[k]);
        }

        double[] cpuTimes(int k) {
            return Arrays.copyOf(cpuMs[k], counts[k]);
        }
    }

    private static double median(double[] values) {
        double[] s = values.clone();
        Arrays.sort(s);
        return s[s.length / 2];
    }

    private static String loadAverage() {
        try {
            return Files.readString(Path.of("/proc/loadavg")).trim().split(" ")[0];
        } catch (Exception e) {
            return "unknown";
        }
    }
}
