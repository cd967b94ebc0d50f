package io.meridian.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.meridian.topology.ClusterControl;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The real single-host cluster through the same script users run: {@code ./meridian cluster start} brings up
 * ZooKeeper, Kafka (KRaft), Nimbus, a Supervisor, its queue sweeper, Prometheus and its targets daemon that all answer; a second start is harmless; a record makes a
 * round trip through the broker; {@code stop} leaves no process, pid file or listening port behind.
 * It uses (and stops) the cluster of the checkout in MERIDIAN_HOME. Clusters of other checkouts on this host use the
 * same ports, so the test holds {@code /tmp/meridian-cluster.lock} (flock) while it runs, unless a process it was
 * started from already holds it ({@code flock /tmp/meridian-cluster.lock mvn verify}).
 */
class ClusterLifecycleIT {
    private static final List<String> DAEMONS =
            List.of("zookeeper", "kafka", "nimbus", "supervisor", "sweeper", "targets", "prometheus");
    /** "kafka       up    pid 1234    ... at localhost:9092" */
    private static final Pattern STATUS_LINE = Pattern.compile(
            "^(zookeeper|kafka|nimbus|supervisor|sweeper|targets|prometheus)\\s+(up|down)\\s+(?:pid (\\d+))?.*$", Pattern.MULTILINE);
    private static final Pattern ADDRESS = Pattern.compile(" at ([^\\s,:]+):(\\d+)");

    private static final Path LOCK = Path.of("/tmp/meridian-cluster.lock");

    private static Path home;
    private static Path clusterDir;
    private static boolean started;
    /** A {@code flock LOCK cat} child holding the lock while its stdin is open; null if an ancestor holds it. */
    private static Process lockHolder;

    @BeforeAll
    static void locate() {
        String env = System.getenv("MERIDIAN_HOME");
        home = Path.of(env != null ? env : "..").toAbsolutePath().normalize();
        assertTrue(Files.isExecutable(home.resolve("meridian")), "no ./meridian launcher in " + home);
        String dir = System.getenv("MERIDIAN_CLUSTER_DIR");
        clusterDir = dir != null ? Path.of(dir) : home.resolve(".meridian/cluster");
    }

