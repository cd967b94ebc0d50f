package io.meridian.perf.stream;

import static io.meridian.perf.Waits.say;

import io.meridian.perf.Waits;
import io.meridian.config.MeridianConfig;
import io.meridian.live.SnapshotWriter;
import io.meridian.topology.ClusterControl;
import io.meridian.topology.IngestTopology;
import io.meridian.metrics.MetricSamples;
import io.meridian.topology.RowCounts;
import io.meridian.topology.TopicSetup;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.storm.Config;
import org.apache.storm.StormSubmitter;

/**
 * One run of the ingestion topology with the live map on the real cluster: fresh topics, row stores, snapshot
 * directory and consumer group; rows {@code 0 .. N0-1} published at the ramp rate, the rest at the paced rate, each
 * publish time recorded; then the map is left to settle. The topology is killed (and its topics deleted) whatever
 * happens.
 */
final class LiveMapRun {
    /** How often a wait looks again. */
    private static final Duration POLL = Duration.ofMillis(20);
    static final String BROKERS = "localhost:9092";
    static final int WORKERS = 2;
    static final int MAP_TASKS = 4;
    /**
     * The map has settled when its last frame says so, or (should that frame go by unseen) after this long without a
     * new frame; and in either case no DA-PWC run is under way and every point is in the map.
     */
    private static final long QUIET_MILLIS = 20_000;
    private static final long SLOT_SETTLE_MILLIS = 3000;
    /** The live map's background DA-PWC thread ("meridian-live-pwc") as /proc shows it: 15 characters. */
    private static final String PWC_THREAD = "meridian-live-p";

    /** What one run saw. Arrays are indexed by point id. */
    static final class Result {
        String name;
        String transport;
        long[] publishedMs;
        /** When the broker acknowledged each row (the producer's callback; acks=all), -1 if it failed. */
        long[] ackedMs;
        /** How late the feeder published each paced row against its schedule (a starved feeder sends rows in bursts). */
        long[] feedLateMs;
        long rampEndMs;
        long feedEndMs;
        double feedSeconds;
        double settleSeconds;
        boolean settled;
        long[] frameRecordMs;
        long[] frameArrivedMs;
        long[] frameOf;
        long mapRecords;
        /** With rows stored before the start: seconds from its workers up to the resumed map's first frame. */
        double resumedSeconds;
        List<FrameLog.FrameStat> frames;
        long framesMissed;
        FrameLog.FrameStat lastFrame;
        double[] points;
        int[] labels;
        RowCounts counts;
        /** The live map's histograms from the workers' endpoints: name -> {count, p50 ms, p99 ms} (bucket quantiles). */
        Map<String, double[]> mapHistograms = new LinkedHashMap<>();
        Map<String, Long> mapCounters = new LinkedHashMap<>();
        int workersRestarted;
        /** The placement histogram's buckets when the steady state began, and its {count, p50, p99 ms} since. */
        MetricSamples placementBefore;
        double[] steadyPlacement;
        /** Of the same rows: placeable (every lower id stored too) -> frame, {count, p50, p99 ms}. */
        double[] steadyPlaceable;
        /** Of the same rows: stored -> the map's task 0 notified of it, {count, p50, p99 ms}. */
        double[] steadyNotified;
    }

    /** The row {@code id} as the feeder publishes it (the wire form the spout decodes). */
    interface Rows {
        byte[] row(int id);
    }

    /**
     * The topology's shape, and what is there before it starts: rows {@code 0 .. storedRows-1} already in
     * {@link #rowStoreDirectory()} and a frame of them in {@code resumeFrom} ({@code map.resumeFrom}), or neither.
     */
    record Shape(int workers, int mapTasks, int blockRows, int storedRows, Path resumeFrom) {
    }

    private final Path home;
    private final Path work;
    private final Path shm;
    private final String tag;
    private final String transport;
    private final int n;
    private final int initialPoints;
    private final Shape shape;
    private int steadyFrom;
    private boolean quietSplit;

