package io.meridian.perf.soak;

import static io.meridian.perf.Waits.say;

import io.meridian.perf.Waits;
import io.meridian.metrics.MetricSamples;
import io.meridian.perf.ingest.RowUniverse;
import io.meridian.topology.ClusterControl;
import io.meridian.topology.ClusterDaemon;
import io.meridian.topology.RowCounts;
import io.meridian.topology.ScrapeTargets;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.FileStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.storm.generated.TopologySummary;
import org.apache.storm.utils.NimbusClient;
import org.apache.storm.utils.Utils;

/**
 * One soak on the real cluster: a fresh topology (2 workers, 2 map tasks, the live map on, mmap transport), fresh
 * topics, row stores and /dev/shm directories; {@link SoakFeeder} streams for the run's length while this thread
 * samples every JVM, /dev/shm, the disk and the map's placement histogram; then the stream drains and the rows are
 * counted from the topics and the stores. The topology is killed and its topics deleted whatever happens.
 */
final class SoakRun {
    /** How often a wait looks again. */
    private static final Duration POLL = Duration.ofMillis(500);
    static final String BROKERS = "localhost:9092";
    static final int WORKERS = 2;
    static final int PARTITIONS = 2;
    private static final String MAIN = "io.meridian.topology.MeridianTopology";
    private static final List<String> DAEMONS = List.of("nimbus", "supervisor", "kafka", "zookeeper");
    private static final String HEAP_AFTER_GC = "jvm_memory_pool_collection_used_bytes";

    /** What the command line asked for. */
    record Options(int n, double rate, double minutes, double sampleSeconds, int initialPoints, int latePoints,
                   int drainSeconds, long seed) {
    }

    /** What the run saw: the samples and the final count. */
    record Result(String name, List<SoakSample> samples, double feedSeconds, Accounting accounting,
                  int workersSeen, Map<String, String> liveHeapGrowthByClass, Map<String, String> mappingsGrowth,
                  Map<String, String> openFilesGrowth, Map<String, List<List<Long>>> committedProposals,
                  Map<String, Object> zookeeperPriming) {
    }

    /** ZooKeeper's committed-proposal cache in a histogram (live ones, and ones replayed from its log at start). */
    private static final String[] PROPOSAL_CLASSES = {"Leader$PureRequestProposal", "Leader$Proposal"};

    /**
     * The count at the end, from the topics and the stores; {@code duplicates} alone comes from the workers' counters.
     *
     * @param offered        records the broker acknowledged to the feeder
     * @param topicRecords   records in the row topic (end minus start offsets): must equal {@code offered}
     * @param offeredPoints  distinct points among them
     * @param offeredBad     malformed records among them
     * @param stored         points in the row stores (their markers)
     * @param deadLettered   records in the dead-letter topic, by the reason each carries ("" for none)
     * @param duplicates     replays the row stores recognised (counters: Storm's own replays count there too)
     */
    record Accounting(long offered, long topicRecords, long offeredPoints, long offeredReplays, long offeredBad,
                      long stored, Map<String, Long> deadLettered, long duplicates, long failedSends,
                      double drainSeconds) {
        long deadLetteredTotal() {
            return deadLettered.values().stream().mapToLong(Long::longValue).sum();
        }

        /** Every acknowledged point stored once, every malformed record dead-lettered with a reason, nothing else. */
        boolean holds() {
            return topicRecords == offered && stored == offeredPoints && deadLetteredTotal() == offeredBad
                    && !deadLettered.containsKey("");
        }
    }

    /** Full collections at each end of the run (workers' live sets; the least of each end is compared). */
    static final int FULL_GCS = 3;

    private final Path home;
    private final Path work;
    private final Path shm;
    private final Options options;
    private final String name;
    /** Each worker endpoint's last scrape, by slot port: what a sample uses when a scrape fails. */
    private final Map<Integer, MetricSamples> lastScrape = new HashMap<>();

    SoakRun(Path home, Path work, Path shm, Options options, long stamp) {
        this.home = home;
        this.work = work;
        this.shm = shm;
        this.options = options;
        this.name = "meridian-soak-" + stamp % 1_000_000;
    }

