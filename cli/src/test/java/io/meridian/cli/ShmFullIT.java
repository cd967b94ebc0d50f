package io.meridian.cli;

import static io.meridian.cli.ClusterWait.waitFor;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.meridian.live.SnapshotSummary;
import io.meridian.synthetic.SyntheticDataset;
import io.meridian.topology.ClusterControl;
import io.meridian.topology.RowCounts;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The tmpfs of the transport's queues and the live map's regions fills up under a stream (issue 33, fault 5), on the
 * real single-host cluster: the topology's {@code topology.transportDirectory} and {@code map.regionRoot} are a
 * size-limited tmpfs the test mounts, which a file then fills. The transport's links whose queues cannot grow go on
 * through Netty, the live map's generation fails and re-forms with back-off, each naming the file system, the file,
 * the host and the free bytes in the worker log and in {@code ./meridian status}; no worker restarts and no worker
 * thread spins meanwhile. Once the file is deleted the map re-forms by itself (the time is printed), every row fed is
 * stored once, none dead-lettered, and the map ends holding every point.
 */
class ShmFullIT {
    private static final String NAME = "meridian-shm-full-it";
    private static final int N = 1500;
    /** Room for both workers' 64 MiB payload rings (row batches are large tuples), the queues and the regions. */
    private static final String TMPFS_SIZE = "192m";
    private static final int WIDTH = 2048;
    private static final String BROKERS = "localhost:9092";
    /** A thread busier than this over the full period spins (a tight retry loop takes a whole core). */
    private static final double MAX_THREAD_CORES = 0.5;

