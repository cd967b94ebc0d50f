package io.meridian.perf;

import io.meridian.config.CommandLine;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * The SPIDAL Java paper's Figure 1 on this host: allgatherv of 3 million doubles in total across P = 1, 2, 4, 8
 * processes (mpirun ranks), Open MPI called by every rank (flat) against the two-level collectives (one shared region
 * per memory group, MPI among the group leaders only); M = 2 groups emulate two nodes.
 */
public final class CollectivesBenchmark implements Benchmark {
    @Override
    public String description() {
        return "allgatherv of 3M doubles, P = 1, 2, 4, 8 ranks: flat Open MPI vs two-level shared-memory collectives"
                + " [--total N] [--iterations K] [--warmup W] [--procs 1,2,4,8]";
    }

    @Override
    public void run(String[] args) throws Exception {
        CommandLine cl = CommandLine.parse("bench collectives", args, Set.of("total", "iterations", "warmup", "procs"), Set.of());
        cl.requireNoPositional();
        int total = cl.intValue("total", 3_000_000, 1, 100_000_000);
        int iterations = cl.intValue("iterations", 30, 1, 100_000);
        int warmup = cl.intValue("warmup", 5, 0, 100_000);
        List<Integer> procs = new ArrayList<>();
        for (String p : cl.string("procs", "1,2,4,8").split(",")) {
            procs.add(Integer.parseInt(p.trim()));
        }
        int cores = Runtime.getRuntime().availableProcessors();
        System.out.printf(Locale.ROOT, "allgatherv of %,d doubles (%.1f MB) in total, %d timed calls after %d warm-up;"
                + " time per call = mean over calls and ranks of (write own part + collective)%n", total, total * 8 / 1e6,
                iterations, warmup);
        System.out.printf(Locale.ROOT, "this host has %d cores: runs with more ranks than cores are oversubscribed and also"
                + " measure waiting for descheduled ranks (Open MPI with mpi_yield_when_idle=1; timings taken under load"
                + " from other work on this machine)%n%n", cores);
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
            if (p >= 4) {
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
        new Figures("collectives")
                .put("total_doubles", total)
                .put("iterations", iterations)
                .put("cores", cores)
                .put("flat_ms", flatMs)
                .put("two_level_ms", twoLevelMs)
                .put("two_level_2groups_ms", twoGroupsMs)
                .put("heap_blocksync_ms", heapMs)
                .put("ratio_flat_over_two_level_P4", flatAt4 / twoLevelAt4)
                .print();
    }

    private static double run(int p, String mode, int groups, int total, int warmup, int iterations, boolean heap,
                              String label) throws Exception {
        List<String> cmd = new ArrayList<>(List.of("mpirun", "--oversubscribe", "--bind-to", "none",
                "--mca", "mpi_yield_when_idle", "1"));
        if ("root".equals(System.getProperty("user.name"))) {
            cmd.add("--allow-run-as-root");
        }
        cmd.addAll(List.of("-np", String.valueOf(p),
                Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx512m",
                "-Djava.library.path=/usr/lib/x86_64-linux-gnu", "-cp", System.getProperty("java.class.path"),
                CollectivesBenchRank.class.getName(), mode, String.valueOf(groups), String.valueOf(total),
                String.valueOf(warmup), String.valueOf(iterations)));
        if (heap) {
            cmd.add("heap");
        }
        Process proc = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        StringBuilder out = new StringBuilder();
        String result = null;
        try (BufferedReader in = new BufferedReader(new InputStreamReader(proc.getInputStream(), StandardCharsets.UTF_8))) {
            for (String line; (line = in.readLine()) != null; ) {
                out.append(line).append('\n');
                if (line.startsWith("RESULT ")) {
                    result = line;
                }
            }
        }
        if (!proc.waitFor(10, TimeUnit.MINUTES) || proc.exitValue() != 0 || result == null) {
            proc.descendants().forEach(ProcessHandle::destroyForcibly);
            proc.destroyForcibly();
            throw new IllegalStateException("mpirun -np " + p + " " + mode + " failed:\n" + out);
        }
        double mean = Double.parseDouble(field(result, "meanMs"));
        double slowest = Double.parseDouble(field(result, "maxRankMeanMs"));
        System.out.printf(Locale.ROOT, "%-4d %-26s %8.3f %16.3f%n", p, label, mean, slowest);
        return mean;
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
