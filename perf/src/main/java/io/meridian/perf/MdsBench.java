package io.meridian.perf;

import io.meridian.config.CommandLine;
import io.meridian.synthetic.SyntheticDataset;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * {@code ./meridian bench mds}: DA-MDS on N = 4000 uniform random 8-D points, 1 process, 1 thread. Runs the engine in
 * a child JVM with a small heap ({@link MdsBenchChild}) and reports ms per SMACOF iteration, the ratio to a roofline
 * kernel timed in the same child (one streaming pass over the same matrix with a square root per entry), heap bytes
 * allocated per iteration and the child's peak RSS (VmHWM).
 */
public final class MdsBench implements Benchmark {
    static final double TARGET_MS = 45;
    static final double TARGET_RATIO = 1.5;
    static final double TARGET_ALLOC = 1024;
    static final double TARGET_RSS_MB = 120;

    @Override
    public String description() {
        return "DA-MDS, N = 4000 uniform 8-D points, 1 process: ms per SMACOF iteration vs a sqrt-per-entry roofline,"
                + " allocation per iteration, peak RSS [--n N] [--iterations K] [--full-run] [--xmx 64m]";
    }

    @Override
    public void run(String[] args) throws Exception {
        CommandLine cl = CommandLine.parse("bench mds", args, Set.of("n", "iterations", "xmx", "dir"), Set.of("full-run"));
        cl.requireNoPositional();
        int n = cl.intValue("n", 4000, 10, 50_000);
        int iterations = cl.intValue("iterations", 40, 3, 100_000);
        String xmx = cl.string("xmx", "64m");
        boolean fullRun = cl.flag("full-run");
        String home = System.getenv().getOrDefault("MERIDIAN_HOME", ".");
        Path dir = Path.of(cl.string("dir", Path.of(home, ".meridian", "bench", "mds-uniform8-" + n).toString()));
        Path matrix = dir.resolve(SyntheticDataset.DISTANCES_FILE);
        if (!Files.exists(matrix) || Files.size(matrix) != 2L * n * n) {
            System.out.println("bench mds: generating " + n + " uniform random 8-D points (seed 42) into " + dir);
            SyntheticDataset.uniform(n, 8, 42).write(dir, ByteOrder.LITTLE_ENDIAN);
        }

        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> command = new ArrayList<>(List.of(java, "-Xms16m", "-Xmx" + xmx, "-XX:+UseSerialGC",
                "-XX:TieredStopAtLevel=4", "-XX:ReservedCodeCacheSize=48m", "-XX:MaxMetaspaceSize=64m"));
        // the engine's JVM options as the launcher gives them (among them --add-modules jdk.incubator.vector, which
        // the kernel's vector pass needs)
        for (String jvmArg : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
            if (jvmArg.startsWith("--add-") || jvmArg.startsWith("-Dmeridian.")) {
                command.add(jvmArg);
            }
        }
        command.addAll(List.of("-cp", System.getProperty("java.class.path"), MdsBenchChild.class.getName(),
                matrix.toString(), Integer.toString(n), Integer.toString(iterations), Boolean.toString(fullRun)));
        System.out.println("bench mds: child JVM: " + String.join(" ", command.subList(0, 7)) + " ...");
        System.out.println("bench mds: load average before: " + loadAverage());
        ProcessBuilder pb = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT);
        Process child = pb.start();
        Map<String, Double> v = new LinkedHashMap<>();
        try (BufferedReader in = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = in.readLine()) != null) {
                int eq = line.indexOf('=');
                if (eq > 0) {
                    v.put(line.substring(0, eq), Double.parseDouble(line.substring(eq + 1)));
                } else {
                    System.out.println(line);
                }
            }
        }
        int status = child.waitFor();
        if (status != 0 || !v.containsKey("vmHwmKiB")) {
            throw new IllegalStateException("bench child exited with status " + status);
        }
        String load = loadAverage();
        double ms = v.get("msPerIteration");
        double roof = v.get("rooflineMs");
        // median over rounds of (iteration / roofline pass) timed back to back: robust to the load drifting
        double ratio = v.get("ratio");
        double cpuRatio = v.get("cpuRatio");
        double alloc = v.get("allocatedBytesPerIteration");
        double rssMb = v.get("vmHwmKiB") / 1024.0;
        System.out.printf(Locale.ROOT, "N = %d, %d rounds of one SMACOF iteration + one roofline pass (medians), 1 process,"
                + " 1 thread, -Xmx%s SerialGC%n", n, iterations, xmx);
        boolean vectorKernel = v.getOrDefault("vectorKernel", 0.0) == 1;
        System.out.println("  kernel: " + (vectorKernel ? "explicit vectors (jdk.incubator.vector)"
                : "scalar (the JVM lacks --add-modules jdk.incubator.vector, or -Dmeridian.mds.vector=false)"));
        System.out.printf(Locale.ROOT, "  SMACOF iteration   %8.2f ms wall  %8.2f ms CPU  (best %.2f ms)   target <= %.0f ms%n",
                ms, v.get("cpuMsPerIteration"), v.get("bestMsPerIteration"), TARGET_MS);
        System.out.printf(Locale.ROOT, "  roofline pass      %8.2f ms wall  %8.2f ms CPU  (best %.2f ms)%n",
                roof, v.get("rooflineCpuMs"), v.get("bestRooflineMs"));
        System.out.printf(Locale.ROOT, "  ratio (per round)  %8.2f x wall   %8.2f x CPU                      target <= %.1f x%n",
                ratio, cpuRatio, TARGET_RATIO);
        System.out.printf(Locale.ROOT, "  ratio (medians)    %8.2f x wall   %8.2f x CPU%n", ms / roof,
                v.get("cpuMsPerIteration") / v.get("rooflineCpuMs"));
        System.out.printf(Locale.ROOT, "  allocation         %8.1f bytes per iteration (20 iterations after %.0f of warm-up, engine alone) target <= %.0f%n",
                alloc, v.get("warmUpIterations"), TARGET_ALLOC);
        System.out.printf(Locale.ROOT, "  peak RSS (VmHWM)   %8.1f MB (heap peak %.1f MB; %.1f MB at the end, after the"
                        + " roofline mapped the file again)   target <= %.0f MB%n",
                rssMb, v.get("peakHeapBytes") / 1048576.0, v.get("vmHwmEndKiB") / 1024.0, TARGET_RSS_MB);
        if (fullRun) {
            System.out.printf(Locale.ROOT, "  full run: %.0f temperature loops, %.0f iterations, %.1f s, %.2f ms per iteration, normalized stress %.6f%n",
                    v.get("fullRunTemperatureLoops"), v.get("fullRunIterations"), v.get("fullRunSeconds"),
                    v.get("fullRunMsPerIteration"), v.get("fullRunNormalizedStress"));
        }
        System.out.println("  load average: before " + loadAverage0 + ", after " + load
                + " (this machine is shared: wall times are noisy; CPU times less so)");
        Figures f = new Figures("mds").put("n", n).put("iterations", iterations)
                .put("msPerIteration", ms).put("cpuMsPerIteration", v.get("cpuMsPerIteration"))
                .put("vectorKernel", vectorKernel).put("rooflineMs", roof).put("rooflineCpuMs", v.get("rooflineCpuMs"))
                .put("ratio", ratio).put("cpuRatio", cpuRatio)
                .put("ratioOfMedians", ms / roof).put("cpuRatioOfMedians", v.get("cpuMsPerIteration") / v.get("rooflineCpuMs"))
                .put("allocatedBytesPerIteration", alloc).put("peakRssMB", rssMb)
                .put("peakHeapMB", v.get("peakHeapBytes") / 1048576.0).put("loadAverage", load)
                .put("meetsMs", ms <= TARGET_MS).put("meetsRatio", ratio <= TARGET_RATIO)
                .put("meetsAlloc", alloc <= TARGET_ALLOC).put("meetsRss", rssMb <= TARGET_RSS_MB);
        if (fullRun) {
            f.put("fullRunMsPerIteration", v.get("fullRunMsPerIteration"))
                    .put("fullRunNormalizedStress", v.get("fullRunNormalizedStress"))
                    .put("fullRunIterations", v.get("fullRunIterations").longValue());
        }
        f.print();
    }

    private String loadAverage0 = "";

    private String loadAverage() {
        String value;
        try {
            value = Files.readString(Path.of("/proc/loadavg")).trim().split(" ")[0];
        } catch (Exception e) {
            value = "?";
        }
        if (loadAverage0.isEmpty()) {
            loadAverage0 = value;
        }
        return value;
    }
}