    Result run(ClusterControl cluster) throws Exception {
        String topic = name + "-rows";
        String rejected = topic + "-rejected";
        String mapTopic = name + "-map";
        Path stores = work.resolve("rowstore");
        Path config = work.resolve(name + ".yaml");
        Files.createDirectories(shm.resolve("region"));
        Files.createDirectories(shm.resolve("transport"));
        Files.writeString(config, String.format(Locale.ROOT, """
                topology: {name: %s, workers: %d, ackers: 1, maxSpoutPending: 5000, messageTimeoutSecs: 60,
                           workerHeapMb: 768, transport: mmap}
                ingest:
                  maxPoints: %d
                  kafka: {brokers: "%s", topic: %s, rejectedTopic: %s, consumerGroup: %s, partitions: %d,
                          maxUncommittedOffsets: 5000, firstPoll: earliest}
                  validation: {maxIdAhead: 2048}
                  rowStore: {directory: "%s", parallelism: 2}
                map: {tasks: 2, initialPoints: %d, snapshotDirectory: "%s", topic: %s, regionRoot: "%s"}
                """, name, WORKERS, options.n(), BROKERS, topic, rejected, name, PARTITIONS, stores,
                options.initialPoints(), work.resolve("map"), mapTopic, shm.resolve("region")), StandardCharsets.UTF_8);
        RowUniverse universe = RowUniverse.random(options.n(), options.seed());
        boolean submitted = false;
        try {
            say("submitting %s (%d workers, live map on, 2 map tasks, mmap transport) ...", name, WORKERS);
            submitted = true; // before the call: a submit that times out may still have gone through
            cluster.storm(180, "-c", "meridian.transport.dir=" + shm.resolve("transport"), "jar",
                    topologyJar().toString(), MAIN, "--config", config.toString());
            Waits.waitFor(Duration.ofSeconds(180), POLL, WORKERS + " workers of " + name,
                    () -> ClusterControl.workers(name).size() == WORKERS);
            Waits.waitFor(Duration.ofSeconds(180), POLL, "the metrics endpoints of " + name, () -> {
                try {
                    return ClusterControl.scrapeTopology(name).endpoints().size() == WORKERS;
                } catch (Exception e) {
                    return false; // not listening yet
                }
            });
            double feedSeconds = options.minutes() * 60;
            SoakFeeder feeder = new SoakFeeder(BROKERS, topic, universe, options.initialPoints(), options.latePoints(),
                    feedSeconds / 6, options.rate(), feedSeconds, options.seed());
            feeder.prime();
            Waits.waitFor(Duration.ofSeconds(300), POLL, "point 0 stored (the topology is up)",
                    () -> RowCounts.storedOnDisk(stores) == 1);
            CommitLogPrimer.Census zkBefore = null;
            CommitLogPrimer primer = null;
            Map<String, Object> priming = new LinkedHashMap<>();
            try {
                primer = CommitLogPrimer.connect(zookeeperAddress());
                zkBefore = primer.census();
            } catch (Exception e) {
                if (primer != null) {
                    primer.close();
                    primer = null;
                }
                priming.put("failed", "before the feed: " + e);
                say("  WARNING: cannot measure ZooKeeper's writes (%s): its committed-proposal cache will not be"
                        + " primed", e);
            }
            Thread feed = new Thread(feeder, "soak-feeder");
            Set<Long> workerPids = new LinkedHashSet<>();
            List<SoakSample> samples = new ArrayList<>();
            Map<Long, List<HeapHistogram>> earlyHistograms = new HashMap<>();
            Map<Long, List<HeapHistogram>> lateHistograms = new HashMap<>();
            Map<Long, List<List<Map<String, Integer>>>> fileUse = new HashMap<>();
            int firstAfterWarmup = (int) Math.ceil(feedSeconds / 6 / options.sampleSeconds());
            long start = System.nanoTime();
            feed.start();
            try {
                for (int k = 0; ; k++) {
                    double at = Math.min(feedSeconds, k * options.sampleSeconds());
                    long wake = start + (long) (at * 1e9);
                    while (System.nanoTime() < wake) {
                        Thread.sleep(Math.max(1, Math.min(1000, (wake - System.nanoTime()) / 1_000_000)));
                    }
                    if (k == firstAfterWarmup - 1 && primer != null) {
                        priming.putAll(primeZooKeeper(cluster, primer, zkBefore));
                        primer.close();
                        primer = null;
                    }
                    // the live set at the warm-up's end and at the run's end, three collections each: the heap rule
                    // compares the least of each three (SoakTrend.growthBetweenFullCollections)
                    boolean fullGc = k >= firstAfterWarmup && k < firstAfterWarmup + FULL_GCS
                            || at >= feedSeconds - (FULL_GCS - 1) * options.sampleSeconds() - 1e-9;
                    Map<String, Double> daemonsLive = fullGc
                            ? fullGc(ClusterControl.workers(name), daemonPids(cluster),
                                    k < firstAfterWarmup + FULL_GCS ? earlyHistograms : lateHistograms, fileUse)
                            : Map.of();
                    SoakSample s = sample(cluster, (System.nanoTime() - start) / 1e9, stores, feeder, workerPids,
                            fullGc, daemonsLive);
                    samples.add(s);
                    say("  %5.1f min: %s; stored %d, offered %d (sent %d)", s.seconds() / 60, brief(s), s.storedRows(),
                            s.offered(), feeder.sent());
                    if (at >= feedSeconds) {
                        break;
                    }
                }
            } finally {
                feeder.stop();
                feed.join(TimeUnit.SECONDS.toMillis(120));
                if (primer != null) {
                    primer.close();
                }
            }
            if (feeder.firstFailure.get() != null) {
                say("  the feeder saw a failure: %s", feeder.firstFailure.get());
            }
            Accounting accounting = drain(topic, rejected, stores, feeder);
            SoakSample last = samples.get(samples.size() - 1);
            return new Result(name, samples, feedSeconds, accounting, workerPids.size(),
                    growthByClass(last, earlyHistograms, lateHistograms), fileGrowth(last, fileUse, 0),
                    fileGrowth(last, fileUse, 1), committedProposals(last, earlyHistograms, lateHistograms), priming);
        } finally {
            if (submitted) {
                try {
                    say("killing %s ...", name);
                    ClusterControl.killAndAwait(name, Duration.ofSeconds(120), 0);
                    Waits.waitFor(Duration.ofSeconds(60), POLL, name + " workers gone",
                            () -> ClusterControl.workers(name).isEmpty());
                    // the Supervisor frees a slot only after its worker exited (LiveMapRun: 1 s was too short)
                    Thread.sleep(3000);
                } catch (Exception e) {
                    say("  WARNING: could not kill %s: %s", name, e.getMessage());
                }
            }
            deleteTopics(List.of(topic, rejected, mapTopic));
        }
    }

