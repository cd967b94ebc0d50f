package io.meridian.perf.soak;

import io.meridian.perf.Waits;
import io.meridian.config.CommandLine;
import io.meridian.config.MeridianConfig;
import io.meridian.config.UsageException;
import io.meridian.perf.Benchmark;
import io.meridian.perf.Figures;
import io.meridian.perf.ProcCpu;
import io.meridian.perf.ingest.IngestRun;
import io.meridian.perf.ingest.RowUniverse;
import io.meridian.shm.OwnerOnlyFiles;
import io.meridian.topology.ClusterControl;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.ToDoubleFunction;

/**
 * {@code ./meridian bench soak}: the topology with the live map on, on the real single-host cluster, fed at 80 % of the
 * sustained ingest rate for {@code --minutes}, sampled every {@code --minutes} x 2 s (every minute of a 30-minute run):
 * each JVM's RSS, heap after GC, threads, open files and mappings, the run's /dev/shm files, the disk, the map's
 * placement histogram. The goals ({@link SoakTrend}) and the accounting ({@link SoakRun.Accounting}) are checked at the
 * end; the JSON line is printed and written with a PNG of the samples next to it. Exit 1 when a goal is missed.
 */
public final class SoakBench implements Benchmark {
    /** The soak's rate: this share of the sustained rate {@code bench ingest} measures. */
    static final double SHARE_OF_SUSTAINED = 0.8;

    @Override
    public String description() {
        return "the live map on the real cluster at 80 % of the sustained ingest rate for --minutes (30): RSS, heap"
                + " after GC, threads, files, mappings, /dev/shm and disk sampled over time; trend, placement p99 and"
                + " accounting goals; JSON + PNG";
    }

    @Override
    public String usage() {
        return """
                ./meridian bench soak [--minutes 30] [--rate R] [--n 3000] [--initial-points 200] [--late-points P]
                                      [--sample-seconds S] [--drain 180] [--out DIR]
                  --minutes M       how long rows stream (the trend windows scale with it: warm-up M/6, early M/6..M/3,
                                    late the last M/6); CI runs 3
                  --rate R          records/s (default: 80 % of the sustained rate a short bench ingest measures first,
                                    in the same run: about 2 minutes more)
                  --n N             points: all but --late-points (N/10) in the first half of the warm-up (the first
                                    --initial-points at once), the late ones evenly over the rest of the run; between
                                    them, replays of points already sent, and every 1000th record a malformed one
                  --sample-seconds S  between samples (default M x 2: 30 samples)
                  --drain S         at most S seconds after the feed for every row to be stored or dead-lettered (180)
                  --out DIR         where soak-TIME.json and soak-TIME.png go (.meridian/bench)
                Takes the cluster lock (/tmp/meridian-cluster.lock), starts the cluster and stops it afterwards. Before
                the warm-up ends it fills ZooKeeper's committed-proposal cache (its last 500 transactions) with writes
                of the cluster's mean size, so that its live heap is compared full in both windows
                (docs/reliability.md, Soak).""";
    }

    @Override
    public void run(String[] args) throws Exception {
        CommandLine cl = CommandLine.parse("bench soak", args,
                Set.of("minutes", "rate", "n", "initial-points", "late-points", "sample-seconds", "drain", "out",
                        "seed"),
                Set.of());
        cl.requireNoPositional();
        double minutes = cl.doubleValue("minutes", 30, 1, 24 * 60, false);
        double rate = cl.doubleValue("rate", 0, 0, 1e6, true);
        int n = cl.intValue("n", 3000, 300, 20_000);
        int initial = cl.intValue("initial-points", 200, 4, n / 2);
        int late = cl.intValue("late-points", n / 10, 1, n - initial);
        double sampleSeconds = cl.doubleValue("sample-seconds", Math.max(2, minutes * 2), 1, 3600, false);
        if (sampleSeconds * 6 > minutes * 60) {
            throw new UsageException("--sample-seconds " + sampleSeconds + " leaves fewer than 6 samples in "
                    + minutes + " minutes: each trend window needs at least one");
        }
        int drain = cl.intValue("drain", 180, 10, 3600);
        long seed = cl.longValue("seed", 1, 0, Long.MAX_VALUE);
        Path home = Path.of(System.getenv().getOrDefault("MERIDIAN_HOME", ".")).toAbsolutePath().normalize();
        Path out = cl.has("out") ? cl.outputDirectory("out") : home.resolve(".meridian/bench");
        Figures figures = soak(home, out,
                new SoakRun.Options(n, rate, minutes, sampleSeconds, initial, late, drain, seed));
        figures.print();
        if (!Boolean.TRUE.equals(figures.get("goals_met"))) {
            System.exit(1); // the JSON line says which goal was missed
        }
    }

