package io.meridian.perf.stream;

import static io.meridian.perf.Waits.say;

import io.meridian.live.Frame;
import io.meridian.live.SnapshotWriter;
import io.meridian.perf.Figures;
import io.meridian.perf.ScaleRows;
import io.meridian.shm.OwnerOnlyFiles;
import io.meridian.topology.ClusterControl;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * {@code bench scale --part published}: a row published to Kafka -> its point on the map's topic, on the real cluster
 * at N points, rows streaming at {@value #RATE} rows/s. The topology is the one users submit (Kafka spout, validation,
 * row stores, the live-map bolts; 2 workers, the map's tasks = cores); rows {@code 0 .. N-M-1} are in its row stores
 * before it starts (as {@code bench scale} stores them, {@link ScaleRows}) and a frame of them (their principal axes)
 * in the snapshot directory its {@code map.resumeFrom} names, so the map resumes at N - M points rather than annealing
 * them for an hour; then the last M rows go through Kafka. Per row: published -> its point's first record on
 * map-updates (the arrival placer's or a frame's), and the workers' own histograms
 * {@code meridian_map_published_to_frame_seconds} and {@code meridian_map_placement_seconds} (stored -> first shown).
 */
public final class ScalePublished {
    static final double RATE = 50;
    /**
     * The feed's first rows, left out of the steady-state figures: the prefilled rows never took the ingest path
     * (Kafka spout, validation, the stores' writes, the map-updates producer), so its first rows run it cold. A stream
     * that has been running has it warm: at N = 100,000 the first rows of the feed were its 5 slowest, shown 1.6-1.7 s
     * after publication against 58 ms p50 (cpu.idle bulk cgroup, 2026-11-29).
     */
    static final int WARM_UP_ROWS = 100;
    private static final String TRANSPORT = StreamBench.MMAP;

    private ScalePublished() {
    }

    /**
     * Runs the part for {@code n} points, the last {@code m} published, {@code tasks} map tasks, its files under
     * {@code root} (deleted at the end); puts its figures into {@code figures} with {@code key} before each name.
     */
    public static void run(int n, int tasks, int m, Path root, Figures figures, String key) throws Exception {
        Path home = Path.of(System.getenv().getOrDefault("MERIDIAN_HOME", ".")).toAbsolutePath().normalize();
        Path work = root.resolve("published-n" + n);
        Path shm = Path.of("/dev/shm/meridian-bench-scale-published-" + ProcessHandle.current().pid());
        int first = n - m;
        String tag = "n" + n + "-" + System.currentTimeMillis() % 100_000;
        Path seed = work.resolve("seed");
        int steady = m > 2 * WARM_UP_ROWS ? first + WARM_UP_ROWS : first;
        LiveMapRun run = new LiveMapRun(home, work, shm, tag, TRANSPORT, n, first,
                new LiveMapRun.Shape(LiveMapRun.WORKERS, tasks, ScaleRows.BLOCK_ROWS, first, seed)).steadyFrom(steady);
        OwnerOnlyFiles.deleteTree(work);
        try {
            Files.createDirectories(shm);
            say("  waiting for the cluster lock %s ...", ClusterControl.LOCK);
            // the lock first: storing the rows (10 GB at 100K) would load the machine under another cluster user
            try (ClusterControl cluster = ClusterControl.acquire(home, work.resolve("cluster.log"), 3600)) {
                ScaleRows rows = new ScaleRows(n);
                long t0 = System.nanoTime();
                rows.store(run.rowStoreDirectory(), 0, first, tasks, "published N = " + n);
                writeSeed(seed, rows, first);
                say("  published N = %d: stored rows 0..%d in %.1f s and a frame of them (their principal axes) in"
                        + " %s", n, first - 1, (System.nanoTime() - t0) / 1e9, seed);
                boolean started = !StreamBench.clusterUp(home);
                if (started) {
                    say("  starting the cluster (./meridian cluster start) ...");
                    cluster.start();
                }
                short[] scratch = new short[n];
                double loadBefore = load();
                LiveMapRun.Result r = run.run(id -> rows.encodedRow(id, scratch), RATE, RATE, 600, false, false);
                report(r, n, first, steady, tasks, loadBefore, figures, key);
                if (started) {
                    say("  stopping the cluster it started ...");
                }
            }
        } finally {
            OwnerOnlyFiles.deleteTree(work);
            OwnerOnlyFiles.deleteTree(shm);
        }
    }

    /** The frame the map resumes from: points 0 .. first-1 on their principal axes, each in its blob's cluster. */
    private static void writeSeed(Path seed, ScaleRows rows, int first) {
        int[] labels = Arrays.copyOf(rows.truth(), first);
        new SnapshotWriter(seed, "bench-scale-seed").onFrame(new Frame(1, first, rows.principalLayout(first), labels,
                new boolean[first], 1.0, 0, ScaleRows.CENTRES, 0, 0, 0, 0, false, 0, 0, 0, 0, 0, first,
                System.currentTimeMillis(), false));
    }

    private static void report(LiveMapRun.Result r, int n, int first, int steady, int tasks, double loadBefore,
                               Figures figures, String key) {
        List<Long> shown = new ArrayList<>();
        List<Long> steadyShown = new ArrayList<>();
        int missing = 0;
        for (int id = first; id < n; id++) {
            if (r.frameOf[id] < 0) {
                missing++;
            } else {
                shown.add(r.frameRecordMs[id] - r.publishedMs[id]);
                if (id >= steady) {
                    steadyShown.add(r.frameRecordMs[id] - r.publishedMs[id]);
                }
            }
        }
        double[] q = StreamBench.quantiles(shown);
        double[] qs = StreamBench.quantiles(steadyShown);
        double[] acked = StreamBench.quantiles(acked(r, first, n));
        double[] published = r.mapHistograms.getOrDefault("meridian_map_published_to_frame_seconds",
                new double[] {0, Double.NaN, Double.NaN});
        double[] stored = r.mapHistograms.getOrDefault("meridian_map_placement_seconds",
                new double[] {0, Double.NaN, Double.NaN});
        double load = load();
        say("  published N = %d, %d rows at %.0f rows/s through Kafka, %d map tasks: row published -> its point on"
                + " map-updates p50 %.0f ms, p99 %.0f ms, max %.0f ms (%d of %d rows; %d never shown)", n, n - first,
                RATE, tasks, q[0], q[1], q[2], shown.size(), n - first, missing);
        say("    the workers' histograms: published -> first shown p50 %.0f ms, p99 %.0f ms (%.0f rows); stored -> first"
                + " shown p50 %.0f ms, p99 %.0f ms (%.0f rows; bucket bounds); published -> acknowledged by the broker"
                + " p50 %.0f ms, p99 %.0f ms; the map resumed %.0f s after its workers started; load average %.2f"
                + " before, %.2f after", published[1], published[2], published[0], stored[1], stored[2], stored[0],
                acked[0], acked[1], r.resumedSeconds, loadBefore, load);
        if (steady > first) {
            say("    steady state (rows %d..%d, after the feed's first %d rows warmed its ingest path): published -> its"
                    + " point on map-updates p50 %.0f ms, p99 %.0f ms, max %.0f ms (%d rows)", steady, n - 1,
                    steady - first, qs[0], qs[1], qs[2], steadyShown.size());
            figures.put(key + "published_steady_from_row", steady)
                    .put(key + "published_steady_to_shown_p50_ms", qs[0])
                    .put(key + "published_steady_to_shown_p99_ms", qs[1]);
            if (r.steadyPlacement != null) {
                say("    steady state, the workers' histograms: stored -> first shown p50 %.0f ms, p99 %.0f ms (%.0f"
                        + " rows; bucket bounds; goal p99 <= 100 ms)", r.steadyPlacement[1], r.steadyPlacement[2],
                        r.steadyPlacement[0]);
                figures.put(key + "published_steady_stored_to_shown_metric_p50_ms", r.steadyPlacement[1])
                        .put(key + "published_steady_stored_to_shown_metric_p99_ms", r.steadyPlacement[2]);
            }
            if (r.steadyNotified != null && r.steadyPlaceable != null) {
                // where the map's leg goes: a row is placed once every lower id is stored and task 0 has heard of it
                say("      of which stored -> task 0 notified p50 %.0f ms, p99 %.0f ms; placeable (every lower id"
                        + " stored) -> shown p50 %.0f ms, p99 %.0f ms", r.steadyNotified[1], r.steadyNotified[2],
                        r.steadyPlaceable[1], r.steadyPlaceable[2]);
                figures.put(key + "published_steady_stored_to_notified_metric_p99_ms", r.steadyNotified[2])
                        .put(key + "published_steady_placeable_to_shown_metric_p99_ms", r.steadyPlaceable[2]);
            }
        }
        figures.put(key + "published_rows", n - first).put(key + "published_rate", RATE)
                .put(key + "published_to_shown_p50_ms", q[0]).put(key + "published_to_shown_p99_ms", q[1])
                .put(key + "published_to_shown_max_ms", q[2]).put(key + "published_never_shown", missing)
                .put(key + "published_to_frame_metric_p50_ms", published[1])
                .put(key + "published_to_frame_metric_p99_ms", published[2])
                .put(key + "published_to_frame_metric_count", (long) published[0])
                .put(key + "published_stored_to_shown_metric_p99_ms", stored[2])
                .put(key + "published_to_acked_p99_ms", acked[1])
                .put(key + "published_resume_seconds", r.resumedSeconds)
                .put(key + "published_workers_restarted", r.workersRestarted)
                .put(key + "published_load_before", loadBefore).put(key + "published_load_after", load);
        slowest(r, first, n);
        if (missing > 0) {
            throw new IllegalStateException("published N = " + n + ": " + missing + " of " + (n - first) + " published"
                    + " rows never reached map-updates");
        }
    }

    /** The rows slowest to be shown, with where their time went: what a tail is made of. */
    private static void slowest(LiveMapRun.Result r, int first, int n) {
        List<Integer> ids = new ArrayList<>();
        for (int id = first; id < n; id++) {
            if (r.frameOf[id] >= 0) {
                ids.add(id);
            }
        }
        ids.sort((a, b) -> Long.compare(r.frameRecordMs[b] - r.publishedMs[b], r.frameRecordMs[a] - r.publishedMs[a]));
        long start = r.publishedMs[first];
        for (int id : ids.subList(0, Math.min(5, ids.size()))) {
            say("    slow row %d: published %.1f s into the feed, acknowledged after %d ms, shown after %d ms (its first"
                    + " record carries frame %d)", id, (r.publishedMs[id] - start) / 1e3,
                    r.ackedMs[id] > 0 ? r.ackedMs[id] - r.publishedMs[id] : -1,
                    r.frameRecordMs[id] - r.publishedMs[id], r.frameOf[id]);
        }
    }

    private static List<Long> acked(LiveMapRun.Result r, int first, int n) {
        List<Long> out = new ArrayList<>();
        for (int id = first; id < n; id++) {
            if (r.ackedMs[id] > 0) {
                out.add(r.ackedMs[id] - r.publishedMs[id]);
            }
        }
        return out;
    }

    private static double load() {
        return ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();
    }

    /** For a run stopped by Ctrl-C or kill: the topology under way, if any, is killed. */
    public static void interrupted() {
        String topology = LiveMapRun.active;
        if (topology != null) {
            System.err.println("bench scale: interrupted: killing " + topology);
            try {
                ClusterControl.killAndAwait(topology, java.time.Duration.ofSeconds(30), 0);
            } catch (Exception e) {
                System.err.println("bench scale: could not kill " + topology + ": " + e.getMessage());
            }
        }
    }
}