    private SoakSample sample(ClusterControl cluster, double seconds, Path stores, SoakFeeder feeder,
                              Set<Long> workerPids, boolean fullGc, Map<String, Double> daemonsLive)
            throws Exception {
        Map<String, SoakSample.Jvm> jvms = new TreeMap<>();
        List<MetricSamples> scraped = new ArrayList<>();
        Map<Integer, Double> heapByPort = new HashMap<>();
        try (NimbusClient nimbus = NimbusClient.getConfiguredClient(Utils.readStormConfig())) {
            for (TopologySummary t : nimbus.getClient().getClusterInfo().get_topologies()) {
                if (t.get_name().equals(name)) {
                    for (ScrapeTargets.Target target : ScrapeTargets.workers(nimbus.getClient(), t.get_id())) {
                        try {
                            MetricSamples m = MetricSamples.scrape(target.url(), Duration.ofSeconds(10));
                            lastScrape.put(target.slotPort(), m);
                            heapByPort.put(target.slotPort(), m.sum(HEAP_AFTER_GC, x -> true));
                        } catch (java.io.UncheckedIOException e) {
                            // a worker restarting: its heap is unknown here; its histogram counts as last seen
                            say("  could not scrape %s: %s", target.url(), e.getMessage());
                            heapByPort.put(target.slotPort(), Double.NaN);
                        }
                        if (lastScrape.containsKey(target.slotPort())) {
                            scraped.add(lastScrape.get(target.slotPort()));
                        }
                    }
                }
            }
        }
        for (ProcessHandle worker : ClusterControl.workers(name)) {
            workerPids.add(worker.pid());
            int port = slotPort(worker.pid(), heapByPort.keySet());
            jvms.put("worker-" + port, new SoakSample.Jvm(worker.pid(), ProcStats.of(worker.pid()),
                    heapByPort.getOrDefault(port, Double.NaN)));
        }
        daemonPids(cluster).forEach((daemon, pid) -> jvms.put(daemon, new SoakSample.Jvm(pid, ProcStats.of(pid),
                daemonsLive.getOrDefault(daemon, Double.NaN))));
        long[] shmTree = tree(shm);
        long[] storeTree = tree(stores);
        FileStore devShm = Files.getFileStore(Path.of("/dev/shm"));
        FileStore disk = Files.getFileStore(Files.exists(stores) ? stores : work);
        MetricSamples placement = MetricSamples.of(MetricSamples.merge(scraped)
                .get(SoakTrend.PLACEMENT + "_bucket", x -> true));
        return new SoakSample(seconds, jvms, shmTree[0], shmTree[1], devShm.getTotalSpace() - devShm.getUsableSpace(),
                storeTree[0], storeTree[1], disk.getTotalSpace() - disk.getUsableSpace(), placement,
                RowCounts.storedOnDisk(stores), feeder.offered(), fullGc);
    }

