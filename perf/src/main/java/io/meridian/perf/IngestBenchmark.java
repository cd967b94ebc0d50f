package io.meridian.perf;

import io.meridian.engine.BadInputException;
import io.meridian.config.CommandLine;
import io.meridian.config.MeridianConfig;
import io.meridian.matrix.RowBlock;
import io.meridian.stream.ingest.FileRowSpout;
import io.meridian.stream.row.DistanceRow;
import io.meridian.stream.row.RowFormat;
import io.meridian.stream.row.RowStores;
import io.meridian.topology.ClusterControl;
import io.meridian.topology.RowCounts;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * {@code ./meridian bench ingest [--n 5000] [--rate ROWS_PER_S]}: on the real cluster (started through
 * {@code ./meridian cluster start} under the cluster lock, stopped afterwards), the sustained rate at which rows of an
 * N-point matrix go from Kafka into the row stores (all N rows published at once, timed from the first publish to the
 * last row stored), then the publish -> stored latency (p50/p99) with rows paced at {@code --rate} (default: half the
 * sustained rate), each run on a fresh topology, topic and row store. Baseline: a plain Kafka consumer reading the
 * same topic, which bounds what any Kafka-fed topology can do on this host.
 */
public final class IngestBenchmark implements Benchmark {
    private static final String BROKERS = "localhost:9092";

    @Override
    public String description() {
        return "rows/s and MB/s from Kafka into the row stores on the real cluster, and publish->stored p50/p99 (--n 5000)"
                + " [--rate R] [--transport mmap|netty] (the topology's transport between its 2 workers; default mmap, as"
                + " ./meridian submit)";
    }

    @Override
    public void run(String[] args) throws Exception {
        CommandLine cl = CommandLine.parse("bench ingest", args, Set.of("n", "rate", "transport"), Set.of());
        cl.requireNoPositional();
        int n = cl.intValue("n", 5000, 2, 20000);
        double pacedRate = cl.doubleValue("rate", 0, 0, 1e6, true);
        String transport = cl.choice("transport", MeridianConfig.TopologySettings.MMAP, MeridianConfig.TopologySettings.MMAP,
                MeridianConfig.TopologySettings.NETTY);
        Path home = Path.of(System.getenv().getOrDefault("MERIDIAN_HOME", ".")).toAbsolutePath().normalize();
        long stamp = System.currentTimeMillis();
        Path work = home.resolve(".meridian/bench/ingest-" + stamp); // deleted at the end
        Files.createDirectories(work);
        Path matrixFile = work.resolve("matrix.bin");
        FileRowSpout.writeRandomMatrix(matrixFile, n, 5);
        RowBlock matrix = RowBlock.mapAll(BadInputException.Input.DISTANCES, matrixFile, n, ByteOrder.LITTLE_ENDIAN);
        byte[][] rows = new byte[n][];
        short[] buf = new short[n];
        long wireBytes = 0;
        for (int id = 0; id < n; id++) {
            matrix.copyRow(id, 0, id, buf, 0);
            rows[id] = RowFormat.encodeInt16(id, buf, 0, id, false);
            wireBytes += rows[id].length;
        }
        System.out.printf(Locale.ROOT, "ingest benchmark: N = %d rows (%.1f MB on the wire, %.1f MB stored), work dir %s%n",
                n, wireBytes / 1e6, 2.0 * n * n / 1e6, work);
        System.out.println("(shared machine: numbers are noisy; the baseline runs in the same process run)");

        Figures figures = new Figures("ingest").put("n", n).put("transport", transport);
        // the row store alone, in this process: decode + quantize + write into the mapped block files
        double storeOnly = 0;
        for (int rep = 0; rep < 3; rep++) {
            Path dir = work.resolve("store-only-" + rep);
            try (RowStores stores = new RowStores(dir, Math.max(1, Math.min(250, n / 4)), n, b -> true)) {
                long t0 = System.nanoTime();
                for (int id = 0; id < n; id++) {
                    stores.store(DistanceRow.decode(rows[id], null));
                }
                storeOnly = Math.max(storeOnly, n / ((System.nanoTime() - t0) / 1e9));
            }
            deleteTree(dir);
        }
        System.out.printf(Locale.ROOT, "row store alone (in process, best of 3): %.0f rows/s, %.0f MB/s written%n",
                storeOnly, storeOnly * 2.0 * n / 1e6);
        figures.put("storeOnlyRowsPerSec", storeOnly);
        try (ClusterControl cluster = ClusterControl.acquire(home, work.resolve("cluster.log"), 1800)) {
            System.out.println("starting the cluster (./meridian cluster start) ...");
            cluster.start();
            Run saturated = run(cluster, work, "a", n, rows, 0, transport);
            double rowsPerSec = (n - 1) / saturated.seconds;
            double wireMBs = (wireBytes - rows[0].length) / 1e6 / saturated.seconds;
            double storedMBs = 2.0 * n * (n - 1) / 1e6 / saturated.seconds;
            System.out.printf(Locale.ROOT, "sustained: %d rows in %.2f s = %.0f rows/s, %.1f MB/s on the wire, %.1f MB/s into"
                    + " the row stores (publish->stored under that backlog: p50 %.0f ms, p99 %.0f ms)%n",
                    n - 1, saturated.seconds, rowsPerSec, wireMBs, storedMBs, saturated.counts.latencyP50Ms,
                    saturated.counts.latencyP99Ms);
            double baseline = consumeAll(saturated.topic, n);
            System.out.printf(Locale.ROOT, "baseline: a plain Kafka consumer reads the same %d rows at %.0f rows/s;"
                    + " topology / baseline = %.2f%n", n, baseline, rowsPerSec / baseline);
            double rate = pacedRate > 0 ? pacedRate : Math.max(50, Math.floor(rowsPerSec / 2));
            Run paced = run(cluster, work, "b", n, rows, rate, transport);
            System.out.printf(Locale.ROOT, "paced at %.0f rows/s: publish->stored p50 %.1f ms, p99 %.1f ms (%d samples)%n",
                    rate, paced.counts.latencyP50Ms, paced.counts.latencyP99Ms, paced.counts.latencySamples);
            figures.put("rowsPerSec", rowsPerSec).put("wireMBPerSec", wireMBs).put("storedMBPerSec", storedMBs)
                    .put("baselineConsumerRowsPerSec", baseline).put("ratioToBaseline", rowsPerSec / baseline)
                    .put("pacedRowsPerSec", rate).put("latencyP50Ms", paced.counts.latencyP50Ms)
                    .put("latencyP99Ms", paced.counts.latencyP99Ms)
                    .put("saturatedLatencyP50Ms", saturated.counts.latencyP50Ms)
                    .put("saturatedLatencyP99Ms", saturated.counts.latencyP99Ms);
        }
        deleteTree(work); // hundreds of MB of matrix and row stores; the figures are printed below
        figures.print();
    }

