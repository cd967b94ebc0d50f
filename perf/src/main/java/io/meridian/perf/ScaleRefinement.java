package io.meridian.perf;

import io.meridian.collective.CollectiveBlockSync;
import io.meridian.collective.SingleProcessSync;
import io.meridian.collective.TwoLevelCollectives;
import io.meridian.mds.TriangleRoofline;
import io.meridian.mds.TriangleSmacof;
import io.meridian.pwc.TriangleKernel;
import io.meridian.stream.row.RowStoreReader;
import java.lang.management.ManagementFactory;
import java.lang.ref.Reference;
import java.lang.management.ThreadMXBean;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.Locale;
import java.util.Random;
import java.util.concurrent.atomic.AtomicReference;

/**
 * {@code bench scale}'s refinement parts over n stored points: the map's tasks (threads sharing one memory region
 * through the two-level collectives, as on one host) time, round by round in the same run, a SMACOF iteration
 * ({@link TriangleSmacof}), then (part smacof) its roofline ({@link TriangleRoofline}) and (part em) one DA-PWC EM
 * iteration's pass over the triangle at {@link #CLUSTERS} clusters ({@link TriangleKernel}: the gather of the
 * memberships and the product B = D M, as {@code bench pwc-triangle --pass-only} times it). Part em times the SMACOF
 * iterations beside it even alone, so that its ratio is of one run under one load.
 */
final class ScaleRefinement {
    static final int CLUSTERS = 10;
    private static final Path SHM = Path.of("/dev/shm");

    private ScaleRefinement() {
    }

    /** Runs the rounds and puts their figures under {@code key}; returns the memory while the tasks held the map. */
    static ScaleBench.Memory run(int n, int tasks, int iterations, Path stores, int blockRows, boolean roofline,
                                 boolean em, Figures figures, String key) throws Exception {
        Timings timings = new Timings(tasks, iterations);
        AtomicReference<ScaleBench.Memory> memory = new AtomicReference<>();
        String job = "bench-scale-" + ProcessHandle.current().pid();
        int doubles = Math.max(TriangleSmacof.reduceCapacity(n), em ? TriangleKernel.reduceCapacity(n, CLUSTERS) : 0);
        int[][] ownedByTask = new int[tasks][];
        for (int t = 0; t < tasks; t++) {
            ownedByTask[t] = ScaleBench.owned(n, t, tasks);
        }
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Thread[] threads = new Thread[tasks];
        TwoLevelCollectives.removeStaleRegions(SHM, job);
        for (int t = 0; t < tasks; t++) {
            int task = t;
            threads[t] = new Thread(() -> {
                try (TwoLevelCollectives c = TwoLevelCollectives.singleHost(job, task, tasks, doubles, doubles, SHM,
                        Duration.ofMinutes(10));
                     RowStoreReader rows = new RowStoreReader(stores, blockRows, n)) {
                    CollectiveBlockSync sync = new CollectiveBlockSync(c);
                    Task mine = new Task(n, task, rows, sync, ownedByTask, roofline, em);
                    mine.run(timings, iterations);
                    sync.barrier();
                    if (task == 0) {
                        memory.set(ScaleBench.Memory.now());
                    }
                    sync.barrier();
                    // the heap is measured with every task's engines in it (unreferenced, a GC took them first)
                    Reference.reachabilityFence(mine);
                } catch (Throwable e) {
                    failure.compareAndSet(null, e);
                }
            }, "scale-task-" + t);
            threads[t].start();
        }
        for (Thread t : threads) {
            t.join();
        }
        TwoLevelCollectives.removeStaleRegions(SHM, job);
        if (failure.get() != null) {
            throw new IllegalStateException("a map task failed: " + failure.get(), failure.get());
        }
        report(n, tasks, iterations, ownedByTask, timings, roofline, em, figures, key);
        return memory.get();
    }