    /**
     * A full collection in each worker, by {@code jcmd PID GC.class_histogram} (which collects first): the pools'
     * collection usage after it is the live set, and the histogram says which classes it is made of. Only twice a run:
     * in a 3-minute run without it, the old generation's usage after young collections rose 28 -> 33 MB on one worker
     * (promotion, no mixed collection yet), which says nothing about a leak.
     */
    private static Map<String, Double> fullGc(List<ProcessHandle> workers, Map<String, Long> daemons,
                                              Map<Long, List<HeapHistogram>> histograms,
                                              Map<Long, List<List<Map<String, Integer>>>> fileUse)
            throws InterruptedException {
        for (ProcessHandle w : workers) {
            fileUse.computeIfAbsent(w.pid(), k -> new ArrayList<>())
                    .add(List.of(FileUse.mapped(w.pid()), FileUse.open(w.pid())));
            HeapHistogram h = HeapHistogram.take(w.pid());
            if (h == null) {
                say("  jcmd %d GC.class_histogram failed: the heap rule reads what the last collections left", w.pid());
            } else {
                histograms.computeIfAbsent(w.pid(), k -> new ArrayList<>()).add(h);
            }
        }
        // the daemons serve no heap metric: their live heap is the histogram's total. The 30-minute run read
        // ZooKeeper's RSS +44 % without full collections, which could not tell a growing heap from a leak
        Map<String, Double> live = new TreeMap<>();
        for (Map.Entry<String, Long> d : daemons.entrySet()) {
            HeapHistogram h = HeapHistogram.take(d.getValue());
            if (h == null) {
                say("  jcmd %d (%s) GC.class_histogram failed: its live heap is not known", d.getValue(), d.getKey());
            } else {
                histograms.computeIfAbsent(d.getValue(), k -> new ArrayList<>()).add(h);
                live.put(d.getKey(), (double) h.totalBytes());
            }
        }
        return live;
    }

    /** The first ZooKeeper server of the cluster's storm.yaml, as {@code host:port}. */
    private static String zookeeperAddress() {
        return ClusterDaemon.configured(Utils.readStormConfig(), List.of()).stream()
                .filter(d -> d.kind() == ClusterDaemon.Kind.ZOOKEEPER).findFirst().map(ClusterDaemon::address)
                .orElseThrow(() -> new IllegalStateException("no storm.zookeeper.servers in storm.yaml"));
    }

