package io.meridian.topology.probe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.meridian.topology.ClusterControl;
import io.meridian.transport.mmap.MmapTransport;
import io.meridian.transport.mmap.TransportConfig;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;
import java.util.stream.Stream;
import org.apache.storm.Config;
import org.apache.storm.StormSubmitter;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * The transport on the real single-host cluster (started like every cluster test, through {@link ClusterControl}: the
 * cluster lock, the script behind {@code ./meridian cluster start}): a spout and a bolt in two worker processes. Same counts over Netty and the mmap transport; a worker killed with SIGKILL and
 * restarted by its Supervisor loses nothing (acking replays what was in flight, the queue keeps the rest); a slowed
 * bolt makes the unbounded spout slow down while queue files and worker memory stay bounded.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class TransportClusterIT {
    private static final Path HOME = Paths.get(System.getenv().getOrDefault("MERIDIAN_HOME", "..")).toAbsolutePath().normalize();
    private static ClusterControl cluster;
    private static Path work;
    private static Path queues;
    private static int run;

    @BeforeAll
    static void startCluster() throws Exception {
        assertTrue(Files.isExecutable(HOME.resolve("deploy/bin/meridian-cluster")),
            "the real cluster script deploy/bin/meridian-cluster is missing");
        work = Files.createTempDirectory("transport-cluster-it");
        queues = Files.createTempDirectory(Paths.get(new File("/dev/shm").isDirectory() ? "/dev/shm" : "/tmp"), "transport-cluster-it-q");
        cluster = ClusterControl.acquire(HOME, work.resolve("cluster.log"), 1800);
        cluster.start();
    }

    @AfterAll
    static void stopCluster() throws Exception {
        if (cluster == null) {
            return;
        }
        try {
            cluster.close();
        } finally {
            deleteTree(queues);
        }
    }

    @Test
    @Order(1)
    void nettyAndMmapDeliverTheSameCounts() throws Exception {
        long total = 30_000;
        long[] netty = runToCompletion("netty", total, false, null);
        boolean[] sawQueueFiles = new boolean[1];
        long[] mmap = runToCompletion("mmap", total, true, () -> sawQueueFiles[0] |= hasQueueFiles());
        assertEquals(total, netty[0], "netty: every number acked");
        assertEquals(total, mmap[0], "mmap: every number acked");
        assertEquals(netty[1], mmap[1], "same number of tuples received by the bolt");
        assertEquals(total, mmap[1], "no tuple lost or repeated (no failures, no replays)");
        assertTrue(sawQueueFiles[0], "the mmap run went through Chronicle queue files in " + queues);
    }

    @Test
    @Order(2)
    void aKilledWorkerIsRestartedAndNothingIsLost() throws Exception {
        long total = 150_000;
        Path dir = newRunDir();
        String name = submit("kill", dir, total, 0, true, Map.of());
        try {
            await("the bolt got 20k tuples", 120, () -> boltReceived(dir) > 20_000);
            long victim = boltPids(dir).get(0);
            new ProcessBuilder("kill", "-9", Long.toString(victim)).inheritIO().start().waitFor();
            await("the Supervisor restarted the bolt's worker", 180, () -> boltPids(dir).stream().anyMatch(p -> p != victim));
            long killedAt = System.nanoTime();
            await("every number acked after the restart", 240, () -> spout(dir)[1] == total);
            System.out.printf("SIGKILL: all %d acked %.1f s after the kill; %d tuples failed and were replayed; bolt received %d in total%n",
                total, (System.nanoTime() - killedAt) / 1e9, spout(dir)[2], boltReceived(dir));
            assertEquals(total, spout(dir)[1]);
        } finally {
            kill(name);
        }
    }

    @Test
    @Order(3)
    void aSlowBoltSlowsTheSpoutAndKeepsQueuesAndMemoryBounded() throws Exception {
        Path dir = newRunDir();
        long maxLag = 20_000;
        String name = submit("bp", dir, 0, 500, true, Map.of(TransportConfig.MAX_LAG_MESSAGES, maxLag));
        try {
            await("tuples flowing", 120, () -> boltReceived(dir) > 1000);
            Thread.sleep(5000);
            long[] s0 = spout(dir);
            long r0 = boltReceived(dir);
            long rss0 = rss(s0[3]) + rss(boltPids(dir).get(0));
            Thread.sleep(20_000);
            long[] s1 = spout(dir);
            long r1 = boltReceived(dir);
            long rss1 = rss(s1[3]) + rss(boltPids(dir).get(0));
            long emitted = s1[0] - s0[0];
            long received = r1 - r0;
            System.out.printf("backpressure: spout emitted %d, bolt received %d in 20 s; in flight %d; queue files %d bytes; worker RSS %d -> %d MB%n",
                emitted, received, s1[0] - r1, queueBytes(), rss0 >> 20, rss1 >> 20);
            assertTrue(received > 0, "the bolt kept working");
            // Storm's own queues (receive 32k + overflow + transfer) plus the transport's lag bound
            assertTrue(s1[0] - r1 < 200_000, "in flight stays bounded: " + (s1[0] - r1));
            assertTrue(emitted < received + 100_000, "the spout slowed to the bolt's pace: emitted " + emitted + ", received " + received);
            assertTrue(queueBytes() < 256L << 20, "queue files bounded: " + queueBytes());
            assertTrue(rss1 - rss0 < 300L << 20, "worker memory bounded: " + (rss0 >> 20) + " -> " + (rss1 >> 20) + " MB");
        } finally {
            kill(name);
        }
    }

    // ---- helpers

    private static long[] runToCompletion(String transport, long total, boolean mmap, Runnable probe) throws Exception {
        Path dir = newRunDir();
        String name = submit(transport, dir, total, 0, mmap, Map.of());
        try {
            await(transport + ": all acked", 240, () -> {
                if (probe != null) {
                    probe.run();
                }
                return spout(dir)[1] == total;
            });
            Thread.sleep(1500); // the bolt's next report
            long[] s = spout(dir);
            assertEquals(0, s[2], transport + ": no tuple failed");
            List<Long> pids = boltPids(dir);
            assertEquals(1, pids.size(), "one bolt worker");
            assertNotEquals(Long.toString(s[4]), boltLine(dir, pids.get(0)).split(" ")[2], "spout and bolt in different workers");
            return new long[] {s[1], boltReceived(dir)};
        } finally {
            kill(name);
        }
    }

    private static Path newRunDir() throws Exception {
        return Files.createDirectory(work.resolve("run-" + (++run)));
    }

    private static String submit(String label, Path dir, long total, long sleepMicros, boolean mmap, Map<String, Object> extra) throws Exception {
        String name = "transport-it-" + label + "-" + System.currentTimeMillis();
        Config conf = new Config();
        conf.setNumWorkers(2);
        conf.setNumAckers(total > 0 ? 1 : 0);
        conf.setMaxSpoutPending(2000);
        conf.setMessageTimeoutSecs(20);
        conf.put(TransportProbe.DIR, dir.toString());
        if (mmap) {
            MmapTransport.enable(conf);
            conf.put(TransportConfig.DIR, queues.toString());
        }
        conf.putAll(extra);
        System.setProperty("storm.jar", probeJar().toString());
        StormSubmitter.submitTopology(name, conf, TransportProbe.build(total, sleepMicros));
        return name;
    }

    private static Path probeJar() throws Exception {
        try (Stream<Path> s = Files.list(HOME.resolve("perf/target"))) {
            return s.filter(p -> p.getFileName().toString().endsWith("-probe.jar")).findFirst()
                .orElseThrow(() -> new IllegalStateException("no shaded probe jar in perf/target (run package first)"));
        }
    }

    private static void kill(String name) throws Exception {
        io.meridian.topology.ClusterControl.killAndAwait(name, java.time.Duration.ofSeconds(60), 3000);
    }

    private static long[] spout(Path dir) {
        try {
            String[] f = Files.readString(dir.resolve("spout")).trim().split(" ");
            long[] v = new long[f.length];
            for (int i = 0; i < f.length; i++) {
                v[i] = Long.parseLong(f[i]);
            }
            return v;
        } catch (Exception e) {
            return new long[] {0, 0, 0, 0, 0};
        }
    }

    private static List<Long> boltPids(Path dir) {
        List<Long> pids = new ArrayList<>();
        try (Stream<Path> s = Files.list(dir)) {
            s.map(p -> p.getFileName().toString()).filter(n -> n.startsWith("bolt-") && !n.endsWith(".tmp"))
                .forEach(n -> pids.add(Long.parseLong(n.substring(5))));
        } catch (Exception e) {
            // not there yet
        }
        return pids;
    }

    private static String boltLine(Path dir, long pid) {
        try {
            return Files.readString(dir.resolve("bolt-" + pid)).trim();
        } catch (Exception e) {
            return "0 0 0";
        }
    }

    private static long boltReceived(Path dir) {
        long sum = 0;
        for (long pid : boltPids(dir)) {
            sum += Long.parseLong(boltLine(dir, pid).split(" ")[0]);
        }
        return sum;
    }

    private static boolean hasQueueFiles() {
        try (Stream<Path> s = Files.walk(queues)) {
            return s.anyMatch(p -> p.toString().endsWith(".cq4"));
        } catch (Exception e) {
            return false;
        }
    }

    private static long queueBytes() {
        try {
            // allocated bytes (cycle files are sparse): du, not the apparent size
            Process real = new ProcessBuilder("du", "-sB1", queues.toString()).start();
            String out = new String(real.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
            real.waitFor();
            return Long.parseLong(out.split("\\s+")[0]);
        } catch (Exception e) {
            return -1;
        }
    }

    private static long rss(long pid) {
        try {
            for (String l : Files.readAllLines(Paths.get("/proc/" + pid + "/status"))) {
                if (l.startsWith("VmRSS:")) {
                    return Long.parseLong(l.replaceAll("[^0-9]", "")) * 1024;
                }
            }
        } catch (Exception e) {
            // gone
        }
        return 0;
    }

    private static void await(String what, int seconds, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + seconds * 1_000_000_000L;
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out after " + seconds + " s waiting for " + what);
            }
            Thread.sleep(200);
        }
    }

    private static void deleteTree(Path p) {
        try (Stream<Path> s = Files.walk(p)) {
            s.sorted(java.util.Comparator.reverseOrder()).forEach(x -> x.toFile().delete());
        } catch (Exception ignored) {
            // best effort
        }
    }
}