    @Test
    void aFullShmFailsNamedFallsBackAndRecoversWithoutLosingARow() throws Exception {
        Path home = Path.of(System.getenv().getOrDefault("MERIDIAN_HOME", "..")).toAbsolutePath().normalize();
        long stamp = System.currentTimeMillis();
        Path work = home.resolve("cli/target/shm-full-it-" + stamp);
        Path shm = work.resolve("shm");
        Files.createDirectories(shm);
        SyntheticDataset.blobs(N, 8, 5, 2.0, 13).write(work.resolve("data"), ByteOrder.LITTLE_ENDIAN);
        Path matrix = work.resolve("data").resolve(SyntheticDataset.DISTANCES_FILE);
        Path stores = work.resolve("rowstore");
        Path snapshots = work.resolve("map");
        Path config = work.resolve("meridian-shm-full-it.yaml");
        String topic = "distance-rows-shm-full-it-" + stamp;
        Files.writeString(config, String.format("""
                topology: {name: %s, workers: 2, ackers: 1, maxSpoutPending: 500, messageTimeoutSecs: 30,
                  workerHeapMb: 384, transportDirectory: %s}
                ingest:
                  maxPoints: %d
                  kafka: {brokers: "%s", topic: %s, rejectedTopic: %s-rejected, consumerGroup: shm-full-it-%d,
                    partitions: 2}
                  validation: {maxIdAhead: 2048}
                  rowStore: {directory: %s, blockRows: 64, parallelism: 2}
                map: {tasks: 2, initialPoints: 300, maxClusters: 5, snapshotDirectory: %s, topic: map-updates-shm-%d,
                  regionRoot: %s}
                """, NAME, shm.resolve("transport"), WIDTH, BROKERS, topic, topic, stamp, stores, snapshots, stamp,
                shm), StandardCharsets.UTF_8);

        mount(shm, TMPFS_SIZE);
        try (ClusterControl cluster = ClusterControl.acquire(home, work.resolve("cluster.log"), 1800)) {
            boolean submitted = false;
            Throwable failure = null;
            try {
                cluster.start();
                cluster.storm(180, "jar", SubmitCommand.topologyJar(home).toString(), SubmitCommand.MAIN,
                        "--config", config.toString());
                submitted = true;
                waitFor(Duration.ofSeconds(90), "two workers of " + NAME,
                        () -> ClusterControl.workers(NAME).size() == 2);
                List<Long> workers = workerPids();
                Path logs = home.resolve(".meridian/cluster/logs/workers-artifacts");

                CompletableFuture<Integer> feed = CompletableFuture.supplyAsync(() -> Main.run(new String[] {"feed",
                        "--distances", matrix.toString(), "--n", Integer.toString(N), "--rate", "20",
                        "--brokers", BROKERS, "--topic", topic, "--config", config.toString()}));
                waitFor(Duration.ofSeconds(120), "the map holding 300 points", () -> {
                    SnapshotSummary s = SnapshotSummary.readCurrent(snapshots);
                    return s != null && s.points() >= 300;
                });
                System.out.printf(Locale.ROOT, "IT: before the fill the tmpfs holds %d KB%n", used(shm) / 1024);

                // fill the tmpfs: the links' next queue cycle and the map's next region page find no room
                Path filler = shm.resolve("filler");
                long filled = fill(filler);
                System.out.printf(Locale.ROOT, "IT: filled the tmpfs with %d KB%n", filled / 1024);
                long fullAt = System.nanoTime();
                waitFor(Duration.ofSeconds(120), "the map's and the transport's named errors in the worker logs",
                        () -> !grep(logs, stamp, "generation", " full: ").isEmpty()
                                && !grep(logs, stamp, "mmap transport", "goes on through Netty").isEmpty());
                String mapError = grep(logs, stamp, "generation", " full: ").get(0);
                String linkError = grep(logs, stamp, "mmap transport", "goes on through Netty").get(0);
                System.out.println("IT: " + mapError);
                System.out.println("IT: " + linkError);
                assertTrue(mapError.contains(shm + " full: ") && mapError.contains("(host ")
                        && mapError.contains("free "), "names the tmpfs, the host and the free bytes: " + mapError);
                assertTrue(linkError.contains(shm + " full: ") && linkError.contains(shm.resolve("transport")
                        .toString()), "names the tmpfs and the queue: " + linkError);

                Map<Long, Map<String, Long>> cpuBefore = threadTicks(workers);
                long sampledAt = System.nanoTime();
                Thread.sleep(20_000);
                Map<Long, Map<String, Long>> cpuAfter = threadTicks(workers);
                double seconds = (System.nanoTime() - sampledAt) / 1e9;
                String busiest = busiest(cpuBefore, cpuAfter, seconds);
                System.out.println("IT: while full, the busiest worker thread: " + busiest);
                double busiestCores = Double.parseDouble(busiest.substring(0, busiest.indexOf(' ')));
                assertTrue(busiestCores < MAX_THREAD_CORES, "no worker thread spins while the tmpfs is full: "
                        + busiest);

                String status = stdout(() -> Main.run(new String[] {"status", "--config", config.toString()}));
                assertTrue(status.contains("/dev/shm FULL on "), "./meridian status names the failure: " + status);
                System.out.println("IT: status: " + status.lines().filter(l -> l.contains("FULL")).findFirst()
                        .orElse(""));
                double fullFor = (System.nanoTime() - fullAt) / 1e9;
                int tries = grep(logs, stamp, "(rank 0 on", " full: ").size();
                System.out.printf(Locale.ROOT, "IT: task 0 tried to re-form %d times in %.1f s of full tmpfs%n", tries,
                        fullFor);
                assertTrue(tries <= 4 + fullFor / 4, "the map re-forms with back-off, not in a loop: " + tries
                        + " tries in " + fullFor + " s");

                long frameAtRoom = SnapshotSummary.readCurrent(snapshots).frame();
                Files.delete(filler);
                long roomAt = System.nanoTime();
                waitFor(Duration.ofSeconds(120), "a new frame of the map after the tmpfs had room", () -> {
                    SnapshotSummary s = SnapshotSummary.readCurrent(snapshots);
                    return s != null && s.frame() > frameAtRoom;
                });
                System.out.printf(Locale.ROOT, "IT: the map re-formed and published a frame %.1f s after the tmpfs had"
                        + " room%n", (System.nanoTime() - roomAt) / 1e9);

                assertEquals(0, feed.get(300, TimeUnit.SECONDS), "feed exit status");
                waitFor(Duration.ofSeconds(300), "all " + N + " rows stored",
                        () -> RowCounts.storedOnDisk(stores) == N);
                waitFor(Duration.ofSeconds(300), "the map holding every point, settled", () -> {
                    SnapshotSummary s = SnapshotSummary.readCurrent(snapshots);
                    return s != null && s.points() == N && s.settled();
                });
                System.out.printf(Locale.ROOT, "IT: the map held all %d points, settled, %.1f s after the tmpfs had"
                        + " room%n", N, (System.nanoTime() - roomAt) / 1e9);
                assertEquals(workers, workerPids(), "no worker was restarted while the tmpfs was full");
                RowCounts counts = ClusterControl.rowCounts(NAME);
                System.out.println("IT: row counts " + counts.toJson());
                assertEquals(0, counts.rejectedTotal(), counts.toJson());
                assertEquals(0, counts.deadLettered, counts.toJson());
                assertEquals(N, counts.stored, "offered = stored + dead-lettered: " + counts.toJson());
                assertTrue(!counts.shmFailures.isEmpty(), "the failures are counted: " + counts.toJson());
            } catch (Throwable t) {
                failure = t;
                WorkerLogs.printErrors(home.resolve(".meridian/cluster/logs/workers-artifacts"), NAME, stamp);
                throw t;
            } finally {
                if (submitted) {
                    try {
                        ClusterControl.killAndAwait(NAME, Duration.ofSeconds(120), 3000);
                    } catch (Exception e) {
                        if (failure == null) {
                            throw e;
                        }
                        failure.addSuppressed(e);
                    }
                }
            }
        } finally {
            umount(shm);
        }
    }