    /**
     * ZooKeeper's committed-proposal cache filled before the early window ({@link CommitLogPrimer} says why), each
     * write as large as the cluster's mean transaction since {@code before}; what it did, for the JSON. A failure is
     * reported, not fatal: the soak then judges ZooKeeper's heap with the cache still filling, as before.
     */
    private static Map<String, Object> primeZooKeeper(ClusterControl cluster, CommitLogPrimer primer,
                                                      CommitLogPrimer.Census before) {
        Map<String, Object> m = new LinkedHashMap<>();
        try {
            int capacity = CommitLogPrimer.commitLogCount(ClusterControl.commandLine(cluster.daemonPid("zookeeper")));
            CommitLogPrimer.Sizing sizing = CommitLogPrimer.meanBytesPerTransaction(before, primer.census());
            int payload = CommitLogPrimer.payloadFor(sizing.meanBytes());
            CommitLogPrimer.Priming p = primer.prime(capacity, capacity, payload, sizing);
            m.put("commit_log_count", p.commitLogCount());
            m.put("proposals_written", p.proposals());
            m.put("payload_bytes", p.payloadBytes());
            m.put("path", CommitLogPrimer.PATH);
            m.put("seconds", p.seconds());
            m.put("cluster_transactions_measured", sizing.transactions());
            m.put("cluster_bytes_measured", sizing.bytes());
            m.put("cluster_mean_bytes_per_transaction", sizing.meanBytes());
            m.put("cluster_max_znode_bytes", sizing.maxDataLength());
            m.put("measured_over_seconds", sizing.seconds());
            say("  primed ZooKeeper's committed-proposal cache: %d proposals (%s created, written %d times, deleted) of"
                            + " %d data bytes in %.2f s; the cluster wrote %d transactions of %.0f bytes on average"
                            + " (path and data) in the %.0f s before; its largest znode holds %d bytes",
                    p.proposals(), CommitLogPrimer.PATH, p.proposals() - 2, p.payloadBytes(), p.seconds(),
                    sizing.transactions(), sizing.transactions() == 0 ? 0.0 : (double) sizing.bytes()
                            / sizing.transactions(), sizing.seconds(), sizing.maxDataLength());
        } catch (Exception e) {
            m.put("failed", e.toString());
            say("  WARNING: could not prime ZooKeeper's committed-proposal cache: %s", e);
        }
        return m;
    }

    /**
     * Each JVM whose histograms hold ZooKeeper proposals (ZooKeeper's): the cache's proposals at each full collection
     * of the early window and of the late one, so a reader sees it full in both.
     */
    private static Map<String, List<List<Long>>> committedProposals(SoakSample last,
                                                                    Map<Long, List<HeapHistogram>> early,
                                                                    Map<Long, List<HeapHistogram>> late) {
        Map<String, List<List<Long>>> out = new TreeMap<>();
        last.jvms().forEach((jvm, j) -> {
            List<Long> e = early.getOrDefault(j.pid(), List.of()).stream()
                    .map(h -> h.instances(PROPOSAL_CLASSES)).toList();
            List<Long> l = late.getOrDefault(j.pid(), List.of()).stream()
                    .map(h -> h.instances(PROPOSAL_CLASSES)).toList();
            if (e.stream().anyMatch(n -> n > 0) || l.stream().anyMatch(n -> n > 0)) {
                out.put(jvm, List.of(e, l));
            }
        });
        return out;
    }

    /** This cluster's daemons by name, each with the pid its pid file gives; a daemon without one is left out. */
    private static Map<String, Long> daemonPids(ClusterControl cluster) {
        Map<String, Long> pids = new TreeMap<>();
        for (String daemon : DAEMONS) {
            try {
                pids.put(daemon, cluster.daemonPid(daemon));
            } catch (IOException | RuntimeException e) {
                // a daemon without a pid file (not part of this cluster): nothing to sample
            }
        }
        return pids;
    }

    /**
     * Each worker of {@code last}: what its mapped ({@code which} 0) or open (1) files grew by, from the first full
     * collection to the last.
     */
    private static Map<String, String> fileGrowth(SoakSample last, Map<Long, List<List<Map<String, Integer>>>> use,
                                                  int which) {
        Map<String, String> out = new TreeMap<>();
        last.jvms().forEach((jvm, j) -> {
            List<List<Map<String, Integer>>> u = use.get(j.pid());
            if (jvm.startsWith("worker") && u != null && u.size() >= 2) {
                out.put(jvm, FileUse.growth(u.get(0).get(which), u.get(u.size() - 1).get(which), 6));
            }
        });
        return out;
    }

