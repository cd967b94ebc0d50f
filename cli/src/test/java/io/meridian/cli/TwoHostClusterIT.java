package io.meridian.cli;

import static io.meridian.cli.ClusterWait.waitFor;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.meridian.config.MeridianConfig;
import io.meridian.shm.OwnerOnlyFiles;
import io.meridian.live.SnapshotSummary;
import io.meridian.synthetic.SyntheticDataset;
import io.meridian.metrics.MetricSamples;
import io.meridian.topology.ClusterControl;
import io.meridian.topology.RowCounts;
import java.io.IOException;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The two-host testbed ({@code ./meridian testbed start}: network, UTS and mount namespaces on a private bridge) with
 * the real multi-host deployment on it: ZooKeeper, Kafka and Nimbus on meridian-h1, a Supervisor on each host. The
 * hosts have their own names, addresses and /dev/shm; mpirun places ranks on both through the testbed's rsh agent;
 * a 4-worker topology spreads over both hosts, stores every fed row exactly once, and its transport sends same-host
 * tuples through the mmap queues and cross-host tuples through Netty. Its live map has tasks on both hosts: one memory
 * group per host, whose leader daemons (one per host, started by map task 0 with mpirun) are the only MPI ranks, and
 * the map it settles on has the stress of the same map computed on one host. When the host without map task 0 dies
 * (Supervisor and workers killed), the map's rounds fail within the collective timeout naming it, and resume from the
 * last frame across both hosts once its Supervisor is back.
 */
class TwoHostClusterIT {
    private static final String NAME = "meridian-testbed-it";
    private static final int N = 2000;
    // under the data root, which each testbed host has of its own (Testbed.hostPath)
    private static final Path ROW_STORES = MeridianConfig.dataRoot().resolve("rowstore-testbed-it");
    private static final Path SNAPSHOTS = MeridianConfig.dataRoot().resolve("map-testbed-it");
    private static final int MAP_TASKS = 4;
    private static final int BLOCK_ROWS = 64;
    private static Testbed testbed;
    private static Path home;
    private static Path work;

    @BeforeAll
    static void startTestbed() throws Exception {
        home = Path.of(System.getenv().getOrDefault("MERIDIAN_HOME", "..")).toAbsolutePath().normalize();
        work = home.resolve("cli/target/testbed-it-" + System.currentTimeMillis());
        Files.createDirectories(work);
        // the leader daemons the live map starts run the build's classes: under Maven, the test's class path
        String classpath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        testbed = Testbed.startWithCluster(home, classpath);
    }

    @AfterAll
    static void stopTestbed() throws Exception {
        if (testbed == null) {
            return; // it did not start: its error is the test's
        }
        keepLogs();
        testbed.close();
        assertFalse(Files.exists(Path.of("/run/netns", Testbed.HOST_1)), "stop removed the host namespaces");
        assertFalse(Files.exists(home.resolve(".meridian/testbed")), "stop removed the hosts' files");
    }

