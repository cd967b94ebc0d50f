package io.meridian.perf;

import io.meridian.cli.Testbed;
import io.meridian.config.CommandLine;
import io.meridian.topology.Processes;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The SPIDAL Java paper's Figure 1 on this host: allgatherv of 3 million doubles in total across P = 1, 2, 4, 8
 * processes (mpirun ranks), Open MPI called by every rank (flat) against the two-level collectives (one shared region
 * per memory group, MPI among the group leaders only); M = 2 groups emulate two nodes. With {@code --hosts 2} the ranks
 * run on the two hosts of the testbed ({@code ./meridian testbed}, network namespaces), 2 per host, so flat Open MPI
 * crosses hosts over TCP and the two-level collectives have one group per host.
 */
public final class CollectivesBenchmark implements Benchmark {
    /** Empty on one host; on the testbed: the command that runs the rest of a command line on its host 1. */
    private List<String> onHost1 = List.of();
    private String hostfile;
    private int mdsWarmup;
    private int mdsRepeats;
    @Override
    public String description() {
        return "allgatherv of 3M doubles, P = 1, 2, 4, 8 ranks: flat Open MPI vs two-level shared-memory collectives"
                + "; DA-MDS N = 4000 communication per iteration, P = 2, 4 [--total N] [--iterations K] [--warmup W]"
                + " [--procs 1,2,4,8] [--mds-n N (0: skip)] [--mds-temp-loops K] [--mds-warmup W (1000)] [--mds-repeats R (3)]; --hosts 2: on the two hosts of"
                + " ./meridian testbed (network namespaces, started and stopped here if it is not running), 2 ranks per"
                + " host: P = 4 and DA-MDS P = 4, flat Open MPI over TCP between the hosts vs two-level";
    }

    @Override
    public void run(String[] args) throws Exception {
        CommandLine cl = CommandLine.parse("bench collectives", args, Set.of("total", "iterations", "warmup", "procs", "mds-n", "mds-temp-loops", "mds-warmup", "mds-repeats", "hosts"), Set.of());
        cl.requireNoPositional();
        int total = cl.intValue("total", 3_000_000, 1, 100_000_000);
        int iterations = cl.intValue("iterations", 30, 1, 100_000);
        int warmup = cl.intValue("warmup", 5, 0, 100_000);
        int mdsN = cl.intValue("mds-n", 4000, 0, 100_000);
        int mdsLoops = cl.intValue("mds-temp-loops", 6, 1, 10_000);
        // the two-level path's Java code is compiled by the JIT over its first few hundred calls (Open MPI's is
        // native): with 5 warm-up calls of 0.3 ms the DA-MDS pattern measured the compiler (0.66 ms per iteration on
        // the testbed against 0.27 ms once warm)
        mdsWarmup = cl.intValue("mds-warmup", 1000, 0, 1_000_000);
        // one run per variant moved by up to 1.5x between runs on the testbed: variants take turns, medians compared
        mdsRepeats = cl.intValue("mds-repeats", 3, 1, 100);
        int hosts = cl.intValue("hosts", 1, 1, 2);
        List<Integer> procs = new ArrayList<>();
        String procsList = cl.string("procs", hosts == 1 ? "1,2,4,8" : "4");
        for (String p : procsList.split(",", -1)) {
            int count;
            try {
                count = Integer.parseInt(p.trim());
            } catch (NumberFormatException e) {
                count = 0;
            }
            if (count < 1 || count > 4096) {
                throw new io.meridian.config.UsageException("--procs must be a comma-separated list of rank counts"
                        + " from 1 to 4096, got '" + procsList + "'");
            }
            procs.add(count);
        }
        if (hosts == 1) {
            run(total, iterations, warmup, mdsN, mdsLoops, procs, hosts);
            return;
        }
        for (int p : procs) {
            if (p % 2 != 0) {
                throw new io.meridian.config.UsageException("--procs " + p
                        + " with --hosts 2: give an even count (the ranks are placed evenly on the two hosts)");
            }
        }
        Testbed testbed = Testbed.ensureRunning(Path.of(System.getenv().getOrDefault("MERIDIAN_HOME", ".")));
        try {
            onHost1 = testbed.exec(Testbed.HOST_1);
            hostfile = testbed.hostfile();
            run(total, iterations, warmup, mdsN, mdsLoops, procs, hosts);
        } finally {
            testbed.close();
        }
    }