    /** The whole soak (the ingest measurement first when no rate is given); the figures hold goals and paths. */
    static Figures soak(Path home, Path out, SoakRun.Options asked) throws Exception {
        long stamp = System.currentTimeMillis();
        Path work = home.resolve(".meridian/bench/soak-" + stamp);
        Path shm = Path.of("/dev/shm/meridian-soak-" + stamp);
        Figures figures = new Figures("soak");
        Files.createDirectories(out);
        SoakRun.Options options = asked;
        try {
            Files.createDirectories(work);
            if (asked.rate() <= 0) {
                double sustained = sustainedIngestRate(home, work, asked.n());
                figures.put("ingest_sustained_rows_per_sec", sustained);
                options = new SoakRun.Options(asked.n(), Math.floor(SHARE_OF_SUSTAINED * sustained), asked.minutes(),
                        asked.sampleSeconds(), asked.initialPoints(), asked.latePoints(), asked.drainSeconds(),
                        asked.seed());
            }
            options = fitToDisk(home, options, figures);
            Waits.say("soak: %.1f minutes at %.0f records/s (%d points, the first %d at once, the last %d after the"
                            + " warm-up; a malformed record every %d), a sample every %.0f s; %d cores, load average"
                            + " %.2f; work dir %s and %s", options.minutes(), options.rate(), options.n(),
                    options.initialPoints(), options.latePoints(), SoakFeeder.BAD_EVERY,
                    options.sampleSeconds(), Runtime.getRuntime().availableProcessors(), ProcCpu.loadAverage(), work,
                    shm);
            figures.put("minutes", options.minutes()).put("rate", options.rate()).put("n", options.n())
                    .put("initial_points", options.initialPoints()).put("late_points", options.latePoints())
                    .put("sample_seconds", options.sampleSeconds()).put("load_average_start", ProcCpu.loadAverage());
            SoakRun.Result result;
            Waits.say("waiting for the cluster lock %s ...", ClusterControl.LOCK);
            try (ClusterControl cluster = ClusterControl.acquire(home, work.resolve("cluster.log"), 3600)) {
                Waits.say("starting the cluster (./meridian cluster start) ...");
                cluster.start();
                result = new SoakRun(home, work, shm, options, stamp).run(cluster);
            }
            figures.put("load_average_end", ProcCpu.loadAverage());
            judge(result, options, figures);
            Path json = out.resolve("soak-" + stamp + ".json");
            Path png = out.resolve("soak-" + stamp + ".png");
            SoakPlot.write(png, result.samples(), new SoakTrend(result.samples(), result.feedSeconds()),
                    String.format(Locale.ROOT, "bench soak: %.1f min at %.0f records/s, N = %d (shaded: early and late"
                            + " windows)", options.minutes(), options.rate(), options.n()));
            figures.put("plot", png.toString()).put("json", json.toString());
            Files.writeString(json, figures.toJson() + "\n", StandardCharsets.UTF_8);
            Waits.say("wrote %s and %s", json, png);
        } finally {
            OwnerOnlyFiles.deleteTree(work);
            OwnerOnlyFiles.deleteTree(shm);
        }
        return figures;
    }

    /**
     * The rate capped so that the run's rows fit in a quarter of the space free where the cluster's Kafka keeps its
     * log (the topic keeps every record for the accounting). 80 % of the sustained rate measured here (102,000-106,000
     * replays/s of 3 KB rows read from a filled topic) would write 46 GB in 3 minutes and 460 GB in 30.
     */
    private static SoakRun.Options fitToDisk(Path home, SoakRun.Options o, Figures figures) throws java.io.IOException {
        double rowBytes = RowUniverse.random(Math.min(o.n(), 500), 1).meanRowBytes() * o.n() / Math.min(o.n(), 500);
        long free = Files.getFileStore(Files.createDirectories(home.resolve(".meridian"))).getUsableSpace();
        double fits = free / 4.0 / (rowBytes * o.minutes() * 60);
        if (o.rate() <= fits) {
            return o;
        }
        Waits.say("capping the rate at %.0f records/s: %.0f records/s of %.1f KB rows for %.1f minutes would write"
                        + " %.1f GB to Kafka, more than a quarter of the %.1f GB free", Math.floor(fits), o.rate(),
                rowBytes / 1e3, o.minutes(), o.rate() * rowBytes * o.minutes() * 60 / 1e9, free / 1e9);
        figures.put("rate_asked", o.rate()).put("rate_capped_by_disk", true);
        return new SoakRun.Options(o.n(), Math.floor(fits), o.minutes(), o.sampleSeconds(), o.initialPoints(),
                o.latePoints(), o.drainSeconds(), o.seed());
    }

