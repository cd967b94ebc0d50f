package io.meridian.perf;

import io.meridian.config.UsageException;
import java.util.Arrays;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Supplier;

/**
 * Entry point behind {@code ./meridian bench NAME [options]}. A usage error prints one line naming the option and the
 * problem, then the benchmark's usage line, and exits 2; {@code --help} or {@code -h} prints the benchmark's usage.
 */
public final class Bench {
    static final int EXIT_USAGE = 2;
    private static final Map<String, Supplier<Benchmark>> BENCHMARKS = new TreeMap<>();

    static {
        // each benchmark registers here, one line each
        BENCHMARKS.put("ingest", IngestBenchmark::new);
        BENCHMARKS.put("live-kernel", LiveKernelBench::new);
        BENCHMARKS.put("live-pwc", LivePwcBench::new);
        BENCHMARKS.put("live-rounds", LiveRoundsBench::new);
        BENCHMARKS.put("map-outliers", MapOutliersBench::new);
        BENCHMARKS.put("collectives", CollectivesBenchmark::new);
        BENCHMARKS.put("mds", MdsBench::new);
        BENCHMARKS.put("placement", PlacementBench::new);
        BENCHMARKS.put("pwc", PwcBench::new);
        BENCHMARKS.put("pwc-triangle", PwcTriangleBench::new);
        BENCHMARKS.put("scale", ScaleBench::new);
        BENCHMARKS.put("soak", io.meridian.perf.soak.SoakBench::new);
        BENCHMARKS.put("transport", io.meridian.perf.transport.TransportBench::new);
        BENCHMARKS.put("stream", io.meridian.perf.stream.StreamBench::new);
        BENCHMARKS.put("view", ViewBench::new);
    }

    private Bench() {
    }

    public static void main(String[] args) throws Exception {
        System.exit(run(args));
    }

    static int run(String[] args) throws Exception {
        if (args.length == 0 || "help".equals(args[0]) || "--help".equals(args[0]) || "-h".equals(args[0])) {
            (args.length == 0 ? System.err : System.out).println("usage: ./meridian bench NAME [options]; benchmarks:");
            BENCHMARKS.forEach((n, b) -> (args.length == 0 ? System.err : System.out)
                    .println("  " + n + ": " + b.get().description()));
            return args.length == 0 ? EXIT_USAGE : 0;
        }
        Supplier<Benchmark> benchmark = BENCHMARKS.get(args[0]);
        if (benchmark == null) {
            System.err.println("meridian bench: unknown benchmark '" + args[0] + "' (known: "
                    + String.join(", ", BENCHMARKS.keySet()) + ")");
            System.err.println("usage: ./meridian bench NAME [options]  (./meridian bench help: the benchmarks)");
            return EXIT_USAGE;
        }
        Benchmark b = benchmark.get();
        if (Arrays.asList(args).contains("--help") || Arrays.asList(args).contains("-h")) {
            System.out.println("./meridian bench " + args[0] + ": " + b.description());
            if (!b.usage().isEmpty()) {
                System.out.println(b.usage());
            }
            return 0;
        }
        try {
            b.run(Arrays.copyOfRange(args, 1, args.length));
        } catch (UsageException e) {
            System.err.println("meridian bench " + args[0] + ": " + e.getMessage());
            System.err.println(usageLine(args[0], b));
            return EXIT_USAGE;
        }
        return 0;
    }

    /** The first line of the benchmark's usage, or a pointer to {@code --help} when it documents its options inline. */
    static String usageLine(String name, Benchmark b) {
        String usage = b.usage().strip();
        if (usage.isEmpty()) {
            return "usage: ./meridian bench " + name + " [options]  (./meridian bench " + name + " --help: the options)";
        }
        String first = usage.lines().findFirst().orElse(usage).strip();
        return "usage: " + (first.startsWith("./meridian") ? first : "./meridian bench " + name + " " + first);
    }
}
