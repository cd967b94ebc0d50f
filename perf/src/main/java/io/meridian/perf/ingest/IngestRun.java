package io.meridian.perf.ingest;

import io.meridian.perf.Figures;
import io.meridian.perf.ProcCpu;
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
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.Callback;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * One run of {@code ./meridian bench ingest}, in two parts, each on a fresh topology (2 workers, acking and validation
 * on, the live map off so that the map's rounds do not share the 2 cores; {@code ./meridian bench stream} measures the
 * topology with the map):
 * <ol>
 *   <li><b>Sustained</b>: the topic is filled first with passes over the point universe (pass 0 stores every point,
 *   every later pass is a replay that the row store checks against the stored row and counts as a duplicate: ids are
 *   point ids), enough for warm-up + window at the plain consumer's speed. Baseline: a plain Kafka consumer (defaults,
 *   a fresh group) reads the whole topic. Then the topology reads the same topic from its start; its rate is the rows
 *   its row stores took (stored + duplicate, from the workers' counters) over the window that begins {@code warmup}
 *   seconds after the first row was stored. CPU per 1000 rows: the worker JVMs' (from /proc) over the window, the
 *   consumer's process over its read; the Kafka broker's beside each.</li>
 *   <li><b>Paced</b>: at half the sustained rate (or {@code --rate}), published as it goes: warm-up over every tenth
 *   point (stored once, then replays), then the window, in which the other points, new to the store and in random
 *   order, are spread among the replays. Each new row's latency is publish (just before the producer's send) to its
 *   marker being set in the row store files ({@link StoredLatency}), so the figure is exact, not a histogram's bucket.</li>
 * </ol>
 */
public final class IngestRun {
    private static final String BROKERS = "localhost:9092";
    private static final int PARTITIONS = 4;
    /** Rows in the first fill of the sustained part's topic, read by the consumer to size the whole fill. */
    private static final int CALIBRATION_PASSES = 20;

    /** What the command line asked for. */
    public record Options(int n, int seconds, int warmup, double rate, String part, long maxBytes, String transport,
                          List<String> storm, Path jfr) {
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
        figures.put("n", n).put("meanRowBytes", universe.meanRowBytes()).put("transport", options.transport())
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
            try (RowStores stores = new RowStores(dir, blockRows, n, b -> true)) {
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
                + " %.0f replays/s (checked against the stored rows)%n", stored, stored * 2.0 * n / 1e6, replayed);
        figures.put("storeAloneRowsPerSec", stored).put("storeAloneReplaysPerSec", replayed);
    }

    // ---------------------------------------------------------------------------------------------- sustained

    private double sustained(ClusterControl cluster) throws Exception {
        int n = universe.n();
        String topic = "distance-rows-bench-a-" + stamp;
        createTopics(topic);
        try {
            long calibration = (long) CALIBRATION_PASSES * n;
            System.out.printf(Locale.ROOT, "filling topic %s: %d rows first, to size the rest ...%n", topic, calibration);
            publish(topic, 0, calibration);
            Consumed estimate = consume(topic, calibration);
            long maxRows = (long) (options.maxBytes() / universe.meanRowBytes());
            long rows = Math.max(calibration, Math.min(maxRows,
                    (long) ((options.warmup() + options.seconds() + 20) * estimate.rowsPerSec())));
            System.out.printf(Locale.ROOT, "  a consumer read them at %.0f rows/s: the topic gets %d rows (%.2f GB; enough"
                    + " for %d + %d s at that speed%s)%n", estimate.rowsPerSec(), rows, rows * universe.meanRowBytes() / 1e9,
                    options.warmup(), options.seconds(), rows == maxRows ? ", capped by --max-gb" : "");
            publish(topic, calibration, rows - calibration);
            Consumed baseline = consume(topic, rows);
            System.out.printf(Locale.ROOT, "baseline: a plain Kafka consumer read the %d rows in %.1f s: %.0f rows/s,"
                    + " %.0f MB/s; CPU %.3f s per 1000 rows (the Kafka broker's: %.3f s); load average %.2f%n",
                    rows, baseline.seconds(), baseline.rowsPerSec(), baseline.bytesPerSec() / 1e6,
                    baseline.cpuPer1000(), baseline.brokerCpuPer1000(), baseline.load());
            Window w = topologyWindow(cluster, topic, rows);
            double ratio = w.rowsPerSec() / baseline.rowsPerSec();
            System.out.printf(Locale.ROOT, "sustained: %.0f rows/s into the row stores over %.1f s (%d stored, %d"
                    + " duplicate), %.0f MB/s from Kafka; topology / baseline = %.2f; CPU %.3f s per 1000 rows in the"
                    + " workers (the Kafka broker's: %.3f s); load average %.2f%n", w.rowsPerSec(), w.seconds(),
                    w.stored(), w.duplicates(), w.rowsPerSec() * universe.meanRowBytes() / 1e6, ratio, w.cpuPer1000(),
                    w.brokerCpuPer1000(), w.load());
            System.out.println("  where the workers' CPU went in the window (threads by name, digits folded;"
                    + " ms per 1000 rows):");
            System.out.print(threadTable(w.threads(), w.rows(), 16));
            figures.put("rowsPerSec", w.rowsPerSec()).put("windowSeconds", w.seconds())
                    .put("windowStored", w.stored()).put("windowDuplicates", w.duplicates())
                    .put("baselineConsumerRowsPerSec", baseline.rowsPerSec()).put("ratioToBaseline", ratio)
                    .put("cpuSecondsPer1000Rows", w.cpuPer1000()).put("baselineCpuSecondsPer1000Rows", baseline.cpuPer1000())
                    .put("brokerCpuSecondsPer1000Rows", w.brokerCpuPer1000())
                    .put("baselineBrokerCpuSecondsPer1000Rows", baseline.brokerCpuPer1000())
                    .put("topicRows", rows).put("loadAverageBaseline", baseline.load()).put("loadAverageSustained", w.load())
                    .put("threadMsPer1000Rows", topThreads(w.threads(), w.rows(), 12));
            return w.rowsPerSec();
        } finally {
            deleteTopics(topic);
        }
    }

