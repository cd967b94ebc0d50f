package io.meridian.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static io.meridian.cli.ClusterWait.waitFor;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.meridian.collective.SingleProcessSync;
import io.meridian.live.SnapshotSummary;
import io.meridian.live.SnapshotWriter;
import io.meridian.matrix.DistanceSource;
import io.meridian.matrix.Weighting;
import io.meridian.mds.DaMds;
import io.meridian.mds.MdsOptions;
import io.meridian.mds.MdsResult;
import io.meridian.pwc.Ari;
import io.meridian.shm.OwnerOnlyFiles;
import io.meridian.stream.live.LiveMapBolt;
import io.meridian.stream.live.MapStreams;
import io.meridian.synthetic.SyntheticDataset;
import io.meridian.topology.ClusterControl;
import io.meridian.topology.RowCounts;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.storm.generated.ExecutorSummary;
import org.apache.storm.generated.TopologyInfo;
import org.apache.storm.generated.TopologySummary;
import org.apache.storm.utils.NimbusClient;
import org.apache.storm.utils.Utils;
import org.junit.jupiter.api.Test;

/**
 * The live map on the real cluster: {@code storm jar} with 2 workers and 2 map tasks (their collectives through one
 * shared region on the host, led by map task 0), 2000 blob rows streamed through Kafka, the worker of map task 0
 * SIGKILLed mid-stream. The map's group must fail and re-form (a new generation), resume from its last frame, and end
 * holding every stored point, with a stress within 2 % of batch DA-MDS on the same rows and the blobs as clusters.
 * Killing the topology must leave no region in /dev/shm.
 */
class LiveMapClusterIT {
    private static final String NAME = "meridian-map-it";
    private static final int N = 2000;
    private static final int WIDTH = 2048;
    private static final int BLOCK_ROWS = 64;
    private static final int CENTERS = 5;
    private static final String BROKERS = "localhost:9092";

    /**
     * Where the cluster made the bulk cgroup (cgroup v1's cpu controller, cpu.idle 1), each map task's rounds thread
     * runs in it and the threads new points wait for (the arrival placer, the publisher) do not.
     */
    private static void assertBulkThreadsInTheirCgroup() throws Exception {
        Path bulk = Path.of("/sys/fs/cgroup/cpu/meridian-bulk");
        if (!Files.isRegularFile(bulk.resolve("tasks"))) {
            System.out.println("IT: no bulk cgroup at " + bulk + " (no cgroup v1 cpu hierarchy): its check is skipped");
            return;
        }
        if (Files.exists(bulk.resolve("cpu.idle"))) {
            assertEquals("1", Files.readString(bulk.resolve("cpu.idle")).trim(), "the bulk cgroup's cpu.idle");
        }
        int rounds = 0;
        int placers = 0;
        for (ProcessHandle worker : ClusterControl.workers(NAME)) {
            Map<String, String> cgroups = ThreadCgroups.of(worker.pid());
            for (Map.Entry<String, String> t : cgroups.entrySet()) {
                if (t.getKey().matches("meridian-live-map-\\d+")) {
                    assertEquals("/meridian-bulk", t.getValue(), "the rounds thread " + t.getKey() + " of worker "
                            + worker.pid());
                    rounds++;
                } else if (t.getKey().equals("meridian-live-map-arrivals")
                        || t.getKey().equals("meridian-live-map-publisher")) {
                    assertEquals("/", t.getValue(), t.getKey() + " of worker " + worker.pid() + " is not a bulk thread");
                    placers++;
                }
            }
        }
        assertEquals(2, rounds, "the 2 map tasks' rounds threads found");
        assertEquals(2, placers, "task 0's arrival placer and publisher found");
        System.out.println("IT: the 2 rounds threads run in " + bulk + ", task 0's placer and publisher outside it");
    }