    private static void report(int n, int tasks, int iterations, int[][] ownedByTask, Timings timings,
                               boolean roofline, boolean em, Figures figures, String key) {
        long allPairs = (long) n * (n - 1) / 2;
        long busiest = 0;
        for (int[] ids : ownedByTask) {
            long pairs = 0;
            for (int i : ids) {
                pairs += i;
            }
            busiest = Math.max(busiest, pairs);
        }
        double it = median(timings.smacofWall);
        double itCpu = Timings.cpu(timings.smacofCpu);
        double nsPerPair = it * 1e9 / allPairs;
        double busy = timings.coresBusy(timings.smacofWall, timings.smacofCpu);
        double load = ScaleBench.loadAverage();
        figures.put(key + "smacof_seconds", it).put(key + "smacof_cpu_seconds", itCpu)
                .put(key + "ns_per_pair", nsPerPair).put(key + "ns_per_pair_core", nsPerPair * tasks)
                .put(key + "cpu_ns_per_pair", itCpu * 1e9 / allPairs)
                .put(key + "smacof_cores_busy", busy).put(key + "load_average", load);
        System.out.printf(Locale.ROOT, "  N = %d: SMACOF iteration %.3f s wall, %.3f s CPU of all tasks (medians of"
                + " %d); %.3f ns per pair wall (%d pairs, %.2f per core), %.3f CPU; the busiest task has %.1f %% of the"
                + " pairs; %.2f cores busy; load average %.2f%n", n, it, itCpu, iterations, nsPerPair, allPairs,
                nsPerPair * tasks, itCpu * 1e9 / allPairs, 100.0 * busiest / allPairs, busy, load);
        if (roofline) {
            double roof = median(timings.rooflineWall);
            double roofCpu = Timings.cpu(timings.rooflineCpu);
            figures.put(key + "roofline_seconds", roof).put(key + "roofline_cpu_seconds", roofCpu)
                    .put(key + "smacof_over_roofline", it / roof).put(key + "smacof_over_roofline_cpu", itCpu / roofCpu)
                    .put(key + "roofline_cores_busy", timings.coresBusy(timings.rooflineWall, timings.rooflineCpu));
            System.out.printf(Locale.ROOT, "  N = %d: roofline %.3f s wall, %.3f s CPU; the iteration is %.2fx it wall,"
                    + " %.2fx CPU (goal <= 1.5x)%n", n, roof, roofCpu, it / roof, itCpu / roofCpu);
        }
        if (em) {
            double emSeconds = median(timings.emWall);
            double emCpu = Timings.cpu(timings.emCpu);
            figures.put(key + "em_seconds", emSeconds).put(key + "em_cpu_seconds", emCpu)
                    .put(key + "em_over_smacof", emSeconds / it).put(key + "em_over_smacof_cpu", emCpu / itCpu)
                    .put(key + "em_ns_per_pair", emSeconds * 1e9 / allPairs)
                    .put(key + "em_cores_busy", timings.coresBusy(timings.emWall, timings.emCpu));
            System.out.printf(Locale.ROOT, "  N = %d: EM iteration (k = %d: gather + product) %.3f s wall, %.3f s CPU,"
                    + " %.3f ns per pair wall; %.2fx the SMACOF iteration wall, %.2fx CPU (goal <= 1.5x)%n", n,
                    CLUSTERS, emSeconds, emCpu, emSeconds * 1e9 / allPairs, emSeconds / it, emCpu / itCpu);
        }
    }

    /** Median over the rounds of task 0's wall seconds (the rounds end with a barrier, so task 0's is everyone's). */
    private static double median(double[][] wall) {
        double[] s = wall[0].clone();
        Arrays.sort(s);
        return s[s.length / 2];
    }

    /** Seconds per round, wall and CPU, by task. */
    private static final class Timings {
        final double[][] smacofWall;
        final double[][] smacofCpu;
        final double[][] rooflineWall;
        final double[][] rooflineCpu;
        final double[][] emWall;
        final double[][] emCpu;

        Timings(int tasks, int rounds) {
            smacofWall = new double[tasks][rounds];
            smacofCpu = new double[tasks][rounds];
            rooflineWall = new double[tasks][rounds];
            rooflineCpu = new double[tasks][rounds];
            emWall = new double[tasks][rounds];
            emCpu = new double[tasks][rounds];
        }

        /** The median over the rounds of the CPU seconds of all tasks together. */
        static double cpu(double[][] cpu) {
            double[] sum = new double[cpu[0].length];
            for (double[] task : cpu) {
                for (int r = 0; r < sum.length; r++) {
                    sum[r] += task[r];
                }
            }
            Arrays.sort(sum);
            return sum[sum.length / 2];
        }

        /** The median round's CPU seconds of all tasks over its wall seconds: how many cores worked. */
        double coresBusy(double[][] wall, double[][] cpu) {
            double[] ratio = new double[wall[0].length];
            for (int r = 0; r < ratio.length; r++) {
                double sum = 0;
                for (double[] task : cpu) {
                    sum += task[r];
                }
                ratio[r] = sum / wall[0][r];
            }
            Arrays.sort(ratio);
            return ratio[ratio.length / 2];
        }
    }