    LiveMapRun(Path home, Path work, Path shm, String tag, String transport, int n, int initialPoints) {
        // small blocks keep the four map tasks' shares even while the map grows (task t owns blocks t, t + 4, ...)
        this(home, work, shm, tag, transport, n, initialPoints,
                new Shape(WORKERS, MAP_TASKS, Math.max(1, Math.min(128, n / (4 * MAP_TASKS))), 0, null));
    }

    LiveMapRun(Path home, Path work, Path shm, String tag, String transport, int n, int initialPoints, Shape shape) {
        this.home = home;
        this.work = work.resolve(tag);
        this.shm = shm.resolve(tag);
        this.tag = tag;
        this.transport = transport;
        this.n = n;
        this.initialPoints = initialPoints;
        this.shape = shape;
        this.steadyFrom = steadyFrom(n, initialPoints);
    }

    /**
     * Splits the workers' histograms at row {@code id} rather than at {@link #steadyFrom(int, int)}: the rows from it
     * on are the steady state's ({@link Result#steadyPlacement}). The feed pauses there until the earlier rows are
     * shown, so the split is exact ({@link #quietSplit}); the default split reads the histograms while rows stream.
     */
    LiveMapRun steadyFrom(int id) {
        if (id < initialPoints || id >= n) {
            throw new IllegalArgumentException("the steady state's first row must be in " + initialPoints + ".."
                    + (n - 1) + ", got " + id);
        }
        steadyFrom = id;
        quietSplit = true;
        return this;
    }

    /** Where the topology's row stores are: rows {@code 0 .. storedRows-1} go there before {@link #run}. */
    Path rowStoreDirectory() {
        return work.resolve("rowstore");
    }

    private String yaml(String name, String rowsTopic, String mapTopic) {
        return String.format(Locale.ROOT, """
                topology: {name: %s, workers: %d, maxSpoutPending: 5000, messageTimeoutSecs: 60, workerHeapMb: 1024,
                           transport: %s}
                ingest:
                  source: kafka
                  maxPoints: %d
                  kafka: {brokers: "%s", topic: %s, rejectedTopic: %s-rejected, consumerGroup: %s, partitions: 1,
                          maxUncommittedOffsets: 5000, firstPoll: earliest}
                  local: {n: %d}          # unused with Kafka, but validated against maxPoints
                  validation: {parallelism: 1, maxIdAhead: %d}
                  rowStore: {directory: "%s", blockRows: %d, parallelism: 2}
                map:
                  enabled: true
                  tasks: %d
                  initialPoints: %d
                  snapshotDirectory: "%s"
                  topic: %s
                  regionRoot: "%s"
                %s""", name, shape.workers(), transport, n, BROKERS, rowsTopic, rowsTopic, name, n, n + 1,
                rowStoreDirectory(), shape.blockRows(), shape.mapTasks(), initialPoints, work.resolve("map"), mapTopic,
                shm.resolve("region"), shape.resumeFrom() == null ? ""
                        : "  resumeFrom: \"" + shape.resumeFrom() + "\"\n");
    }

