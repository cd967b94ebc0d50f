package io.meridian.perf;

import io.meridian.config.CommandLine;
import io.meridian.config.MeridianConfig;
import io.meridian.config.UsageException;
import io.meridian.perf.ingest.IngestRun;
import io.meridian.perf.ingest.RowUniverse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * {@code ./meridian bench ingest}: rows from Kafka into the row stores on the real cluster (started through
 * {@code ./meridian cluster start} under the cluster lock, stopped afterwards), against a plain Kafka consumer reading
 * the same topic in the same run. See {@link IngestRun} for what each part measures and how.
 */
public final class IngestBenchmark implements Benchmark {
    @Override
    public String description() {
        return "rows/s from Kafka into the row stores on the real cluster over a 30 s window after warm-up vs a plain"
                + " Kafka consumer on the same topic, CPU s per 1000 rows of both, and publish->stored p50/p99 at half"
                + " that rate (--n 5000 --seconds 30 --warmup 15) [--width W] [--rate R] [--transport mmap|netty]"
                + " [--part both|sustained|paced]"
                + " [--chunk-gb 6] [--storm 'key=value;...'] [--jfr DIR]";
    }

    @Override
    public String usage() {
        return """
                  --n N           the point universe: rows of an N-point matrix, each row i the distances to points 0..i-1 (5000)
                  --width W       wide rows instead: the N rows of points W..W+N-1, about W 16-bit distances each
                                  (e.g. --width 100000 --n 1000: 200 KB rows); ingest.maxPoints W+N
                  --pending R     topology.maxSpoutPending and maxUncommittedOffsets: rows in flight (5000; with
                                  --width: as many as fit 64 MB)
                  --heap-mb M     the workers' heap (512)
                  --seconds S     the measuring window, after the warm-up (30)
                  --warmup S      from the first row stored to the window (15)
                  --rate R        rows/s of the latency part (default: half the sustained rate measured before it)
                  --part P        both | sustained | paced (paced alone needs --rate)
                  --chunk-gb G    the sustained part fills and reads its topic in chunks of this much row data (6)
                  --transport T   mmap | netty, between the topology's 2 workers (mmap, as ./meridian submit)
                  --storm KVS     extra Storm settings for both topologies, 'key=value;key=value' (storm jar -c)
                  --jfr DIR       record JFR (profile settings) in the workers; dumped to DIR at the end of the window""";
    }

    @Override
    public void run(String[] args) throws Exception {
        CommandLine cl = CommandLine.parse("bench ingest", args,
                Set.of("n", "width", "pending", "heap-mb", "rate", "transport", "seconds", "warmup", "part", "chunk-gb",
                        "storm", "jfr"), Set.of());
        cl.requireNoPositional();
        int n = cl.intValue("n", 5000, 100, 20000);
        int width = cl.intValue("width", 0, 0, 1 << 22);
        // wide rows: the in-flight budget of the default (5000 rows of 5 KB on average at --n 5000, 25 MB) in bytes
        int pending = cl.intValue("pending", width > 0 ? Math.max(16, (64 << 20) / (2 * width)) : 5000, 1, 100_000);
        double rate = cl.doubleValue("rate", 0, 0, 1e6, false);
        String part = cl.choice("part", "both", "both", "sustained", "paced");
        if ("paced".equals(part) && rate <= 0) {
            throw new UsageException("--part paced needs --rate ROWS_PER_S (the sustained part measures it otherwise)");
        }
        List<String> storm = new ArrayList<>();
        for (String kv : cl.string("storm", "").split(";")) {
            if (kv.isBlank()) {
                continue;
            }
            if (!kv.contains("=") || kv.startsWith("=")) {
                throw new UsageException("--storm wants key=value;key=value, got '" + kv + "'");
            }
            storm.add(kv.strip());
        }
        Path jfr = cl.has("jfr") ? cl.outputDirectory("jfr") : null;
        IngestRun.Options options = new IngestRun.Options(n, width, cl.intValue("seconds", 30, 5, 3600),
                cl.intValue("warmup", 15, 3, 600), rate, part,
                (long) (cl.doubleValue("chunk-gb", 6, 0, 64, true) * 1e9),
                cl.choice("transport", MeridianConfig.TopologySettings.MMAP, MeridianConfig.TopologySettings.MMAP,
                        MeridianConfig.TopologySettings.NETTY), pending, cl.intValue("heap-mb", 512, 256, 8192),
                storm, jfr);
        Path home = Path.of(System.getenv().getOrDefault("MERIDIAN_HOME", ".")).toAbsolutePath().normalize();
        Path work = home.resolve(".meridian/bench/ingest-" + System.currentTimeMillis()); // deleted at the end
        Files.createDirectories(work);
        Figures figures = new Figures("ingest");
        try {
            RowUniverse universe = width > 0 ? RowUniverse.wide(n, width, 5) : RowUniverse.random(n, 5);
            new IngestRun(home, work, options, universe, figures).run();
        } finally {
            IngestRun.deleteTree(work);
        }
        figures.print();
    }
}