    /**
     * The hosts' daemon, worker and leader daemon logs, copied to the test's work directory before {@code stop}
     * removes the hosts' files: what a failure is read from afterwards.
     */
    private static void keepLogs() {
        for (String host : List.of(Testbed.HOST_1, Testbed.HOST_2)) {
            for (Path from : List.of(home.resolve(".meridian/testbed").resolve(host).resolve("logs"),
                    testbed.hostPath(host, SNAPSHOTS))) {
                try {
                    for (Path f : tree(from)) {
                        String name = f.getFileName().toString();
                        if (name.endsWith(".log") || name.endsWith(".out")) {
                            Path to = work.resolve("logs-" + host).resolve(from.relativize(f).toString());
                            Files.createDirectories(to.getParent());
                            Files.copy(f, to, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
                        }
                    }
                } catch (IOException | java.io.UncheckedIOException e) {
                    System.out.println("testbed: could not keep the logs of " + from + ": " + e);
                }
            }
        }
        System.out.println("testbed: the hosts' logs are kept in " + work);
    }

    @Test
    void hostsHaveTheirOwnNamesAddressesAndSharedMemory() throws Exception {
        assertEquals(Testbed.HOST_1, testbed.run(Testbed.HOST_1, List.of("hostname"), 1).strip());
        assertEquals(Testbed.HOST_2, testbed.run(Testbed.HOST_2, List.of("hostname"), 1).strip());
        assertTrue(testbed.run(Testbed.HOST_2, List.of("getent", "hosts", Testbed.HOST_1), 1).contains(".1 "),
                "host 2 resolves host 1 to its bridge address");
        testbed.run(Testbed.HOST_1, List.of("sh", "-c", "echo one > /dev/shm/testbed-it-probe"), 1);
        try {
            String onHost2 = testbed.run(Testbed.HOST_2, List.of("sh", "-c",
                    "test -e /dev/shm/testbed-it-probe && echo seen || echo absent"), 1);
            assertEquals("absent", onHost2.strip(), "host 1's /dev/shm is not host 2's");
        } finally {
            testbed.run(Testbed.HOST_1, List.of("rm", "-f", "/dev/shm/testbed-it-probe"), 1);
        }
    }

    @Test
    void mpirunPlacesRanksOnBothHosts() throws Exception {
        List<String> cmd = new ArrayList<>(List.of("mpirun", "--oversubscribe", "--hostfile", testbed.hostfile(),
                "--map-by", "ppr:2:node", "-np", "4"));
        if ("root".equals(System.getProperty("user.name"))) {
            cmd.add(1, "--allow-run-as-root");
        }
        cmd.add("hostname");
        List<String> hosts = testbed.run(Testbed.HOST_1, cmd, 2).lines().map(String::strip)
                .filter(l -> l.startsWith("meridian-h")).sorted().toList();
        assertEquals(List.of(Testbed.HOST_1, Testbed.HOST_1, Testbed.HOST_2, Testbed.HOST_2), hosts);
    }

    @Test
    void liveMapOnTwoHostsMatchesOneHostAndUsesMmapOnlyWithinAHost() throws Exception {
        Path data = work.resolve("data");
        SyntheticDataset.blobs(N, 8, 5, 2.0, 7).write(data, ByteOrder.LITTLE_ENDIAN);
        Path config = work.resolve("testbed-it.yaml");
        // initialPoints = N: the map starts once every row is stored, so its result does not depend on when rows
        // arrived and a run on one host can be compared with it
        Files.writeString(config, String.format("""
                topology: {name: %s, workers: 4, ackers: 1, maxSpoutPending: 500, messageTimeoutSecs: 30,
                           workerHeapMb: 384, transport: mmap}
                ingest:
                  maxPoints: 2048
                  kafka: {brokers: "meridian-h1:9092", topic: rows-testbed-it, rejectedTopic: rows-testbed-it-rejected,
                          consumerGroup: testbed-it, partitions: 2}
                  validation: {parallelism: 2, maxIdAhead: 1024}
                  rowStore: {directory: %s, blockRows: %d, parallelism: 4}
                map: {tasks: %d, initialPoints: %d, maxClusters: 8, snapshotDirectory: %s, topic: map-updates-testbed-it,
                      collectiveTimeoutMs: 10000}
                """, NAME, ROW_STORES, BLOCK_ROWS, MAP_TASKS, N, SNAPSHOTS));
        testbed.run(Testbed.HOST_1, List.of(home.resolve("deploy/bin/storm").toString(), "jar",
                SubmitCommand.topologyJar(home).toString(), SubmitCommand.MAIN, "--config", config.toString()), 5);
        // the feed runs on host 1 too: Kafka advertises itself by the testbed's host name
        List<String> feed = List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", System.getProperty("java.class.path"), Main.class.getName(), "feed",
                "--distances", data.resolve("distances.bin").toString(), "--n", Integer.toString(N),
                "--rate", "1000", "--config", config.toString());
        waitFor(Duration.ofSeconds(180), "two workers of " + NAME + " on each host serving their metrics",
                () -> endpoints(Testbed.HOST_1).size() >= 2 && endpoints(Testbed.HOST_2).size() >= 2
                        && reported("jvm_threads_current") > 0);
        testbed.run(Testbed.HOST_1, feed, 3);
        // the workers' reports catch up with the row stores
        waitFor(Duration.ofSeconds(240), "the workers' metrics to count " + N + " stored rows",
                () -> reported("meridian_rows_stored_total") == N, TwoHostClusterIT::storedByWorker);
        waitFor(Duration.ofSeconds(300), "the live map settled with all " + N + " points", () -> {
            SnapshotSummary s = summary();
            return s != null && s.points() == N && s.settled();
        });
        String publisher = publisherHost();
        String other = publisher.equals(Testbed.HOST_1) ? Testbed.HOST_2 : Testbed.HOST_1;
        long onOther = storedOnDisk(other);
        assertEquals(N, RowCounts.storedOnDisk(List.of(testbed.hostPath(publisher, ROW_STORES),
                testbed.hostPath(other, ROW_STORES))), "the two hosts' row stores hold every row");
        assertTrue(onOther > 0 && onOther < N, "the other host stores the rows of its map tasks' blocks: " + onOther);
        waitFor(Duration.ofSeconds(30), "the mirrored rows counted", () -> reported("meridian_rows_mirrored_total") == onOther,
                TwoHostClusterIT::storedByWorker);
        // the mirror on the publishing host keeps only the rows task 0 may still read: once DA-PWC has covered every
        // point and the snapshot holds them all, every mirror block wholly below N is dropped
        long ownOnPublisher = N - onOther;
        long lastBlockRows = N % BLOCK_ROWS;
        waitFor(Duration.ofSeconds(60), "the publishing host's mirror dropped to at most the last block's "
                + lastBlockRows + " rows", () -> storedOnDisk(publisher) <= ownOnPublisher + lastBlockRows
                && reported("meridian_rows_mirror_blocks_dropped_total") > 0,
                () -> storedOnDiskOrMinusOne(publisher) + " rows on " + publisher + " (" + ownOnPublisher
                        + " its own)");

        long sameHostMmap = 0;
        long crossHostNetty = 0;
        for (MetricSamples.Sample link : scrapeAll().get("meridian_transport_sent_messages_total", x -> true)) {
            String host = link.label("host");
            String peerHost = link.label("peer").substring(0, link.label("peer").lastIndexOf(':'));
            if (link.label("way").equals("mmap")) {
                assertEquals(host, peerHost, "an mmap link leaves the host: " + link);
                sameHostMmap += (long) link.value();
            } else {
                assertEquals("netty", link.label("way"), link.toString());
                assertFalse(host.equals(peerHost), "a Netty link within the host: " + link);
                crossHostNetty += (long) link.value();
            }
        }
        assertTrue(sameHostMmap > 0, "tuples between workers of one host went through the mmap queues");
        assertTrue(crossHostNetty > 0, "tuples between the hosts went through Netty");

        // the collectives' metrics: MPI traffic between the two leader daemons only, none in any worker
        List<String> leaderEndpoints = leaderEndpoints(publisher, 0);
        assertEquals(2, leaderEndpoints.size(), "each leader daemon serves its metrics: " + leaderEndpoints);
        for (String url : leaderEndpoints) {
            MetricSamples leader = MetricSamples.scrape(url, Duration.ofSeconds(5));
            assertTrue(leader.sum("meridian_collective_bytes_total", x -> x.label("level").equals("mpi")) > 0,
                    url + ": the leader exchanged with the other host's leader over MPI");
        }
        assertEquals(0, scrapeAll().sum("meridian_collective_bytes_total", x -> x.label("level").equals("mpi")),
                "no worker takes part in MPI");
        assertTrue(scrapeAll().sum("meridian_collective_bytes_total", x -> x.label("level").equals("shared_memory"))
                > 0, "the map tasks exchange through their host's region");

        // the MPI job of the map's collectives: one leader daemon per host, nothing else
        List<String> leaders = leaderLines(publisher, 0);
        assertEquals(2, leaders.size(), "two MPI ranks, the leader daemons: " + leaders);
        assertTrue(leaders.stream().anyMatch(l -> l.contains(" on " + Testbed.HOST_1 + ","))
                && leaders.stream().anyMatch(l -> l.contains(" on " + Testbed.HOST_2 + ",")), "one on each host: "
                + leaders);

        // DA-PWC distributed across the hosts: each leader daemon leads the clustering group too (in the same MPI
        // job), and the settled frame carries its clusters
        List<String> clustering = clusteringLeaderLines(publisher, 0);
        assertEquals(2, clustering.size(), "each host's leader daemon also leads DA-PWC's group: " + clustering);
        assertTrue(clustering.stream().allMatch(l -> l.contains("-g0-pwc at ")), clustering.toString());

        SnapshotSummary streamed = summary();
        assertTrue(streamed.clusters() >= 2, "the settled frame across hosts has DA-PWC's clusters: " + streamed);
        double single = SingleHostMap.settledStress(unionOfRowStores(publisher, other),
                MeridianConfig.load(config), MAP_TASKS, N, work.resolve("single-host"));
        double relative = Math.abs(streamed.stress() - single) / single;
        System.out.printf("testbed: %d rows stored (%d on %s, %d on %s, %d mirrored); tuples same-host through mmap"
                        + " %d, cross-host through Netty %d; live map on two hosts: frame %d, stress %.12f, %d DA-PWC"
                        + " clusters; the same map on one host: %.12f (relative difference %.3g)%n", reported("meridian_rows_stored_total"),
                storedOnDisk(Testbed.HOST_1), Testbed.HOST_1, storedOnDisk(Testbed.HOST_2), Testbed.HOST_2,
                reported("meridian_rows_mirrored_total"), sameHostMmap, crossHostNetty, streamed.frame(), streamed.stress(),
                streamed.clusters(), single, relative);
        // the two runs sum the tasks' shares in another order (one region of 4 members, or two of 2 and MPI between
        // them): the same map up to rounding, carried through the anneal's iterations
        assertTrue(relative <= 1e-9, "two hosts " + streamed.stress() + " vs one host " + single);

        hostLossFailsTheRoundsFastAndTheMapResumesWhenItIsBack(publisher, other, summary());
        killedTopologyLeavesNothingInEitherHostsMemoryFiles();
    }