    /**
     * {@code awaitClusters}: settling also waits for the map's background DA-PWC run to finish; {@code awaitSettled}
     * false: the run ends once every point is in map-updates and in a frame.
     */
    Result run(Rows rows, double rampRate, double rate, int settleSecs, boolean awaitSettled, boolean awaitClusters)
            throws Exception {
        Files.createDirectories(work);
        Files.createDirectories(shm.resolve("region"));
        String name = "bench-stream-" + tag;
        String rowsTopic = "bench-stream-rows-" + tag;
        String mapTopic = "bench-stream-map-" + tag;
        Path configFile = work.resolve("config.yaml");
        Files.writeString(configFile, yaml(name, rowsTopic, mapTopic), StandardCharsets.UTF_8);
        MeridianConfig config = MeridianConfig.load(configFile);
        Result r = new Result();
        r.name = name;
        r.transport = transport;
        List<String> topics = new ArrayList<>();
        try {
            topics.addAll(TopicSetup.ensureTopics(config.ingest()));
            try (Admin admin = TopicSetup.admin(BROKERS)) {
                admin.createTopics(List.of(new NewTopic(mapTopic, 1, (short) 1))).all().get(15, TimeUnit.SECONDS);
                topics.add(mapTopic);
            }
            return observe(config, name, rowsTopic, mapTopic, rows, rampRate, rate, settleSecs, awaitSettled,
                    awaitClusters, r);
        } finally {
            if (active != null) {
                say("killing %s ...", name);
                try {
                    ClusterControl.killAndAwait(name, Duration.ofSeconds(60), 0);
                    Waits.waitFor(Duration.ofSeconds(60), POLL, name + " workers gone",
                            () -> ClusterControl.workers(name).isEmpty());
                    // the Supervisor marks a slot free only after its worker exited; a cluster stopped before that
                    // keeps the assignment in its local state and relaunches the dead topology's worker at the next
                    // start (seen: 1 s was too short)
                    Thread.sleep(SLOT_SETTLE_MILLIS);
                    active = null;
                } catch (Exception e) {
                    say("  WARNING: could not kill %s: %s", name, e.getMessage());
                }
            }
            deleteTopics(topics);
        }
    }

    /** The topology submitted and not yet killed, if any (for a shutdown hook). */
    static volatile String active;

