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
 * restarted. The time each daemon took to come back is printed. While each is down the targets daemon's probe reads
 * it 0 on its endpoint, and (but ZooKeeper, restarted at once so that Storm's sessions do not expire) Prometheus reads
 * 0 and holds MeridianDaemonDown pending or firing for it, and `cluster status` lists it down; once back, both read 1.
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

                // 8 rows/s: the feed (375 s) must outlast the faults up to the broker's, which it must ride out; at 15
                // (200 s) it ended before Nimbus was killed in a run where the Supervisor took 139 s to come back
                // (load average 25), and no row could be stored "while Nimbus is down"
                ByteArrayOutputStream feedErr = new ByteArrayOutputStream();
                CompletableFuture<Integer> feed = CompletableFuture.supplyAsync(() -> feedCapturingErr(feedErr,
                        "feed", "--distances", matrix.toString(), "--n", Integer.toString(N), "--rate", "8",
                        "--brokers", BROKERS, "--topic", topic, "--config", config.toString()));
                waitFor(Duration.ofSeconds(120), "200 rows stored", () -> RowCounts.storedOnDisk(stores) >= 200);

                // the Supervisor alone: its workers go on, and a new one takes them back
                ProbeWatch supervisor = new ProbeWatch("supervisor", 6628);
                supervisor.awaitEndpoint(1, System.nanoTime());
                long killed = kill(cluster.daemonPid("supervisor"), "supervisor");
                long storedBefore = RowCounts.storedOnDisk(stores);
                waitFor(Duration.ofSeconds(60), "rows stored while the Supervisor is down",
                        () -> RowCounts.storedOnDisk(stores) > storedBefore + 30);
                seenDown(supervisor, killed);
                long t0 = System.nanoTime();
                String restart = cluster.startStopped();
                report("supervisor", t0);
                seenUp(supervisor, t0);
                assertTrue(restart.contains("is held by this cluster's worker pid"), "cluster start takes the running"
                        + " workers' slots as the supervisor's own: " + restart);
                Thread.sleep(20_000); // past the new Supervisor's first sync of its slots with the assignments
                assertEquals(workers, workerPids(), "the restarted Supervisor kept the running workers");

                // Nimbus: the topology goes on storing without it
                ProbeWatch nimbus = new ProbeWatch("nimbus", 6627);
                killed = kill(cluster.daemonPid("nimbus"), "nimbus");
                long storedWithoutNimbus = RowCounts.storedOnDisk(stores);
                waitFor(Duration.ofSeconds(60), "rows stored while Nimbus is down",
                        () -> RowCounts.storedOnDisk(stores) > storedWithoutNimbus + 30);
                seenDown(nimbus, killed);
                String status = clusterStatus(home);
                assertTrue(status.lines().anyMatch(l -> l.matches(" *probed nimbus +down +localhost:6627 .*")),
                        "cluster status lists the probe's view of Nimbus, down:\n" + status);
                assertTrue(status.lines().anyMatch(l -> l.matches(" *probed zookeeper +up +localhost:2181 .*")),
                        "cluster status lists the probe's view of ZooKeeper, up:\n" + status);
                t0 = System.nanoTime();
                cluster.startStopped();
                report("nimbus", t0);
                seenUp(nimbus, t0);

                // ZooKeeper, restarted as soon as the probe has seen it down (Storm's sessions last 20 s)
                ProbeWatch zk = new ProbeWatch("zookeeper", 2181);
                ProcessHandle zookeeper = ProcessHandle.of(cluster.daemonPid("zookeeper")).orElseThrow();
                zookeeper.destroy();
                assertTrue(zookeeper.onExit().get(60, TimeUnit.SECONDS) != null, "ZooKeeper stopped");
                zk.awaitEndpoint(0, System.nanoTime());
                t0 = System.nanoTime();
                cluster.startStopped();
                report("zookeeper", t0);
                seenUp(zk, t0);

                // the Kafka broker, SIGKILLed and started 20 s later: feed waits for it
                ProbeWatch kafka = new ProbeWatch("kafka", 9092);
                killed = kill(cluster.daemonPid("kafka"), "kafka");
                seenDown(kafka, killed);
                Thread.sleep(Math.max(0, 20_000 - TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killed)));
                t0 = System.nanoTime();
                cluster.startStopped();
                report("kafka", t0);
                seenUp(kafka, t0);

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
                WorkerLogs.printErrors(home.resolve(".meridian/cluster/logs/workers-artifacts"), NAME, stamp);
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

    /** SIGKILLs the daemon and waits until it is gone; returns System.nanoTime() then. */
    private static long kill(long pid, String daemon) throws Exception {
        ProcessHandle p = ProcessHandle.of(pid).orElseThrow(() -> new AssertionError(daemon + " (pid " + pid
                + ") is not running"));
        assertTrue(p.destroyForcibly(), "SIGKILL " + daemon);
        p.onExit().get(30, TimeUnit.SECONDS);
        System.out.println("IT: SIGKILLed " + daemon + " (pid " + pid + ")");
        return System.nanoTime();
    }

    /** The probe's endpoint and Prometheus read the daemon 0, and MeridianDaemonDown is pending or firing for it. */
    private static void seenDown(ProbeWatch daemon, long killedNanos) throws Exception {
        daemon.awaitEndpoint(0, killedNanos);
        daemon.awaitPrometheus(0, killedNanos);
        daemon.awaitAlert(killedNanos);
    }

    private static void seenUp(ProbeWatch daemon, long restartedNanos) throws Exception {
        daemon.awaitEndpoint(1, restartedNanos);
        daemon.awaitPrometheus(1, restartedNanos);
    }

    /** {@code deploy/bin/meridian-cluster status}'s output (exit 1 while a daemon of this host is down). */
    private static String clusterStatus(Path home) throws Exception {
        Process p = new ProcessBuilder(home.resolve("deploy/bin/meridian-cluster").toString(), "status")
                .redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(120, TimeUnit.SECONDS), "cluster status finished");
        System.out.println("IT: cluster status with Nimbus down:\n" + out);
        return out;
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