    /**
     * Storm halts a killed topology's workers before the transport removes its queues: the sweeper beside each
     * Supervisor deletes them on its own host once Nimbus no longer lists the topology, on the host without Nimbus too.
     * The map's regions go with their leader daemons (task 0 stops them); those of the generation the host loss ended
     * went when the next generation's region was made on that host. Nothing of the topology stays in either host's
     * /dev/shm: queues, doorbells, regions.
     */
    private static void killedTopologyLeavesNothingInEitherHostsMemoryFiles() throws Exception {
        String root = OwnerOnlyFiles.perUserDirectory("meridian-transport").toString();
        for (String host : List.of(Testbed.HOST_1, Testbed.HOST_2)) {
            assertTrue(leftInMemoryFiles(host).stream().anyMatch(d -> d.startsWith(root + "/" + NAME + "-")),
                    "the topology's mmap-transport queues on " + host + " in " + root + ": " + leftInMemoryFiles(host));
        }
        long killedAt = System.nanoTime();
        testbed.run(Testbed.HOST_1, List.of(home.resolve("deploy/bin/storm").toString(), "kill", NAME, "-w", "1"), 2);
        List<List<String>> left = new ArrayList<>();
        // a region's job directory goes once it has been empty for a minute (a leader may be about to create in it),
        // so the last of it can take 60 s + a sweep interval after the kill: 14-18 s in most runs, 79 s in one
        waitFor(Duration.ofSeconds(180), "nothing of the killed topology in either host's /dev/shm", () -> {
            left.clear();
            left.add(leftInMemoryFiles(Testbed.HOST_1));
            left.add(leftInMemoryFiles(Testbed.HOST_2));
            return left.get(0).isEmpty() && left.get(1).isEmpty();
        }, () -> "left: " + left);
        System.out.printf("testbed: %s killed; nothing of it in either host's /dev/shm %.1f s later%n", NAME,
                (System.nanoTime() - killedAt) / 1e9);
    }