    private Result observe(MeridianConfig config, String name, String rowsTopic, String mapTopic, Rows rows,
                           double rampRate, double rate, int settleSecs, boolean awaitSettled, boolean awaitClusters,
                           Result r)
            throws Exception {
        try (MapUpdates updates = new MapUpdates(BROKERS, mapTopic, n);
             FrameLog frames = new FrameLog(config.map().snapshotDirectory());
             KafkaProducer<String, byte[]> producer = producer()) {
            Config conf = IngestTopology.stormConfig(config);
            if (transport.equals(StreamBench.MMAP)) { // the config's transport key selected it
                conf.put("meridian.transport.dir", shm.resolve("transport").toString());
            }
            System.setProperty("storm.jar", topologyJar().toString());
            say("submitting %s (%d workers, %d map tasks, %s transport) ...", name, shape.workers(), shape.mapTasks(),
                    transport);
            active = name; // before the call: a submit that times out may still have gone through
            StormSubmitter.submitTopology(name, conf, IngestTopology.build(config));
            Path stores = config.ingest().rowStore().directory();
            Waits.waitFor(Duration.ofSeconds(180), POLL, shape.workers() + " workers of " + name,
                    () -> ClusterControl.workers(name).size() == shape.workers());
            r.publishedMs = new long[n];
            r.ackedMs = new long[n];
            r.feedLateMs = new long[n];
            int stored = shape.storedRows();
            if (stored == 0) {
                r.publishedMs[0] = System.currentTimeMillis();
                publish(producer, rowsTopic, 0, rows.row(0), r.publishedMs[0]).get(30, TimeUnit.SECONDS);
                Waits.waitFor(Duration.ofSeconds(300), POLL, "row 0 stored (the topology is up)",
                        () -> RowCounts.storedOnDisk(stores) == 1);
            } else {
                long t0 = System.nanoTime();
                // the resumed map's first frame: its first round of SMACOF iterations over every stored row
                Waits.waitFor(Duration.ofMinutes(20), POLL, "the map's first frame of its " + stored + " stored rows"
                        + " (resumed from " + shape.resumeFrom() + ")",
                        () -> frames.last() != null && frames.last().points() >= stored);
                r.resumedSeconds = (System.nanoTime() - t0) / 1e9;
                say("  the map resumed: frame %d of %d points %.0f s after its workers started", frames.last().frame(),
                        frames.last().points(), r.resumedSeconds);
            }
            feed(producer, rowsTopic, rows, rampRate, rate, r, updates, frames, name);
            long settleStart = System.nanoTime();
            long deadline = settleStart + TimeUnit.SECONDS.toNanos(settleSecs);
            long nextSay = System.nanoTime() + 10_000_000_000L;
            while (true) {
                FrameLog.FrameStat last = frames.last();
                boolean all = last != null && last.points() == n && updates.distinct() == n;
                // the map says so (refined to convergence, no anneal due, clustered); the quiet spell is a fallback
                boolean quiet = last != null && last.settled()
                        || System.currentTimeMillis() - frames.lastSeenAtMs() > QUIET_MILLIS;
                if (all && (!awaitSettled || quiet && !(awaitClusters && pwcRunning(name)))) {
                    r.settled = true;
                    break;
                }
                if (System.nanoTime() > deadline) {
                    say("  WARNING: the map had not settled %d s after the last row (last frame %s, %d points in"
                            + " map-updates, DA-PWC running: %b); taking its state as it is", settleSecs,
                            last == null ? "none" : last.frame() + " of " + last.points() + " points", updates.distinct(),
                            pwcRunning(name));
                    break;
                }
                if (System.nanoTime() > nextSay) {
                    nextSay += 10_000_000_000L;
                    say("  settling: frame %s, %s points, stress %s%s", last == null ? "-" : last.frame(),
                            last == null ? "-" : last.points(), last == null ? "-" : String.format(Locale.ROOT, "%.5g", last.stress()),
                            pwcRunning(name) ? ", DA-PWC running" : "");
                }
                Thread.sleep(100);
            }
            r.settleSeconds = (System.nanoTime() - settleStart) / 1e9;
            readSnapshot(config.map().snapshotDirectory(), r);
            try {
                readMetrics(name, r);
            } catch (java.io.UncheckedIOException e) {
                // the run's own per-row figures stand without the workers' histograms
                say("  WARNING: the workers' metrics could not be read (%s): their histograms are left out",
                        e.getMessage());
            }
            if (updates.failure() != null) {
                throw new IllegalStateException("the map-updates consumer failed: " + updates.failure().getMessage(),
                        updates.failure());
            }
            updates.close();
            frames.close();
            r.frameRecordMs = new long[n];
            r.frameArrivedMs = new long[n];
            r.frameOf = new long[n];
            for (int id = 0; id < n; id++) {
                r.frameRecordMs[id] = updates.recordMs(id);
                r.frameArrivedMs[id] = updates.arrivedMs(id);
                r.frameOf[id] = updates.frame(id);
            }
            r.mapRecords = updates.records();
            r.frames = frames.frames();
            r.framesMissed = frames.missed();
            r.lastFrame = frames.last();
            return r;
        }
    }