    private static HeapHistogram least(List<HeapHistogram> histograms) {
        return histograms.stream().min(java.util.Comparator.comparingLong(HeapHistogram::totalBytes)).orElseThrow();
    }

    /** Each JVM of {@code last}, worker or daemon: the classes its live heap grew by between the full collections. */
    private static Map<String, String> growthByClass(SoakSample last, Map<Long, List<HeapHistogram>> early,
                                                     Map<Long, List<HeapHistogram>> late) {
        Map<String, String> out = new TreeMap<>();
        last.jvms().forEach((jvm, j) -> {
            List<HeapHistogram> e = early.get(j.pid());
            List<HeapHistogram> l = late.get(j.pid());
            if (e != null && l != null) {
                out.put(jvm, HeapHistogram.topGrowth(least(e), least(l), 8));
            }
        });
        return out;
    }

    /** The slot port among {@code ports} that the worker's command line names (-1 if none). */
    private static int slotPort(long pid, Set<Integer> ports) {
        List<String> args = ClusterControl.commandLine(pid);
        int main = args.indexOf("org.apache.storm.daemon.worker.Worker");
        for (int i = main + 1; main >= 0 && i < args.size(); i++) {
            for (int port : ports) {
                if (args.get(i).equals(Integer.toString(port))) {
                    return port;
                }
            }
        }
        return -1;
    }

    /** {files, bytes} under {@code dir} (0, 0 if it does not exist); files that vanish meanwhile are skipped. */
    private static long[] tree(Path dir) throws IOException {
        long[] out = new long[2];
        if (!Files.exists(dir)) {
            return out;
        }
        try (Stream<Path> all = Files.walk(dir)) {
            all.forEach(p -> {
                try {
                    if (Files.isRegularFile(p)) {
                        out[0]++;
                        out[1] += Files.size(p);
                    }
                } catch (IOException e) {
                    // swept between the listing and the size: not there any more
                }
            });
        } catch (java.io.UncheckedIOException e) {
            // a directory swept while walked: the next sample sees the new state
        }
        return out;
    }

    /**
     * Waits until every acknowledged point is stored and every malformed record is dead-lettered (at most
     * {@code drainSeconds}), then counts: the row topic's records, the stores' points, the dead-letter topic's records
     * by the reason each carries.
     */
    private Accounting drain(String topic, String rejected, Path stores, SoakFeeder feeder) throws Exception {
        long drainStart = System.nanoTime();
        long deadline = drainStart + TimeUnit.SECONDS.toNanos(options.drainSeconds());
        long points = feeder.offeredPoints();
        long bad = feeder.ackedBad.get();
        Map<String, Long> dead = deadLetters(rejected);
        long stored = RowCounts.storedOnDisk(stores);
        while ((stored < points || total(dead) < bad) && System.nanoTime() < deadline) {
            Thread.sleep(2000);
            stored = RowCounts.storedOnDisk(stores);
            dead = deadLetters(rejected);
        }
        double drainSeconds = (System.nanoTime() - drainStart) / 1e9;
        long duplicates = -1;
        try {
            duplicates = ClusterControl.rowCounts(name).duplicates;
        } catch (Exception e) {
            say("  could not read the workers' duplicate counters: %s", e.getMessage());
        }
        return new Accounting(feeder.offered(), records(topic), points, feeder.ackedReplays.get(), bad, stored, dead,
                duplicates, feeder.failed.get(), drainSeconds);
    }

    private static long total(Map<String, Long> m) {
        return m.values().stream().mapToLong(Long::longValue).sum();
    }