    /** What of this test's topology is in {@code host}'s own /dev/shm: one entry per topology or region directory. */
    private static List<String> leftInMemoryFiles(String host) throws IOException, InterruptedException {
        return testbed.run(host, List.of("sh", "-c", "ls -d /dev/shm/meridian-*/" + NAME + "-* 2>/dev/null || true"), 1)
                .lines().map(String::strip).filter(l -> !l.isEmpty()).toList();
    }

    /**
     * What a crash of the host without map task 0 does: its Supervisor and workers die at once (SIGKILL). The map's
     * rounds fail within the collective timeout with an error that names that host; once its Supervisor is back (it
     * restarts the workers Nimbus still assigns to it) the map re-forms across both hosts and goes on from its last
     * frame with every point.
     */
    private static void hostLossFailsTheRoundsFastAndTheMapResumesWhenItIsBack(String publisher, String other,
                                                                               SnapshotSummary before) throws Exception {
        List<String> failuresBefore = mapFailures(publisher);
        int generationsBefore = lastGeneration(publisher);
        String dir = home.resolve(".meridian/testbed").resolve(other).toString();
        long killedAt = System.nanoTime();
        // "[.]": the pattern does not match the command line of a shell that runs pkill with it
        for (String marker : List.of("meridian[.]cluster[.]daemon=supervisor@", "meridian[.]cluster[.]dir=")) {
            Process kill = new ProcessBuilder("pkill", "-KILL", "-f", marker + dir).inheritIO().start();
            assertEquals(0, kill.waitFor(), "pkill found the processes of " + marker + dir);
        }
        String[] failure = new String[1];
        waitFor(Duration.ofSeconds(60), "the map's rounds to fail after " + other + " died", () -> {
            List<String> now = mapFailures(publisher);
            now.removeAll(failuresBefore);
            failure[0] = now.isEmpty() ? null : now.get(0);
            return failure[0] != null;
        });
        double failedAfter = (System.nanoTime() - killedAt) / 1e9;
        System.out.printf("testbed: %s killed; the map's rounds failed %.1f s later: %s%n", other, failedAfter,
                failure[0]);
        assertTrue(failure[0].contains("the leader daemons said: group 1 on " + other + " failed: "),
                "the error names the host that is gone: " + failure[0]);
        assertTrue(failedAfter < 10 + 10, "failed within the collective timeout (10 s) and its detection: "
                + failedAfter + " s");

        long restartAt = System.nanoTime();
        testbed.run(other, List.of(home.resolve("deploy/bin/meridian-cluster").toString(), "start"), 5);
        waitFor(Duration.ofSeconds(300), "the map re-formed on both hosts and showed a new frame of all " + N
                + " points", () -> {
            SnapshotSummary s = summary();
            return lastGeneration(publisher) > generationsBefore && servingOnBothHosts(publisher, lastGeneration(publisher))
                    && s != null && s.points() == N && s.frame() > before.frame();
        });
        SnapshotSummary after = summary();
        System.out.printf("testbed: %s back; the map re-formed across both hosts in generation %d and showed frame %d"
                        + " (N = %d, stress %.9f; frame %d before the loss) %.1f s after the restart%n", other,
                lastGeneration(publisher), after.frame(), after.points(), after.stress(), before.frame(),
                (System.nanoTime() - restartAt) / 1e9);
        assertTrue(after.stress() <= before.stress() * 1.001, "resumed from the last frame, not from scratch: "
                + after.stress() + " vs " + before.stress());
    }

