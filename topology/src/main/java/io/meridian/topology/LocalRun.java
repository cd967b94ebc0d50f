package io.meridian.topology;

import io.meridian.config.MeridianConfig;
import io.meridian.config.UsageException;
import io.meridian.engine.BadInputException;
import io.meridian.live.SnapshotSummary;
import io.meridian.matrix.ShortMatrixFormat;
import io.meridian.matrix.TriangleFile;
import io.meridian.metrics.MetricSamples;
import io.meridian.shm.OwnerOnlyFiles;
import io.meridian.stream.WorkingDirectories;
import io.meridian.stream.ingest.DeadLetterBolt;
import io.meridian.stream.ingest.FileRowSpout;
import io.meridian.stream.metrics.PrometheusReporter;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteOrder;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.apache.storm.LocalCluster;
import org.apache.storm.generated.TopologySummary;

/**
 * The ingestion topology in Storm's {@code LocalCluster}, inside this JVM, reading the file source until every row is
 * acked. Starts from empty row stores (it deletes the block files of {@code ingest.rowStore.directory}, the old
 * dead-letter file and the old end marker, nothing else).
 */
public final class LocalRun {
    /** What a finished local run left behind. */
    public record Result(String topologyId, RowCounts counts, long storedOnDisk, Path rowStores, Path rejectedFile,
                         String metrics, String metricsText, Duration elapsed, SnapshotSummary map,
                         Path mapSnapshots) {
    }


    private LocalRun() {
    }

    public static Result run(MeridianConfig config, Duration timeout) throws Exception {
        return run(config, timeout, frame -> { });
    }

