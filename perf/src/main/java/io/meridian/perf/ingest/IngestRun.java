package io.meridian.perf.ingest;

import io.meridian.perf.Waits;
import io.meridian.perf.Figures;
import io.meridian.perf.ProcCpu;
import io.meridian.stream.ingest.KafkaRowLimits;
import io.meridian.stream.row.DistanceRow;
import io.meridian.stream.row.RowStoreReader;
import io.meridian.stream.row.RowStores;
import io.meridian.topology.ClusterControl;
import io.meridian.topology.RowCounts;
import io.meridian.topology.TopicSetup;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.SplittableRandom;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.Callback;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.TopicConfig;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * One run of {@code ./meridian bench ingest}, in two parts, each on a fresh topology (2 workers, acking and validation
 * on, the live map off so that the map's rounds do not share the 2 cores; {@code ./meridian bench stream} measures the
 * topology with the map):
 * <ol>
 *   <li><b>Sustained</b>: the topic holds passes over the point universe (pass 0 stores every point, every later
 *   pass is a replay that the row store checks against the stored row and counts as a duplicate: ids are point ids),
 *   filled and read in chunks ({@link #sustained}). Baseline: a plain Kafka consumer (the client's defaults) reads the
 *   first chunk before the topology and the last one after it. The topology's rate is the rows its row stores took
 *   (stored + duplicate, from the workers' counters) while they had a backlog, after a warm-up. CPU per 1000 rows:
 *   the worker JVMs' (from /proc) over the window, the consumer's process over its reads; the Kafka broker's beside
 *   each.</li>
 *   <li><b>Paced</b>: at half the sustained rate (or {@code --rate}), published as it goes: warm-up over every tenth
 *   point (stored once, then replays), then the window, in which the other points, new to the store and in random
 *   order, are spread among the replays. Each new row's latency is publish (just before the producer's send) to its
 *   marker being set in the row store files ({@link StoredLatency}), so the figure is exact, not a histogram's bucket.</li>
 * </ol>
 */
public final class IngestRun {
    /** How often a wait looks again. */
    private static final Duration POLL = Duration.ofMillis(50);
    private static final String BROKERS = "localhost:9092";
    private static final int PARTITIONS = 4;
    /** The paced part sends the rows due within this much time at once (the producer lingers 5 ms anyway). */
    private static final long PACING_NANOS = 1_000_000;

    /** What the command line asked for. */
    public record Options(int n, int width, int seconds, int warmup, double rate, String part, long chunkBytes,
                          String transport, int maxSpoutPending, int heapMb, List<String> storm, Path jfr) {
    }

    private final Path home;
    private final Path work;
    private final Options options;
    private final RowUniverse universe;
    private final Figures figures;
    private final int blockRows;
    private final long stamp = System.currentTimeMillis();

    public IngestRun(Path home, Path work, Options options, RowUniverse universe, Figures figures) {
        this.home = home;
        this.work = work;
        this.options = options;
        this.universe = universe;
        this.figures = figures;
        this.blockRows = Math.max(1, Math.min(250, universe.n() / 4));
    }

    public void run() throws Exception {
        int n = universe.n();
        System.out.printf(Locale.ROOT, "ingest benchmark: a universe of N = %d points, rows of %.1f KB on average"
                + " (%.1f MB a pass), %d s window after %d s warm-up; %d cores, load average %.2f; work dir %s%n",
                n, universe.meanRowBytes() / 1e3, universe.passBytes() / 1e6, options.seconds(), options.warmup(),
                Runtime.getRuntime().availableProcessors(), ProcCpu.loadAverage(), work);
        System.out.println("(shared machine: figures are noisy; the baseline runs in the same run, load averages with each)");
        figures.put("n", n).put("width", options.width()).put("maxSpoutPending", options.maxSpoutPending())
                .put("meanRowBytes", universe.meanRowBytes()).put("transport", options.transport())
                .put("windowSecondsAsked", options.seconds()).put("warmupSeconds", options.warmup())
                .put("stormSettings", String.join(";", options.storm()));
        storeAlone();
        try (ClusterControl cluster = ClusterControl.acquire(home, work.resolve("cluster.log"), 3600)) {
            System.out.println("starting the cluster (./meridian cluster start) ...");
            cluster.start();
            double sustained = 0;
            if (!"paced".equals(options.part())) {
                sustained = sustained(cluster);
            }
            if (!"sustained".equals(options.part())) {
                paced(cluster, options.rate() > 0 ? options.rate() : Math.max(50, Math.floor(sustained / 2)));
            }
        }
    }

    /** The row store alone, in this process: new rows (decode, quantize, write) and their replays (compare). */
    private void storeAlone() throws IOException {
        int n = universe.n();
        double stored = 0;
        double replayed = 0;
        for (int rep = 0; rep < 3; rep++) {
            Path dir = work.resolve("store-alone-" + rep);
            try (RowStores stores = new RowStores(dir, blockRows, universe.maxPoints(), b -> true)) {
                DistanceRow row = new DistanceRow();
                long t0 = System.nanoTime();
                for (int id = 0; id < n; id++) {
                    row.wrap(universe.row(id));
                    stores.store(row);
                }
                long t1 = System.nanoTime();
                for (int id = 0; id < n; id++) {
                    row.wrap(universe.row(id));
                    stores.store(row);
                }
                long t2 = System.nanoTime();
                stored = Math.max(stored, n / ((t1 - t0) / 1e9));
                replayed = Math.max(replayed, n / ((t2 - t1) / 1e9));
            }
            deleteTree(dir);
        }
        System.out.printf(Locale.ROOT, "row store alone (in process, best of 3): %.0f new rows/s (%.0f MB/s written),"
                + " %.0f replays/s (checked against the stored rows)%n", stored,
                stored * 2.0 * universe.maxPoints() / 1e6, replayed);
        figures.put("storeAloneRowsPerSec", stored).put("storeAloneReplaysPerSec", replayed);
    }

    // ---------------------------------------------------------------------------------------------- sustained

    /**
     * The sustained part. The topic is filled and read in chunks of {@code --chunk-gb}: a topic holding warm-up plus
     * the window at the plain consumer's speed would take tens of GB, more than the page cache holds, and filling it
     * while the topology reads would have the producer and the broker's writes share the 2 cores with the topology.
     * So: fill a chunk; the topology reads it (the window takes the part of each chunk read with a backlog: from a
     * second after the rows start to flow until 2 s of rows are left); deactivate the topology; drop what was read;
     * fill the next chunk; activate; until the window adds up to {@code --seconds} after {@code --warmup} seconds of
     * reading. The baseline consumer reads the first chunk before the topology and the last one after it.
     */
    private double sustained(ClusterControl cluster) throws Exception {
        int n = universe.n();
        String topic = "distance-rows-bench-a-" + stamp;
        String name = "meridian-bench-a";
        String group = topic;
        createTopics(topic);
        long chunkRows = Math.max(n, (long) (options.chunkBytes() / universe.meanRowBytes()));
        try {
            System.out.printf(Locale.ROOT, "filling topic %s with a chunk of %d rows (%.2f GB) ...%n", topic, chunkRows,
                    chunkRows * universe.meanRowBytes() / 1e9);
            long produced = publish(topic, 0, chunkRows);
            Consumed before = consume(topic, new long[PARTITIONS], chunkRows);
            System.out.printf(Locale.ROOT, "baseline before: a plain Kafka consumer read the chunk in %.1f s: %.0f rows/s,"
                    + " %.0f MB/s; CPU %.4f s per 1000 rows (the Kafka broker's: %.4f s); load average %.2f%n",
                    before.seconds(), before.rowsPerSec(), before.bytesPerSec() / 1e6, before.cpuPer1000(),
                    before.brokerCpuPer1000(), before.load());
            Path stores = work.resolve("rowstore-a");
            submit(cluster, name, topic, stores);
            Window w;
            long[] lastChunkStart;
            try {
                Waits.waitFor(Duration.ofSeconds(180), POLL, "2 workers of " + name,
                        () -> ClusterControl.workers(name).size() == 2);
                ClusterControl.TopologyMetrics metrics = waitForEndpoints(name);
                List<Long> pids = pids(name);
                Probe probe = new Probe(metrics, pids, brokerPid());
                Waits.waitFor(Duration.ofSeconds(400), POLL, "the first row stored (the topology is up)",
                        () -> RowCounts.storedOnDisk(stores) >= 1);
                System.out.printf(Locale.ROOT, "topology %s reads the topic from its start; warm-up %d s, then %d s of"
                        + " window in the chunks' backlogged parts%n", name, options.warmup(), options.seconds());
                Accumulated acc = new Accumulated();
                double active = 0;
                lastChunkStart = new long[PARTITIONS];
                for (int chunk = 0; ; chunk++) {
                    active += readChunk(probe, produced, chunk, active, acc);
                    if (acc.seconds >= options.seconds()) {
                        break;
                    }
                    if (chunk >= 100) {
                        throw new IllegalStateException("100 chunks and only " + acc.seconds + " s of window");
                    }
                    setActive(name, false);
                    waitForStill(probe);
                    dropRead(topic, group);
                    lastChunkStart = endOffsets(topic);
                    produced += publish(topic, produced, chunkRows);
                    setActive(name, true);
                }
                Map<Long, String> names = new HashMap<>();
                for (long pid : pids) {
                    names.putAll(ProcCpu.javaThreadNames(pid)); // after the window: jcmd stops the JVM briefly
                }
                w = new Window(acc.seconds, acc.rows, acc.stored, acc.duplicates, acc.rows / acc.seconds,
                        acc.workerCpu / 1e9 / (acc.rows / 1e3), acc.brokerCpu / 1e9 / (acc.rows / 1e3), ProcCpu.loadAverage(),
                        ProcCpu.byName(acc.threads, names, acc.lastThreads), acc.rejected);
                if (options.jfr() != null) {
                    for (long pid : pids) {
                        Path file = options.jfr().resolve("worker-" + pid + ".jfr");
                        new ProcessBuilder("jcmd", Long.toString(pid), "JFR.dump", "filename=" + file).inheritIO().start()
                                .waitFor(60, TimeUnit.SECONDS);
                    }
                }
            } finally {
                kill(cluster, name);
            }
            Consumed after = consume(topic, lastChunkStart, chunkRows);
            System.out.printf(Locale.ROOT, "baseline after: the plain consumer read the last chunk in %.1f s: %.0f rows/s,"
                    + " %.0f MB/s; CPU %.4f s per 1000 rows (the Kafka broker's: %.4f s); load average %.2f%n",
                    after.seconds(), after.rowsPerSec(), after.bytesPerSec() / 1e6, after.cpuPer1000(),
                    after.brokerCpuPer1000(), after.load());
            double baseline = (before.rowsPerSec() + after.rowsPerSec()) / 2;
            double baselineCpu = (before.cpuPer1000() + after.cpuPer1000()) / 2;
            double ratio = w.rowsPerSec() / baseline;
            System.out.printf(Locale.ROOT, "sustained: %.0f rows/s into the row stores over %.1f s (%d stored, %d duplicate,"
                    + " %d rejected), %.0f MB/s from Kafka; topology / baseline (mean of before and after, %.0f rows/s) ="
                    + " %.2f; CPU %.4f s per 1000 rows in the workers, %.4f in the consumer (the Kafka broker's: %.4f and"
                    + " %.4f); load average %.2f%n", w.rowsPerSec(), w.seconds(), w.stored(), w.duplicates(),
                    w.rejected(), w.rowsPerSec() * universe.meanRowBytes() / 1e6, baseline, ratio, w.cpuPer1000(),
                    baselineCpu, w.brokerCpuPer1000(), (before.brokerCpuPer1000() + after.brokerCpuPer1000()) / 2, w.load());
            System.out.println("  where the workers' CPU went in the window (threads by name, digits folded;"
                    + " ms per 1000 rows):");
            System.out.print(threadTable(w.threads(), w.rows(), 16));
            figures.put("rowsPerSec", w.rowsPerSec()).put("windowSeconds", w.seconds())
                    .put("windowStored", w.stored()).put("windowDuplicates", w.duplicates())
                    .put("baselineConsumerRowsPerSec", baseline).put("baselineBeforeRowsPerSec", before.rowsPerSec())
                    .put("baselineAfterRowsPerSec", after.rowsPerSec()).put("ratioToBaseline", ratio)
                    .put("cpuSecondsPer1000Rows", w.cpuPer1000()).put("baselineCpuSecondsPer1000Rows", baselineCpu)
                    .put("brokerCpuSecondsPer1000Rows", w.brokerCpuPer1000())
                    .put("baselineBrokerCpuSecondsPer1000Rows", (before.brokerCpuPer1000() + after.brokerCpuPer1000()) / 2)
                    .put("chunkRows", chunkRows).put("topicRows", produced)
                    .put("loadAverageBaseline", before.load()).put("loadAverageSustained", w.load())
                    .put("threadMsPer1000Rows", topThreads(w.threads(), w.rows(), 12));
            return w.rowsPerSec();
        } finally {
            deleteTopics(topic);
        }
    }

    /** What the windows of the chunks add up to. */
    private static final class Accumulated {
        double seconds;
        long rows;
        long stored;
        long duplicates;
        long rejected;
        long workerCpu;
        long brokerCpu;
        final Map<Long, Long> threads = new HashMap<>();
        ProcCpu.Threads lastThreads;

        void add(Sample a, Sample b) {
            seconds += (b.nanos() - a.nanos()) / 1e9;
            rows += b.rows() - a.rows();
            stored += b.stored() - a.stored();
            duplicates += b.duplicates() - a.duplicates();
            rejected += b.rejected() - a.rejected();
            workerCpu += b.workerCpu() - a.workerCpu();
            brokerCpu += b.brokerCpu() - a.brokerCpu();
            b.threads().since(a.threads()).forEach((k, v) -> threads.merge(k, v, Long::sum));
            lastThreads = b.threads();
        }
    }

    /**
     * Follows the topology through one chunk (the topic now holds {@code produced} rows): waits for its rows to flow,
     * adds the backlogged part after the warm-up to {@code acc}, and returns the seconds the rows flowed.
     */
    private double readChunk(Probe probe, long produced, int chunk, double activeBefore, Accumulated acc)
            throws Exception {
        Sample still = probe.sample();
        long flowDeadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        Sample s = still;
        while (s.rows() == still.rows()) {
            if (System.nanoTime() > flowDeadline) {
                throw new IllegalStateException("no row went into the row stores within 120 s of chunk " + chunk);
            }
            Thread.sleep(100);
            s = probe.sample();
        }
        long flowStart = s.nanos();
        double skip = Math.max(1, options.warmup() - activeBefore);
        Sample a = null;
        Sample last = s;
        double rate = 0;
        while (true) {
            sleepUntil(last.nanos() + TimeUnit.SECONDS.toNanos(1));
            Sample next = probe.sample();
            rate = (next.rows() - last.rows()) / ((next.nanos() - last.nanos()) / 1e9);
            last = next;
            if (a == null && (next.nanos() - flowStart) / 1e9 >= skip) {
                a = next;
            }
            if (produced - next.rows() < Math.max(1, 2.0 * rate)) {
                break; // 2 s of rows left (or none): the rest of the chunk is not backlogged throughout
            }
        }
        double flowed = (last.nanos() - flowStart) / 1e9;
        if (a != null && last.nanos() - a.nanos() >= TimeUnit.MILLISECONDS.toNanos(900)) {
            acc.add(a, last);
            System.out.printf(Locale.ROOT, "  chunk %d: %.0f rows/s over %.1f s of its %.1f s (window %.1f s so far)%n",
                    chunk, (last.rows() - a.rows()) / ((last.nanos() - a.nanos()) / 1e9), (last.nanos() - a.nanos()) / 1e9,
                    flowed, acc.seconds);
        } else {
            System.out.printf(Locale.ROOT, "  chunk %d: %.1f s of warm-up%n", chunk, flowed);
        }
        return flowed;
    }

    /** Waits until the row stores' count has not moved for a second (the topology is deactivated and drained). */
    private static void waitForStill(Probe probe) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        Sample last = probe.sample();
        while (System.nanoTime() < deadline) {
            Thread.sleep(1000);
            Sample s = probe.sample();
            if (s.rows() == last.rows()) {
                return;
            }
            last = s;
        }
        throw new IllegalStateException("the topology did not stop within 120 s of its deactivation");
    }

    private static void setActive(String name, boolean active) throws Exception {
        Map<String, Object> conf = org.apache.storm.utils.Utils.readStormConfig();
        try (org.apache.storm.utils.NimbusClient nimbus = org.apache.storm.utils.NimbusClient.getConfiguredClient(conf)) {
            if (active) {
                nimbus.getClient().activate(name);
            } else {
                nimbus.getClient().deactivate(name);
            }
        }
    }

    /** Deletes the records the topology's consumer group has committed (what it has read), so chunks do not pile up. */
    private static void dropRead(String topic, String group) throws Exception {
        try (Admin admin = TopicSetup.admin(BROKERS)) {
            Map<TopicPartition, RecordsToDelete> below = new HashMap<>();
            admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get(30, TimeUnit.SECONDS)
                    .forEach((tp, om) -> {
                        if (om != null && tp.topic().equals(topic)) {
                            below.put(tp, RecordsToDelete.beforeOffset(om.offset()));
                        }
                    });
            admin.deleteRecords(below).all().get(60, TimeUnit.SECONDS);
        }
    }

    /** The end offset of each partition of {@code topic}. */
    private static long[] endOffsets(String topic) throws Exception {
        long[] out = new long[PARTITIONS];
        try (Admin admin = TopicSetup.admin(BROKERS)) {
            Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
            for (int p = 0; p < PARTITIONS; p++) {
                latest.put(new TopicPartition(topic, p), OffsetSpec.latest());
            }
            admin.listOffsets(latest).all().get(30, TimeUnit.SECONDS).forEach((tp, info) -> out[tp.partition()] = info.offset());
        }
        return out;
    }

    /** A plain consumer's read of {@code topic}. */
    private record Consumed(double seconds, double rowsPerSec, double bytesPerSec, double cpuPer1000,
                            double brokerCpuPer1000, double load) {
    }

    /**
     * A plain consumer (the client's defaults, both partitions' worth of deserializing as the spout does) reads
     * {@code rows} rows of {@code topic} from the offsets {@code from} (one per partition); timed from its first record
     * to its last, CPU from /proc over the same span (this process: only the consumer works then).
     */
    private Consumed consume(String topic, long[] from, long rows) {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, BROKERS);
        p.put(ConsumerConfig.GROUP_ID_CONFIG, "bench-baseline-" + System.nanoTime());
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        long self = ProcessHandle.current().pid();
        long broker = brokerPid();
        try (KafkaConsumer<String, byte[]> consumer = new KafkaConsumer<>(p, new StringDeserializer(),
                new ByteArrayDeserializer())) {
            List<TopicPartition> partitions = new ArrayList<>();
            for (int k = 0; k < PARTITIONS; k++) {
                partitions.add(new TopicPartition(topic, k));
            }
            consumer.assign(partitions);
            for (int k = 0; k < PARTITIONS; k++) {
                consumer.seek(partitions.get(k), from[k]);
            }
            long seen = 0;
            long bytes = 0;
            long start = 0;
            long cpu0 = 0;
            long brokerCpu0 = 0;
            long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(10);
            while (seen < rows && System.nanoTime() < deadline) {
                for (ConsumerRecord<String, byte[]> r : consumer.poll(Duration.ofMillis(200))) {
                    if (start == 0) {
                        start = System.nanoTime();
                        cpu0 = ProcCpu.processNanos(self);
                        brokerCpu0 = ProcCpu.processNanos(broker);
                    }
                    seen++;
                    bytes += r.value().length;
                }
            }
            double secs = (System.nanoTime() - start) / 1e9;
            if (seen < rows) {
                throw new IllegalStateException("the baseline consumer read only " + seen + " of " + rows + " rows");
            }
            long cpu = ProcCpu.processNanos(self) - cpu0;
            long brokerCpu = ProcCpu.processNanos(broker) - brokerCpu0;
            return new Consumed(secs, seen / secs, bytes / secs, cpu / 1e9 / (seen / 1e3), brokerCpu / 1e9 / (seen / 1e3),
                    ProcCpu.loadAverage());
        }
    }

    /** The topology's figures over its window. */
    private record Window(double seconds, long rows, long stored, long duplicates, double rowsPerSec, double cpuPer1000,
                          double brokerCpuPer1000, double load, Map<String, Long> threads, long rejected) {
    }

    /** The workers' counts and CPU at one instant. */
    private record Sample(long nanos, long rows, long stored, long duplicates, long rejected, long workerCpu,
                          long brokerCpu, ProcCpu.Threads threads) {
    }

    /** Reads a running topology's counts (its workers' endpoints) and CPU (/proc). */
    private record Probe(ClusterControl.TopologyMetrics metrics, List<Long> pids, long broker) {
        Sample sample() {
            long t0 = System.nanoTime();
            RowCounts c = RowCounts.scrape(metrics.endpoints(), metrics.topologyId(), Duration.ofSeconds(10));
            long t1 = System.nanoTime();
            return new Sample((t0 + t1) / 2, c.stored + c.duplicates, c.stored, c.duplicates, c.rejectedTotal(),
                    workerCpu(pids), ProcCpu.processNanos(broker), ProcCpu.Threads.read(pids));
        }
    }


    // ------------------------------------------------------------------------------------------------- paced

    private void paced(ClusterControl cluster, double rate) throws Exception {
        int n = universe.n();
        String topic = "distance-rows-bench-b-" + stamp;
        String name = "meridian-bench-b";
        Path stores = work.resolve("rowstore-b");
        createTopics(topic);
        // warm-up over every tenth point (stored once, then replays); in the window the other points, new, in random
        // order, spread among replays of the warm-up points: the same mix of row sizes throughout
        int[] warm = new int[(n + 9) / 10];
        int[] fresh = new int[n - warm.length];
        for (int id = 0, w = 0, f = 0; id < n; id++) {
            if (id % 10 == 0) {
                warm[w++] = id;
            } else {
                fresh[f++] = id;
            }
        }
        SplittableRandom random = new SplittableRandom(7);
        for (int i = fresh.length - 1; i > 0; i--) {
            int j = random.nextInt(i + 1);
            int t = fresh[i];
            fresh[i] = fresh[j];
            fresh[j] = t;
        }
        long warmSlots = (long) (rate * options.warmup());
        long windowSlots = Math.max(2, (long) (rate * options.seconds()));
        int freshRows = (int) Math.min(fresh.length, windowSlots / 2);
        double freshEvery = (double) windowSlots / freshRows;
        System.out.printf(Locale.ROOT, "paced at %.0f rows/s: %d s warm-up over %d points, then %d s in which %d new"
                + " points are timed from publish to stored among %d replays%n", rate, options.warmup(), warm.length,
                options.seconds(), freshRows, windowSlots - freshRows);
        submit(cluster, name, topic, stores);
        ScheduledExecutorService dropper = Executors.newSingleThreadScheduledExecutor();
        try (KafkaProducer<String, byte[]> producer = producer();
             StoredLatency latency = new StoredLatency(new RowStoreReader(stores, blockRows, universe.maxPoints()))) {
            dropper.scheduleWithFixedDelay(() -> {
                try {
                    dropRead(topic, topic);
                } catch (Exception e) {
                    // the next round drops it
                }
            }, 5, 5, TimeUnit.SECONDS);
            Waits.waitFor(Duration.ofSeconds(180), POLL, "2 workers of " + name,
                    () -> ClusterControl.workers(name).size() == 2);
            List<Long> pids = pids(name);
            long broker = brokerPid();
            AtomicReference<Exception> error = new AtomicReference<>();
            Callback callback = (meta, e) -> {
                if (e != null) {
                    error.compareAndSet(null, e);
                }
            };
            send(producer, topic, warm[0], callback);
            try (RowStoreReader probe = new RowStoreReader(stores, blockRows, universe.maxPoints())) {
                Waits.waitFor(Duration.ofSeconds(400), POLL, "the first row stored (the topology is up)",
                        () -> probe.isStored(universe.id(warm[0])));
            }
            long nanosPerRow = (long) (1e9 / rate);
            long start = System.nanoTime();
            long cpu0 = 0;
            long brokerCpu0 = 0;
            long selfCpu0 = 0;
            long self = ProcessHandle.current().pid();
            ProcCpu.Threads threads0 = null;
            long windowStart = 0;
            long maxBehind = 0;
            int w = 1;
            int f = 0;
            for (long k = 0; k < warmSlots + windowSlots; k++) {
                long due = start + k * nanosPerRow;
                long behind = System.nanoTime() - due;
                if (behind < -PACING_NANOS) {
                    // a sleep lasts at least ~60 us: at 40,000 rows/s (25 us apart) sleeping before each row capped
                    // the rate near 16,000; so rows due within the next millisecond go at once, the rest after a sleep
                    TimeUnit.NANOSECONDS.sleep(-behind);
                } else if (k > warmSlots) {
                    maxBehind = Math.max(maxBehind, behind);
                }
                if (k == warmSlots) {
                    windowStart = System.nanoTime();
                    cpu0 = workerCpu(pids);
                    brokerCpu0 = ProcCpu.processNanos(broker);
                    selfCpu0 = ProcCpu.processNanos(self);
                    threads0 = ProcCpu.Threads.read(pids);
                }
                long slot = k - warmSlots;
                if (slot >= 0 && f < freshRows && slot >= (long) (f * freshEvery)) {
                    latency.published(universe.id(fresh[f]));
                    send(producer, topic, fresh[f++], callback);
                } else {
                    send(producer, topic, warm[w++ % warm.length], callback);
                }
            }
            long windowEnd = System.nanoTime();
            long cpu = workerCpu(pids) - cpu0;
            long brokerCpu = ProcCpu.processNanos(broker) - brokerCpu0;
            long selfCpu = ProcCpu.processNanos(self) - selfCpu0;
            ProcCpu.Threads threads1 = ProcCpu.Threads.read(pids);
            Map<Long, String> names = new HashMap<>();
            for (long pid : pids) {
                names.putAll(ProcCpu.javaThreadNames(pid));
            }
            Map<String, Long> byThread = ProcCpu.byName(threads1.since(threads0), names, threads1);
            double load = ProcCpu.loadAverage();
            producer.flush();
            if (error.get() != null) {
                throw new IllegalStateException("Kafka refused a row: " + error.get().getMessage(), error.get());
            }
            if (!latency.awaitAll(TimeUnit.SECONDS.toNanos(120))) {
                System.out.println("  WARNING: " + latency.pending() + " new rows were not stored within 120 s");
            }
            latency.close();
            double[] ms = latency.latenciesMs();
            double secs = (windowEnd - windowStart) / 1e9;
            double achieved = windowSlots / secs;
            double p50 = StoredLatency.quantile(ms, 0.5);
            double p99 = StoredLatency.quantile(ms, 0.99);
            double max = ms.length == 0 ? Double.NaN : ms[ms.length - 1];
            System.out.printf(Locale.ROOT, "paced at %.0f rows/s (%.0f achieved; at most %.1f ms behind schedule):"
                    + " publish->stored p50 %.1f ms, p99 %.1f ms, max %.1f ms (%d new rows); CPU %.4f s per 1000 rows in"
                    + " the workers (the Kafka broker's: %.4f s, the producing bench's: %.4f s); load average %.2f%n", rate,
                    achieved, maxBehind / 1e6, p50, p99, max, ms.length, cpu / 1e9 / (windowSlots / 1e3),
                    brokerCpu / 1e9 / (windowSlots / 1e3), selfCpu / 1e9 / (windowSlots / 1e3), load);
            System.out.println("  p50/p99 ms of the new rows published in each 5 s of the window: "
                    + latency.slices(windowStart, TimeUnit.SECONDS.toNanos(5)));
            System.out.println("  where the workers' CPU went in the paced window (ms per 1000 rows):");
            System.out.print(threadTable(byThread, windowSlots, 12));
            figures.put("pacedRowsPerSec", rate).put("pacedAchievedRowsPerSec", achieved).put("latencyP50Ms", p50)
                    .put("latencyP99Ms", p99).put("latencyMaxMs", max).put("latencySamples", ms.length)
                    .put("pacedCpuSecondsPer1000Rows", cpu / 1e9 / (windowSlots / 1e3))
                    .put("pacedBrokerCpuSecondsPer1000Rows", brokerCpu / 1e9 / (windowSlots / 1e3))
                    .put("pacedProducerCpuSecondsPer1000Rows", selfCpu / 1e9 / (windowSlots / 1e3)).put("loadAveragePaced", load)
                    .put("pacedThreadMsPer1000Rows", topThreads(byThread, windowSlots, 12));
        } finally {
            dropper.shutdownNow();
            kill(cluster, name);
            deleteTopics(topic);
        }
    }

    // ------------------------------------------------------------------------------------------------ plumbing

    private void submit(ClusterControl cluster, String name, String topic, Path stores) throws Exception {
        int maxSpoutPending = options.maxSpoutPending();
        Path config = work.resolve(name + ".yaml");
        Files.writeString(config, String.format(Locale.ROOT, """
                topology: {name: %s, workers: 2, maxSpoutPending: %d, messageTimeoutSecs: 60, workerHeapMb: %d,
                           transport: %s}
                ingest:
                  maxPoints: %d
                  kafka: {brokers: "%s", topic: %s, rejectedTopic: %s-rejected, consumerGroup: %s, partitions: %d,
                          maxUncommittedOffsets: %d, firstPoll: earliest}
                  validation: {parallelism: 2, maxIdAhead: %d}
                  rowStore: {directory: %s, blockRows: %d, parallelism: 2}
                # ingestion alone: the map's rounds would share the 2 cores (./meridian bench stream measures them together)
                map: {enabled: false}
                """, name, maxSpoutPending, options.heapMb(), options.transport(), universe.maxPoints(), BROKERS, topic,
                topic, topic, PARTITIONS, maxSpoutPending, universe.maxPoints() + 1, stores, blockRows));
        List<String> args = new ArrayList<>();
        for (String kv : options.storm()) {
            args.add("-c");
            args.add(kv);
        }
        if (options.jfr() != null) {
            args.add("-c");
            args.add("topology.worker.childopts=-Xmx512m -XX:StartFlightRecording=settings=profile,maxsize=256m");
        }
        args.addAll(List.of("jar", topologyJar(), "io.meridian.topology.MeridianTopology", "--config", config.toString()));
        System.out.println("submitting " + name + " (deploy/bin/storm " + String.join(" ", args.subList(0, args.size() - 4))
                + " ...) ...");
        cluster.storm(180, args.toArray(new String[0]));
    }

    private static void kill(ClusterControl cluster, String name) throws Exception {
        cluster.storm(120, "kill", name, "-w", "1");
        Waits.waitFor(Duration.ofSeconds(90), POLL, name + " workers gone",
                () -> ClusterControl.workers(name).isEmpty());
    }

    private static ClusterControl.TopologyMetrics waitForEndpoints(String name) throws Exception {
        ClusterControl.TopologyMetrics[] m = new ClusterControl.TopologyMetrics[1];
        Waits.waitFor(Duration.ofSeconds(120), POLL, "the Prometheus endpoints of " + name + "'s 2 workers", () -> {
            try {
                m[0] = ClusterControl.scrapeTopology(name);
                return m[0].endpoints().size() == 2;
            } catch (RuntimeException e) {
                return false;
            }
        });
        return m[0];
    }

    private static List<Long> pids(String name) {
        List<Long> pids = new ArrayList<>();
        for (ProcessHandle p : ClusterControl.workers(name)) {
            pids.add(p.pid());
        }
        return pids;
    }

    private static long workerCpu(List<Long> pids) {
        long cpu = 0;
        for (long pid : pids) {
            cpu += ProcCpu.processNanos(pid);
        }
        return cpu;
    }

    /** The cluster's Kafka broker (its daemon marker, deploy/bin/meridian-cluster); -1 when not found. */
    private static long brokerPid() {
        return ProcessHandle.allProcesses()
                .filter(p -> ClusterControl.commandLine(p.pid()).stream()
                        .anyMatch(a -> a.startsWith("-Dmeridian.cluster.daemon=kafka@")))
                .mapToLong(ProcessHandle::pid).findFirst().orElse(-1);
    }

    /** Publishes rows {@code from .. from + count - 1} of the passes over the universe; returns {@code count}. */
    private long publish(String topic, long from, long count) {
        int n = universe.n();
        AtomicReference<Exception> error = new AtomicReference<>();
        Callback callback = (meta, e) -> {
            if (e != null) {
                error.compareAndSet(null, e);
            }
        };
        try (KafkaProducer<String, byte[]> producer = producer()) {
            for (long k = from; k < from + count; k++) {
                send(producer, topic, (int) (k % n), callback);
            }
            producer.flush();
        }
        if (error.get() != null) {
            throw new IllegalStateException("Kafka refused a row: " + error.get().getMessage(), error.get());
        }
        return count;
    }

    private void send(KafkaProducer<String, byte[]> producer, String topic, int id, Callback callback) {
        producer.send(new ProducerRecord<>(topic, null, System.currentTimeMillis(), universe.key(id), universe.row(id)),
                callback);
    }

    /**
     * As {@code ./meridian feed}'s (linger 5 ms, batches up to 1 MB), so the paced part's latency is what a user of
     * feed sees from the send on. With linger 0 or 1 the broker's CPU per row rose fourfold (0.019 s per 1000 rows at
     * 21,000 rows/s, against 0.004 reading the same rows) and, with the producer's, crowded out the topology.
     */
    private KafkaProducer<String, byte[]> producer() {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, BROKERS);
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.LINGER_MS_CONFIG, 5);
        p.put(ProducerConfig.BATCH_SIZE_CONFIG, 1 << 20);
        KafkaRowLimits.producerProperties(p, KafkaRowLimits.forMaxPoints(universe.maxPoints()).rowRecordBytes());
        return new KafkaProducer<>(p, new StringSerializer(), new ByteArraySerializer());
    }

    /**
     * The run's row topic and its dead-letter topic. The row topic in 128 MB segments, removed a second after they are
     * deleted: what the topology has read is dropped as the run goes ({@link #dropRead}), so that GBs of rows leave
     * the disk and the page cache at once.
     */
    private void createTopics(String topic) throws Exception {
        KafkaRowLimits limits = KafkaRowLimits.forMaxPoints(universe.maxPoints());
        Map<String, String> rowConfigs = new HashMap<>(limits.rowTopicConfigs());
        rowConfigs.put(TopicConfig.SEGMENT_BYTES_CONFIG, Integer.toString(128 << 20));
        rowConfigs.put(TopicConfig.FILE_DELETE_DELAY_MS_CONFIG, "1000");
        try (Admin admin = TopicSetup.admin(BROKERS)) {
            NewTopic rows = new NewTopic(topic, PARTITIONS, (short) 1).configs(rowConfigs);
            NewTopic rejected = new NewTopic(topic + "-rejected", 1, (short) 1)
                    .configs(limits.deadLetterTopicConfigs());
            admin.createTopics(List.of(rows, rejected)).all().get(30, TimeUnit.SECONDS);
        }
    }

    /** Deletes the run's topics (GBs of rows), so that the broker's disk does not fill run after run. */
    private static void deleteTopics(String topic) {
        try (Admin admin = TopicSetup.admin(BROKERS)) {
            admin.deleteTopics(List.of(topic, topic + "-rejected")).all().get(60, TimeUnit.SECONDS);
        } catch (Exception e) {
            System.out.println("  (could not delete topic " + topic + ": " + e.getMessage() + ")");
        }
    }

    private String topologyJar() throws IOException {
        try (var jars = Files.newDirectoryStream(home.resolve("topology/target"), "meridian-topology-*-topology.jar")) {
            for (Path j : jars) {
                return j.toString();
            }
        }
        throw new IllegalStateException("no topology jar in topology/target (run ./meridian build)");
    }

    /** Thread CPU over the window as lines: name, ms per 1000 rows, share. */
    private static String threadTable(Map<String, Long> threads, long rows, int entries) {
        long total = threads.values().stream().mapToLong(Long::longValue).sum();
        StringBuilder b = new StringBuilder();
        int i = 0;
        long rest = 0;
        for (Map.Entry<String, Long> e : threads.entrySet()) {
            if (i++ < entries) {
                b.append(String.format(Locale.ROOT, "    %-52s %8.2f ms %5.1f %%%n", e.getKey(),
                        e.getValue() / 1e6 / (rows / 1e3), 100.0 * e.getValue() / Math.max(1, total)));
            } else {
                rest += e.getValue();
            }
        }
        b.append(String.format(Locale.ROOT, "    %-52s %8.2f ms %5.1f %%%n", "(the other threads)", rest / 1e6 / (rows / 1e3),
                100.0 * rest / Math.max(1, total)));
        b.append(String.format(Locale.ROOT, "    %-52s %8.2f ms%n", "all", total / 1e6 / (rows / 1e3)));
        return b.toString();
    }

    private static Map<String, Object> topThreads(Map<String, Long> threads, long rows, int entries) {
        Map<String, Object> out = new LinkedHashMap<>();
        for (Map.Entry<String, Long> e : threads.entrySet()) {
            if (out.size() == entries) {
                break;
            }
            out.put(e.getKey(), e.getValue() / 1e6 / (rows / 1e3));
        }
        return out;
    }

    private static void sleepUntil(long nanos) throws InterruptedException {
        long wait = nanos - System.nanoTime();
        if (wait > 0) {
            TimeUnit.NANOSECONDS.sleep(wait);
        }
    }



    public static void deleteTree(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (var paths = Files.walk(dir)) {
            for (Path p : (Iterable<Path>) paths.sorted(Comparator.reverseOrder())::iterator) {
                Files.delete(p);
            }
        }
    }
}
