package io.meridian.topology;

import io.meridian.config.MeridianConfig;
import io.meridian.config.UsageException;
import io.meridian.stream.ingest.DeadLetterBolt;
import io.meridian.stream.ingest.FileRowSpout;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
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
                         Path metrics, Duration elapsed) {
    }

    private LocalRun() {
    }

    public static Result run(MeridianConfig config, Duration timeout) throws Exception {
        if (!"file".equals(config.ingest().source())) {
            throw new UsageException("config: key ingest.source: ./meridian local reads a file; set it to 'file'");
        }
        Path stores = config.ingest().rowStore().directory();
        Path output = config.ingest().local().output();
        clean(stores, output);
        long start = System.nanoTime();
        String id;
        try (LocalCluster cluster = new LocalCluster()) {
            org.apache.storm.Config conf = IngestTopology.stormConfig(config);
            // serialize every tuple through Kryo even inside one worker, as a cluster does between workers
            conf.put(org.apache.storm.Config.TOPOLOGY_TESTING_ALWAYS_TRY_SERIALIZE, true);
            cluster.submitTopology(config.topology().name(), conf, IngestTopology.build(config));
            id = topologyId(cluster, config.topology().name());
            Path done = output.resolve(FileRowSpout.DONE_FILE);
            long deadline = System.nanoTime() + timeout.toNanos();
            while (!Files.exists(done)) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("the local topology did not finish within " + timeout.toSeconds()
                            + " s (no " + done + ")");
                }
                Thread.sleep(100);
            }
            // the reporter writes its last figures when the worker stops
            // a worker still stopping when the cluster closes can fail a timer and halt the JVM (Utils.exitProcess(20))
            ClusterControl.killAndAwait(cluster, config.topology().name(), 0, Duration.ofSeconds(30));
        }
        Duration elapsed = Duration.ofNanos(System.nanoTime() - start);
        return new Result(id, RowCounts.read(config.metrics().directory(), id), RowCounts.storedOnDisk(stores), stores,
                output.resolve(DeadLetterBolt.REJECTED_FILE), config.metrics().directory().resolve(id), elapsed);
    }

    private static String topologyId(LocalCluster cluster, String name) throws Exception {
        for (TopologySummary t : cluster.getClusterInfo().get_topologies()) {
            if (t.get_name().equals(name)) {
                return t.get_id();
            }
        }
        throw new IllegalStateException("topology " + name + " is not running after submission");
    }

    private static void clean(Path stores, Path output) throws IOException {
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