    private static List<Long> workerPids() {
        return ClusterControl.workers(NAME).stream().map(ProcessHandle::pid).sorted().toList();
    }

    /** Writes zeros into {@code file} until the file system refuses (ENOSPC); returns the bytes written. */
    private static long fill(Path file) throws IOException {
        byte[] chunk = new byte[1 << 16];
        long written = 0;
        try (OutputStream out = Files.newOutputStream(file)) {
            while (true) {
                out.write(chunk);
                written += chunk.length;
            }
        } catch (IOException e) {
            if (!String.valueOf(e.getMessage()).contains("No space left on device")) {
                throw e;
            }
        }
        return written;
    }

    private static long used(Path mount) throws IOException {
        var store = Files.getFileStore(mount);
        return store.getTotalSpace() - store.getUsableSpace();
    }

    /**
     * Lines of the worker logs of this topology's submissions since {@code sinceMillis} (a run before this one left
     * its logs) that contain every one of {@code parts}.
     */
    private static List<String> grep(Path logs, long sinceMillis, String... parts) throws IOException {
        List<String> found = new ArrayList<>();
        for (Path f : WorkerLogs.workerLogs(logs, NAME, sinceMillis)) {
            for (String line : Files.readAllLines(f, StandardCharsets.ISO_8859_1)) {
                boolean all = true;
                for (String p : parts) {
                    all &= line.contains(p);
                }
                if (all) {
                    found.add(line);
                }
            }
        }
        return found;
    }

    /** CPU ticks (user + system) of every thread of each process, by thread id and name, from /proc. */
    private static Map<Long, Map<String, Long>> threadTicks(List<Long> pids) throws IOException {
        Map<Long, Map<String, Long>> out = new HashMap<>();
        for (long pid : pids) {
            Map<String, Long> threads = new HashMap<>();
            Path proc = Path.of("/proc", Long.toString(pid), "task");
            assertTrue(Files.isDirectory(proc), "worker pid " + pid + " is gone: a worker was restarted");
            try (Stream<Path> tasks = Files.list(proc)) {
                for (Path t : tasks.toList()) {
                    try {
                        String stat = Files.readString(t.resolve("stat"));
                        int close = stat.lastIndexOf(')');
                        String name = stat.substring(stat.indexOf('(') + 1, close);
                        String[] f = stat.substring(close + 2).split(" ");
                        // fields after the name: state is [0], utime [11], stime [12]
                        threads.put(t.getFileName() + " " + name, Long.parseLong(f[11]) + Long.parseLong(f[12]));
                    } catch (IOException gone) {
                        // the thread ended
                    }
                }
            }
            out.put(pid, threads);
        }
        return out;
    }

    /** "CORES pid P thread T NAME" of the thread that used the most CPU between the two readings (100 ticks/s). */
    private static String busiest(Map<Long, Map<String, Long>> before, Map<Long, Map<String, Long>> after,
                                  double seconds) {
        double most = -1;
        String which = "";
        double total = 0;
        for (var p : after.entrySet()) {
            for (var t : p.getValue().entrySet()) {
                long ticks = t.getValue() - before.getOrDefault(p.getKey(), Map.of()).getOrDefault(t.getKey(), 0L);
                double cores = ticks / 100.0 / seconds;
                total += cores;
                if (cores > most) {
                    most = cores;
                    which = "pid " + p.getKey() + " thread " + t.getKey();
                }
            }
        }
        return String.format(Locale.ROOT, "%.3f cores: %s (all threads of both workers: %.3f cores over %.1f s)",
                most, which, total, seconds);
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

    private static void mount(Path at, String size) throws IOException, InterruptedException {
        run("mount", "-t", "tmpfs", "-o", "size=" + size + ",mode=0700", "meridian-test-shm", at.toString());
    }

    private static void umount(Path at) throws IOException, InterruptedException {
        run("umount", "-l", at.toString());
    }

    private static void run(String... command) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(30, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new IOException(String.join(" ", command) + " failed (the test mounts a small tmpfs: run it as"
                    + " root): " + out);
        }
    }
}