    private void run(int total, int iterations, int warmup, int mdsN, int mdsLoops, List<Integer> procs, int hosts)
            throws Exception {
        int cores = Runtime.getRuntime().availableProcessors();
        System.out.printf(Locale.ROOT, "allgatherv of %,d doubles (%.1f MB) in total, %d timed calls after %d warm-up;"
                + " time per call = mean over calls and ranks of (write own part + collective)%n", total, total * 8 / 1e6,
                iterations, warmup);
        System.out.printf(Locale.ROOT, "this host has %d cores: runs with more ranks than cores are oversubscribed and also"
                + " measure waiting for descheduled ranks (Open MPI with mpi_yield_when_idle=1; timings taken under load"
                + " from other work on this machine)%n%n", cores);
        if (hosts > 1) {
            System.out.printf(Locale.ROOT, "%d hosts (testbed network namespaces meridian-h1, meridian-h2), ranks spread"
                    + " evenly: flat Open MPI between the hosts over TCP (a veth bridge), two-level with one memory group per"
                    + " host%n%n", hosts);
        }
        System.out.printf(Locale.ROOT, "%-4s %-22s %12s %16s%n", "P", "mode", "ms/call", "slowest rank ms");
        Map<String, Object> flatMs = new LinkedHashMap<>();
        Map<String, Object> twoLevelMs = new LinkedHashMap<>();
        Map<String, Object> twoGroupsMs = new LinkedHashMap<>();
        Map<String, Object> heapMs = new LinkedHashMap<>();
        double flatAt4 = Double.NaN;
        double twoLevelAt4 = Double.NaN;
        for (int p : procs) {
            double flat = run(p, "flat", 1, total, warmup, iterations, false, "flat Open MPI");
            double two = run(p, "two-level", 1, total, warmup, iterations, false, "two-level M=1");
            flatMs.put("P" + p, flat);
            twoLevelMs.put("P" + p, two);
            if (p >= 4 && hosts == 1) {
                twoGroupsMs.put("P" + p, run(p, "two-level", 2, total, warmup, iterations, false, "two-level M=2 (2 'nodes')"));
            }
            if (p == 4) {
                flatAt4 = flat;
                twoLevelAt4 = two;
                heapMs.put("flat_P4", run(p, "flat", 1, total, warmup, iterations, true, "flat, heap BlockSync"));
                heapMs.put("two_level_P4", run(p, "two-level", 1, total, warmup, iterations, true, "two-level, heap BlockSync"));
            }
            System.out.printf(Locale.ROOT, "     flat / two-level at P=%d: %.2fx%n", p, flat / two);
        }
        System.out.printf(Locale.ROOT, "%nratio flat / two-level at P=4: %.2fx (goal >= 2x); two-level cost across P: %s ms%n",
                flatAt4 / twoLevelAt4, twoLevelMs.values());
        Map<String, Object> mdsComm = new LinkedHashMap<>();
        Map<String, Object> mdsIteration = new LinkedHashMap<>();
        Map<String, Object> mdsPattern = new LinkedHashMap<>();
        if (mdsN > 0) {
            // a DA-MDS iteration's communication on its own (every call starts together, no rank still computing):
            // what the engine's slowest-rank figure below mixes with waiting on 2 oversubscribed cores
            System.out.printf(Locale.ROOT, "%nDA-MDS N = %d, one SMACOF iteration's communication alone: the new"
                    + " layout (allgatherv of %d doubles) and the stress (a sum of 1 double) through BlockSync, %d calls"
                    + " after %d warm-up, each variant %d times in turn (median below): as SPIDAL calls them (an allreduce,"
                    + " then an allgatherv) and as DaMds calls them now (one allgathervAndSum: flat Open MPI packs each"
                    + " rank's sum with its part into one allgatherv, two-level hands one call through its leaders,"
                    + " which pack their group's sum the same way)%n", mdsN, 3 * mdsN, Math.max(iterations, 1000),
                    mdsWarmup, mdsRepeats);
            System.out.printf(Locale.ROOT, "%-4s %-22s %12s %16s%n", "P", "mode", "ms/iteration", "slowest rank ms");
            String[][] variants = {
                {"flat", "mds-pattern-separate", "flat, 2 calls (SPIDAL)"},
                {"flat", "mds-pattern", "flat, 1 packed call"},
                {"two-level", "mds-pattern-separate", "two-level, 2 calls"},
                {"two-level", "mds-pattern", "two-level, 1 call"}};
            for (int p : hosts == 1 ? new int[] {2, 4} : new int[] {4}) {
                double[][] ms = new double[variants.length][mdsRepeats];
                for (int r = 0; r < mdsRepeats; r++) {
                    for (int v = 0; v < variants.length; v++) {
                        ms[v][r] = run(p, variants[v][0], 1, 3 * mdsN, mdsWarmup, Math.max(iterations, 1000),
                                variants[v][1], variants[v][2]);
                    }
                }
                double flatSpidal = median(ms[0]);
                double flat = median(ms[1]);
                double twoCalls = median(ms[2]);
                double two = median(ms[3]);
                double bestFlat = Math.min(flat, flatSpidal);
                System.out.printf(Locale.ROOT, "     medians at P=%d: flat %.3f (2 calls) / %.3f (1 call), two-level %.3f"
                        + " (2 calls) / %.3f (1 call) ms; DA-MDS communication, the better flat / two-level: %.2fx"
                        + " (SPIDAL's flat calls / two-level: %.2fx)%n", p, flatSpidal, flat, twoCalls, two,
                        bestFlat / two, flatSpidal / two);
                mdsPattern.put("flat_P" + p, flat);
                mdsPattern.put("flat_two_calls_P" + p, flatSpidal);
                mdsPattern.put("two_level_P" + p, two);
                mdsPattern.put("two_level_two_calls_P" + p, twoCalls);
                mdsPattern.put("ratio_P" + p, bestFlat / two);
                mdsPattern.put("ratio_spidal_calls_P" + p, flatSpidal / two);
            }
            mds(mdsN, mdsLoops, hosts == 1 ? new int[] {2, 4} : new int[] {4}, mdsComm, mdsIteration);
        }
        new Figures("collectives")
                .put("hosts", hosts)
                .put("total_doubles", total)
                .put("iterations", iterations)
                .put("cores", cores)
                .put("flat_ms", flatMs)
                .put("two_level_ms", twoLevelMs)
                .put("two_level_2groups_ms", twoGroupsMs)
                .put("heap_blocksync_ms", heapMs)
                .put("ratio_flat_over_two_level_P4", flatAt4 / twoLevelAt4)
                .put("mds_n", mdsN)
                .put("mds_pattern_warmup_calls", mdsWarmup)
                .put("mds_pattern_ms_per_iteration", mdsPattern)
                .put("mds_comm_ms_per_iteration", mdsComm)
                .put("mds_ms_per_iteration", mdsIteration)
                .print();
    }