    /** Map task 0's "generation N failed" lines in the worker logs of {@code host}. */
    private static List<String> mapFailures(String host) throws IOException {
        Path logs = home.resolve(".meridian/testbed").resolve(host).resolve("logs/workers-artifacts");
        List<String> lines = new ArrayList<>();
        if (!Files.isDirectory(logs)) {
            return lines;
        }
        for (Path f : tree(logs).stream().filter(f -> f.getFileName().toString().equals("worker.log")).sorted()
                .toList()) {
            for (String line : Files.readAllLines(f)) {
                // task 0's (rank 0's) lines: it started the leader daemons and reports what they said
                if (line.contains("(rank 0 on ") && line.contains("failed, the group re-forms")) {
                    lines.add(line);
                }
            }
        }
        return lines;
    }

    /** The newest generation whose leader daemons task 0 started (-1: none), from their logs' names. */
    private static int lastGeneration(String publisher) throws IOException {
        int last = -1;
        for (Path f : tree(testbed.hostPath(publisher, SNAPSHOTS))) {
            java.util.regex.Matcher m = java.util.regex.Pattern.compile(".*-g([0-9]+)\\.log")
                    .matcher(f.getFileName().toString());
            if (m.matches()) {
                last = Math.max(last, Integer.parseInt(m.group(1)));
            }
        }
        return last;
    }