    private static void deleteTree(Path dir) throws java.io.IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (var paths = Files.walk(dir)) {
            for (Path p : (Iterable<Path>) paths.sorted(java.util.Comparator.reverseOrder())::iterator) {
                Files.delete(p);
            }
        }
    }

    private record Run(String topic, double seconds, RowCounts counts) {
    }

    /** One topology on fresh topics and stores: row 0 first (proves the path is live), then rows 1..n-1, timed. */
    private static Run run(ClusterControl cluster, Path work, String tag, int n, byte[][] rows, double rate,
                           String transport) throws Exception {
        String name = "meridian-bench-" + tag;
        String topic = "distance-rows-bench-" + tag + "-" + System.currentTimeMillis();
        Path stores = work.resolve("rowstore-" + tag);
        Path config = work.resolve("bench-" + tag + ".yaml");
        int blockRows = Math.max(1, Math.min(250, n / 4));
        Files.writeString(config, String.format(Locale.ROOT, """
                topology: {name: %s, workers: 2, maxSpoutPending: 5000, messageTimeoutSecs: 60, workerHeapMb: 512,
                           transport: %s}
                ingest:
                  maxPoints: %d
                  kafka: {brokers: "%s", topic: %s, rejectedTopic: %s-rejected, consumerGroup: %s, partitions: 4,
                          maxUncommittedOffsets: 5000}
                  validation: {parallelism: 2, maxIdAhead: %d}
                  rowStore: {directory: %s, blockRows: %d, parallelism: 2}
                # ingestion alone, as before the live map existed: the map's rounds would share the 2 cores
                # (./meridian bench stream measures the topology with the map)
                map: {enabled: false}
                """, name, transport, n, BROKERS, topic, topic, topic, n + 1, stores, blockRows));
        Class<?> submit = Class.forName("io.meridian.topology.MeridianTopology");
        String jar = topologyJar(cluster.home());
        System.out.println("submitting " + name + " (deploy/bin/storm jar) ...");
        cluster.storm(180, "jar", jar, submit.getName(), "--config", config.toString());
        try (KafkaProducer<String, byte[]> producer = producer()) {
            waitFor(Duration.ofSeconds(120), "2 workers of " + name, () -> ClusterControl.workers(name).size() == 2);
            publish(producer, topic, 0, rows[0]).get(30, TimeUnit.SECONDS);
            waitFor(Duration.ofSeconds(400), "row 0 stored (the topology is up)", () -> RowCounts.storedOnDisk(stores) == 1);
            long start = System.nanoTime();
            long nanosPerRow = rate > 0 ? (long) (1e9 / rate) : 0;
            for (int id = 1; id < n; id++) {
                if (nanosPerRow > 0) {
                    long wait = start + (id - 1) * nanosPerRow - System.nanoTime();
                    if (wait > 0) {
                        TimeUnit.NANOSECONDS.sleep(wait);
                    }
                }
                publish(producer, topic, id, rows[id]);
            }
            producer.flush();
            double publishSeconds = (System.nanoTime() - start) / 1e9;
            waitFor(Duration.ofSeconds(600), "all " + n + " rows stored", () -> RowCounts.storedOnDisk(stores) == n);
            double seconds = (System.nanoTime() - start) / 1e9;
            System.out.printf(Locale.ROOT, "  published rows 1..%d in %.2f s (%.0f rows/s); all stored after %.2f s%n",
                    n - 1, publishSeconds, (n - 1) / publishSeconds, seconds);
            return new Run(topic, seconds, ClusterControl.rowCounts(name));
        } finally {
            cluster.storm(120, "kill", name, "-w", "1");
            waitFor(Duration.ofSeconds(60), name + " workers gone", () -> ClusterControl.workers(name).isEmpty());
        }
    }

    private static java.util.concurrent.Future<?> publish(KafkaProducer<String, byte[]> producer, String topic, int id, byte[] row) {
        return producer.send(new ProducerRecord<>(topic, null, System.currentTimeMillis(), Integer.toString(id), row));
    }

    private static double consumeAll(String topic, int n) {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, BROKERS);
        p.put(ConsumerConfig.GROUP_ID_CONFIG, "bench-baseline-" + System.nanoTime());
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        try (KafkaConsumer<String, byte[]> consumer = new KafkaConsumer<>(p, new StringDeserializer(), new ByteArrayDeserializer())) {
            consumer.subscribe(List.of(topic));
            int seen = 0;
            long start = 0;
            long deadline = System.nanoTime() + 120_000_000_000L;
            while (seen < n && System.nanoTime() < deadline) {
                for (ConsumerRecord<String, byte[]> r : consumer.poll(Duration.ofMillis(200))) {
                    if (start == 0) {
                        start = System.nanoTime();
                    }
                    seen++;
                }
            }
            double secs = (System.nanoTime() - start) / 1e9;
            return seen / secs;
        }
    }

    private static KafkaProducer<String, byte[]> producer() {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, BROKERS);
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        // rows are KBs: batches of a few rows (the 16 KB default) make the producer, not the topology, the bottleneck
        p.put(ProducerConfig.LINGER_MS_CONFIG, 5);
        p.put(ProducerConfig.BATCH_SIZE_CONFIG, 1 << 20);
        p.put(ProducerConfig.MAX_REQUEST_SIZE_CONFIG, 16 << 20);
        return new KafkaProducer<>(p, new StringSerializer(), new ByteArraySerializer());
    }

    private static String topologyJar(Path home) throws Exception {
        try (var jars = Files.newDirectoryStream(home.resolve("topology/target"), "meridian-topology-*-topology.jar")) {
            for (Path j : jars) {
                return j.toString();
            }
        }
        throw new IllegalStateException("no topology jar in topology/target (run ./meridian build)");
    }

    interface Check {
        boolean ok() throws Exception;
    }

    private static void waitFor(Duration timeout, String what, Check check) throws Exception {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!check.ok()) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("timed out after " + timeout.toSeconds() + " s waiting for " + what);
            }
            Thread.sleep(20);
        }
    }
}