    /** A plain consumer's read of the first {@code rows} rows of {@code topic}. */
    private record Consumed(double seconds, double rowsPerSec, double bytesPerSec, double cpuPer1000,
                            double brokerCpuPer1000, double load) {
    }

    private Consumed consume(String topic, long rows) {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, BROKERS);
        p.put(ConsumerConfig.GROUP_ID_CONFIG, "bench-baseline-" + System.nanoTime());
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        long self = ProcessHandle.current().pid();
        long broker = brokerPid();
        try (KafkaConsumer<String, byte[]> consumer = new KafkaConsumer<>(p, new StringDeserializer(),
                new ByteArrayDeserializer())) {
            consumer.subscribe(List.of(topic));
            long seen = 0;
            long bytes = 0;
            long start = 0;
            long cpu0 = 0;
            long brokerCpu0 = 0;
            long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(30);
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
                          double brokerCpuPer1000, double load, Map<String, Long> threads) {
    }

    /** The workers' counts and CPU at one instant. */
    private record Sample(long nanos, long rows, long stored, long duplicates, long rejected, long workerCpu,
                          long brokerCpu, ProcCpu.Threads threads) {
    }

    private Window topologyWindow(ClusterControl cluster, String topic, long topicRows) throws Exception {
        String name = "meridian-bench-a";
        Path stores = work.resolve("rowstore-a");
        submit(cluster, name, topic, stores);
        try {
            waitFor(Duration.ofSeconds(180), "2 workers of " + name, () -> ClusterControl.workers(name).size() == 2);
            ClusterControl.TopologyMetrics metrics = waitForEndpoints(name);
            List<Long> pids = pids(name);
            long broker = brokerPid();
            long[] first = new long[1];
            waitFor(Duration.ofSeconds(400), "the first row stored (the topology is up)", () -> {
                first[0] = System.nanoTime();
                return RowCounts.storedOnDisk(stores) >= 1;
            });
            System.out.printf(Locale.ROOT, "topology %s reads the topic from its start; first row stored; warm-up %d s ...%n",
                    name, options.warmup());
            sleepUntil(first[0] + TimeUnit.SECONDS.toNanos(options.warmup()) - TimeUnit.SECONDS.toNanos(2));
            Map<Long, String> names = new java.util.HashMap<>();
            for (long pid : pids) {
                names.putAll(ProcCpu.javaThreadNames(pid)); // before the window: jcmd stops the JVM briefly
            }
            sleepUntil(first[0] + TimeUnit.SECONDS.toNanos(options.warmup()));
            Sample a = sample(metrics, pids, broker, names);
            Sample last = a;
            Sample b = a;
            long end = a.nanos() + TimeUnit.SECONDS.toNanos(options.seconds());
            boolean cut = false;
            while (System.nanoTime() < end) {
                sleepUntil(Math.min(end, last.nanos() + TimeUnit.SECONDS.toNanos(5)));
                Sample s = sample(metrics, pids, broker, names);
                System.out.printf(Locale.ROOT, "  %5.1f s: %8.0f rows/s (%d rows so far, %d rejected)%n",
                        (s.nanos() - a.nanos()) / 1e9, (s.rows() - last.rows()) / ((s.nanos() - last.nanos()) / 1e9),
                        s.rows(), s.rejected());
                if (s.rows() >= topicRows - Math.max(1, topicRows / 100)) {
                    cut = true; // the backlog ran out: the window ends at the last sample that still had one
                    break;
                }
                b = s;
                last = s;
            }
            if (cut || b == a) {
                System.out.printf(Locale.ROOT, "  WARNING: the topic ran out after %.1f s of the window: raise --max-gb%n",
                        (b.nanos() - a.nanos()) / 1e9);
            }
            if (options.jfr() != null) {
                for (long pid : pids) {
                    Path file = options.jfr().resolve("worker-" + pid + ".jfr");
                    new ProcessBuilder("jcmd", Long.toString(pid), "JFR.dump", "filename=" + file).inheritIO().start()
                            .waitFor(60, TimeUnit.SECONDS);
                }
            }
            long rows = b.rows() - a.rows();
            double secs = (b.nanos() - a.nanos()) / 1e9;
            return new Window(secs, rows, b.stored() - a.stored(), b.duplicates() - a.duplicates(), rows / secs,
                    (b.workerCpu() - a.workerCpu()) / 1e9 / (rows / 1e3), (b.brokerCpu() - a.brokerCpu()) / 1e9 / (rows / 1e3),
                    ProcCpu.loadAverage(), b.threads().since(a.threads()));
        } finally {
            kill(cluster, name);
        }
    }