    /** One map task's engines over the stored rows and its timed rounds. */
    private static final class Task {
        private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();
        private final int n;
        private final int task;
        private final RowStoreReader rows;
        private final CollectiveBlockSync sync;
        private final TriangleSmacof smacof;
        private final TriangleRoofline roofline;
        private final TriangleKernel kernel;
        private final double[] memberships;
        private final double[] gathered;
        private final double[] product;
        /** Wall and CPU nanoseconds of the last round's iteration, roofline and EM pass (0 for a part not run). */
        private final long[] times = new long[6];
        private double sink;

        Task(int n, int task, RowStoreReader rows, CollectiveBlockSync sync, int[][] ownedByTask, boolean roofline,
             boolean em) {
            this.n = n;
            this.task = task;
            this.rows = rows;
            this.sync = sync;
            int[] owned = ownedByTask[task];
            this.smacof = new TriangleSmacof(n, rows, sync, owned);
            this.roofline = roofline ? new TriangleRoofline(rows, owned) : null;
            this.kernel = em ? new TriangleKernel(rows, n, ownedByTask, sync, CLUSTERS) : null;
            Random random = new Random(1 + task);
            for (int i = 0; i < n; i++) {
                smacof.setPoint(i, random.nextDouble(), random.nextDouble(), random.nextDouble());
            }
            memberships = em ? new double[kernel.rows() * CLUSTERS] : null;
            gathered = em ? new double[n * CLUSTERS] : null;
            product = em ? new double[kernel.rows() * CLUSTERS] : null;
            if (em) {
                for (int p = 0; p < memberships.length; p++) {
                    memberships[p] = random.nextDouble();
                }
            }
        }

        void run(Timings timings, int iterations) {
            smacof.distanceRange(n);
            if (kernel != null) {
                compileKernel();
            }
            for (int w = 0; w < 2; w++) { // warm-up: the pages come in
                round();
            }
            for (int r = 0; r < iterations; r++) {
                round();
                timings.smacofWall[task][r] = times[0] / 1e9;
                timings.smacofCpu[task][r] = times[1] / 1e9;
                timings.rooflineWall[task][r] = times[2] / 1e9;
                timings.rooflineCpu[task][r] = times[3] / 1e9;
                timings.emWall[task][r] = times[4] / 1e9;
                timings.emCpu[task][r] = times[5] / 1e9;
                if (task == 0) {
                    System.out.printf(Locale.ROOT, "    N = %d: round %d: SMACOF %.0f ms%s%s%n", n, r + 1,
                            times[0] / 1e6,
                            roofline == null ? "" : String.format(Locale.ROOT, ", roofline %.0f ms", times[2] / 1e6),
                            kernel == null ? "" : String.format(Locale.ROOT, ", EM %.0f ms", times[4] / 1e6));
                }
            }
            if (Double.isNaN(sink)) {
                System.out.println("    (roofline sum NaN)");
            }
        }

        /** One round: the iteration, the roofline and the EM pass, each timed into {@link #times}. */
        private void round() {
            sync.barrier();
            long a = System.nanoTime();
            long ca = THREADS.getCurrentThreadCpuTime();
            smacof.iterate(n, 0);
            times[1] = THREADS.getCurrentThreadCpuTime() - ca;
            sync.barrier();
            times[0] = System.nanoTime() - a;
            if (roofline != null) {
                a = System.nanoTime();
                ca = THREADS.getCurrentThreadCpuTime();
                sink += roofline.pass(n);
                times[3] = THREADS.getCurrentThreadCpuTime() - ca;
                sync.barrier();
                times[2] = System.nanoTime() - a;
            }
            if (kernel != null) {
                a = System.nanoTime();
                ca = THREADS.getCurrentThreadCpuTime();
                kernel.gather(memberships, CLUSTERS, gathered);
                kernel.multiply(gathered, CLUSTERS, product);
                times[5] = THREADS.getCurrentThreadCpuTime() - ca;
                sync.barrier();
                times[4] = System.nanoTime() - a;
            }
        }

        /**
         * The product's vector pass waits until C2 has compiled it (some 30 products): a small kernel of this task's
         * own over the first rows gets it there, as in {@code bench pwc-triangle}.
         */
        private void compileKernel() {
            int few = Math.min(n, 256);
            int[] first = new int[few];
            Arrays.setAll(first, i -> i);
            TriangleKernel small = new TriangleKernel(rows, few, new int[][] {first}, SingleProcessSync.INSTANCE,
                    CLUSTERS);
            double[] m = new double[few * CLUSTERS];
            Arrays.fill(m, 0.5);
            double[] out = new double[few * CLUSTERS];
            for (int w = 0; w < 200; w++) {
                small.multiply(m, CLUSTERS, out);
            }
        }
    }
}