    /** A short {@code bench ingest --part sustained} (10 s warm-up, 20 s window) on the soak's point universe. */
    private static double sustainedIngestRate(Path home, Path work, int n) throws Exception {
        Waits.say("measuring the sustained ingest rate first (bench ingest --part sustained --n %d --seconds 20"
                + " --warmup 10 --chunk-gb 2) ...", n);
        Figures ingest = new Figures("ingest");
        IngestRun.Options o = new IngestRun.Options(n, 0, 20, 10, 0, "sustained", 2_000_000_000L,
                MeridianConfig.TopologySettings.MMAP, 5000, 512, List.of(), null);
        Files.createDirectories(work.resolve("ingest"));
        new IngestRun(home, work.resolve("ingest"), o, RowUniverse.random(n, 5), ingest).run();
        Object rate = ingest.get("rowsPerSec");
        if (!(rate instanceof Number r) || !(r.doubleValue() > 0)) {
            throw new IllegalStateException("bench ingest measured no sustained rate (" + ingest.toJson() + ")");
        }
        Waits.say("sustained ingest: %.0f rows/s; the soak streams at %.0f %% of it", r.doubleValue(),
                100 * SHARE_OF_SUSTAINED);
        return r.doubleValue();
    }

    /** The goals, each with its measured values, into {@code figures}; goals_met when every one is. */
    static void judge(SoakRun.Result r, SoakRun.Options options, Figures figures) {
        SoakTrend trend = new SoakTrend(r.samples(), r.feedSeconds());
        Map<String, Object> goals = new LinkedHashMap<>();
        Map<String, Object> jvms = new LinkedHashMap<>();
        TreeSet<String> names = new TreeSet<>();
        r.samples().forEach(s -> names.addAll(s.jvms().keySet()));
        boolean memory = true;
        boolean flat = true;
        for (String jvm : names) {
            Map<String, Object> m = new LinkedHashMap<>();
            ToDoubleFunction<SoakSample> rss = proc(jvm, p -> p.rssBytes());
            ToDoubleFunction<SoakSample> heap = s -> s.jvms().containsKey(jvm)
                    ? s.jvms().get(jvm).heapAfterGcBytes() : Double.NaN;
            m.put("rss_early_mb", trend.early(rss) / 1e6);
            m.put("rss_late_mb", trend.late(rss) / 1e6);
            m.put("rss_median_growth", trend.growth(rss));
            m.put("rss_growth_between_full_collections", trend.growthBetweenFullCollections(rss));
            m.put("heap_after_gc_early_mb", trend.early(heap) / 1e6);
            m.put("heap_after_gc_late_mb", trend.late(heap) / 1e6);
            m.put("heap_after_gc_median_growth", trend.growth(heap));
            m.put("live_heap_growth", trend.growthBetweenFullCollections(heap));
            if (r.liveHeapGrowthByClass().containsKey(jvm)) {
                m.put("live_heap_growth_by_class", r.liveHeapGrowthByClass().get(jvm));
            }
            if (r.committedProposals().containsKey(jvm)) {
                // ZooKeeper's committed-proposal cache at each full collection: full (its capacity) in both windows
                // when the priming worked, so its bytes are the steady state's (CommitLogPrimer)
                m.put("committed_proposals_early", r.committedProposals().get(jvm).get(0));
                m.put("committed_proposals_late", r.committedProposals().get(jvm).get(1));
            }
            if (r.mappingsGrowth().containsKey(jvm)) {
                m.put("mappings_growth_by_file", r.mappingsGrowth().get(jvm));
                m.put("open_files_growth_by_file", r.openFilesGrowth().get(jvm));
            }
            for (String measure : List.of("threads", "open_files", "mappings")) {
                ToDoubleFunction<SoakSample> f = proc(jvm, measure.equals("threads") ? ProcStats::threads
                        : measure.equals("open_files") ? ProcStats::openFiles : ProcStats::mappings);
                m.put(measure + "_early", trend.early(f));
                m.put(measure + "_late", trend.late(f));
                if (jvm.startsWith("worker")) {
                    flat &= trend.flat(f, measure.equals("threads") ? 0 : trend.storeFileAllowance());
                }
            }
            // memory binds every JVM, the daemons' too (their heaps are whole and touched from their start:
            // meridian-cluster's daemon_heap); threads, files and mappings bind the workers, since Kafka maps each
            // log segment it keeps (226 -> 254 in a 30-minute run), up to its retention
            // RSS too right after the full collections: the one at the warm-up's end shrinks the heap (G1 gives
            // pages back), which then grows again; by the medians that read as +39 % and +52 % in a 3-minute run
            boolean held = trend.growthBetweenFullCollections(rss) < SoakTrend.MAX_GROWTH
                    && trend.growthBetweenFullCollections(heap) < SoakTrend.MAX_GROWTH;
            m.put("memory_flat", held);
            memory &= held;
            jvms.put(jvm, m);
        }
        goals.put("memory_flat", memory);
        goals.put("threads_files_mappings_flat", flat);
        ToDoubleFunction<SoakSample> shmFiles = SoakSample::shmFiles;
        boolean swept = trend.flat(shmFiles);
        goals.put("queues_and_regions_swept", swept);
        double earlyP99 = trend.placementQuantile(0.99, trend.earlyFrom(), trend.earlyTo());
        double lateP99 = trend.placementQuantile(0.99, trend.lateFrom(), Double.MAX_VALUE);
        boolean placement = lateP99 <= SoakTrend.P99_SLACK * earlyP99;
        goals.put("placement_p99_held", placement);
        boolean accounted = r.accounting().holds();
        goals.put("accounting_exact", accounted);
        boolean noRestart = r.workersSeen() == SoakRun.WORKERS;
        goals.put("no_worker_restarted", noRestart);
        boolean all = memory && flat && swept && placement && accounted && noRestart;

        Map<String, Object> place = new LinkedHashMap<>();
        place.put("early_p99_ms", earlyP99 * 1e3);
        place.put("late_p99_ms", lateP99 * 1e3);
        place.put("early_p50_ms", trend.placementQuantile(0.5, trend.earlyFrom(), trend.earlyTo()) * 1e3);
        place.put("late_p50_ms", trend.placementQuantile(0.5, trend.lateFrom(), Double.MAX_VALUE) * 1e3);
        place.put("early_placements", trend.placements(trend.earlyFrom(), trend.earlyTo()));
        place.put("late_placements", trend.placements(trend.lateFrom(), Double.MAX_VALUE));
        Map<String, Object> shm = new LinkedHashMap<>();
        shm.put("run_files_early", trend.early(shmFiles));
        shm.put("run_files_late", trend.late(shmFiles));
        shm.put("run_mb_early", trend.early(SoakSample::shmBytes) / 1e6);
        shm.put("run_mb_late", trend.late(SoakSample::shmBytes) / 1e6);
        shm.put("dev_shm_used_mb_late", trend.late(SoakSample::devShmUsedBytes) / 1e6);
        shm.put("row_stores_mb_late", trend.late(SoakSample::storeBytes) / 1e6);
        shm.put("row_store_files_early", trend.early(SoakSample::storeFiles));
        shm.put("row_store_files_late", trend.late(SoakSample::storeFiles));
        shm.put("disk_used_gb_late", trend.late(SoakSample::diskUsedBytes) / 1e9);

        figures.put("topology", r.name()).put("samples", r.samples().size()).put("feed_seconds", r.feedSeconds())
                .put("workers_seen", r.workersSeen()).put("jvms", jvms).put("placement", place)
                .put("shm_and_disk", shm).put("accounting", SoakRun.json(r.accounting()))
                .put("zookeeper_priming", r.zookeeperPriming())
                .put("rule", SoakTrend.RULE).put("goals", goals).put("goals_met", all);
        Waits.say("goals: %s", goals);
        jvms.forEach((jvm, m) -> {
            @SuppressWarnings("unchecked")
            Map<String, Object> d = (Map<String, Object>) m;
            Waits.say("  %s: live heap %+.1f %%, RSS %+.1f %% between the full collections%s", jvm,
                    100 * (double) d.get("live_heap_growth"), 100 * (double) d.get("rss_growth_between_full_collections"),
                    Boolean.TRUE.equals(d.get("memory_flat")) ? "" : " (memory_flat fails here)");
        });
    }

    private static ToDoubleFunction<SoakSample> proc(String jvm, ToDoubleFunction<ProcStats> f) {
        return s -> {
            SoakSample.Jvm j = s.jvms().get(jvm);
            return j == null || j.proc() == null ? Double.NaN : f.applyAsDouble(j.proc());
        };
    }
}