    private Sample sample(ClusterControl.TopologyMetrics metrics, List<Long> pids, long broker, Map<Long, String> names) {
        long t0 = System.nanoTime();
        RowCounts c = RowCounts.scrape(metrics.endpoints(), metrics.topologyId(), Duration.ofSeconds(10));
        long t1 = System.nanoTime();
        long cpu = 0;
        for (long pid : pids) {
            cpu += ProcCpu.processNanos(pid);
        }
        return new Sample((t0 + t1) / 2, c.stored + c.duplicates, c.stored, c.duplicates, c.rejectedTotal(), cpu,
                ProcCpu.processNanos(broker), ProcCpu.Threads.read(pids, names));
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
        try (KafkaProducer<String, byte[]> producer = producer(0);
             StoredLatency latency = new StoredLatency(new RowStoreReader(stores, blockRows, n))) {
            waitFor(Duration.ofSeconds(180), "2 workers of " + name, () -> ClusterControl.workers(name).size() == 2);
            List<Long> pids = pids(name);
            long broker = brokerPid();
            AtomicReference<Exception> error = new AtomicReference<>();
            Callback callback = (meta, e) -> {
                if (e != null) {
                    error.compareAndSet(null, e);
                }
            };
            send(producer, topic, warm[0], callback);
            try (RowStoreReader probe = new RowStoreReader(stores, blockRows, n)) {
                waitFor(Duration.ofSeconds(400), "row 0 stored (the topology is up)", () -> probe.isStored(warm[0]));
            }
            long nanosPerRow = (long) (1e9 / rate);
            long start = System.nanoTime();
            long cpu0 = 0;
            long brokerCpu0 = 0;
            long windowStart = 0;
            long maxBehind = 0;
            int w = 1;
            int f = 0;
            for (long k = 0; k < warmSlots + windowSlots; k++) {
                long due = start + k * nanosPerRow;
                long behind = System.nanoTime() - due;
                if (behind < 0) {
                    TimeUnit.NANOSECONDS.sleep(-behind);
                } else if (k > warmSlots) {
                    maxBehind = Math.max(maxBehind, behind);
                }
                if (k == warmSlots) {
                    windowStart = System.nanoTime();
                    cpu0 = workerCpu(pids);
                    brokerCpu0 = ProcCpu.processNanos(broker);
                }
                long slot = k - warmSlots;
                if (slot >= 0 && f < freshRows && slot >= (long) (f * freshEvery)) {
                    latency.published(fresh[f]);
                    send(producer, topic, fresh[f++], callback);
                } else {
                    send(producer, topic, warm[w++ % warm.length], callback);
                }
            }
            long windowEnd = System.nanoTime();
            long cpu = workerCpu(pids) - cpu0;
            long brokerCpu = ProcCpu.processNanos(broker) - brokerCpu0;
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
                    + " publish->stored p50 %.1f ms, p99 %.1f ms, max %.1f ms (%d new rows); CPU %.3f s per 1000 rows in"
                    + " the workers (the Kafka broker's: %.3f s); load average %.2f%n", rate, achieved, maxBehind / 1e6,
                    p50, p99, max, ms.length, cpu / 1e9 / (windowSlots / 1e3), brokerCpu / 1e9 / (windowSlots / 1e3), load);
            System.out.println("  p50/p99 ms of the new rows published in each 5 s of the window: "
                    + latency.slices(windowStart, TimeUnit.SECONDS.toNanos(5)));
            figures.put("pacedRowsPerSec", rate).put("pacedAchievedRowsPerSec", achieved).put("latencyP50Ms", p50)
                    .put("latencyP99Ms", p99).put("latencyMaxMs", max).put("latencySamples", ms.length)
                    .put("pacedCpuSecondsPer1000Rows", cpu / 1e9 / (windowSlots / 1e3)).put("loadAveragePaced", load);
        } finally {
            kill(cluster, name);
            deleteTopics(topic);
        }
    }

    // ------------------------------------------------------------------------------------------------ plumbing

    private void submit(ClusterControl cluster, String name, String topic, Path stores) throws Exception {
        int n = universe.n();
        Path config = work.resolve(name + ".yaml");
        Files.writeString(config, String.format(Locale.ROOT, """
                topology: {name: %s, workers: 2, maxSpoutPending: 5000, messageTimeoutSecs: 60, workerHeapMb: 512,
                           transport: %s}
                ingest:
                  maxPoints: %d
                  kafka: {brokers: "%s", topic: %s, rejectedTopic: %s-rejected, consumerGroup: %s, partitions: %d,
                          maxUncommittedOffsets: 5000, firstPoll: earliest}
                  validation: {parallelism: 2, maxIdAhead: %d}
                  rowStore: {directory: %s, blockRows: %d, parallelism: 2}
                # ingestion alone: the map's rounds would share the 2 cores (./meridian bench stream measures them together)
                map: {enabled: false}
                """, name, options.transport(), n, BROKERS, topic, topic, topic, PARTITIONS, n + 1, stores, blockRows));
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
        waitFor(Duration.ofSeconds(90), name + " workers gone", () -> ClusterControl.workers(name).isEmpty());
    }

    private static ClusterControl.TopologyMetrics waitForEndpoints(String name) throws Exception {
        ClusterControl.TopologyMetrics[] m = new ClusterControl.TopologyMetrics[1];
        waitFor(Duration.ofSeconds(120), "the Prometheus endpoints of " + name + "'s 2 workers", () -> {
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

    private void publish(String topic, long from, long count) {
        int n = universe.n();
        AtomicReference<Exception> error = new AtomicReference<>();
        Callback callback = (meta, e) -> {
            if (e != null) {
                error.compareAndSet(null, e);
            }
        };
        try (KafkaProducer<String, byte[]> producer = producer(5)) {
            for (long k = from; k < from + count; k++) {
                send(producer, topic, (int) (k % n), callback);
            }
            producer.flush();
        }
        if (error.get() != null) {
            throw new IllegalStateException("Kafka refused a row: " + error.get().getMessage(), error.get());
        }
    }

    private void send(KafkaProducer<String, byte[]> producer, String topic, int id, Callback callback) {
        producer.send(new ProducerRecord<>(topic, null, System.currentTimeMillis(), universe.key(id), universe.row(id)),
                callback);
    }

    /** As {@code ./meridian feed}'s, with {@code lingerMs} (0 for the paced part: publish means sent). */
    private static KafkaProducer<String, byte[]> producer(int lingerMs) {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, BROKERS);
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.LINGER_MS_CONFIG, lingerMs);
        p.put(ProducerConfig.BATCH_SIZE_CONFIG, 1 << 20);
        p.put(ProducerConfig.MAX_REQUEST_SIZE_CONFIG, 16 << 20);
        return new KafkaProducer<>(p, new StringSerializer(), new ByteArraySerializer());
    }

    private static void createTopics(String topic) throws Exception {
        try (Admin admin = TopicSetup.admin(BROKERS)) {
            admin.createTopics(List.of(new NewTopic(topic, PARTITIONS, (short) 1),
                    new NewTopic(topic + "-rejected", 1, (short) 1))).all().get(30, TimeUnit.SECONDS);
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

    interface Check {
        boolean ok() throws Exception;
    }

    private static void waitFor(Duration timeout, String what, Check check) throws Exception {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!check.ok()) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("timed out after " + timeout.toSeconds() + " s waiting for " + what);
            }
            Thread.sleep(50);
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