    /**
     * Runs until the file source is done and, with the live map on, until the map holds every stored row with its
     * clusters and has settled; {@code frames} sees each new frame of the map as it is published.
     */
    public static Result run(MeridianConfig config, Duration timeout, Consumer<SnapshotSummary> frames) throws Exception {
        check(config);
        Path stores = config.ingest().rowStore().directory();
        Path output = config.ingest().local().output();
        Path snapshots = config.map().snapshotDirectory();
        clean(stores, output, config.map().enabled() ? snapshots : null);
        long start = System.nanoTime();
        String id;
        String metrics;
        String metricsText;
        RowCounts counts;
        try (LocalStorm storm = LocalStorm.start()) {
            LocalCluster cluster = storm.cluster();
            org.apache.storm.Config conf = IngestTopology.stormConfig(config);
            // serialize every tuple through Kryo even inside one worker, as a cluster does between workers
            conf.put(org.apache.storm.Config.TOPOLOGY_TESTING_ALWAYS_TRY_SERIALIZE, true);
            cluster.submitTopology(config.topology().name(), conf, IngestTopology.build(config));
            id = topologyId(cluster, config.topology().name());
            Path done = output.resolve(FileRowSpout.DONE_FILE);
            long deadline = System.nanoTime() + timeout.toNanos();
            FrameWatch watch = new FrameWatch(snapshots, frames);
            while (!Files.exists(done)) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("the local topology did not finish within " + timeout.toSeconds()
                            + " s (no " + done + ")");
                }
                watch.poll();
                Thread.sleep(100);
            }
            if (config.map().enabled()) {
                long stored = RowCounts.storedOnDisk(stores);
                while (!watch.settled(stored)) {
                    if (System.nanoTime() > deadline) {
                        SnapshotSummary last = watch.last;
                        throw new IllegalStateException("the live map did not settle within " + timeout.toSeconds()
                                + " s: " + (last == null ? "no frame was published"
                                : "its last frame " + last.frame() + " holds " + last.points() + " of " + stored
                                + " rows, " + last.clusters() + " clusters") + " (worker log: see the command's log)");
                    }
                    watch.poll();
                    Thread.sleep(100);
                }
            }
            // the endpoint goes with the workers: read the figures first
            metrics = PrometheusReporter.endpointUrl();
            metricsText = metrics == null ? null : MetricSamples.fetch(metrics, Duration.ofSeconds(10));
            counts = metrics == null ? null : RowCounts.of(MetricSamples.parse(metricsText), id,
                    "the LocalCluster's endpoint " + metrics);
            // a worker still stopping when the cluster closes can fail a timer and halt the JVM (Utils.exitProcess(20))
            ClusterControl.killAndAwait(cluster, config.topology().name(), 0, Duration.ofSeconds(30));
        }
        Duration elapsed = Duration.ofNanos(System.nanoTime() - start);
        return new Result(id, counts, RowCounts.storedOnDisk(stores), stores,
                output.resolve(DeadLetterBolt.REJECTED_FILE), metrics, metricsText, elapsed,
                config.map().enabled() ? SnapshotSummary.readCurrent(snapshots) : null, snapshots);
    }

    /**
     * What the configuration names for a local run, checked before Storm starts (a worker that finds it wrong later
     * dies with "Halting process" and a trace): the matrix file of {@code ingest.local.distances} (there, readable, N x N
     * for {@code ingest.local.n}, little-endian, or a lower triangle of at least N points when named {@code *.tri}), and the directories the run writes, created owner-only
     * ({@link WorkingDirectories}). A problem is a {@link UsageException} naming the key: one line at the CLI.
     */
    public static void check(MeridianConfig config) {
        if (!"file".equals(config.ingest().source())) {
            throw config.error("ingest.source", "./meridian local reads a file; set it to 'file'");
        }
        MeridianConfig.LocalSource local = config.ingest().local();
        if (local.distances() != null) {
            try {
                if (local.distances().getFileName().toString().endsWith(FileRowSpout.TRIANGLE_SUFFIX)) {
                    BadInputException.checkReadable(BadInputException.Input.DISTANCES, local.distances());
                    new TriangleFile(local.distances(), local.n()).close();
                } else {
                    ShortMatrixFormat.checkFile(BadInputException.Input.DISTANCES, local.distances(), local.n());
                    ShortMatrixFormat.checkByteOrder(BadInputException.Input.DISTANCES, local.distances(),
                            ByteOrder.LITTLE_ENDIAN, "a little-endian copy (the file source reads 16-bit"
                                    + " little-endian)");
                }
            } catch (BadInputException e) {
                throw config.error("ingest.local.distances", e.getMessage() + " (N is ingest.local.n)");
            }
        }
        Map<String, Path> directories = new LinkedHashMap<>();
        directories.put("ingest.local.output", local.output());
        directories.put("ingest.rowStore.directory", config.ingest().rowStore().directory());
        if (config.map().enabled()) {
            directories.put("map.snapshotDirectory", config.map().snapshotDirectory());
        }
        // made one by one; when one cannot be, the ones made before it go again (nothing is left of a refused run)
        List<Path[]> made = new ArrayList<>(); // {directory, the existing ancestor it was made under}
        for (Map.Entry<String, Path> d : directories.entrySet()) {
            Path dir = d.getValue().toAbsolutePath().normalize();
            Path existing = dir;
            while (existing != null && !Files.exists(existing, LinkOption.NOFOLLOW_LINKS)) {
                existing = existing.getParent();
            }
            try {
                WorkingDirectories.create(dir, d.getKey());
                if (existing != null && !existing.equals(dir)) {
                    made.add(new Path[] {dir, existing});
                }
            } catch (UncheckedIOException e) {
                for (int i = made.size() - 1; i >= 0; i--) {
                    OwnerOnlyFiles.deleteEmptyUpTo(made.get(i)[0], made.get(i)[1]);
                }
                throw config.error(d.getKey(), e.getCause().getMessage());
            }
        }
    }

    /** Follows the live map's snapshot directory: each new frame once, and whether the map has settled. */
    private static final class FrameWatch {
        private final Path snapshots;
        private final Consumer<SnapshotSummary> frames;
        private SnapshotSummary last;

        FrameWatch(Path snapshots, Consumer<SnapshotSummary> frames) {
            this.snapshots = snapshots;
            this.frames = frames;
        }

        void poll() {
            SnapshotSummary s = SnapshotSummary.readCurrent(snapshots);
            if (s != null && (last == null || s.frame() > last.frame())) {
                last = s;
                frames.accept(s);
            }
        }

        /** The map says so in its last frame (refined, no anneal due, clustered), and it holds every stored row. */
        boolean settled(long storedRows) {
            return last != null && last.settled() && last.points() >= storedRows && last.clusters() > 0;
        }
    }

    private static String topologyId(LocalCluster cluster, String name) throws Exception {
        for (TopologySummary t : cluster.getClusterInfo().get_topologies()) {
            if (t.get_name().equals(name)) {
                return t.get_id();
            }
        }
        throw new IllegalStateException("topology " + name + " is not running after submission");
    }

    private static void clean(Path stores, Path output, Path snapshots) throws IOException {
        if (snapshots != null && Files.isDirectory(snapshots)) {
            try (DirectoryStream<Path> old = Files.newDirectoryStream(snapshots, "{frame-*,current,.work-*}")) {
                for (Path p : old) {
                    if (Files.isSymbolicLink(p)) {
                        Files.delete(p);
                    } else {
                        OwnerOnlyFiles.deleteTree(p);
                    }
                }
            }
        }
        if (Files.isDirectory(stores)) {
            try (DirectoryStream<Path> files = Files.newDirectoryStream(stores, "block-*.{dist,rows,wts}")) {
                for (Path f : files) {
                    Files.delete(f);
                }
            }
        }
        Files.deleteIfExists(output.resolve(DeadLetterBolt.REJECTED_FILE));
        // the previous run's marker, or this run would look finished before its spout even opens
        Files.deleteIfExists(output.resolve(FileRowSpout.DONE_FILE));
    }
}