    @Test
    void theMapHoldsEveryStoredPointAcrossAKilledWorkerAndLeavesNothingInDevShm() throws Exception {
        Path home = Path.of(System.getenv().getOrDefault("MERIDIAN_HOME", "..")).toAbsolutePath().normalize();
        long stamp = System.currentTimeMillis();
        Path work = home.resolve("cli/target/map-it-" + stamp);
        Files.createDirectories(work);
        SyntheticDataset blobs = SyntheticDataset.blobs(N, 8, CENTERS, 2.0, 3);
        blobs.write(work.resolve("data"), ByteOrder.LITTLE_ENDIAN);
        Path matrix = work.resolve("data").resolve(SyntheticDataset.DISTANCES_FILE);
        Path stores = work.resolve("rowstore");
        Path snapshots = work.resolve("map");
        Path config = work.resolve("meridian-map-it.yaml");
        String topic = "distance-rows-map-it-" + stamp;
        String yaml = String.format("""
                topology: {name: %s, workers: 2, ackers: 1, maxSpoutPending: 500, messageTimeoutSecs: 10, workerHeapMb: 384}
                ingest:
                  maxPoints: %d
                  kafka: {brokers: "%s", topic: %s, rejectedTopic: %s-rejected, consumerGroup: map-it-%d, partitions: 2}
                  validation: {maxIdAhead: 1024}
                  rowStore: {directory: %s, blockRows: %d, parallelism: 2}
                map: {tasks: 2, initialPoints: 300, maxClusters: %d, snapshotDirectory: %s, topic: map-updates-it-%d,
                      collectiveTimeoutMs: 10000}
                """, NAME, WIDTH, BROKERS, topic, topic, stamp, stores, BLOCK_ROWS, CENTERS,
                snapshots, stamp);
        Files.writeString(config, yaml, StandardCharsets.UTF_8);

        String regionPrefix = null;
        Path transportQueues = null;
        boolean queuesDeleted = true;
        try (ClusterControl cluster = ClusterControl.acquire(home, work.resolve("cluster.log"), 1800)) {
            boolean submitted = false;
            try {
                cluster.start();
                cluster.storm(180, "jar", SubmitCommand.topologyJar(home).toString(), SubmitCommand.MAIN,
                        "--config", config.toString());
                submitted = true;
                waitFor(Duration.ofSeconds(90), "two workers of " + NAME, () -> ClusterControl.workers(NAME).size() == 2);
                String topologyId = topologyId();
                regionPrefix = LiveMapBolt.jobId(topologyId);
                transportQueues = OwnerOnlyFiles.perUserDirectory("meridian-transport").resolve(topologyId);
                Path queues = transportQueues;
                waitFor(Duration.ofSeconds(60), "the workers' mmap-transport queues in " + queues,
                        () -> Files.isDirectory(queues));

                CompletableFuture<Integer> feed = CompletableFuture.supplyAsync(() -> Main.run(new String[] {
                    "feed", "--distances", matrix.toString(), "--n", Integer.toString(N), "--rate", "150",
                    "--brokers", BROKERS, "--topic", topic}));
                waitFor(Duration.ofSeconds(240), "a live map frame of at least 600 points", () -> {
                    SnapshotSummary s = SnapshotSummary.readCurrent(snapshots);
                    return s != null && s.points() >= 600;
                });
                assertBulkThreadsInTheirCgroup();
                int port = mapLeaderPort(topologyId);
                ProcessHandle victim = ClusterControl.workers(NAME).stream()
                        .filter(p -> workerPort(p) == port).findFirst()
                        .orElseThrow(() -> new AssertionError("no worker on port " + port));
                long before = SnapshotSummary.readCurrent(snapshots).frame();
                assertTrue(victim.destroyForcibly(), "SIGKILL the worker of map task 0");
                System.out.println("IT: killed the worker of map task 0 (pid " + victim.pid() + ", port " + port
                        + ") after frame " + before + " at " + RowCounts.storedOnDisk(stores) + " rows stored");
                assertEquals(0, feed.get(180, TimeUnit.SECONDS), "feed exit status");
                waitFor(Duration.ofSeconds(240), "all " + N + " rows stored", () -> RowCounts.storedOnDisk(stores) == N);
                waitFor(Duration.ofSeconds(300), "the map settled, holding every stored point with its clusters", () -> {
                    SnapshotSummary s = SnapshotSummary.readCurrent(snapshots);
                    return s != null && s.points() == N && s.clusters() > 0 && s.settled();
                });
                String generation = Files.readString(snapshots.resolve(".generation-" + regionPrefix)).trim();
                assertTrue(Long.parseLong(generation) >= 1, "the group re-formed after the kill (generation "
                        + generation + ")");

                SnapshotSummary last = SnapshotSummary.readCurrent(snapshots);
                String status = stdout(() -> Main.run(new String[] {"status", "--json", "--config", config.toString()}));
                assertTrue(status.contains("\"map\":{\"frame\":" + last.frame() + ",\"points\":" + N + ","),
                        "./meridian status shows the map: " + status);
                JsonNode workers = new ObjectMapper().readTree(status).path("meridian").path("workers");
                assertTrue(workers.size() >= 1, "./meridian status shows each worker's memory: " + status);
                for (JsonNode w : workers) {
                    assertTrue(w.path("heapUsedBytes").asLong() > 0 && w.path("residentAnonymousBytes").asLong() > 0
                            && w.path("residentFileBytes").asLong() > 0, "a worker's heap and resident memory: " + w);
                }
                MdsResult batch = new DaMds(DistanceSource.matrixFile(matrix, N, ByteOrder.LITTLE_ENDIAN),
                        Weighting.unit(), new MdsOptions().seed(1), SingleProcessSync.INSTANCE).run();
                System.out.printf("IT: live map frame %d, N = %d, stress %.6f (batch DA-MDS %.6f), %d clusters,"
                        + " generation %s%n", last.frame(), last.points(), last.stress(), batch.normalizedStress,
                        last.clusters(), generation);
                assertTrue(last.stress() <= 1.02 * batch.normalizedStress, "live stress " + last.stress()
                        + " vs batch " + batch.normalizedStress);
                int[] labels = new int[N];
                for (String line : Files.readAllLines(snapshots.resolve(SnapshotWriter.CURRENT)
                        .resolve(SnapshotWriter.CLUSTERS_FILE))) {
                    String[] f = line.split("\t");
                    labels[Integer.parseInt(f[0])] = Integer.parseInt(f[1]);
                }
                int[] truth = new int[N];
                for (int i = 0; i < N; i++) {
                    truth[i] = blobs.label(i);
                }
                double ari = Ari.adjustedRandIndex(truth, labels);
                System.out.printf("IT: ARI of the live clusters against the blobs %.4f%n", ari);
                assertTrue(ari >= 0.95, "ARI " + ari);

                // storm kill, then storm jar again with map.resumeFrom: the new submission's map starts from this
                // one's last frame (its points, frame numbers going on), not from an anneal of the stored rows
                ClusterControl.killAndAwait(NAME, Duration.ofSeconds(120), 3000);
                submitted = false;
                queuesDeleted = awaitDeleted(transportQueues);
                Path resuming = work.resolve("meridian-map-it-resume.yaml");
                Files.writeString(resuming, yaml.replace("collectiveTimeoutMs: 10000}",
                        "collectiveTimeoutMs: 10000, resumeFrom: " + snapshots + "}"), StandardCharsets.UTF_8);
                cluster.storm(180, "jar", SubmitCommand.topologyJar(home).toString(), SubmitCommand.MAIN,
                        "--config", resuming.toString());
                submitted = true;
                waitFor(Duration.ofSeconds(90), "two workers of the new " + NAME,
                        () -> ClusterControl.workers(NAME).size() == 2);
                String resumedId = topologyId();
                transportQueues = OwnerOnlyFiles.perUserDirectory("meridian-transport").resolve(resumedId);
                String resumedJob = OwnerOnlyFiles.sanitize(LiveMapBolt.jobId(resumedId));
                waitFor(Duration.ofSeconds(180), "a frame of the new submission", () -> {
                    SnapshotSummary s = SnapshotSummary.readCurrent(snapshots);
                    return s != null && s.job().equals(resumedJob);
                });
                SnapshotSummary resumed = SnapshotSummary.readCurrent(snapshots);
                System.out.printf("IT: the new submission's first frame seen: %d, N = %d, stress %.6f, annealed %b"
                        + " (the last of the killed one: frame %d, stress %.6f)%n", resumed.frame(), resumed.points(),
                        resumed.stress(), resumed.annealed(), last.frame(), last.stress());
                assertEquals(N, resumed.points(), "the resumed map holds every point from its first frame");
                assertTrue(resumed.frame() > last.frame(), "frame numbers go on from the killed submission's");
                assertFalse(resumed.annealed(), "a resumed map is not annealed anew");
                assertTrue(resumed.stress() <= 1.02 * batch.normalizedStress, "resumed stress " + resumed.stress()
                        + " vs batch " + batch.normalizedStress);
            } finally {
                if (submitted) {
                    ClusterControl.killAndAwait(NAME, Duration.ofSeconds(120), 3000);
                    queuesDeleted &= awaitDeleted(transportQueues);
                }
            }
        }
        assertTrue(ClusterControl.workers(NAME).isEmpty(), "no worker left behind");
        assertTrue(queuesDeleted, "the killed topology's mmap-transport queues are still in " + transportQueues);
        if (regionPrefix != null) {
            String prefix = regionPrefix;
            try (Stream<Path> users = Files.list(Path.of("/dev/shm"))) {
                List<Path> left = new ArrayList<>();
                for (Path user : users.filter(p -> p.getFileName().toString().startsWith("meridian-")).toList()) {
                    if (Files.isDirectory(user)) {
                        try (Stream<Path> jobs = Files.list(user)) {
                            jobs.filter(j -> j.getFileName().toString().startsWith(prefix)).forEach(left::add);
                        }
                    }
                }
                assertTrue(left.isEmpty(), "regions left in /dev/shm: " + left);
            }
        }
    }