    private static boolean servingOnBothHosts(String publisher, int generation) throws IOException {
        List<String> serving = leaderLines(publisher, generation);
        return serving.stream().anyMatch(l -> l.contains(" on " + Testbed.HOST_1 + ","))
                && serving.stream().anyMatch(l -> l.contains(" on " + Testbed.HOST_2 + ","));
    }

    private static SnapshotSummary summary() {
        for (String host : List.of(Testbed.HOST_1, Testbed.HOST_2)) {
            SnapshotSummary s = SnapshotSummary.readCurrent(testbed.hostPath(host, SNAPSHOTS));
            if (s != null) {
                return s;
            }
        }
        return null;
    }

    private static String publisherHost() {
        return SnapshotSummary.readCurrent(testbed.hostPath(Testbed.HOST_1, SNAPSHOTS)) != null ? Testbed.HOST_1
                : Testbed.HOST_2;
    }

    /** The leader daemons' "serving" lines of the map's generation {@code generation}, from its launcher's log. */
    private static List<String> leaderLines(String publisher, int generation) throws IOException {
        Path log = tree(testbed.hostPath(publisher, SNAPSHOTS)).stream()
                .filter(f -> f.getFileName().toString().endsWith("-g" + generation + ".log")).findFirst()
                .orElseThrow(() -> new AssertionError("no leader daemon log under " + SNAPSHOTS + " on " + publisher));
        return Files.readAllLines(log).stream().filter(l -> l.startsWith("meridian leader: group")
                && l.contains(" serving ")).toList();
    }

    /** The leader daemons' lines of generation {@code generation} saying they also lead DA-PWC's group. */
    private static List<String> clusteringLeaderLines(String publisher, int generation) throws IOException {
        Path log = tree(testbed.hostPath(publisher, SNAPSHOTS)).stream()
                .filter(f -> f.getFileName().toString().endsWith("-g" + generation + ".log")).findFirst()
                .orElseThrow(() -> new AssertionError("no leader daemon log under " + SNAPSHOTS + " on " + publisher));
        return Files.readAllLines(log).stream().filter(l -> l.startsWith("meridian leader: group")
                && l.contains(" also serves job ")).toList();
    }

    /**
     * The metrics endpoints the leader daemons of generation {@code generation} said they serve, at their hosts'
     * addresses on the testbed's bridge.
     */
    private static List<String> leaderEndpoints(String publisher, int generation) throws IOException {
        Path log = tree(testbed.hostPath(publisher, SNAPSHOTS)).stream()
                .filter(f -> f.getFileName().toString().endsWith("-g" + generation + ".log")).findFirst()
                .orElseThrow(() -> new AssertionError("no leader daemon log under " + SNAPSHOTS + " on " + publisher));
        List<String> out = new ArrayList<>();
        for (String line : Files.readAllLines(log)) {
            java.util.regex.Matcher m = java.util.regex.Pattern
                    .compile("meridian leader: group \\d+ serves metrics on http://([^:/]+):(\\d+)/metrics").matcher(line);
            if (m.find()) {
                out.add("http://" + testbed.address(m.group(1)) + ":" + m.group(2) + "/metrics");
            }
        }
        return out;
    }

    /**
     * The sum of {@code name} over every worker of the topology (what they counted since they started); -1 while an
     * endpoint does not answer yet (a worker still starting).
     */
    private static long reported(String name) throws Exception {
        try {
            return Math.round(scrapeAll().sum(name, x -> true));
        } catch (java.io.UncheckedIOException e) {
            return -1;
        }
    }