    @BeforeAll
    static void takeClusterLock() throws IOException {
        if (ancestorHoldsLock()) {
            return;
        }
        long t0 = System.nanoTime();
        lockHolder = new ProcessBuilder("flock", "-w", "1800", LOCK.toString(), "-c", "echo locked; exec cat")
                .redirectErrorStream(true).start();
        String line = new BufferedReader(new InputStreamReader(
                lockHolder.getInputStream(), StandardCharsets.UTF_8)).readLine();
        assertEquals("locked", line, "could not take " + LOCK + " within 30 minutes");
        System.out.printf("waited %d s for %s%n", TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - t0), LOCK);
    }

    @AfterAll
    static void leaveNothingRunning() throws IOException {
        try {
            if (started) {
                meridian(Duration.ofMinutes(3), "cluster", "stop");
            }
        } finally {
            if (lockHolder != null) {
                lockHolder.getOutputStream().close();   // cat ends, flock releases the lock
                lockHolder.destroy();
            }
        }
    }

    private static boolean ancestorHoldsLock() {
        for (var p = ProcessHandle.current().parent(); p.isPresent(); p = p.get().parent()) {
            Path fds = Path.of("/proc", Long.toString(p.get().pid()), "fd");
            try (Stream<Path> links = Files.list(fds)) {
                if (links.anyMatch(l -> {
                    try {
                        return Files.readSymbolicLink(l).equals(LOCK);
                    } catch (IOException e) {
                        return false;
                    }
                })) {
                    return true;
                }
            } catch (IOException e) {
                // a process we may not inspect holds nothing we could use
            }
        }
        return false;
    }

    @Test
    void startStatusRestartRoundTripStop() throws Exception {
        started = true;
        long t0 = System.nanoTime();
        // the first start may assemble the runtime from Maven Central
        Result start = meridian(Duration.ofMinutes(10), "cluster", "start");
        long startMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
        assertEquals(0, start.code, "cluster start failed:\n" + start.output);
        Map<String, Long> pids = upDaemons(start.output);
        assertEquals(DAEMONS, List.copyOf(pids.keySet()), "start's status shows every daemon up:\n" + start.output);

        Result status = meridian(Duration.ofMinutes(1), "cluster", "status");
        assertEquals(0, status.code, "status exits 0 when all are up:\n" + status.output);
        assertEquals(pids, upDaemons(status.output), "status shows the daemons start started:\n" + status.output);
        for (String d : DAEMONS) {
            assertTrue(Files.isRegularFile(clusterDir.resolve("run/" + d + ".pid")), "pid file of " + d);
            assertTrue(Files.size(clusterDir.resolve("logs/" + d + ".log")) > 0, "log file of " + d);
        }

        Result again = meridian(Duration.ofMinutes(3), "cluster", "start");
        assertEquals(0, again.code, "a second start is harmless:\n" + again.output);
        assertEquals(pids, upDaemons(again.output), "a second start keeps the same daemons:\n" + again.output);
        assertEquals(DAEMONS.size(), count(again.output, "already running"), again.output);

        Map<String, InetSocketAddress> addresses = addresses(status.output);
        InetSocketAddress kafka = addresses.get("kafka");
        kafkaRoundTrip(kafka.getHostString() + ":" + kafka.getPort());

        t0 = System.nanoTime();
        Result stop = meridian(Duration.ofMinutes(3), "cluster", "stop");
        long stopMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
        assertEquals(0, stop.code, "cluster stop failed:\n" + stop.output);
        started = false;
        System.out.printf("cluster start %d ms (to all answering), stop %d ms%n", startMs, stopMs);

        Result after = meridian(Duration.ofMinutes(1), "cluster", "status");
        assertNotEquals(0, after.code, "status exits non-zero when daemons are down:\n" + after.output);
        assertEquals(DAEMONS.size(), count(after.output, "not running"), after.output);
        for (Map.Entry<String, Long> e : pids.entrySet()) {
            assertFalse(ProcessHandle.of(e.getValue()).map(ProcessHandle::isAlive).orElse(false),
                    e.getKey() + " (pid " + e.getValue() + ") is still alive after stop");
            assertFalse(Files.exists(clusterDir.resolve("run/" + e.getKey() + ".pid")), "pid file of " + e.getKey());
        }
        List<String> left = clusterProcesses();
        assertTrue(left.isEmpty(), "processes of this cluster left after stop: " + left);
        for (Map.Entry<String, InetSocketAddress> e : addresses.entrySet()) {
            assertFalse(answers(e.getValue()), e.getKey() + "'s port " + e.getValue() + " still answers after stop");
        }
    }

    private static void kafkaRoundTrip(String bootstrap) throws Exception {
        String topic = "meridian-it-" + ProcessHandle.current().pid() + "-" + System.currentTimeMillis();
        int records = 200;
        Properties admin = new Properties();
        admin.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        try (Admin a = Admin.create(admin)) {
            a.createTopics(List.of(new NewTopic(topic, 2, (short) 1))).all().get(60, TimeUnit.SECONDS);

            Properties p = new Properties();
            p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
            p.put(ProducerConfig.ACKS_CONFIG, "all");
            try (KafkaProducer<String, String> producer =
                         new KafkaProducer<>(p, new StringSerializer(), new StringSerializer())) {
                for (int i = 0; i < records; i++) {
                    producer.send(new ProducerRecord<>(topic, Integer.toString(i), "row-" + i)).get(30, TimeUnit.SECONDS);
                }
            }

            Properties c = new Properties();
            c.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
            c.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
            Map<String, String> seen = new HashMap<>();
            try (KafkaConsumer<String, String> consumer =
                         new KafkaConsumer<>(c, new StringDeserializer(), new StringDeserializer())) {
                List<TopicPartition> partitions = List.of(new TopicPartition(topic, 0), new TopicPartition(topic, 1));
                consumer.assign(partitions);
                consumer.seekToBeginning(partitions);
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
                while (seen.size() < records && System.nanoTime() < deadline) {
                    for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(500))) {
                        assertNull(seen.put(r.key(), r.value()), "record " + r.key() + " read twice");
                    }
                }
            }
            assertEquals(records, seen.size(), "records read back from " + topic);
            for (int i = 0; i < records; i++) {
                assertEquals("row-" + i, seen.get(Integer.toString(i)), "value of record " + i);
            }
            a.deleteTopics(List.of(topic)).all().get(60, TimeUnit.SECONDS);
        }
    }

    /** The daemons a status table shows up, in its order, with their pids. */
    private static Map<String, Long> upDaemons(String output) {
        Map<String, Long> up = new LinkedHashMap<>();
        Matcher m = STATUS_LINE.matcher(output);
        while (m.find()) {
            if (m.group(2).equals("up")) {
                up.put(m.group(1), Long.parseLong(m.group(3)));
            }
        }
        return up;
    }

    private static Map<String, InetSocketAddress> addresses(String status) {
        Map<String, InetSocketAddress> out = new HashMap<>();
        for (String line : status.split("\n")) {
            Matcher name = STATUS_LINE.matcher(line);
            Matcher at = ADDRESS.matcher(line);
            if (name.matches() && at.find()) {
                out.put(name.group(1), InetSocketAddress.createUnresolved(at.group(1), Integer.parseInt(at.group(2))));
            }
        }
        assertTrue(out.keySet().containsAll(List.of("zookeeper", "kafka", "nimbus", "prometheus")), "addresses in:\n" + status);
        return out;
    }

    private static boolean answers(InetSocketAddress address) {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress(address.getHostString(), address.getPort()), 1000);
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    /**
     * Processes whose command line names this cluster's directory (daemons and workers carry it; Prometheus as its
     * argv[0], which ProcessHandle.Info's arguments leave out, hence the whole command line from /proc).
     */
    private static List<String> clusterProcesses() {
        String daemonMark = "@" + clusterDir.toAbsolutePath().normalize();
        String workerMark = "-Dmeridian.cluster.dir=" + clusterDir.toAbsolutePath().normalize();
        List<String> found = new ArrayList<>();
        ProcessHandle.allProcesses().forEach(p -> {
            for (String arg : ClusterControl.commandLine(p.pid())) {
                if ((arg.startsWith("-Dmeridian.cluster.daemon=") && arg.endsWith(daemonMark)) || arg.equals(workerMark)) {
                    found.add(p.pid() + " " + arg);
                }
            }
        });
        return found;
    }

    private static int count(String text, String what) {
        int n = 0;
        for (int i = text.indexOf(what); i >= 0; i = text.indexOf(what, i + 1)) {
            n++;
        }
        return n;
    }

    private record Result(int code, String output) {
    }

    private static Result meridian(Duration timeout, String... args) {
        List<String> command = new ArrayList<>();
        command.add(home.resolve("meridian").toString());
        command.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(command).directory(home.toFile()).redirectErrorStream(true);
        ClusterControl.classpathForDaemons().ifPresent(cp -> pb.environment().put("MERIDIAN_CLASSPATH", cp));
        try {
            Path log = Files.createTempFile("meridian-cluster-it", ".log");
            try {
                pb.redirectOutput(log.toFile());
                Process process = pb.start();
                if (!process.waitFor(timeout.toSeconds(), TimeUnit.SECONDS)) {
                    process.destroyForcibly();
                    fail(String.join(" ", args) + " did not finish within " + timeout + ":\n" + Files.readString(log));
                }
                String output = Files.readString(log, StandardCharsets.UTF_8);
                System.out.println("$ ./meridian " + String.join(" ", args) + " -> " + process.exitValue() + "\n" + output);
                return new Result(process.exitValue(), output);
            } finally {
                Files.deleteIfExists(log);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
