package io.meridian.cli;

import static io.meridian.cli.ClusterWait.waitFor;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.meridian.config.MeridianConfig;
import io.meridian.live.SnapshotSummary;
import io.meridian.synthetic.SyntheticDataset;
import io.meridian.topology.ClusterControl;
import io.meridian.topology.Processes;
import io.meridian.topology.RowCounts;
import java.io.IOException;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

/**
 * Issue 33, faults 6 and 7, on the two-host testbed ({@code ./meridian testbed start}) under a steady stream with the
 * live map spread over both hosts, one cluster start for both: the leader daemon of the host without map task 0 is
 * SIGKILLed (the rounds fail naming it, task 0 starts the next generation's daemons, the rounds resume), then that
 * host's link to the bridge goes down for 30 s and up again (the rounds fail within seconds naming the peer host,
 * Storm replays the cross-host tuples lost meanwhile, everything resumes). Each fault's error is checked in map task
 * 0's worker log and in {@code ./meridian status}; the times to detect and to recover are printed. At the end every
 * row offered to the topic is stored exactly once (none dead-lettered), counted from the topics and the row stores,
 * and the map holds every point.
 */
class TwoHostFaultsIT {
    private static final String NAME = "meridian-host-faults-it";
    private static final int N = 2000;
    private static final int RATE = 10;
    private static final Path ROW_STORES = MeridianConfig.dataRoot().resolve("rowstore-host-faults-it");
    private static final Path SNAPSHOTS = MeridianConfig.dataRoot().resolve("map-host-faults-it");
    private static final String TOPIC = "rows-host-faults-it";
    private static final String REJECTED = TOPIC + "-rejected";
    private static final Duration LINK_DOWN = Duration.ofSeconds(30);
    private Testbed testbed;
    private Path home;
    private Path config;

    @Test
    void leaderDaemonKilledAndLinkDownLoseNoRowAndTheMapResumesByItself() throws Exception {
        home = Path.of(System.getenv().getOrDefault("MERIDIAN_HOME", "..")).toAbsolutePath().normalize();
        Path work = home.resolve("cli/target/host-faults-it-" + System.currentTimeMillis());
        Files.createDirectories(work);
        String classpath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        // the testbed is one per machine: held under the cluster lock, as the single-host cluster's tests are
        try (ClusterControl lock = ClusterControl.acquire(home, work.resolve("lock.log"), 1800)) {
            testbed = Testbed.startWithCluster(home, classpath);
            try {
                run(work, classpath);
            } finally {
                TwoHostLogs.keep(home, testbed, work, SNAPSHOTS);
                testbed.close();
            }
        }
    }

