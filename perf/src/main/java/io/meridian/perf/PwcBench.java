package io.meridian.perf;

import io.meridian.engine.BadInputException;
import io.meridian.collective.SingleProcessSync;
import io.meridian.config.CommandLine;
import io.meridian.matrix.RowBlock;
import io.meridian.matrix.RowPartition;
import io.meridian.pwc.Ari;
import io.meridian.pwc.PwcEngine;
import io.meridian.pwc.PwcProgress;
import io.meridian.pwc.PwcResult;
import io.meridian.pwc.PwcSettings;
import io.meridian.synthetic.SyntheticDataset;
import java.lang.management.ManagementFactory;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Locale;
import java.util.Set;

/**
 * {@code ./meridian bench pwc}: DA-PWC on N = 2000 uniform random 8-D points (as the note's dapwc and damds figures),
 * up to 4 clusters, 1 process, 1 thread; {@code --kind blobs} uses 4 Gaussian blobs (std 2, centres in [-10, 10)^8) instead. A warm-up run, then a measured run: wall and CPU seconds, EM iterations, ms per EM
 * iteration (everything included: split tests, freezing), heap bytes allocated by the engine's thread from its first
 * to its last EM iteration, and for blobs the adjusted Rand index against them. The reference is SPIDAL's dapwc on this
 * machine (160 s, 264 EM iterations for N = 2000, 4 clusters; see damds-semantics.md): it needs MPI and Habanero Java
 * and is not rerun here, so the ratio is against that recorded figure.
 */
public final class PwcBench implements Benchmark {
    static final double REFERENCE_SECONDS = 160;
    static final int REFERENCE_EM_ITERATIONS = 264;
    static final double TARGET_SECONDS = 16;

    @Override
    public String description() {
        return "DA-PWC, N = 2000 uniform 8-D points, up to 4 clusters, 1 process: seconds, EM iterations, ms per iteration,"
                + " allocation per EM iteration, vs dapwc's 160 s [--n N] [--clusters K] [--kind uniform|blobs] [--std S]"
                + " [--dapwc] (the engine with dapwc's settings, PwcSettings.Builder.dapwc(), instead of the defaults)";
    }