    /**
     * The files under {@code root}, listed again when one vanishes during the walk (the map replaces its generation
     * and snapshot files by atomic renames while the test looks).
     */
    private static List<Path> tree(Path root) throws IOException {
        for (int attempt = 0; ; attempt++) {
            try (Stream<Path> files = Files.walk(root)) {
                return files.toList();
            } catch (java.io.UncheckedIOException | java.nio.file.NoSuchFileException e) {
                if (attempt == 20) {
                    throw e;
                }
            }
        }
    }

    /** What each row-store task counted, for a failure's message. */
    private static String storedByWorker() {
        try {
            StringBuilder out = new StringBuilder("stored/mirrored by row-store task:");
            for (String host : List.of(Testbed.HOST_1, Testbed.HOST_2)) {
                for (String url : endpoints(host)) {
                    MetricSamples m = MetricSamples.scrape(url, Duration.ofSeconds(5));
                    for (MetricSamples.Sample s : m.get("meridian_rows_stored_total", x -> true)) {
                        out.append(' ').append(url).append(" task ").append(s.label("task")).append(": ")
                                .append((long) s.value()).append('/').append((long) m.sum("meridian_rows_mirrored_total",
                                        x -> x.label("task").equals(s.label("task"))));
                    }
                }
            }
            return out.toString();
        } catch (Exception e) {
            return "(cannot scrape: " + e.getMessage() + ")";
        }
    }

    /** Every worker's metrics, scraped from this (the root) namespace through the testbed's bridge. */
    private static MetricSamples scrapeAll() throws Exception {
        List<MetricSamples> parts = new ArrayList<>();
        for (String host : List.of(Testbed.HOST_1, Testbed.HOST_2)) {
            for (String url : endpoints(host)) {
                parts.add(MetricSamples.scrape(url, Duration.ofSeconds(5)));
            }
        }
        return MetricSamples.merge(parts);
    }

    /**
     * The metrics endpoints of the topology's workers on {@code host}: each worker process of that host's Supervisor
     * (its cluster directory is in its command line) serves on its slot port + 1000 at the host's address.
     */
    private static List<String> endpoints(String host) throws IOException {
        String clusterDir = home.resolve(".meridian/testbed").resolve(host).toString();
        String address = testbed.address(host);
        List<String> out = new ArrayList<>();
        for (ProcessHandle worker : ClusterControl.workers(NAME)) {
            List<String> args = ClusterControl.commandLine(worker.pid());
            if (args.stream().anyMatch(a -> a.startsWith("-Dmeridian.cluster.dir=" + clusterDir))) {
                args.stream().filter(a -> a.startsWith("-Dworker.port=")).findFirst().ifPresent(a -> out.add(
                        "http://" + address + ":" + (Integer.parseInt(a.substring("-Dworker.port=".length())) + 1000)
                                + "/metrics"));
            }
        }
        return out;
    }

    /**
     * One directory with every row, for the one-host map to read: the other host's blocks, then the publishing host's
     * (its own blocks, and its mirror copies, which equal the other host's).
     */
    private static Path unionOfRowStores(String publisher, String other) throws IOException {
        Path union = work.resolve("union-row-stores");
        Files.createDirectories(union);
        for (String host : List.of(other, publisher)) {
            try (var files = Files.newDirectoryStream(testbed.hostPath(host, ROW_STORES), "block-*")) {
                for (Path f : files) {
                    Files.copy(f, union.resolve(f.getFileName()), java.nio.file.StandardCopyOption.REPLACE_EXISTING);
                }
            }
        }
        return union;
    }

    private static long storedOnDiskOrMinusOne(String host) {
        try {
            return storedOnDisk(host);
        } catch (IOException e) {
            return -1;
        }
    }

    private static long storedOnDisk(String host) throws IOException {
        Path dir = testbed.hostPath(host, ROW_STORES);
        return Files.isDirectory(dir) ? RowCounts.storedOnDisk(dir) : 0;
    }
}
