package io.meridian.perf.transport;

import io.meridian.topology.probe.BenchTopology;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.storm.StormSubmitter;
import org.apache.storm.generated.StormTopology;

/**
 * The real single-host cluster: takes the cluster lock for the whole benchmark, starts the cluster if it is not up (and
 * stops it afterwards only then), submits the shaded topology jar, and reads the bolt's reports and the two worker
 * processes' CPU time from {@code /proc}.
 */
final class ClusterBackend implements Backend {
    private static final long TICK_NANOS = 10_000_000L; // USER_HZ = 100 on Linux
    private final Path home;
    private final Process lock;
    private final Path reports;
    private final boolean started;

    static boolean available() {
        return Files.isExecutable(home().resolve("deploy/bin/meridian-cluster")) && Files.isDirectory(Paths.get("/proc/self"));
    }

    private static Path home() {
        return Paths.get(System.getenv().getOrDefault("MERIDIAN_HOME", ".")).toAbsolutePath().normalize();
    }

    ClusterBackend() throws Exception {
        home = home();
        System.out.println("  waiting for the cluster lock /tmp/meridian-cluster.lock ...");
        lock = new ProcessBuilder("flock", "/tmp/meridian-cluster.lock", "sh", "-c", "echo locked; exec cat")
            .redirectErrorStream(true).start();
        String line = new BufferedReader(new InputStreamReader(lock.getInputStream(), StandardCharsets.UTF_8)).readLine();
        if (!"locked".equals(line)) {
            throw new IllegalStateException("could not take the cluster lock: " + line);
        }
        boolean up = meridian(60, false, "cluster", "status") == 0;
        if (!up) {
            System.out.println("  starting the cluster (./meridian cluster start) ...");
            if (meridian(400, true, "cluster", "start") != 0) {
                release();
                throw new IllegalStateException("./meridian cluster start failed");
            }
        }
        started = !up;
        reports = Files.createTempDirectory("meridian-bench-transport");
        Runtime.getRuntime().addShutdownHook(onSignal);
        System.setProperty("storm.jar", probeJar().toString());
    }

    private Path probeJar() throws Exception {
        try (Stream<Path> s = Files.list(home.resolve("perf/target"))) {
            return s.filter(p -> p.getFileName().toString().endsWith("-probe.jar")).findFirst()
                .orElseThrow(() -> new IllegalStateException("no shaded probe jar in perf/target (./meridian build)"));
        }
    }

    @Override
    public void submit(String name, Map<String, Object> conf, StormTopology topology) throws Exception {
        conf.put(BenchTopology.REPORT_DIR, reports.toString());
        submitted = name;
        StormSubmitter.submitTopology(name, conf, topology);
    }

    @Override
    public Sample sample(String name) {
        BenchTopology.Report r = BenchTopology.readReport(reports, name);
        if (r == null) {
            return null;
        }
        Sample s = new Sample();
        s.received = r.received;
        s.histogram = r.histogram;
        s.cpuNanos = cpu(r.spoutPid) + (r.boltPid == r.spoutPid ? 0 : cpu(r.boltPid));
        s.spoutPort = r.spoutPort;
        s.boltPort = r.boltPort;
        return s;
    }

    /** CPU nanoseconds per thread name (Linux comm, 15 characters, digits folded) of the two workers. */
    Map<String, Long> threadCpu(String name) {
        Map<String, Long> m = new java.util.HashMap<>();
        BenchTopology.Report r = BenchTopology.readReport(reports, name);
        if (r == null) {
            return m;
        }
        for (long pid : r.spoutPid == r.boltPid ? new long[] {r.spoutPid} : new long[] {r.spoutPid, r.boltPid}) {
            String side = pid == r.boltPid ? "bolt worker: " : "spout worker: ";
            try (Stream<Path> tasks = Files.list(Paths.get("/proc/" + pid + "/task"))) {
                tasks.forEach(t -> {
                    try {
                        String stat = Files.readString(t.resolve("stat"));
                        String comm = stat.substring(stat.indexOf('(') + 1, stat.lastIndexOf(')')).replaceAll("[0-9]+", "#");
                        String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
                        m.merge(side + comm, (Long.parseLong(f[11]) + Long.parseLong(f[12])) * TICK_NANOS, Long::sum);
                    } catch (Exception gone) {
                        // the thread ended
                    }
                });
            } catch (Exception gone) {
                // the worker ended
            }
        }
        return m;
    }

    private static long cpu(long pid) {
        try {
            String stat = Files.readString(Paths.get("/proc/" + pid + "/stat"));
            String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            return (Long.parseLong(f[11]) + Long.parseLong(f[12])) * TICK_NANOS; // utime, stime
        } catch (Exception e) {
            return 0;
        }
    }

    @Override
    public void kill(String name) throws Exception {
        io.meridian.topology.ClusterControl.killAndAwait(name, java.time.Duration.ofSeconds(60), 3000);
        if (name.equals(submitted)) {
            submitted = null;
        }
    }

    private volatile String submitted;
    private volatile boolean closed;

    /**
     * A bench stopped by a signal (Ctrl-C, kill) still kills the topology it ran and stops the cluster it started, as
     * {@link #close} does; it left both running before.
     */
    private final Thread onSignal = new Thread(() -> {
        try {
            String running = submitted;
            if (running != null && !ClusterBackend.this.started) {
                kill(running);
            }
            close();
        } catch (Exception e) {
            System.err.println("bench transport: cleaning up after a signal failed: " + e);
        }
    }, "bench-cleanup");

    @Override
    public synchronized void close() throws Exception {
        if (closed) {
            return;
        }
        closed = true;
        if (Thread.currentThread() != onSignal) {
            try {
                Runtime.getRuntime().removeShutdownHook(onSignal);
            } catch (IllegalStateException shuttingDown) {
                // the hook runs or will run; this close did the work first
            }
        }
        try {
            if (started) {
                meridian(180, true, "cluster", "stop");
            }
        } finally {
            release();
            try (Stream<Path> s = Files.walk(reports)) {
                s.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }

    private void release() throws Exception {
        lock.getOutputStream().close();
        lock.waitFor(10, TimeUnit.SECONDS);
        lock.destroy();
    }

    private int meridian(int timeoutSeconds, boolean show, String... args) throws Exception {
        List<String> cmd = new ArrayList<>();
        cmd.add(home.resolve("meridian").toString());
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd).directory(home.toFile());
        if (show) {
            pb.redirectOutput(ProcessBuilder.Redirect.INHERIT).redirectError(ProcessBuilder.Redirect.INHERIT);
        } else {
            pb.redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD);
        }
        Process p = pb.start();
        if (!p.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            return -1;
        }
        return p.exitValue();
    }
}