    /** Records in {@code topic}: the sum over its partitions of the end offset minus the start offset. */
    private static long records(String topic) throws Exception {
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", BROKERS))) {
            List<TopicPartition> parts = partitions(admin, topic);
            Map<TopicPartition, OffsetSpec> earliest = new HashMap<>();
            Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
            parts.forEach(p -> {
                earliest.put(p, OffsetSpec.earliest());
                latest.put(p, OffsetSpec.latest());
            });
            long n = 0;
            var start = admin.listOffsets(earliest).all().get(30, TimeUnit.SECONDS);
            var end = admin.listOffsets(latest).all().get(30, TimeUnit.SECONDS);
            for (TopicPartition p : parts) {
                n += end.get(p).offset() - start.get(p).offset();
            }
            return n;
        }
    }

    private static List<TopicPartition> partitions(Admin admin, String topic) throws Exception {
        return admin.describeTopics(List.of(topic)).allTopicNames().get(30, TimeUnit.SECONDS).get(topic).partitions()
                .stream().map(p -> new TopicPartition(topic, p.partition())).toList();
    }

    /** The dead-letter topic's records, read from its start, by their {@code reason} header ("" when missing). */
    private static Map<String, Long> deadLetters(String topic) throws Exception {
        Map<String, Long> out = new TreeMap<>();
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, BROKERS);
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", BROKERS));
             KafkaConsumer<String, byte[]> consumer = new KafkaConsumer<>(p, new StringDeserializer(),
                     new ByteArrayDeserializer())) {
            List<TopicPartition> parts;
            try {
                parts = partitions(admin, topic);
            } catch (java.util.concurrent.ExecutionException e) {
                return out; // not created yet: nothing dead-lettered
            }
            consumer.assign(parts);
            consumer.seekToBeginning(parts);
            Map<TopicPartition, Long> end = consumer.endOffsets(parts);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (parts.stream().anyMatch(tp -> consumer.position(tp) < end.get(tp)) && System.nanoTime() < deadline) {
                for (ConsumerRecord<String, byte[]> r : consumer.poll(Duration.ofMillis(500))) {
                    Header reason = r.headers().lastHeader("reason");
                    out.merge(reason == null ? "" : new String(reason.value(), StandardCharsets.UTF_8), 1L, Long::sum);
                }
            }
        }
        return out;
    }

    private static void deleteTopics(List<String> topics) {
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", BROKERS))) {
            admin.deleteTopics(topics).all().get(30, TimeUnit.SECONDS);
        } catch (Exception e) {
            say("  could not delete the topics %s: %s", topics, e.getMessage());
        }
    }

    private Path topologyJar() throws IOException {
        try (DirectoryStream<Path> jars = Files.newDirectoryStream(home.resolve("topology/target"),
                "meridian-topology-*-topology.jar")) {
            for (Path j : jars) {
                return j;
            }
        }
        throw new IllegalStateException("no topology jar in " + home.resolve("topology/target")
                + " (run ./meridian build)");
    }

    private static String brief(SoakSample s) {
        StringBuilder b = new StringBuilder();
        for (Map.Entry<String, SoakSample.Jvm> e : s.jvms().entrySet()) {
            if (!e.getKey().startsWith("worker") || e.getValue().proc() == null) {
                continue;
            }
            ProcStats p = e.getValue().proc();
            b.append(String.format(Locale.ROOT, "%s RSS %.0f MB heap-after-GC %.0f MB threads %d fds %d maps %d; ",
                    e.getKey(), p.rssBytes() / 1e6, e.getValue().heapAfterGcBytes() / 1e6, p.threads(), p.openFiles(),
                    p.mappings()));
        }
        return b.append(String.format(Locale.ROOT, "run's /dev/shm %d files %.0f MB; row stores %.0f MB", s.shmFiles(),
                s.shmBytes() / 1e6, s.storeBytes() / 1e6)).toString();
    }




    static Map<String, Object> json(Accounting a) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("offered", a.offered());
        m.put("topic_records", a.topicRecords());
        m.put("offered_points", a.offeredPoints());
        m.put("offered_replays", a.offeredReplays());
        m.put("offered_malformed", a.offeredBad());
        m.put("stored", a.stored());
        m.put("dead_lettered", a.deadLetteredTotal());
        m.put("dead_lettered_by_reason", new LinkedHashMap<>(a.deadLettered()));
        m.put("duplicates_counted", a.duplicates());
        m.put("failed_sends", a.failedSends());
        m.put("drain_seconds", a.drainSeconds());
        m.put("rule", "topic records = offered; stored points = distinct points offered; dead-letter records ="
                + " malformed offered, each with a reason (duplicates are the workers' counters, shown only)");
        return m;
    }
}