    private double run(int p, String mode, int groups, int total, int warmup, int iterations, boolean heap,
                              String label) throws Exception {
        return run(p, mode, groups, total, warmup, iterations, heap ? "heap" : null, label);
    }

    private double run(int p, String mode, int groups, int total, int warmup, int iterations, String variant,
                       String label) throws Exception {
        List<String> cmd = new ArrayList<>(onHost1);
        cmd.addAll(List.of("mpirun", "--oversubscribe", "--bind-to", "none", "--mca", "mpi_yield_when_idle", "1"));
        if ("root".equals(System.getProperty("user.name"))) {
            cmd.add("--allow-run-as-root");
        }
        if (hostfile != null) {
            cmd.addAll(List.of("--hostfile", hostfile, "--map-by", "ppr:" + p / 2 + ":node"));
        }
        cmd.addAll(List.of("-np", String.valueOf(p),
                Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx512m",
                "-Djava.library.path=/usr/lib/x86_64-linux-gnu", "-cp", System.getProperty("java.class.path"),
                CollectivesBenchRank.class.getName(), mode, String.valueOf(groups), String.valueOf(total),
                String.valueOf(warmup), String.valueOf(iterations)));
        if (variant != null) {
            cmd.add(variant);
        }
        String out;
        try {
            out = Processes.output(cmd, Duration.ofMinutes(10));
        } catch (java.io.IOException e) {
            throw new IllegalStateException("mpirun -np " + p + " " + mode + " failed: " + e.getMessage(), e);
        }
        String result = out.lines().filter(l -> l.startsWith("RESULT ")).reduce((a, b) -> b)
                .orElseThrow(() -> new IllegalStateException("mpirun -np " + p + " " + mode + ": no RESULT line in:\n"
                        + out));
        double mean = Double.parseDouble(field(result, "meanMs"));
        double slowest = Double.parseDouble(field(result, "maxRankMeanMs"));
        System.out.printf(Locale.ROOT, "%-4d %-26s %8.3f %16.3f%n", p, label, mean, slowest);
        return mean;
    }

