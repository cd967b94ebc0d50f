package io.meridian.perf.stream;

import static io.meridian.perf.Waits.say;

import io.meridian.collective.SingleProcessSync;
import io.meridian.config.CommandLine;
import io.meridian.config.MeridianConfig;
import io.meridian.config.UsageException;
import io.meridian.engine.BadInputException;
import io.meridian.matrix.DistanceSource;
import io.meridian.matrix.RowBlock;
import io.meridian.matrix.Weighting;
import io.meridian.mds.MdsJob;
import io.meridian.mds.MdsOptions;
import io.meridian.mds.MdsResult;
import io.meridian.perf.Benchmark;
import io.meridian.perf.Figures;
import io.meridian.pwc.Ari;
import io.meridian.pwc.PwcJob;
import io.meridian.pwc.PwcProgress;
import io.meridian.pwc.PwcResult;
import io.meridian.pwc.PwcSettings;
import io.meridian.shm.OwnerOnlyFiles;
import io.meridian.stream.row.RowFormat;
import io.meridian.synthetic.SyntheticDataset;
import io.meridian.topology.ClusterControl;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.ToDoubleFunction;

/**
 * {@code ./meridian bench stream}: the live map on the real single-host cluster (2 workers, 4 map tasks), fed rows of
 * a synthetic matrix from Kafka, once over Storm's Netty transport and once over the mmap transport. It measures
 * placement latency (row published to Kafka -> the point's first record on the map's Kafka topic, whose timestamp is
 * taken when the frame that placed it is published), the round time split (compute, collectives, placement), drift,
 * staleness, and the streamed map's quality against the batch engines on the same matrix: DA-MDS stress (ratio) and,
 * for blobs, the ARI of the streamed clustering against batch DA-PWC.
 */
public final class StreamBench implements Benchmark {
    /** A steady row whose point reached map-updates later than this after publication counts as slow. */
    private static final long SLOW_ROW_MS = 200;

    static final String NETTY = MeridianConfig.TopologySettings.NETTY;
    static final String MMAP = MeridianConfig.TopologySettings.MMAP;
    private static final int DIM = 8;
    private static final int CENTERS = 5;
    private static final double STD = 2.0;
    /**
     * Drift, staleness, round times and the "steady" latency count once the map has this many points, or half of N
     * when N is smaller (the first frames move a lot by design).
     */
    private static final int MAX_CLUSTERS = 8; // map.maxClusters' default; the batch DA-PWC gets the same

    @Override
    public String description() {
        return "the live map on the real cluster (Netty vs mmap): placement latency, round split, drift, staleness,"
                + " stress vs batch DA-MDS, ARI vs batch DA-PWC (--n 4000 --rate 100)";
    }

    @Override
    public String usage() {
        return """
                ./meridian bench stream [--n 4000] [--rate 100] [--ramp-rate 2000] [--initial-points 200]
                                        [--data uniform|blobs|both] [--transport netty|mmap|both] [--settle 120] [--seed 1]
                  --n N               points of each synthetic matrix (8-D; blobs: 5 centres, std 2), 300..8192
                  --rate R            rows/s once the map exists (the latency phase)
                  --ramp-rate R       rows/s for rows 0..initial-points-1, before the first anneal
                  --initial-points N0 map.initialPoints: rows stored before the first anneal
                  --data, --transport which data sets and transports to run (each pair is one topology run)
                  --settle S          at most S seconds for the map to settle after the last row
                Takes the cluster lock (/tmp/meridian-cluster.lock), starts the cluster if it is down and stops it
                afterwards only then; with the defaults the whole run takes about 8-10 minutes.""";
    }

