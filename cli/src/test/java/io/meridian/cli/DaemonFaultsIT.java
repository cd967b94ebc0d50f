package io.meridian.cli;

import static io.meridian.cli.ClusterWait.waitFor;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.meridian.live.SnapshotSummary;
import io.meridian.synthetic.SyntheticDataset;
import io.meridian.topology.ClusterControl;
import io.meridian.topology.RowCounts;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The cluster's daemons fail one after the other under a steady stream with the live map on (issue 33, faults 1-3), on
 * the real single-host cluster: the Supervisor alone is SIGKILLed and started again (it must take its running
 * workers back, not be refused for their ports, and not restart them), Nimbus is SIGKILLed and started again (the
 * topology stores meanwhile), ZooKeeper is restarted, and the Kafka broker is SIGKILLed and started 20 s later (feed
 * waits for it). Every row fed is stored, none dead-lettered, the map ends holding every point, and no worker was
 * restarted. The time each daemon took to come back is printed.
 */
class DaemonFaultsIT {
    private static final String NAME = "meridian-faults-it";
    private static final int N = 3000;
    private static final int WIDTH = 4096;
    private static final String BROKERS = "localhost:9092";

    @Test
    void everyDaemonKilledUnderAStreamLosesNoRowAndRestartsNoWorker() throws Exception {
        Path home = Path.of(System.getenv().getOrDefault("MERIDIAN_HOME", "..")).toAbsolutePath().normalize();
        long stamp = System.currentTimeMillis();
        Path work = home.resolve("cli/target/faults-it-" + stamp);
        Files.createDirectories(work);
        SyntheticDataset.blobs(N, 8, 5, 2.0, 11).write(work.resolve("data"), ByteOrder.LITTLE_ENDIAN);
        Path matrix = work.resolve("data").resolve(SyntheticDataset.DISTANCES_FILE);
        Path stores = work.resolve("rowstore");
        Path snapshots = work.resolve("map");
        Path config = work.resolve("meridian-faults-it.yaml");
        String topic = "distance-rows-faults-it-" + stamp;
        Files.writeString(config, String.format("""
                topology: {name: %s, workers: 2, ackers: 1, maxSpoutPending: 500, messageTimeoutSecs: 30, workerHeapMb: 384}
                ingest:
                  maxPoints: %d
                  kafka: {brokers: "%s", topic: %s, rejectedTopic: %s-rejected, consumerGroup: faults-it-%d, partitions: 2}
                  validation: {maxIdAhead: 2048}
                  rowStore: {directory: %s, blockRows: 64, parallelism: 2}
                map: {tasks: 2, initialPoints: 300, maxClusters: 5, snapshotDirectory: %s, topic: map-updates-faults-%d}
                """, NAME, WIDTH, BROKERS, topic, topic, stamp, stores, snapshots, stamp), StandardCharsets.UTF_8);

        try (ClusterControl cluster = ClusterControl.acquire(home, work.resolve("cluster.log"), 1800)) {
            boolean submitted = false;
            Throwable failure = null;
            try {
                cluster.start();
                cluster.storm(180, "jar", SubmitCommand.topologyJar(home).toString(), SubmitCommand.MAIN,
                        "--config", config.toString());
                submitted = true;
                waitFor(Duration.ofSeconds(90), "two workers of " + NAME, () -> ClusterControl.workers(NAME).size() == 2);
                List<Long> workers = workerPids();

                ByteArrayOutputStream feedErr = new ByteArrayOutputStream();
                CompletableFuture<Integer> feed = CompletableFuture.supplyAsync(() -> feedCapturingErr(feedErr,
                        "feed", "--distances", matrix.toString(), "--n", Integer.toString(N), "--rate", "15",
                        "--brokers", BROKERS, "--topic", topic, "--config", config.toString()));
                waitFor(Duration.ofSeconds(120), "200 rows stored", () -> RowCounts.storedOnDisk(stores) >= 200);

                // the Supervisor alone: its workers go on, and a new one takes them back
                kill(cluster.daemonPid("supervisor"), "supervisor");
                long storedBefore = RowCounts.storedOnDisk(stores);
                waitFor(Duration.ofSeconds(60), "rows stored while the Supervisor is down",
                        () -> RowCounts.storedOnDisk(stores) > storedBefore + 30);
                long t0 = System.nanoTime();
                String restart = cluster.startStopped();
                report("supervisor", t0);
                assertTrue(restart.contains("is held by this cluster's worker pid"), "cluster start takes the running"
                        + " workers' slots as the supervisor's own: " + restart);
                Thread.sleep(20_000); // past the new Supervisor's first sync of its slots with the assignments
                assertEquals(workers, workerPids(), "the restarted Supervisor kept the running workers");

                // Nimbus: the topology goes on storing without it
                kill(cluster.daemonPid("nimbus"), "nimbus");
                long storedWithoutNimbus = RowCounts.storedOnDisk(stores);
                waitFor(Duration.ofSeconds(60), "rows stored while Nimbus is down",
                        () -> RowCounts.storedOnDisk(stores) > storedWithoutNimbus + 30);
                t0 = System.nanoTime();
                cluster.startStopped();
                report("nimbus", t0);

                // ZooKeeper, restarted
                ProcessHandle zookeeper = ProcessHandle.of(cluster.daemonPid("zookeeper")).orElseThrow();
                zookeeper.destroy();
                assertTrue(zookeeper.onExit().get(60, TimeUnit.SECONDS) != null, "ZooKeeper stopped");
                t0 = System.nanoTime();
                cluster.startStopped();
                report("zookeeper", t0);

                // the Kafka broker, SIGKILLed and started 20 s later: feed waits for it
                kill(cluster.daemonPid("kafka"), "kafka");
                Thread.sleep(20_000);
                t0 = System.nanoTime();
                cluster.startStopped();
                report("kafka", t0);

                assertEquals(0, feed.get(300, TimeUnit.SECONDS), "feed rode out the broker's outage: " + feedErr);
                String said = feedErr.toString(StandardCharsets.UTF_8);
                assertTrue(said.contains("meridian feed: waiting for Kafka at " + BROKERS), said);
                waitFor(Duration.ofSeconds(300), "all " + N + " rows stored", () -> RowCounts.storedOnDisk(stores) == N,
                        () -> "stored " + uncheckedStored(stores));
                waitFor(Duration.ofSeconds(400), "the map holding every point, settled", () -> {
                    SnapshotSummary s = SnapshotSummary.readCurrent(snapshots);
                    return s != null && s.points() == N && s.settled();
                });
                assertEquals(workers, workerPids(), "no worker was restarted by any of the faults");
                RowCounts counts = ClusterControl.rowCounts(NAME);
                System.out.println("IT: row counts " + counts.toJson());
                assertEquals(0, counts.rejectedTotal(), counts.toJson());
                assertEquals(0, counts.deadLettered, counts.toJson());
                assertEquals(N, counts.stored, "offered = stored + dead-lettered: " + counts.toJson());
            } catch (Throwable t) {
                failure = t;
                throw t;
            } finally {
                if (submitted) {
                    try {
                        cluster.startStopped(); // a daemon the failure left down
                        ClusterControl.killAndAwait(NAME, Duration.ofSeconds(120), 3000);
                    } catch (Exception e) {
                        if (failure == null) {
                            throw e;
                        }
                        failure.addSuppressed(e);
                    }
                }
            }
        }
    }

