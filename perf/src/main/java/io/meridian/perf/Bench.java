package io.meridian.perf;

import java.util.Arrays;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Supplier;

/** Entry point behind {@code ./meridian bench NAME [options]}. */
public final class Bench {
    private static final Map<String, Supplier<Benchmark>> BENCHMARKS = new TreeMap<>();

    static {
        // each benchmark registers here, one line each
        BENCHMARKS.put("ingest", IngestBenchmark::new);
        BENCHMARKS.put("live-kernel", LiveKernelBench::new);
        BENCHMARKS.put("live-rounds", LiveRoundsBench::new);
        BENCHMARKS.put("collectives", CollectivesBenchmark::new);
        BENCHMARKS.put("mds", MdsBench::new);
        BENCHMARKS.put("pwc", PwcBench::new);
        BENCHMARKS.put("transport", io.meridian.perf.transport.TransportBench::new);
        BENCHMARKS.put("stream", io.meridian.perf.stream.StreamBench::new);
        BENCHMARKS.put("view", ViewBench::new);
    }

    private Bench() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length == 0 || "help".equals(args[0])) {
            System.out.println("usage: ./meridian bench NAME [options]; benchmarks:");
            BENCHMARKS.forEach((n, b) -> System.out.println("  " + n + ": " + b.get().description()));
            System.exit(args.length == 0 ? 2 : 0);
        }
        Supplier<Benchmark> benchmark = BENCHMARKS.get(args[0]);
        if (benchmark == null) {
            System.err.println("meridian bench: unknown benchmark '" + args[0] + "' (known: " + String.join(", ", BENCHMARKS.keySet()) + ")");
            System.exit(2);
        }
        if (Arrays.asList(args).contains("--help") || Arrays.asList(args).contains("-h")) {
            Benchmark b = benchmark.get();
            System.out.println("./meridian bench " + args[0] + ": " + b.description());
            if (!b.usage().isEmpty()) {
                System.out.println(b.usage());
            }
            System.exit(0);
        }
        try {
            benchmark.get().run(Arrays.copyOfRange(args, 1, args.length));
        } catch (io.meridian.config.UsageException e) {
            System.err.println("meridian bench " + args[0] + ": " + e.getMessage());
            System.exit(2);
        }
        System.exit(0);
    }
}