    @Override
    public void run(String[] args) throws Exception {
        CommandLine cl = CommandLine.parse("bench stream", args,
                Set.of("n", "rate", "ramp-rate", "initial-points", "data", "transport", "settle", "seed"), Set.of());
        cl.requireNoPositional();
        int n = cl.intValue("n", 4000, 300, 8192);
        double rate = cl.doubleValue("rate", 100, 0, 100_000, true);
        double rampRate = cl.doubleValue("ramp-rate", 2000, 0, 100_000, true);
        int initialPoints = cl.intValue("initial-points", 200, 4, n / 2);
        String data = cl.choice("data", "both", "uniform", "blobs", "both");
        String transports = cl.choice("transport", "both", NETTY, MMAP, "both");
        int settle = cl.intValue("settle", 120, 5, 3600);
        long seed = cl.longValue("seed", 1, 0, Long.MAX_VALUE);
        List<String> kinds = data.equals("both") ? List.of("blobs", "uniform") : List.of(data);
        List<String> sides = transports.equals("both") ? List.of(NETTY, MMAP) : List.of(transports);

        long benchStart = System.nanoTime();
        Path home = Path.of(System.getenv().getOrDefault("MERIDIAN_HOME", ".")).toAbsolutePath().normalize();
        long stamp = System.currentTimeMillis();
        Path work = home.resolve(".meridian/bench/stream-" + stamp);
        Path shm = Path.of("/dev/shm/meridian-bench-stream-" + stamp);
        System.out.printf(Locale.ROOT, "stream benchmark: N = %d, rows 0..%d at %.0f rows/s (ramp), then %.0f rows/s;"
                        + " data %s; transports %s; %d workers, %d map tasks; %d cores, load average %.2f%n", n,
                initialPoints - 1, rampRate, rate, String.join(", ", kinds), String.join(", ", sides),
                LiveMapRun.WORKERS, LiveMapRun.MAP_TASKS, Runtime.getRuntime().availableProcessors(),
                ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
        System.out.println("work dir " + work + " and " + shm + " (both deleted at the end)");
        Figures figures = new Figures("stream").put("n", n).put("rate", rate).put("ramp_rate", rampRate)
                .put("initial_points", initialPoints).put("workers", LiveMapRun.WORKERS)
                .put("map_tasks", LiveMapRun.MAP_TASKS).put("cores", Runtime.getRuntime().availableProcessors());
        Map<String, Object> out = new LinkedHashMap<>();
        int failures = 0;
        double lockWait = 0;
        // Ctrl-C: the topology under way, the cluster if this run started it, the temp dirs (the lock goes with the JVM)
        Thread cleanup = new Thread(() -> interrupted(home, work, shm), "bench-stream-cleanup");
        Runtime.getRuntime().addShutdownHook(cleanup);
        try {
            Files.createDirectories(work);
            Files.createDirectories(shm);
            System.out.println("waiting for the cluster lock " + ClusterControl.LOCK + " ...");
            long lockStart = System.nanoTime();
            try (ClusterControl cluster = ClusterControl.acquire(home, work.resolve("cluster.log"), 1800)) {
                lockWait = (System.nanoTime() - lockStart) / 1e9;
                System.out.printf(Locale.ROOT, "got the lock after %.0f s%n", lockWait);
                // the batch baselines first, in this process, under the lock: no cluster user's timing is disturbed
                Map<String, DataSet> sets = new LinkedHashMap<>();
                for (String kind : kinds) {
                    sets.put(kind, DataSet.make(kind, n, seed, work.resolve("data-" + kind)));
                }
                if (clusterUp(home)) {
                    System.out.println("the cluster is running: using it (and leaving it running)");
                } else {
                    System.out.println("starting the cluster (./meridian cluster start) ...");
                    startedCluster = true;
                    cluster.start();
                }
                for (DataSet set : sets.values()) {
                    Map<String, Object> perData = new LinkedHashMap<>();
                    perData.put("batch", set.figures());
                    for (String side : sides) {
                        System.out.println();
                        System.out.printf(Locale.ROOT, "== %s data, %s transport ==%n", set.kind, side);
                        LiveMapRun run = new LiveMapRun(home, work, shm, set.kind + "-" + side + "-" + stamp % 100000,
                                side, n, initialPoints);
                        try {
                            // DA-PWC in the map is only waited for when its clusters are compared (blobs)
                            LiveMapRun.Result r = run.run(id -> set.rows[id], rampRate, rate, settle, true, set.pwc != null);
                            perData.put(side, analyse(r, set, n, initialPoints));
                        } catch (InterruptedException e) {
                            throw e;
                        } catch (Exception e) {
                            // the run's topology and topics are gone (LiveMapRun.run cleans up); the others still run
                            System.out.println("  FAILED: " + e);
                            perData.put(side, Map.of("error", String.valueOf(e.getMessage())));
                            failures++;
                        }
                    }
                    out.put(set.kind, perData);
                }
            }
            startedCluster = false; // stopped by ClusterControl.close()
        } finally {
            OwnerOnlyFiles.deleteTree(work);
            OwnerOnlyFiles.deleteTree(shm);
            Runtime.getRuntime().removeShutdownHook(cleanup);
        }
        figures.put("runs", out);
        summarize(out, kinds, sides, figures);
        double seconds = (System.nanoTime() - benchStart) / 1e9;
        System.out.printf(Locale.ROOT, "bench stream took %.0f s (%.0f s of it waiting for the cluster lock)%n", seconds,
                lockWait);
        figures.put("seconds", seconds);
        figures.put("lock_wait_seconds", lockWait);
        figures.put("failed_runs", failures);
        figures.print();
        if (failures > 0) {
            System.exit(1); // the JSON line says which runs failed and why
        }
    }

    private static volatile boolean startedCluster;

    private static void interrupted(Path home, Path work, Path shm) {
        try {
            String topology = LiveMapRun.active;
            if (topology != null) {
                System.err.println("bench stream: interrupted: killing " + topology);
                ClusterControl.killAndAwait(topology, Duration.ofSeconds(30), 0);
            }
            if (startedCluster) {
                System.err.println("bench stream: interrupted: stopping the cluster it started");
                new ProcessBuilder(home.resolve("deploy/bin/meridian-cluster").toString(), "stop").inheritIO().start()
                        .waitFor(180, TimeUnit.SECONDS);
            }
        } catch (Exception e) {
            System.err.println("bench stream: cleanup after an interrupt failed: " + e.getMessage());
        } finally {
            OwnerOnlyFiles.deleteTree(work);
            OwnerOnlyFiles.deleteTree(shm);
        }
    }

    static boolean clusterUp(Path home) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(home.resolve("deploy/bin/meridian-cluster").toString(), "status")
                .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        if (!p.waitFor(60, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            return false;
        }
        return p.exitValue() == 0;
    }

    /** A synthetic matrix, its encoded rows (row i: its first i entries), and the batch engines' results on it. */
    private static final class DataSet {
        String kind;
        Path matrix;
        int[] truth;
        byte[][] rows;
        RowBlock block;
        MdsResult mds;
        double mdsStress;
        PwcResult pwc;

        static DataSet make(String kind, int n, long seed, Path dir) throws IOException {
            DataSet d = new DataSet();
            d.kind = kind;
            SyntheticDataset s = kind.equals("blobs") ? SyntheticDataset.blobs(n, DIM, CENTERS, STD, seed)
                    : SyntheticDataset.uniform(n, DIM, seed);
            s.write(dir, ByteOrder.LITTLE_ENDIAN);
            d.matrix = dir.resolve(SyntheticDataset.DISTANCES_FILE);
            d.truth = new int[n];
            for (int i = 0; i < n; i++) {
                d.truth[i] = s.label(i);
            }
            d.block = RowBlock.mapAll(BadInputException.Input.DISTANCES, d.matrix, n, ByteOrder.LITTLE_ENDIAN);
            d.rows = new byte[n][];
            short[] buf = new short[n];
            for (int id = 0; id < n; id++) {
                d.block.copyRow(id, 0, id, buf, 0);
                d.rows[id] = RowFormat.encodeInt16(id, buf, 0, id, false);
            }
            System.out.printf(Locale.ROOT, "%s (%d-D%s), N = %d: batch DA-MDS ...%n", kind, DIM,
                    kind.equals("blobs") ? ", " + CENTERS + " centres, std " + STD : "", n);
            d.mds = MdsJob.run(DistanceSource.matrixFile(d.matrix, n, ByteOrder.LITTLE_ENDIAN), Weighting.unit(),
                    new MdsOptions().seed(seed), SingleProcessSync.INSTANCE, dir.resolve("mds"));
            d.mdsStress = stress(d.block, n, d.mds.points);
            System.out.printf(Locale.ROOT, "  batch DA-MDS: normalized stress %.6f (engine %.6f), %d temperature loops,"
                            + " %d SMACOF iterations, %.1f s%n", d.mdsStress, d.mds.normalizedStress,
                    d.mds.temperatureLoops, d.mds.smacofIterations, d.mds.seconds);
            if (kind.equals("blobs")) {
                d.pwc = PwcJob.run(DistanceSource.matrixFile(d.matrix, n, ByteOrder.LITTLE_ENDIAN),
                        PwcSettings.builder().maxClusters(MAX_CLUSTERS).build(), PwcProgress.NONE, dir.resolve("pwc"));
                System.out.printf(Locale.ROOT, "  batch DA-PWC: %d clusters, sizes %s, ARI against the blobs %.4f, %.1f s%n",
                        d.pwc.clusters(), Arrays.toString(d.pwc.sizes()), Ari.adjustedRandIndex(d.truth, d.pwc.labels()),
                        d.pwc.seconds());
            }
            return d;
        }

        Map<String, Object> figures() {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("mds_stress", mdsStress);
            m.put("mds_seconds", mds.seconds);
            m.put("mds_iterations", mds.smacofIterations);
            if (pwc != null) {
                m.put("pwc_clusters", pwc.clusters());
                m.put("pwc_ari_vs_truth", Ari.adjustedRandIndex(truth, pwc.labels()));
                m.put("pwc_seconds", pwc.seconds());
            }
            return m;
        }
    }

    /**
     * Normalized stress sum (delta - d)^2 / sum delta^2 over the pairs i &gt; j of the 16-bit matrix (delta = value /
     * 32767, missing entries skipped), for any layout: the same formula for the streamed and the batch map.
     */
    static double stress(RowBlock matrix, int n, double[] points) {
        short[] row = new short[n];
        double num = 0;
        double den = 0;
        for (int i = 1; i < n; i++) {
            matrix.copyRow(i, 0, i, row, 0);
            for (int j = 0; j < i; j++) {
                if (row[j] < 0) {
                    continue;
                }
                double delta = row[j] / 32767.0;
                double dx = points[3 * i] - points[3 * j];
                double dy = points[3 * i + 1] - points[3 * j + 1];
                double dz = points[3 * i + 2] - points[3 * j + 2];
                double e = delta - Math.sqrt(dx * dx + dy * dy + dz * dz);
                num += e * e;
                den += delta * delta;
            }
        }
        return den == 0 ? 0 : num / den;
    }

    private static Map<String, Object> analyse(LiveMapRun.Result r, DataSet set, int n, int initialPoints) {
        Map<String, Object> m = new LinkedHashMap<>();
        int steadyPoints = LiveMapRun.steadyFrom(n, initialPoints);
        m.put("steady_from_points", steadyPoints);
        // placement latency: row published -> its point's first record on the map topic (timestamped when the frame
        // that placed it was handed to Kafka); the rows fed at the paced rate, and those once the map is past 1000
        List<Long> placed = new ArrayList<>();
        List<Long> steady = new ArrayList<>();
        List<Long> arrived = new ArrayList<>();
        List<Long> toFrame = new ArrayList<>();
        int missing = 0;
        for (int id = initialPoints; id < n; id++) {
            if (r.frameOf[id] < 0) {
                missing++;
                continue;
            }
            long lat = r.frameRecordMs[id] - r.publishedMs[id];
            placed.add(lat);
            if (id >= steadyPoints) {
                steady.add(lat);
            }
            arrived.add(r.frameArrivedMs[id] - r.publishedMs[id]);
            FrameLog.FrameStat f = frameOf(r, r.frameOf[id]);
            if (f != null) {
                toFrame.add(f.publishedAtMs() - r.publishedMs[id]);
            }
        }
        double[] lat = quantiles(placed);
        double[] st = quantiles(steady);
        double[] arr = quantiles(arrived);
        double[] tf = quantiles(toFrame);
        say("placement latency (published -> first map-updates record, rows %d..%d): p50 %.0f ms, p99 %.0f ms, max %.0f ms"
                + " (%d points never seen)", initialPoints, n - 1, lat[0], lat[1], lat[2], missing);
        say("  rows %d..%d only: p50 %.0f ms, p99 %.0f ms; published -> frame's published_at_ms (%d of %d points whose"
                + " frame summary was seen): p50 %.0f ms, p99 %.0f ms; -> the bench's consumer: p50 %.0f ms, p99 %.0f ms",
                steadyPoints, n - 1, st[0], st[1], toFrame.size(), placed.size(), tf[0], tf[1],
                arr[0], arr[1]);
        StringBuilder byIds = new StringBuilder();
        int step = Math.max(1, (n - initialPoints + 5) / 6);
        for (int from = initialPoints; from < n; from += step) {
            List<Long> part = new ArrayList<>();
            for (int id = from; id < Math.min(n, from + step); id++) {
                if (r.frameOf[id] >= 0) {
                    part.add(r.frameRecordMs[id] - r.publishedMs[id]);
                }
            }
            double[] q = quantiles(part);
            byIds.append(String.format(Locale.ROOT, " %d..%d: %.0f/%.0f", from, Math.min(n, from + step) - 1, q[0], q[1]));
        }
        say("  p50/p99 ms by row id:%s", byIds);
        whereRowsWaited(r, steadyPoints, n, m);
        m.put("placement_latency_p50_ms", lat[0]);
        m.put("placement_latency_p99_ms", lat[1]);
        m.put("placement_latency_max_ms", lat[2]);
        m.put("placement_latency_steady_p50_ms", st[0]);
        m.put("placement_latency_steady_p99_ms", st[1]);
        m.put("published_to_frame_p50_ms", tf[0]);
        m.put("published_to_frame_p99_ms", tf[1]);
        m.put("published_to_consumer_p50_ms", arr[0]);
        m.put("published_to_consumer_p99_ms", arr[1]);
        m.put("points_never_seen", missing);
        if (r.counts != null) {
            say("  publish -> stored (row store histogram, whole run, bucket-interpolated): p50 %.1f ms, p99 %.1f ms (%d samples)",
                    r.counts.latencyP50Ms, r.counts.latencyP99Ms, r.counts.latencySamples);
            m.put("stored_p50_ms", r.counts.latencyP50Ms);
            m.put("stored_p99_ms", r.counts.latencyP99Ms);
            m.put("rows_stored", r.counts.stored);
            m.put("rows_rejected", r.counts.rejectedTotal());
        }
        double[] placement = r.mapHistograms.get("meridian_map_placement_seconds");
        if (placement != null) {
            say("  stored -> first published (on arrival or in a frame; the map's own histogram, whole run incl. the first"
                    + " anneal): p50 %.0f ms, p99 %.0f ms"
                    + " (%.0f samples; interpolated within histogram buckets)", placement[1], placement[2], placement[0]);
            m.put("stored_to_frame_p50_ms", placement[1]);
            m.put("stored_to_frame_p99_ms", placement[2]);
        }
        if (r.steadyPlacement != null) {
            say("  stored -> first published, steady state (rows %d..%d, the map's histogram since then): p50 %.1f ms, p99 %.1f ms"
                    + " (%.0f samples; goal p99 <= 100 ms)", LiveMapRun.steadyFrom(n, initialPoints), n - 1,
                    r.steadyPlacement[1], r.steadyPlacement[2], r.steadyPlacement[0]);
            m.put("stored_to_frame_steady_p50_ms", r.steadyPlacement[1]);
            m.put("stored_to_frame_steady_p99_ms", r.steadyPlacement[2]);
            if (r.steadyNotified != null) {
                say("    of the same rows, stored -> the map's task 0 notified (per notification; it places new points on arrival):"
                        + " p50 %.1f ms, p99 %.1f ms", r.steadyNotified[1], r.steadyNotified[2]);
                m.put("stored_to_notified_steady_p50_ms", r.steadyNotified[1]);
                m.put("stored_to_notified_steady_p99_ms", r.steadyNotified[2]);
            }
            if (r.steadyPlaceable != null) {
                // the rounds' map holds a prefix of the ids: a row stored before a lower id waits for it there
                say("    of the same rows, by the rounds alone: placeable (it and every lower id stored) -> their frame:"
                        + " p50 %.1f ms, p99 %.1f ms", r.steadyPlaceable[1], r.steadyPlaceable[2]);
                m.put("placeable_to_frame_steady_p50_ms", r.steadyPlaceable[1]);
                m.put("placeable_to_frame_steady_p99_ms", r.steadyPlaceable[2]);
            }
        }

        // rounds while rows came at the paced rate, map past 1000 points, no anneal in them
        List<FrameLog.FrameStat> paced = new ArrayList<>();
        List<FrameLog.FrameStat> bigAll = new ArrayList<>();
        int anneals = 0;
        double annealSeconds = 0;
        for (FrameLog.FrameStat f : r.frames) {
            if (f.annealed()) {
                anneals++;
                annealSeconds += f.roundSeconds();
            }
            if (f.points() >= steadyPoints) {
                bigAll.add(f);
                if (!f.annealed() && f.publishedAtMs() <= r.feedEndMs) {
                    paced.add(f);
                }
            }
        }
        double[] round = quantilesOf(paced, FrameLog.FrameStat::roundSeconds);
        double[] compute = quantilesOf(paced, FrameLog.FrameStat::computeSeconds);
        double[] collective = quantilesOf(paced, FrameLog.FrameStat::collectiveSeconds);
        double[] placeSecs = quantilesOf(paced, FrameLog.FrameStat::placementSeconds);
        double[] stale = quantilesOf(paced, f -> f.staleness());
        double[] perRound = quantilesOf(paced, f -> f.placed());
        double sumRound = paced.stream().mapToDouble(FrameLog.FrameStat::roundSeconds).sum();
        double sumCollective = paced.stream().mapToDouble(FrameLog.FrameStat::collectiveSeconds).sum();
        double sumPlacement = paced.stream().mapToDouble(FrameLog.FrameStat::placementSeconds).sum();
        say("rounds (%d frames seen of %d, %d missed; %d at N >= %d while fed, no anneal): round p50 %.0f ms (p99 %.0f),"
                        + " compute %.0f ms, collectives %.0f ms, placement %.1f ms (medians); collectives %.0f%% and"
                        + " placement %.1f%% of round time; %.0f points placed per round (median); %d anneals, %.1f s",
                r.frames.size(), r.lastFrame == null ? 0 : r.lastFrame.frame(), r.framesMissed, paced.size(), steadyPoints,
                round[0] * 1e3, round[1] * 1e3, compute[0] * 1e3, collective[0] * 1e3, placeSecs[0] * 1e3,
                100 * sumCollective / Math.max(1e-12, sumRound), 100 * sumPlacement / Math.max(1e-12, sumRound), perRound[0],
                anneals, annealSeconds);
        // a frame's cadence is its round plus what happens between rounds: publishing the previous frame (task 0
        // writes the snapshot files and the Kafka records before it starts the next round) and idle waits
        List<Double> intervals = new ArrayList<>();
        List<Double> between = new ArrayList<>();
        for (int k = 1; k < r.frames.size(); k++) {
            FrameLog.FrameStat a = r.frames.get(k - 1);
            FrameLog.FrameStat b = r.frames.get(k);
            if (b.frame() == a.frame() + 1 && paced.contains(b)) {
                intervals.add((double) (b.publishedAtMs() - a.publishedAtMs()));
                between.add(b.publishedAtMs() - a.publishedAtMs() - 1e3 * b.roundSeconds());
            }
        }
        double[] interval = quantiles(intervals.stream().mapToDouble(Double::doubleValue).toArray());
        double[] outside = quantiles(between.stream().mapToDouble(Double::doubleValue).toArray());
        say("  frame interval while fed: p50 %.0f ms, p99 %.0f ms; of which outside the round (publishing the previous"
                + " frame, idle): p50 %.0f ms, p99 %.0f ms", interval[0], interval[1], outside[0], outside[1]);
        m.put("frame_interval_p50_ms", interval[0]);
        m.put("frame_interval_outside_round_p50_ms", outside[0]);
        m.put("frames", r.lastFrame == null ? 0 : r.lastFrame.frame());
        m.put("frames_seen", r.frames.size());
        m.put("round_p50_ms", round[0] * 1e3);
        m.put("round_p99_ms", round[1] * 1e3);
        m.put("round_compute_p50_ms", compute[0] * 1e3);
        m.put("round_collective_p50_ms", collective[0] * 1e3);
        m.put("round_placement_p50_ms", placeSecs[0] * 1e3);
        m.put("round_collective_share", sumCollective / Math.max(1e-12, sumRound));
        m.put("round_placement_share", sumPlacement / Math.max(1e-12, sumRound));
        m.put("anneals", anneals);
        m.put("anneal_seconds", annealSeconds);
        // the map's own staleness (stored rows not in the map when the round began) is 0 whenever rows come in id
        // order, since a round takes every stored row; the backlog counts rows published by the time the frame was
        // published that it does not hold yet: what a reader of the frame misses
        double[] backlog = quantilesOf(paced, f -> published(r.publishedMs, f.publishedAtMs()) - f.points());
        say("staleness while fed (N >= %d): the map's own (stored, not in the round) median %.0f, max %.0f rows;"
                + " backlog (published, not in the frame) median %.0f, p99 %.0f, max %.0f rows", steadyPoints, stale[0],
                stale[2], backlog[0], backlog[1], backlog[2]);
        m.put("staleness_p50", stale[0]);
        m.put("staleness_max", stale[2]);
        m.put("backlog_p50", backlog[0]);
        m.put("backlog_p99", backlog[1]);
        m.put("backlog_max", backlog[2]);

        double[] drift = quantilesOf(bigAll, FrameLog.FrameStat::drift);
        List<FrameLog.FrameStat> bigRefined = bigAll.stream().filter(f -> !f.annealed()).toList();
        double[] driftRefined = quantilesOf(bigRefined, FrameLog.FrameStat::drift);
        FrameLog.FrameStat worst = bigAll.stream().max(Comparator.comparingDouble(FrameLog.FrameStat::drift)).orElse(null);
        say("drift per frame at N >= %d (%d frames): median %.3g%%, max %.3g%%%s; without anneal frames: median %.3g%%,"
                        + " max %.3g%%", steadyPoints, bigAll.size(), 100 * drift[0], 100 * drift[2],
                worst == null ? "" : String.format(Locale.ROOT, " (frame %d, N = %d%s)", worst.frame(), worst.points(),
                        worst.annealed() ? ", annealed" : ""), 100 * driftRefined[0], 100 * driftRefined[2]);
        // the frames behind the maximum, with what came just before them (an anneal, a placement, a polish)
        List<FrameLog.FrameStat> steepest = bigRefined.stream()
                .sorted(Comparator.comparingDouble(FrameLog.FrameStat::drift).reversed()).limit(3).toList();
        for (FrameLog.FrameStat f : steepest) {
            FrameLog.FrameStat before = r.frames.stream().filter(p -> p.frame() < f.frame())
                    .max(Comparator.comparingLong(FrameLog.FrameStat::frame)).orElse(null);
            say("  drift %.3g%% at frame %d: N = %d, %d placed, %d iterations, stress %.6g%s", 100 * f.drift(),
                    f.frame(), f.points(), f.placed(), f.iterations(), f.stress(), before == null ? ""
                            : String.format(Locale.ROOT, "; seen before it: frame %d (N = %d, %d placed, %d iterations,"
                                    + " stress %.6g%s)", before.frame(), before.points(), before.placed(),
                                    before.iterations(), before.stress(), before.annealed() ? ", annealed" : ""));
        }
        m.put("drift_median", drift[0]);
        m.put("drift_max", drift[2]);
        m.put("drift_max_without_anneals", driftRefined[2]);

        double liveStress = stress(set.block, n, r.points);
        double ratio = liveStress / set.mdsStress;
        say("final map (frame %s, %s points, settled %b after %.1f s): stress %.6f (map's own %.6f) vs batch DA-MDS"
                        + " %.6f: ratio %.4f (goal <= 1.01)", r.lastFrame == null ? "-" : r.lastFrame.frame(),
                r.lastFrame == null ? "-" : r.lastFrame.points(), r.settled, r.settleSeconds, liveStress,
                r.lastFrame == null ? Double.NaN : r.lastFrame.stress(), set.mdsStress, ratio);
        m.put("settled", r.settled);
        m.put("settle_seconds", r.settleSeconds);
        m.put("stress", liveStress);
        m.put("stress_ratio", ratio);
        int clusters = (int) Arrays.stream(r.labels).filter(l -> l >= 0).distinct().count();
        m.put("clusters", clusters);
        if (set.pwc != null) {
            double ari = Ari.adjustedRandIndex(set.pwc.labels(), r.labels);
            double truthAri = Ari.adjustedRandIndex(set.truth, r.labels);
            say("streamed clustering: %d clusters, ARI vs batch DA-PWC %.4f (goal >= 0.98), vs the blobs %.4f", clusters,
                    ari, truthAri);
            m.put("ari_vs_batch", ari);
            m.put("ari_vs_truth", truthAri);
        }
        if (r.workersRestarted > 0) {
            say("  WARNING: %d of %d workers restarted during the run", r.workersRestarted, LiveMapRun.WORKERS);
        }
        m.put("workers_restarted", r.workersRestarted);
        m.put("feed_seconds", r.feedSeconds);
        return m;
    }

    @SuppressWarnings("unchecked")
    private static void summarize(Map<String, Object> out, List<String> kinds, List<String> sides, Figures figures) {
        System.out.println();
        System.out.println("summary (baseline: batch engines for quality, Netty for transport):");
        Map<String, Object> goals = new LinkedHashMap<>();
        for (String kind : kinds) {
            Map<String, Object> perData = (Map<String, Object>) out.get(kind);
            if (perData == null) {
                continue;
            }
            for (String side : sides) {
                Map<String, Object> m = (Map<String, Object>) perData.get(side);
                if (m == null || m.containsKey("error")) {
                    continue;
                }
                System.out.printf(Locale.ROOT, "  %-7s %-5s placement p50 %6.0f ms p99 %6.0f ms | round %5.0f ms"
                                + " (collectives %4.1f%%) | drift max %.3g%% | backlog %3.0f | stress ratio %.4f%s%n",
                        kind, side, m.get("placement_latency_p50_ms"), m.get("placement_latency_p99_ms"), m.get("round_p50_ms"),
                        100 * (double) m.get("round_collective_share"), 100 * (double) m.get("drift_max"),
                        m.get("backlog_p50"), m.get("stress_ratio"),
                        m.containsKey("ari_vs_batch") ? String.format(Locale.ROOT, " | ARI vs batch %.4f", m.get("ari_vs_batch")) : "");
                goals.put(kind + "_" + side + "_stress_ratio_ok", (double) m.get("stress_ratio") <= 1.01);
                if (m.containsKey("ari_vs_batch")) {
                    goals.put(kind + "_" + side + "_ari_ok", (double) m.get("ari_vs_batch") >= 0.98);
                }
            }
            Map<String, Object> netty = (Map<String, Object>) perData.get(NETTY);
            Map<String, Object> mmap = (Map<String, Object>) perData.get(MMAP);
            if (netty != null && mmap != null && !netty.containsKey("error") && !mmap.containsKey("error")) {
                double r50 = (double) mmap.get("placement_latency_p50_ms") / (double) netty.get("placement_latency_p50_ms");
                double r99 = (double) mmap.get("placement_latency_p99_ms") / (double) netty.get("placement_latency_p99_ms");
                System.out.printf(Locale.ROOT, "  %-7s mmap/netty placement latency: p50 %.2fx, p99 %.2fx%n", kind, r50, r99);
                perData.put("mmap_over_netty_p50", r50);
                perData.put("mmap_over_netty_p99", r99);
            }
        }
        figures.put("goals", goals);
    }

    /** Rows published at or before {@code ms} (publish times ascend with the id: rows go out in id order). */
    /**
     * Where the steady rows that reached map-updates late lost their time: in the feeder (published behind its
     * schedule, so rows went out in a burst), before the broker had them (publish -> acknowledged), or in the topology
     * and the map (the rest).
     */
    private static void whereRowsWaited(LiveMapRun.Result r, int from, int n, Map<String, Object> m) {
        List<Long> late = new ArrayList<>();
        List<Long> acked = new ArrayList<>();
        int slow = 0;
        int slowAcked = 0;
        int slowFedLate = 0;
        List<Integer> worst = new ArrayList<>();
        for (int id = from; id < n; id++) {
            late.add(r.feedLateMs[id]);
            long ack = r.ackedMs[id] > 0 ? r.ackedMs[id] - r.publishedMs[id] : -1;
            if (ack >= 0) {
                acked.add(ack);
            }
            if (r.frameOf[id] >= 0 && r.frameRecordMs[id] - r.publishedMs[id] > SLOW_ROW_MS) {
                slow++;
                slowAcked += ack > SLOW_ROW_MS / 2 ? 1 : 0;
                slowFedLate += r.feedLateMs[id] > SLOW_ROW_MS / 2 ? 1 : 0;
                worst.add(id);
            }
        }
        worst.sort((a, b) -> Long.compare(r.frameRecordMs[b] - r.publishedMs[b], r.frameRecordMs[a] - r.publishedMs[a]));
        double[] lq = quantiles(late);
        double[] aq = quantiles(acked);
        say("  rows %d..%d: fed behind schedule p50 %.0f ms, p99 %.0f ms, max %.0f ms; published -> acknowledged by the"
                + " broker p50 %.0f ms, p99 %.0f ms, max %.0f ms", from, n - 1, lq[0], lq[1], lq[2], aq[0], aq[1], aq[2]);
        StringBuilder w = new StringBuilder();
        for (int i = 0; i < Math.min(5, worst.size()); i++) {
            int id = worst.get(i);
            w.append(String.format(Locale.ROOT, " %d (fed %d ms late, acked %d ms, shown %d ms)", id, r.feedLateMs[id],
                    r.ackedMs[id] > 0 ? r.ackedMs[id] - r.publishedMs[id] : -1, r.frameRecordMs[id] - r.publishedMs[id]));
        }
        say("  %d of them reached map-updates more than %d ms after publication: %d acknowledged by the broker more than"
                + " %d ms after, %d fed more than %d ms late; the slowest:%s", slow, SLOW_ROW_MS, slowAcked,
                SLOW_ROW_MS / 2, slowFedLate, SLOW_ROW_MS / 2, w);
        m.put("feed_late_p99_ms", lq[1]);
        m.put("published_to_acked_p50_ms", aq[0]);
        m.put("published_to_acked_p99_ms", aq[1]);
        m.put("slow_rows", slow);
        m.put("slow_rows_acked_late", slowAcked);
        m.put("slow_rows_fed_late", slowFedLate);
    }

    private static int published(long[] publishedMs, long ms) {
        int lo = 0;
        int hi = publishedMs.length;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (publishedMs[mid] <= ms) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return lo;
    }

    private static FrameLog.FrameStat frameOf(LiveMapRun.Result r, long frame) {
        // r.frames is sorted by frame number
        int lo = 0;
        int hi = r.frames.size() - 1;
        while (lo <= hi) {
            int mid = (lo + hi) >>> 1;
            long f = r.frames.get(mid).frame();
            if (f == frame) {
                return r.frames.get(mid);
            } else if (f < frame) {
                lo = mid + 1;
            } else {
                hi = mid - 1;
            }
        }
        return null;
    }

    /** {p50, p99, max} of the values (nearest rank), NaN when there are none. */
    static double[] quantiles(List<Long> values) {
        double[] v = values.stream().mapToDouble(Long::doubleValue).toArray();
        return quantiles(v);
    }

    static <T> double[] quantilesOf(List<T> items, ToDoubleFunction<T> f) {
        return quantiles(items.stream().mapToDouble(f).filter(Double::isFinite).toArray());
    }

    static double[] quantiles(double[] v) {
        if (v.length == 0) {
            return new double[] {Double.NaN, Double.NaN, Double.NaN};
        }
        double[] s = v.clone();
        Arrays.sort(s);
        return new double[] {rank(s, 0.50), rank(s, 0.99), s[s.length - 1]};
    }

    private static double rank(double[] sorted, double q) {
        int k = (int) Math.ceil(q * sorted.length) - 1;
        return sorted[Math.max(0, Math.min(sorted.length - 1, k))];
    }

}