    /**
     * Storm halts the workers before the transport closes: the Supervisor host's sweeper daemon deletes the queues of a
     * topology Nimbus no longer lists. Whether {@code queues} is gone within a minute.
     */
    private static boolean awaitDeleted(Path queues) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (queues != null && Files.exists(queues) && System.nanoTime() < deadline) {
            Thread.sleep(500);
        }
        return queues != null && !Files.exists(queues);
    }

    private static String topologyId() throws Exception {
        Map<String, Object> conf = Utils.readStormConfig();
        try (NimbusClient nimbus = NimbusClient.getConfiguredClient(conf)) {
            for (TopologySummary t : nimbus.getClient().getTopologySummaries()) {
                if (t.get_name().equals(NAME)) {
                    return t.get_id();
                }
            }
        }
        throw new AssertionError(NAME + " is not running");
    }

    /** The worker port of the live map's task 0 (the lowest task id of the component). */
    private static int mapLeaderPort(String topologyId) throws Exception {
        Map<String, Object> conf = Utils.readStormConfig();
        try (NimbusClient nimbus = NimbusClient.getConfiguredClient(conf)) {
            TopologyInfo info = nimbus.getClient().getTopologyInfo(topologyId);
            int lowest = Integer.MAX_VALUE;
            int port = -1;
            for (ExecutorSummary e : info.get_executors()) {
                if (e.get_component_id().equals(MapStreams.MAP) && e.get_executor_info().get_task_start() < lowest) {
                    lowest = e.get_executor_info().get_task_start();
                    port = e.get_port();
                }
            }
            assertTrue(port > 0, "no executor of " + MapStreams.MAP);
            return port;
        }
    }

    /** A worker's port from its command line: Worker topology-id supervisor-id supervisor-port port worker-id. */
    private static int workerPort(ProcessHandle p) {
        List<String> args = ClusterControl.commandLine(p.pid());
        int main = args.indexOf("org.apache.storm.daemon.worker.Worker");
        return main >= 0 && main + 4 < args.size() ? Integer.parseInt(args.get(main + 4)) : -1;
    }

    private static String stdout(Runnable command) {
        java.io.PrintStream saved = System.out;
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        System.setOut(new java.io.PrintStream(out, true, StandardCharsets.UTF_8));
        try {
            command.run();
        } finally {
            System.setOut(saved);
        }
        return out.toString(StandardCharsets.UTF_8);
    }


}
