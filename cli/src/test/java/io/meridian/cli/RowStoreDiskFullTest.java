package io.meridian.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.meridian.config.MeridianConfig;
import io.meridian.engine.BadInputException;
import io.meridian.matrix.RowBlock;
import io.meridian.metrics.MetricSamples;
import io.meridian.stream.metrics.PrometheusReporter;
import io.meridian.stream.row.RowStoreReader;
import io.meridian.synthetic.SyntheticDataset;
import io.meridian.topology.ClusterControl;
import io.meridian.topology.IngestTopology;
import io.meridian.topology.LocalStorm;
import java.io.IOException;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.storm.LocalCluster;
import org.apache.storm.generated.ErrorInfo;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The row-store disk fills up under a stream from a real Kafka broker (issue 33, fault 4): the store directory is a
 * tmpfs mounted with a size limit, too small for the rows fed. Storing fails with an error naming the file (Storm's
 * component errors, the worker log, {@code meridian_rows_store_write_failures_total}); the rows that did not fit are
 * not acked, so Kafka replays them; once the filesystem is given room, every row is stored with its values (a row half
 * written when the disk filled is never read as data) and none is dead-lettered.
 */
class RowStoreDiskFullTest {
    private static final int N = 1200;
    private static final int BLOCK_ROWS = 64;

    @TempDir
    Path dir;

    @Test
    void rowsThatDoNotFitAreReplayedUntilTheDiskHasRoomAndThenAllAreStored() throws Exception {
        Path stores = dir.resolve("stores");
        Files.createDirectories(stores);
        // values 1200 x 1199 bytes (1.44 MB) and a page of markers per block: about half the rows fit in 768 KB
        mount(stores, "768k");
        try (ChildKafka kafka = ChildKafka.start(dir.resolve("kafka"))) {
            MeridianConfig config = MeridianConfig.parse(String.format("""
                    topology: {name: disk-full, workers: 1, messageTimeoutSecs: 30, workerHeapMb: 512}
                    ingest:
                      maxPoints: %d
                      kafka: {brokers: "%s", partitions: 1, consumerGroup: disk-full}
                      rowStore: {directory: %s, blockRows: %d, parallelism: 1}
                      validation: {maxIdAhead: %d}
                    map: {enabled: false}
                    metrics: {localPort: 0}
                    """, 2 * N, kafka.brokers(), stores, BLOCK_ROWS, 2 * N), "disk-full.yaml");
            Path configFile = dir.resolve("disk-full.yaml");
            Files.writeString(configFile, config.yaml());
            Path matrix = dir.resolve("distances.bin");
            SyntheticDataset.uniform(N, 4, 5).writeMatrix(matrix, ByteOrder.LITTLE_ENDIAN);
            assertEquals(0, Main.run(new String[] {"feed", "--distances", matrix.toString(), "--n",
                    Integer.toString(N), "--config", configFile.toString()}));

            try (LocalStorm storm = LocalStorm.start()) {
                LocalCluster cluster = storm.cluster();
                cluster.submitTopology("disk-full", IngestTopology.stormConfig(config), IngestTopology.build(config));
                try (RowStoreReader reader = new RowStoreReader(stores, BLOCK_ROWS, 2 * N)) {
                    long failures = awaitWriteFailures(Duration.ofSeconds(120));
                    int storedWhileFull = stored(reader);
                    assertTrue(storedWhileFull > 0 && storedWhileFull < N, "the disk took part of the rows: "
                            + storedWhileFull + " of " + N + " stored, " + failures + " failed writes");
                    List<ErrorInfo> errors = cluster.getTopologyInfoByName("disk-full").get_errors().get("row-store");
                    assertTrue(errors != null && !errors.isEmpty(), "the failed write is a component error in Storm");
                    String error = errors.get(0).get_error();
                    assertTrue(error.contains("row store " + stores.resolve("block-"))
                            && error.contains("No space left on device"), "names the file and the cause: " + error);
                    assertTrue(error.contains("not acked: Kafka replays them"), error);

                    mount(stores, "16m", "remount");
                    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(180);
                    while (stored(reader) < N) {
                        if (System.nanoTime() > deadline) {
                            fail("after the disk had room, " + stored(reader) + " of " + N + " rows stored in 180 s");
                        }
                        Thread.sleep(500);
                    }
                    RowBlock expected = RowBlock.mapAll(BadInputException.Input.DISTANCES, matrix, N,
                            ByteOrder.LITTLE_ENDIAN);
                    short[] want = new short[N];
                    short[] got = new short[N];
                    for (int id = 0; id < N; id++) {
                        expected.copyRow(id, 0, id, want, 0);
                        reader.copy(id, 0, id, got);
                        assertArrayEquals(java.util.Arrays.copyOf(want, id), java.util.Arrays.copyOf(got, id),
                                "row " + id + " as stored");
                    }
                    MetricSamples samples = MetricSamples.parse(MetricSamples.fetch(PrometheusReporter.endpointUrl(),
                            Duration.ofSeconds(10)));
                    assertEquals(0, samples.sum("meridian_rows_rejected_total", s -> true),
                            "no row dead-lettered: the full disk is not the rows' fault");
                    assertEquals(N, Math.round(samples.sum("meridian_rows_stored_total", s -> true)));
                }
                ClusterControl.killAndAwait(cluster, "disk-full", 0, Duration.ofSeconds(30));
            }
        } finally {
            umount(stores);
        }
    }

    private static int stored(RowStoreReader reader) {
        int n = 0;
        for (int id = 0; id < N; id++) {
            n += reader.isStored(id) ? 1 : 0;
        }
        return n;
    }

    /** Waits for the row store's failed writes to be counted, and for the count to stop rising for a while. */
    private static long awaitWriteFailures(Duration timeout) throws Exception {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < deadline) {
            String url = PrometheusReporter.endpointUrl();
            if (url != null) {
                double failures = MetricSamples.parse(MetricSamples.fetch(url, Duration.ofSeconds(10)))
                        .sum("meridian_rows_store_write_failures_total", s -> true);
                if (failures >= 3) { // the first write that failed and at least two replays of it
                    return Math.round(failures);
                }
            }
            Thread.sleep(1000);
        }
        throw new AssertionError("no failed row-store write counted within " + timeout);
    }

    private static void mount(Path at, String size, String... more) throws IOException, InterruptedException {
        String options = "size=" + size + ",mode=0700" + (more.length > 0 ? "," + String.join(",", more) : "");
        run("mount", "-t", "tmpfs", "-o", options, "meridian-test-disk", at.toString());
    }

    private static void umount(Path at) throws IOException, InterruptedException {
        run("umount", "-l", at.toString());
    }

    private static void run(String... command) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        if (!p.waitFor(30, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new IOException(String.join(" ", command) + " failed (the test mounts a small tmpfs: run it as root): "
                    + out);
        }
    }
}