    /** Rows 1 .. N0-1 at the ramp rate, then the rest at the paced rate, each against its own schedule. */
    private void feed(KafkaProducer<String, byte[]> producer, String topic, Rows rows, double rampRate, double rate,
                      Result r, MapUpdates updates, FrameLog frames, String name) throws Exception {
        long start = System.nanoTime();
        long rampNanos = (long) (1e9 / rampRate);
        long pacedNanos = (long) (1e9 / rate);
        long pacedStart = 0;
        long nextSay = start + 10_000_000_000L;
        CompletableFuture<MetricSamples> placementBefore = null;
        int from = Math.max(1, shape.storedRows());
        int pacedFrom = Math.max(from, initialPoints);
        if (from < pacedFrom) {
            say("  feeding rows %d..%d at %.0f rows/s, then %d..%d at %.0f rows/s (about %.0f s) ...", from,
                    pacedFrom - 1, rampRate, pacedFrom, n - 1, rate, (n - pacedFrom) / rate + (pacedFrom - from) / rampRate);
        } else {
            say("  feeding rows %d..%d at %.0f rows/s (about %.0f s) ...", from, n - 1, rate, (n - from) / rate);
        }
        for (int id = from; id < n; id++) {
            if (id == steadyFrom && quietSplit && id > from) {
                quietSplit(id, r, updates, name);
                if (id > pacedFrom) {
                    pacedFrom = id; // the paced schedule starts again after the pause
                    pacedStart = 0;
                }
            }
            long due;
            if (id < pacedFrom) {
                due = start + (id - from) * rampNanos;
            } else {
                if (id == pacedFrom) {
                    boolean rampEnds = pacedStart == 0 && r.rampEndMs == 0;
                    pacedStart = System.nanoTime();
                    if (rampEnds) {
                        r.rampEndMs = System.currentTimeMillis();
                    }
                }
                due = pacedStart + (id - pacedFrom) * pacedNanos;
            }
            long wait = due - System.nanoTime();
            if (wait > 0) {
                TimeUnit.NANOSECONDS.sleep(wait);
            }
            if (id == steadyFrom && !quietSplit) {
                // the map's placement histogram so far: the end's minus this is the steady state's (rows from here on).
                // Not on this thread: a scrape of the workers took up to 1.3 s here, and the rows due meanwhile went
                // out in one burst when it returned (the steady state's first 130 rows, p99 488 ms to map-updates)
                placementBefore = CompletableFuture.supplyAsync(() -> {
                    try {
                        return placementBuckets(ClusterControl.scrapeTopology(name).samples());
                    } catch (Exception e) {
                        throw new CompletionException(e);
                    }
                });
            }
            long now = System.currentTimeMillis();
            r.publishedMs[id] = now;
            r.feedLateMs[id] = Math.max(0, (System.nanoTime() - due) / 1_000_000);
            long[] acked = r.ackedMs;
            int row = id;
            producer.send(new ProducerRecord<>(topic, null, now, Integer.toString(id), rows.row(id)),
                    (metadata, e) -> acked[row] = e == null ? System.currentTimeMillis() : -1);
            if (System.nanoTime() > nextSay) {
                nextSay += 10_000_000_000L;
                FrameLog.FrameStat last = frames.last();
                say("  %d rows published; map: frame %s, %s points, staleness %s, %d points in map-updates", id + 1,
                        last == null ? "-" : last.frame(), last == null ? "-" : last.points(),
                        last == null ? "-" : last.staleness(), updates.distinct());
            }
        }
        producer.flush();
        if (placementBefore != null) {
            try {
                r.placementBefore = placementBefore.get(60, TimeUnit.SECONDS);
            } catch (java.util.concurrent.ExecutionException e) {
                // the steady state's histograms are then not split from the ramp's; the run's own per-row figures stand
                say("  WARNING: the workers' metrics at the steady state's start could not be read (%s): their"
                        + " histograms are not split at it", e.getCause().getMessage());
            }
        }
        r.feedEndMs = System.currentTimeMillis();
        r.feedSeconds = (System.nanoTime() - start) / 1e9;
    }