    private static List<Long> workerPids() {
        return ClusterControl.workers(NAME).stream().map(ProcessHandle::pid).sorted().toList();
    }

    private static void kill(long pid, String daemon) throws Exception {
        ProcessHandle p = ProcessHandle.of(pid).orElseThrow(() -> new AssertionError(daemon + " (pid " + pid
                + ") is not running"));
        assertTrue(p.destroyForcibly(), "SIGKILL " + daemon);
        p.onExit().get(30, TimeUnit.SECONDS);
        System.out.println("IT: SIGKILLed " + daemon + " (pid " + pid + ")");
    }

    private static void report(String daemon, long startNanos) {
        System.out.printf(Locale.ROOT, "IT: %s back (cluster start) in %.1f s%n", daemon,
                (System.nanoTime() - startNanos) / 1e9);
    }

    private static long uncheckedStored(Path stores) {
        try {
            return RowCounts.storedOnDisk(stores);
        } catch (java.io.IOException e) {
            return -1;
        }
    }

    /** {@code ./meridian feed} in this JVM; its standard error goes to {@code err} as well as the test's. */
    private static int feedCapturingErr(ByteArrayOutputStream err, String... args) {
        PrintStream stderr = System.err;
        PrintStream both = new PrintStream(new java.io.OutputStream() {
            @Override
            public void write(int b) {
                synchronized (err) {
                    err.write(b);
                }
                stderr.write(b);
            }
        }, true, StandardCharsets.UTF_8);
        System.setErr(both);
        try {
            return Main.run(args);
        } finally {
            System.setErr(stderr);
        }
    }
}