    private void run(Path work, String classpath) throws Exception {
        Path data = work.resolve("data");
        SyntheticDataset.blobs(N, 8, 5, 2.0, 13).write(data, ByteOrder.LITTLE_ENDIAN);
        config = work.resolve("host-faults-it.yaml");
        // the default collective timeout (30 s): the faults must be found by what watches the daemons and the link,
        // not by a call that waits out its timeout
        Files.writeString(config, String.format("""
                topology: {name: %s, workers: 4, ackers: 1, maxSpoutPending: 500, messageTimeoutSecs: 30,
                           workerHeapMb: 384, transport: mmap}
                ingest:
                  maxPoints: 2048
                  kafka: {brokers: "meridian-h1:9092", topic: %s, rejectedTopic: %s,
                          consumerGroup: host-faults-it, partitions: 2}
                  validation: {parallelism: 2, maxIdAhead: 1024}
                  rowStore: {directory: %s, blockRows: 64, parallelism: 4}
                map: {tasks: 4, initialPoints: 200, maxClusters: 5, snapshotDirectory: %s,
                      topic: map-updates-host-faults-it}
                """, NAME, TOPIC, REJECTED, ROW_STORES, SNAPSHOTS), StandardCharsets.UTF_8);
        testbed.run(Testbed.HOST_1, List.of(home.resolve("deploy/bin/storm").toString(), "jar",
                SubmitCommand.topologyJar(home).toString(), SubmitCommand.MAIN, "--config", config.toString()), 5);
        waitFor(Duration.ofSeconds(240), "the leader daemons of " + NAME + " serving on both hosts",
                () -> lastGeneration() >= 0 && servingOnBothHosts(lastGeneration()));
        // the feed runs on host 1, beside Kafka (it advertises itself by the testbed's host name)
        List<String> feed = new ArrayList<>(testbed.exec(Testbed.HOST_1));
        feed.addAll(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-cp", classpath,
                Main.class.getName(), "feed", "--distances", data.resolve("distances.bin").toString(), "--n",
                Integer.toString(N), "--rate", Integer.toString(RATE), "--config", config.toString()));
        Process feeding = new ProcessBuilder(feed).redirectErrorStream(true)
                .redirectOutput(work.resolve("feed.log").toFile()).start();
        try {
            waitFor(Duration.ofSeconds(180), "a frame of 300 points", () -> {
                SnapshotSummary s = summary();
                return s != null && s.points() >= 300;
            });
            String publisher = publisherHost();
            String other = publisher.equals(Testbed.HOST_1) ? Testbed.HOST_2 : Testbed.HOST_1;
            leaderDaemonKilled(publisher, other);
            linkDown(publisher, other);
            assertTrue(feeding.waitFor(6, TimeUnit.MINUTES), "feed finished");
            assertEquals(0, feeding.exitValue(), "feed: " + Files.readString(work.resolve("feed.log")));
            waitFor(Duration.ofSeconds(300), "every row stored (on the two hosts)", () -> storedOnBothHosts() == N,
                    () -> "stored " + storedOrMinusOne());
            waitFor(Duration.ofSeconds(400), "the map settled with all " + N + " points", () -> {
                SnapshotSummary s = summary();
                return s != null && s.points() == N && s.settled();
            });
            // offered = stored + dead-lettered, from the topics and the stores
            String ends = testbed.run(Testbed.HOST_1, List.of(Path.of(System.getProperty("java.home"), "bin", "java")
                    .toString(), "-cp", classpath, TopicEnds.class.getName(), "meridian-h1:9092", TOPIC, REJECTED), 2);
            Matcher m = Pattern.compile("(?m)^" + Pattern.quote(TOPIC) + " (\\d+)\\n" + Pattern.quote(REJECTED)
                    + " (\\d+)$").matcher(ends.strip());
            assertTrue(m.find(), ends);
            long offered = Long.parseLong(m.group(1));
            long deadLettered = Long.parseLong(m.group(2));
            long stored = storedOnBothHosts();
            System.out.printf(Locale.ROOT, "host-faults: offered %d (topic %s), stored %d (row stores: %d on %s, with"
                    + " its mirror copies; %d on %s), dead-lettered %d (topic %s)%n", offered, TOPIC, stored,
                    storedOnDisk(publisher), publisher, storedOnDisk(other), other, deadLettered, REJECTED);
            assertTrue(storedOnDisk(other) > 0, "the host without task 0 stores the rows of its map tasks' blocks");
            assertEquals(N, offered, "every row fed is in the topic once (idempotent producer)");
            assertEquals(0, deadLettered, "no row dead-lettered");
            assertEquals(offered, stored + deadLettered, "offered = stored + dead-lettered");
        } finally {
            feeding.destroyForcibly();
        }
    }

    /**
     * Fault 6: the leader daemon on the host without map task 0 is SIGKILLed. mpirun ends the job, task 0's rounds
     * fail naming the daemon (group, host, pid), task 0 starts the next generation's daemons and the map resumes.
     */
    private void leaderDaemonKilled(String publisher, String other) throws Exception {
        int generation = lastGeneration();
        List<String> failuresBefore = mapFailures(publisher);
        long pid = leaderDaemonPid(other);
        long frameBefore = summary().frame();
        long killedAt = System.nanoTime();
        ProcessHandle.of(pid).orElseThrow().destroyForcibly();
        String failure = awaitNewFailure(publisher, failuresBefore);
        double detected = seconds(killedAt);
        System.out.printf(Locale.ROOT, "host-faults: leader daemon pid %d on %s SIGKILLed; the rounds failed %.1f s"
                + " later: %s%n", pid, other, detected, failure);
        assertTrue(failure.contains("the leader daemon of group 1 on " + other + " (MPI rank 1, pid " + pid + ") was"
                + " killed by signal 9") && failure.contains("; failed part: the leader daemon on " + other + ";"),
                "task 0's error names the daemon, its host, rank and pid: " + failure);
        assertTrue(detected < 10, "the rounds failed within 10 s of the kill, not after the collective timeout (30 s): "
                + detected);
        double recovered = awaitResumed(publisher, generation, frameBefore, killedAt);
        System.out.printf(Locale.ROOT, "host-faults: fault 6 (leader daemon killed): detected in %.1f s, the map"
                + " re-formed on both hosts and showed a new frame %.1f s after the kill%n", detected, recovered);
        assertShownByStatus(publisher, "the leader daemon on " + other + "; ");
    }

    /** {@code ./meridian status} on task 0's host shows the last failure naming {@code part}, and that it resumed. */
    private void assertShownByStatus(String publisher, String part) {
        String status = status(publisher);
        System.out.println("host-faults: ./meridian status on " + publisher + ":\n" + status);
        String line = status.lines().filter(l -> l.contains("live map's last failure: ")).findFirst().orElse("");
        assertTrue(line.contains(part) && line.contains("; resumed in generation "), "./meridian status shows the"
                + " failure of " + part + "and that the map resumed: " + status);
    }

    /**
     * Fault 7: the link of the host without map task 0 to the bridge goes down for 30 s and up again. The rounds fail
     * within seconds naming the peer host; tuples sent across meanwhile are lost and replayed by Storm's acking.
     */
    private void linkDown(String publisher, String other) throws Exception {
        int generation = lastGeneration();
        List<String> failuresBefore = mapFailures(publisher);
        long frameBefore = summary().frame();
        String link = "mtb-h" + other.substring(other.length() - 1);
        long downAt = System.nanoTime();
        ip("link", "set", link, "down");
        String failure;
        double detected;
        try {
            failure = awaitNewFailure(publisher, failuresBefore);
            detected = seconds(downAt);
            System.out.printf(Locale.ROOT, "host-faults: link %s of %s down; the rounds failed %.1f s later: %s%n",
                    link, other, detected, failure);
            long left = LINK_DOWN.toNanos() - (System.nanoTime() - downAt);
            if (left > 0) {
                Thread.sleep(TimeUnit.NANOSECONDS.toMillis(left));
            }
        } finally {
            ip("link", "set", link, "up");
        }
        long upAt = System.nanoTime();
        double recovered = awaitResumed(publisher, generation, frameBefore, upAt);
        System.out.printf(Locale.ROOT, "host-faults: fault 7 (link down %d s): detected in %.1f s, the map re-formed"
                + " on both hosts and showed a new frame %.1f s after the link came back%n", LINK_DOWN.toSeconds(),
                detected, recovered);
        assertTrue(failure.contains("the link to group 1 on " + other + " is down")
                && failure.contains("; failed part: the link to " + other + ";"), "task 0's error names the host it"
                + " lost the link to: " + failure);
        assertTrue(detected < 10, "the rounds failed within 10 s of the link going down, not after the collective"
                + " timeout (30 s): " + detected);
        assertShownByStatus(publisher, "the link to " + other + "; ");
    }

    private double awaitResumed(String publisher, int generation, long frameBefore, long since) throws Exception {
        waitFor(Duration.ofSeconds(300), "the map re-formed on both hosts with a new frame", () -> {
            int g = lastGeneration();
            SnapshotSummary s = summary();
            return g > generation && servingOnBothHosts(g) && s != null && s.frame() > frameBefore
                    && s.publishedAtMillis() > System.currentTimeMillis() - seconds(since) * 1000;
        });
        return seconds(since);
    }

    private String awaitNewFailure(String publisher, List<String> before) throws Exception {
        String[] found = new String[1];
        waitFor(Duration.ofSeconds(90), "the map's rounds to fail", () -> {
            List<String> now = mapFailures(publisher);
            now.removeAll(before);
            found[0] = now.isEmpty() ? null : now.get(0);
            return found[0] != null;
        });
        return found[0];
    }

    private static double seconds(long sinceNanos) {
        return (System.nanoTime() - sinceNanos) / 1e9;
    }

    private static void ip(String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of("ip"));
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).inheritIO().start();
        assertEquals(0, p.waitFor(), String.join(" ", cmd));
    }

    /** {@code ./meridian status} on task 0's host, where the map's snapshots are. */
    private String status(String host) {
        try {
            List<String> cmd = new ArrayList<>(testbed.exec(host));
            cmd.addAll(List.of("env", "MERIDIAN_CLUSTER_DIR=" + home.resolve(".meridian/testbed").resolve(host),
                    Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-cp",
                    System.getProperty("surefire.test.class.path", System.getProperty("java.class.path")),
                    Main.class.getName(), "status", "--config", config.toString()));
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            p.waitFor(60, TimeUnit.SECONDS);
            return out;
        } catch (IOException | InterruptedException e) {
            return "(status failed: " + e + ")";
        }
    }

    /** The pid of the leader daemon running in {@code host}'s network namespace. */
    private static long leaderDaemonPid(String host) throws Exception {
        String pids = Processes.output(List.of("ip", "netns", "pids", host), Duration.ofSeconds(10));
        for (String p : pids.split("\\s+")) {
            if (!p.isBlank() && String.join(" ", ClusterControl.commandLine(Long.parseLong(p)))
                    .contains("io.meridian.collective.LeaderDaemon")) {
                return Long.parseLong(p);
            }
        }
        throw new AssertionError("no leader daemon runs on " + host + " (pids " + pids.strip() + ")");
    }

    /** Map task 0's "generation N failed" lines in the worker logs of {@code host}. */
    private List<String> mapFailures(String host) throws IOException {
        Path logs = home.resolve(".meridian/testbed").resolve(host).resolve("logs/workers-artifacts");
        List<String> lines = new ArrayList<>();
        if (!Files.isDirectory(logs)) {
            return lines;
        }
        for (Path f : tree(logs).stream().filter(f -> f.getFileName().toString().equals("worker.log")).sorted()
                .toList()) {
            for (String line : Files.readAllLines(f)) {
                if (line.contains("(rank 0 on ") && line.contains("failed, the group re-forms")) {
                    lines.add(line);
                }
            }
        }
        return lines;
    }

    /** The newest generation whose leader daemons task 0 started (-1: none), from their logs' names. */
    private int lastGeneration() throws IOException {
        int last = -1;
        for (String host : List.of(Testbed.HOST_1, Testbed.HOST_2)) {
            for (Path f : tree(testbed.hostPath(host, SNAPSHOTS))) {
                Matcher m = Pattern.compile(".*-g([0-9]+)\\.log").matcher(f.getFileName().toString());
                if (m.matches()) {
                    last = Math.max(last, Integer.parseInt(m.group(1)));
                }
            }
        }
        return last;
    }

    private boolean servingOnBothHosts(int generation) throws IOException {
        for (String host : List.of(Testbed.HOST_1, Testbed.HOST_2)) {
            for (Path log : tree(testbed.hostPath(host, SNAPSHOTS))) {
                if (log.getFileName().toString().endsWith("-g" + generation + ".log")) {
                    List<String> serving = Files.readAllLines(log).stream()
                            .filter(l -> l.startsWith("meridian leader: group") && l.contains(" serving ")).toList();
                    return serving.stream().anyMatch(l -> l.contains(" on " + Testbed.HOST_1 + ","))
                            && serving.stream().anyMatch(l -> l.contains(" on " + Testbed.HOST_2 + ","));
                }
            }
        }
        return false;
    }

    private SnapshotSummary summary() {
        for (String host : List.of(Testbed.HOST_1, Testbed.HOST_2)) {
            SnapshotSummary s = SnapshotSummary.readCurrent(testbed.hostPath(host, SNAPSHOTS));
            if (s != null) {
                return s;
            }
        }
        return null;
    }

    private String publisherHost() {
        return SnapshotSummary.readCurrent(testbed.hostPath(Testbed.HOST_1, SNAPSHOTS)) != null ? Testbed.HOST_1
                : Testbed.HOST_2;
    }

    private long storedOnDisk(String host) throws IOException {
        Path dir = testbed.hostPath(host, ROW_STORES);
        return Files.isDirectory(dir) ? RowCounts.storedOnDisk(dir) : 0;
    }

    /** The distinct rows stored on the two hosts (a mirror copy and its block's own store count once). */
    private long storedOnBothHosts() throws IOException {
        return RowCounts.storedOnDisk(List.of(testbed.hostPath(Testbed.HOST_1, ROW_STORES),
                testbed.hostPath(Testbed.HOST_2, ROW_STORES)));
    }

    private long storedOrMinusOne() {
        try {
            return storedOnBothHosts();
        } catch (IOException e) {
            return -1;
        }
    }

    private static List<Path> tree(Path root) throws IOException {
        if (!Files.exists(root)) {
            return List.of();
        }
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

    /**
     * Run on a testbed host (where the broker's advertised name resolves): prints "TOPIC RECORDS" for each topic, the
     * sum of its partitions' end offsets (records ever written: the topics are never compacted or trimmed here).
     */
    public static final class TopicEnds {
        public static void main(String[] args) throws Exception {
            Properties p = new Properties();
            p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]);
            try (Admin admin = Admin.create(p)) {
                for (int i = 1; i < args.length; i++) {
                    String topic = args[i];
                    var partitions = admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic).partitions();
                    Map<TopicPartition, OffsetSpec> ask = new java.util.HashMap<>();
                    partitions.forEach(pi -> ask.put(new TopicPartition(topic, pi.partition()), OffsetSpec.latest()));
                    long sum = 0;
                    for (var e : admin.listOffsets(ask).all().get().values()) {
                        sum += e.offset();
                    }
                    System.out.println(topic + " " + sum);
                }
            }
        }
    }
}