    /**
     * The feed's pause at the steady state's first row: until every earlier row's point is on map-updates (at most
     * 30 s), then the workers' histograms are read, so that none of the earlier rows is counted in the steady state's
     * and none of its own in the earlier part.
     */
    private static void quietSplit(int id, Result r, MapUpdates updates, String name) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (updates.distinct() < id && System.nanoTime() - deadline < 0) {
            TimeUnit.MILLISECONDS.sleep(10);
        }
        say("  steady state from row %d: the feed paused until %d points were on map-updates; reading the workers'"
                + " histograms ...", id, updates.distinct());
        try {
            r.placementBefore = placementBuckets(ClusterControl.scrapeTopology(name).samples());
        } catch (Exception e) {
            say("  WARNING: the workers' metrics at the steady state's start could not be read (%s): their histograms"
                    + " are not split at it", e.getMessage());
        }
    }

    /** Whether a worker of the topology has a DA-PWC thread (the live map's clustering) running. */
    private static boolean pwcRunning(String name) {
        for (ProcessHandle worker : ClusterControl.workers(name)) {
            try (Stream<Path> tasks = Files.list(Path.of("/proc", Long.toString(worker.pid()), "task"))) {
                boolean any = tasks.anyMatch(t -> {
                    try {
                        return Files.readString(t.resolve("comm")).trim().equals(PWC_THREAD);
                    } catch (IOException gone) {
                        return false;
                    }
                });
                if (any) {
                    return true;
                }
            } catch (IOException gone) {
                // the worker exited
            }
        }
        return false;
    }

    /**
     * The current frame's points and clusters. A map still refining replaces frames while they are read (the writer
     * keeps the newest two): a frame gone under the reader is read again at the new current one.
     */
    private void readSnapshot(Path snapshots, Result r) throws IOException {
        for (int attempt = 1; ; attempt++) {
            try {
                readCurrentFrame(snapshots, r);
                return;
            } catch (java.nio.file.NoSuchFileException replaced) {
                if (attempt == 10) {
                    throw replaced;
                }
            }
        }
    }

    private void readCurrentFrame(Path snapshots, Result r) throws IOException {
        Path current = snapshots.resolve(SnapshotWriter.CURRENT).toRealPath(); // pin the frame: the link may move on
        r.points = new double[3 * n];
        r.labels = new int[n];
        java.util.Arrays.fill(r.labels, -1);
        java.util.Arrays.fill(r.points, Double.NaN);
        for (String line : Files.readAllLines(current.resolve(SnapshotWriter.POINTS_FILE), StandardCharsets.UTF_8)) {
            String[] f = line.split("\t");
            int id = Integer.parseInt(f[0]);
            for (int k = 0; k < 3; k++) {
                r.points[3 * id + k] = Double.parseDouble(f[k + 1]);
            }
        }
        for (String line : Files.readAllLines(current.resolve(SnapshotWriter.CLUSTERS_FILE), StandardCharsets.UTF_8)) {
            String[] f = line.split("\t");
            r.labels[Integer.parseInt(f[0])] = Integer.parseInt(f[1]);
        }
    }

    /** The first row of the steady state: past the first anneal and, on a large enough run, past 1000 points. */
    static int steadyFrom(int n, int initialPoints) {
        return Math.max(initialPoints, Math.min(STEADY_POINTS, n / 2));
    }

    static final int STEADY_POINTS = 1000;

    private static final String PLACEMENT = "meridian_map_placement_seconds";
    private static final String PLACEABLE = "meridian_map_placeable_seconds";
    private static final String NOTIFIED = "meridian_map_stored_notified_seconds";

    private static MetricSamples placementBuckets(MetricSamples all) {
        List<MetricSamples.Sample> buckets = new ArrayList<>(all.get(PLACEMENT + "_bucket", x -> true));
        buckets.addAll(all.get(PLACEABLE + "_bucket", x -> true));
        buckets.addAll(all.get(NOTIFIED + "_bucket", x -> true));
        return MetricSamples.of(buckets);
    }

    /** {count, p50 ms, p99 ms} of histogram {@code h} in {@code diff}. */
    private static double[] countAndQuantiles(MetricSamples diff, String h) {
        return new double[] {diff.sum(h + "_bucket", x -> x.label("le").equals("+Inf")),
            diff.quantile(h, 0.5, x -> true) * 1000, diff.quantile(h, 0.99, x -> true) * 1000};
    }

    /** The workers' metrics, scraped while the topology runs: row counts, the map's histograms and counters. */
    private static void readMetrics(String name, Result r) throws Exception {
        ClusterControl.TopologyMetrics metrics = null;
        for (int attempt = 1; metrics == null; attempt++) {
            try {
                // a worker at 100K points answered a scrape after up to 55 s while the machine was loaded
                metrics = ClusterControl.scrapeTopology(name, Duration.ofSeconds(90));
            } catch (java.io.UncheckedIOException e) {
                if (attempt == 3) {
                    throw e;
                }
                // a worker busy at 100K points has let a scrape time out (seen: 10 s connect timeouts)
                say("  the workers' metrics could not be read (%s): trying again", e.getMessage());
            }
        }
        MetricSamples samples = metrics.samples();
        if (r.placementBefore != null) {
            // stored -> frame of the rows placed in the steady state: this histogram minus the one at its start
            List<MetricSamples.Sample> steady = new ArrayList<>();
            for (MetricSamples.Sample end : placementBuckets(samples).all()) {
                double before = r.placementBefore.sum(end.name(), x -> x.labels().equals(end.labels()));
                steady.add(new MetricSamples.Sample(end.name(), end.labels(), end.value() - before));
            }
            MetricSamples diff = MetricSamples.of(steady);
            r.steadyPlacement = countAndQuantiles(diff, PLACEMENT);
            if (!diff.get(PLACEABLE + "_bucket", x -> true).isEmpty()) {
                r.steadyPlaceable = countAndQuantiles(diff, PLACEABLE);
            }
            if (!diff.get(NOTIFIED + "_bucket", x -> true).isEmpty()) {
                r.steadyNotified = countAndQuantiles(diff, NOTIFIED);
            }
        }
        r.counts = metrics.rowCounts();
        double first = Double.MAX_VALUE;
        List<Double> starts = new ArrayList<>();
        for (MetricSamples.Sample s : samples.get("process_start_time_seconds", x -> true)) {
            starts.add(s.value());
            first = Math.min(first, s.value());
        }
        for (double start : starts) {
            if (start > first + 90) {
                r.workersRestarted++; // a JVM started well after the others: the Supervisor restarted it
            }
        }
        for (MetricSamples.Sample s : samples.all()) {
            String metric = s.name();
            if (metric.startsWith("meridian_map_") && metric.endsWith("_seconds_count")) {
                String h = metric.substring(0, metric.length() - "_count".length());
                r.mapHistograms.put(h, new double[] {samples.sum(metric, x -> true),
                    samples.quantile(h, 0.5, x -> true) * 1000, samples.quantile(h, 0.99, x -> true) * 1000});
            } else if (metric.startsWith("meridian_map_") && metric.endsWith("_total")) {
                r.mapCounters.put(metric, Math.round(samples.sum(metric, x -> true)));
            }
        }
    }

    private static void deleteTopics(List<String> topics) {
        if (topics.isEmpty()) {
            return;
        }
        try (Admin admin = TopicSetup.admin(BROKERS)) {
            admin.deleteTopics(topics).all().get(15, TimeUnit.SECONDS);
        } catch (Exception e) {
            say("  WARNING: could not delete the topics %s: %s", topics, e.getMessage());
        }
    }

    private static java.util.concurrent.Future<?> publish(KafkaProducer<String, byte[]> producer, String topic, int id,
                                                          byte[] row, long nowMs) {
        return producer.send(new ProducerRecord<>(topic, null, nowMs, Integer.toString(id), row));
    }

    private static KafkaProducer<String, byte[]> producer() {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, BROKERS);
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        // the paced phase sends one row at a time: linger would only add to its latency; the ramp is short
        p.put(ProducerConfig.LINGER_MS_CONFIG, 0);
        p.put(ProducerConfig.BATCH_SIZE_CONFIG, 1 << 20);
        p.put(ProducerConfig.MAX_REQUEST_SIZE_CONFIG, 16 << 20);
        return new KafkaProducer<>(p, new StringSerializer(), new ByteArraySerializer());
    }

    private Path topologyJar() throws IOException {
        try (DirectoryStream<Path> jars = Files.newDirectoryStream(home.resolve("topology/target"),
                "meridian-topology-*-topology.jar")) {
            for (Path j : jars) {
                return j;
            }
        }
        throw new IllegalStateException("no topology jar in " + home.resolve("topology/target") + " (run ./meridian build)");
    }



}