    /**
     * DA-MDS of N uniform random 8-D points as P = 2 and 4 MPI ranks, flat and two-level: the communication time per
     * SMACOF iteration (wall time inside the collectives, slowest rank; includes waiting for slower ranks). The run is
     * cut to a few temperature loops with a loose threshold: every iteration communicates the same either way.
     */
    private static double median(double[] values) {
        double[] sorted = values.clone();
        java.util.Arrays.sort(sorted);
        int m = sorted.length / 2;
        return sorted.length % 2 == 1 ? sorted[m] : (sorted[m - 1] + sorted[m]) / 2;
    }

    private void mds(int n, int loops, int[] procs, Map<String, Object> comm, Map<String, Object> perIteration)
            throws Exception {
        Path dir = java.nio.file.Files.createTempDirectory("meridian-bench-mds");
        try {
            io.meridian.synthetic.SyntheticDataset.uniform(n, 8, 42).write(dir, java.nio.ByteOrder.LITTLE_ENDIAN);
            System.out.printf(Locale.ROOT, "%nDA-MDS, N = %d uniform 8-D points, %d temperature loops, threshold 1e-3:"
                    + " communication = wall time inside the collectives per SMACOF iteration, slowest rank (it includes"
                    + " waiting for ranks still computing; 2 cores, so P = 4 is oversubscribed)%n", n, loops);
            System.out.printf(Locale.ROOT, "%-4s %-14s %18s %18s %12s%n", "P", "mode", "comm ms/iteration", "all ms/iteration", "iterations");
            for (int p : procs) {
                double[] flat = mdsRun(dir, n, loops, p, "--flat-mpi");
                double[] two = mdsRun(dir, n, loops, p, "--groups-per-node", "1");
                System.out.printf(Locale.ROOT, "%-4d %-14s %18.2f %18.2f %12.0f%n", p, "flat Open MPI", flat[0], flat[1], flat[2]);
                System.out.printf(Locale.ROOT, "%-4d %-14s %18.2f %18.2f %12.0f%n", p, "two-level", two[0], two[1], two[2]);
                System.out.printf(Locale.ROOT, "     communication flat / two-level at P=%d: %.2fx%n", p, flat[0] / two[0]);
                comm.put("flat_P" + p, flat[0]);
                comm.put("two_level_P" + p, two[0]);
                perIteration.put("flat_P" + p, flat[1]);
                perIteration.put("two_level_P" + p, two[1]);
            }
        } finally {
            try (var files = java.nio.file.Files.walk(dir)) {
                files.sorted(java.util.Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
            }
        }
    }

    private static final Pattern COMM = Pattern.compile("communication ([0-9.]+) ms per SMACOF iteration");
    private static final Pattern ITER = Pattern.compile("([0-9]+) SMACOF iterations, [0-9.]+ s \\(([0-9.]+) ms per iteration\\)");

    private double[] mdsRun(Path dir, int n, int loops, int p, String... mode) throws Exception {
        List<String> cmd = new ArrayList<>(onHost1);
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.addAll(java.lang.management.ManagementFactory.getRuntimeMXBean().getInputArguments());
        cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), "io.meridian.cli.Main", "mds",
                "--distances", dir.resolve("distances.bin").toString(), "--n", String.valueOf(n),
                "--out", dir.resolve("out-" + p + mode[0]).toString(), "--max-temp-loops", String.valueOf(loops),
                "--threshold", "1e-3", "--seed", "1", "--procs", String.valueOf(p)));
        if (hostfile != null) {
            cmd.addAll(List.of("--hostfile", hostfile)); // its slots (2 per host) place ranks 0, 1 on host 1
        }
        cmd.addAll(List.of(mode));
        String out;
        try {
            out = Processes.output(cmd, Duration.ofMinutes(20));
        } catch (java.io.IOException e) {
            throw new IllegalStateException("mds --procs " + p + " " + String.join(" ", mode) + " failed: "
                    + e.getMessage(), e);
        }
        Matcher c = COMM.matcher(out);
        Matcher i = ITER.matcher(out);
        if (!c.find() || !i.find()) {
            throw new IllegalStateException("no communication figures in:\n" + out);
        }
        return new double[] {Double.parseDouble(c.group(1)), Double.parseDouble(i.group(2)), Double.parseDouble(i.group(1))};
    }

    private static String field(String line, String name) {
        for (String part : line.split(" ")) {
            if (part.startsWith(name + "=")) {
                return part.substring(name.length() + 1);
            }
        }
        throw new IllegalStateException("no " + name + " in " + line);
    }
}