    @Override
    public void run(String[] args) throws Exception {
        CommandLine cl = CommandLine.parse("bench pwc", args, Set.of("n", "clusters", "std", "kind", "dir", "seed"),
                Set.of("dapwc"));
        cl.requireNoPositional();
        int n = cl.intValue("n", 2000, 50, 50_000);
        int clusters = cl.intValue("clusters", 4, 1, 100);
        double std = cl.doubleValue("std", 2.0, 0, 1e6, false);
        String kind = cl.choice("kind", "uniform", "uniform", "blobs");
        long seed = cl.longValue("seed", 42, Long.MIN_VALUE, Long.MAX_VALUE);
        String home = System.getenv().getOrDefault("MERIDIAN_HOME", ".");
        String name = "pwc-" + kind + (kind.equals("blobs") ? clusters + "-std" + std : "") + "-8d-" + n + "-seed" + seed;
        Path dir = Path.of(cl.string("dir", Path.of(home, ".meridian", "bench", name).toString()));
        SyntheticDataset data = kind.equals("blobs")
                ? SyntheticDataset.blobs(n, 8, clusters, std, seed)
                : SyntheticDataset.uniform(n, 8, seed);
        Path matrix = dir.resolve(SyntheticDataset.DISTANCES_FILE);
        if (!Files.exists(matrix) || Files.size(matrix) != 2L * n * n) {
            System.out.println("bench pwc: generating " + name + " into " + dir);
            data.write(dir, ByteOrder.LITTLE_ENDIAN);
        }
        int[] truth = new int[n];
        for (int i = 0; i < n; i++) {
            truth[i] = data.label(i);
        }
        boolean dapwc = cl.flag("dapwc");
        PwcSettings.Builder builder = PwcSettings.builder();
        if (dapwc) {
            builder.dapwc();
        }
        PwcSettings settings = builder.maxClusters(clusters).build();
        String loadBefore = loadAverage();
        System.out.println("bench pwc: N = " + n + ", " + kind + ", up to " + clusters + " clusters, 1 process, 1 thread; "
                + "load average before: " + loadBefore + " (2 cores; other work on the machine inflates wall time); settings: "
                + (dapwc ? "dapwc's (--dapwc)" : "the defaults"));

        Measured warmUp = runOnce(matrix, n, settings);
        System.out.printf(Locale.ROOT, "  warm-up run:  %.2f s wall, %.2f s CPU, %d EM iterations%n",
                warmUp.wall, warmUp.cpu, warmUp.result.emIterations());
        Measured m = runOnce(matrix, n, settings);
        PwcResult r = m.result;
        double msPerIteration = m.wall * 1000 / r.emIterations();
        double bytesPerIteration = (double) m.steadyBytes / Math.max(1, m.steadyIterations);
        boolean blobs = kind.equals("blobs");
        double ari = blobs ? Ari.adjustedRandIndex(truth, r.labels()) : Double.NaN;
        String loadAfter = loadAverage();
        System.out.printf(Locale.ROOT, "  measured run: %.2f s wall, %.2f s CPU, %d EM iterations (+%d in split tests,"
                        + " %d power-method iterations), %.1f ms per EM iteration (%.1f ms CPU)%n",
                m.wall, m.cpu, r.emIterations(), r.duplicateEmIterations(), r.powerIterations(), msPerIteration,
                m.cpu * 1000 / r.emIterations());
        System.out.printf(Locale.ROOT, "  clusters %d, sizes %s, %s, final T %.4g%n", r.clusters(),
                Arrays.toString(r.sizes()), blobs ? String.format(Locale.ROOT, "ARI vs blobs %.4f", ari) : "no labels to compare",
                r.finalTemperature());
        System.out.printf(Locale.ROOT, "  allocation: %d bytes over EM iterations %d..%d (%.1f bytes per EM iteration)%n",
                m.steadyBytes, m.firstIteration, r.emIterations(), bytesPerIteration);
        System.out.printf(Locale.ROOT, "  reference dapwc: %.0f s, %d EM iterations (%.0f ms per iteration); ours %.1fx faster"
                        + " in wall time (target <= %.0f s: %s)%n", REFERENCE_SECONDS, REFERENCE_EM_ITERATIONS,
                REFERENCE_SECONDS * 1000 / REFERENCE_EM_ITERATIONS, REFERENCE_SECONDS / m.wall, TARGET_SECONDS,
                m.wall <= TARGET_SECONDS ? "met" : "NOT met");
        System.out.printf(Locale.ROOT, "  in CPU time of the engine thread: %.2f s, %.1fx the reference (on a quiet machine wall"
                + " time is about CPU time; this run had %.0f%% of a core)%n", m.cpu, REFERENCE_SECONDS / m.cpu,
                100 * m.cpu / m.wall);
        System.out.println("  load average: before " + loadBefore + ", after " + loadAfter);
        new Figures("pwc").put("n", n).put("kind", kind).put("settings", dapwc ? "dapwc" : "default").put("maxClusters", clusters).put("clusters", r.clusters())
                .put("seconds", m.wall).put("cpuSeconds", m.cpu).put("emIterations", r.emIterations())
                .put("msPerEmIteration", msPerIteration).put("duplicateEmIterations", r.duplicateEmIterations())
                .put("powerIterations", r.powerIterations()).put("allocBytesPerEmIteration", bytesPerIteration)
                .put("ari", ari).put("referenceSeconds", REFERENCE_SECONDS)
                .put("referenceEmIterations", REFERENCE_EM_ITERATIONS).put("speedup", REFERENCE_SECONDS / m.wall)
                .put("speedupCpu", REFERENCE_SECONDS / m.cpu).put("cpuShare", m.cpu / m.wall)
                .put("targetSeconds", TARGET_SECONDS).put("targetMet", m.wall <= TARGET_SECONDS)
                .put("targetMetInCpuTime", m.cpu <= TARGET_SECONDS)
                .put("loadAverageBefore", loadBefore).put("loadAverageAfter", loadAfter).print();
    }

    private static Measured runOnce(Path matrix, int n, PwcSettings settings) {
        RowPartition partition = RowPartition.of(n, 1);
        RowBlock block = RowBlock.map(BadInputException.Input.DISTANCES, matrix, ByteOrder.LITTLE_ENDIAN, partition, 0);
        AllocationProbe probe = new AllocationProbe();
        PwcEngine engine = new PwcEngine(block, partition, SingleProcessSync.INSTANCE, settings, probe);
        long cpu0 = probe.threads.getCurrentThreadCpuTime();
        long t0 = System.nanoTime();
        PwcResult result = engine.run();
        double wall = (System.nanoTime() - t0) / 1e9;
        double cpu = (probe.threads.getCurrentThreadCpuTime() - cpu0) / 1e9;
        return new Measured(result, wall, cpu, probe.lastBytes - probe.firstBytes,
                probe.lastIteration - probe.firstIteration, probe.firstIteration);
    }

    /** Reads the thread's allocated-bytes counter at every progress call; reading it allocates nothing. */
    private static final class AllocationProbe implements PwcProgress {
        final com.sun.management.ThreadMXBean threads =
                (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long firstBytes = -1;
        long lastBytes;
        int firstIteration;
        int lastIteration;

        @Override
        public void update(PwcEngine engine) {
            long bytes = threads.getCurrentThreadAllocatedBytes();
            if (firstBytes < 0) {
                firstBytes = bytes;
                firstIteration = engine.emIterations();
            }
            lastBytes = bytes;
            lastIteration = engine.emIterations();
        }
    }

    private record Measured(PwcResult result, double wall, double cpu, long steadyBytes, int steadyIterations,
                            int firstIteration) {
    }

    private static String loadAverage() {
        try {
            return Files.readString(Path.of("/proc/loadavg")).trim().split(" ")[0];
        } catch (Exception e) {
            return "unknown";
        }
    }
}
