package io.meridian.topology;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * Drives the real cluster on this host through the same scripts a user runs ({@code deploy/bin/meridian-cluster},
 * {@code deploy/bin/storm}), holding {@code /tmp/meridian-cluster.lock} (flock) for as long as it is open, so two
 * users of the shared ports never overlap. For the integration test and {@code ./meridian bench ingest}.
 */
public final class ClusterControl implements AutoCloseable {
    public static final Path LOCK = Path.of("/tmp/meridian-cluster.lock");
    private final Path home;
    private final Path log;
    private final Process lockHolder;
    private boolean started;

    private ClusterControl(Path home, Path log, Process lockHolder) {
        this.home = home;
        this.log = log;
        this.lockHolder = lockHolder;
    }

    /** Waits up to {@code waitSecs} for the cluster lock. Script output goes to {@code log}. */
    public static ClusterControl acquire(Path home, Path log, long waitSecs) throws IOException, InterruptedException {
        Files.createDirectories(log.getParent());
        // flock(1) holds the lock while `cat` waits on our pipe: if this JVM dies, the pipe closes and the lock goes
        Process p = new ProcessBuilder("flock", "-w", Long.toString(waitSecs), LOCK.toString(), "-c", "echo locked; exec cat")
                .redirectError(ProcessBuilder.Redirect.appendTo(log.toFile())).start();
        BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
        String line = out.readLine();
        if (!"locked".equals(line)) {
            p.destroyForcibly();
            throw new IllegalStateException("could not get " + LOCK + " within " + waitSecs + " s (another cluster user?)");
        }
        return new ClusterControl(home, log, p);
    }

    public Path home() {
        return home;
    }

    /**
     * {@code deploy/bin/meridian-cluster start}, the script behind {@code ./meridian cluster start} (called directly so
     * a test inside a Maven build does not trigger the launcher's rebuild check); harmless when already running.
     * Remembers to stop the cluster on close.
     */
    public void start() throws IOException, InterruptedException {
        // on a shared host someone may run a cluster without the lock: wait (bounded) for the ports instead of failing
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(15);
        while (portsInUse() && System.nanoTime() < deadline) {
            Thread.sleep(2000);
        }
        started = true;
        try {
            run(900, home.resolve("deploy/bin/meridian-cluster").toString(), "start");
        } catch (ScriptFailed first) {
            // one more try (the script leaves running daemons alone and starts the others): a test's subject is what
            // runs on the cluster, ClusterLifecycleIT's is the start itself; the first failure stays in the output
            System.out.println("cluster start failed, trying once more: " + first.getMessage());
            run(900, home.resolve("deploy/bin/meridian-cluster").toString(), "start");
        }
    }

    /**
     * {@code meridian-cluster start} again while part of the cluster runs (a daemon was killed): starts what is not
     * running, without waiting for the ports, and returns what the script printed.
     */
    public String startStopped() throws IOException, InterruptedException {
        long from = Files.size(log);
        run(900, home.resolve("deploy/bin/meridian-cluster").toString(), "start");
        byte[] all = Files.readAllBytes(log);
        return new String(all, (int) from, all.length - (int) from, StandardCharsets.UTF_8);
    }

    /** The pid of this cluster's daemon {@code name} (zookeeper, kafka, nimbus, supervisor, ...) from its pid file. */
    public long daemonPid(String name) throws IOException {
        Path dir = Path.of(System.getenv().getOrDefault("MERIDIAN_CLUSTER_DIR",
                home.resolve(".meridian/cluster").toString()));
        return Long.parseLong(Files.readString(dir.resolve("run").resolve(name + ".pid")).trim());
    }

    public void stop() throws IOException, InterruptedException {
        run(300, home.resolve("deploy/bin/meridian-cluster").toString(), "stop");
        started = false;
    }

    /** {@code deploy/bin/storm ARGS}, failing on a non-zero exit. */
    public void storm(long timeoutSecs, String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>();
        cmd.add(home.resolve("deploy/bin/storm").toString());
        cmd.addAll(List.of(args));
        run(timeoutSecs, cmd.toArray(new String[0]));
    }

    /**
     * The worker JVMs of a topology (their command line names the topology id, which starts with its name); not the
     * {@code LogWriter} JVMs the Supervisor wraps them in, whose command line contains the worker's.
     */
    public static List<ProcessHandle> workers(String topologyName) {
        List<ProcessHandle> out = new ArrayList<>();
        ProcessHandle.allProcesses().forEach(p -> {
            List<String> args = commandLine(p.pid());
            int main = args.indexOf("org.apache.storm.daemon.worker.Worker");
            if (main >= 0 && main + 1 < args.size() && args.get(main + 1).startsWith(topologyName + "-")
                    && !args.contains("org.apache.storm.LogWriter")) {
                out.add(p);
            }
        });
        // a child a worker is starting (renice, mpirun) has the worker's command line until it execs: not a worker
        Set<Long> pids = new HashSet<>();
        out.forEach(p -> pids.add(p.pid()));
        out.removeIf(p -> p.parent().map(parent -> pids.contains(parent.pid())).orElse(false));
        return out;
    }

    /**
     * Kills a topology through the cluster's Nimbus, waits until it is no longer listed, then {@code settleMillis}
     * more for its worker processes to exit and free their slots.
     */
    public static void killAndAwait(String name, java.time.Duration timeout, long settleMillis) throws Exception {
        java.util.Map<String, Object> conf = org.apache.storm.utils.Utils.readStormConfig();
        try (org.apache.storm.utils.NimbusClient nimbus = org.apache.storm.utils.NimbusClient.getConfiguredClient(conf)) {
            killAndAwait(nimbus.getClient(), name, 1, timeout);
        }
        Thread.sleep(settleMillis);
    }

    /**
     * Kills a topology, giving its spouts {@code waitSecs} to stop, and waits until Nimbus (a cluster's, or a
     * LocalCluster, which is one too) no longer lists it.
     */
    public static void killAndAwait(org.apache.storm.generated.Nimbus.Iface nimbus, String name, int waitSecs,
                                    java.time.Duration timeout) throws Exception {
        org.apache.storm.generated.KillOptions opts = new org.apache.storm.generated.KillOptions();
        opts.set_wait_secs(waitSecs);
        nimbus.killTopologyWithOpts(name, opts);
        long deadline = System.nanoTime() + timeout.toNanos();
        while (nimbus.getClusterInfo().get_topologies().stream().anyMatch(t -> t.get_name().equals(name))
               && System.nanoTime() < deadline) {
            Thread.sleep(100);
        }
    }

    /** What a running topology's workers serve: its id, their endpoints, and their samples merged. */
    public record TopologyMetrics(String topologyId, List<ScrapeTargets.Target> endpoints,
                                  io.meridian.metrics.MetricSamples samples) {
        /** The row counts in them (what the workers counted since they started). */
        public RowCounts rowCounts() {
            return RowCounts.of(samples, topologyId, endpoints.size() + " worker endpoints");
        }
    }

    /** Scrapes every worker of the running topology {@code name} (found through the cluster's Nimbus). */
    public static TopologyMetrics scrapeTopology(String name) throws Exception {
        return scrapeTopology(name, java.time.Duration.ofSeconds(10));
    }

    /** {@link #scrapeTopology(String)}, each worker given {@code timeout} to answer. */
    public static TopologyMetrics scrapeTopology(String name, java.time.Duration timeout) throws Exception {
        java.util.Map<String, Object> conf = org.apache.storm.utils.Utils.readStormConfig();
        try (org.apache.storm.utils.NimbusClient nimbus = org.apache.storm.utils.NimbusClient.getConfiguredClient(conf)) {
            for (org.apache.storm.generated.TopologySummary t : nimbus.getClient().getClusterInfo().get_topologies()) {
                if (t.get_name().equals(name)) {
                    List<ScrapeTargets.Target> endpoints = ScrapeTargets.workers(nimbus.getClient(), t.get_id());
                    List<io.meridian.metrics.MetricSamples> parts = new ArrayList<>();
                    for (ScrapeTargets.Target target : endpoints) {
                        parts.add(io.meridian.metrics.MetricSamples.scrape(target.url(), timeout));
                    }
                    return new TopologyMetrics(t.get_id(), endpoints, io.meridian.metrics.MetricSamples.merge(parts));
                }
            }
        }
        throw new IllegalStateException("no topology " + name + " is running");
    }

    /** The row counts of the running topology {@code name}, from its workers' endpoints (since they started). */
    public static RowCounts rowCounts(String name) throws Exception {
        return scrapeTopology(name).rowCounts();
    }

    private static boolean portsInUse() {
        for (int port : new int[] {2181, 9092, 6627, 9090}) {
            try (java.net.Socket s = new java.net.Socket()) {
                s.connect(new java.net.InetSocketAddress("localhost", port), 300);
                return true;
            } catch (IOException e) {
                // free
            }
        }
        return false;
    }

    /**
     * The whole command line of process {@code pid} from /proc, empty if it is gone (ProcessHandle.Info may cut long
     * ones, and workers' are long).
     */
    public static List<String> commandLine(long pid) {
        try {
            byte[] raw = Files.readAllBytes(Path.of("/proc", Long.toString(pid), "cmdline"));
            return List.of(new String(raw, StandardCharsets.UTF_8).split("\0"));
        } catch (IOException | RuntimeException e) {
            return List.of();
        }
    }

    private void run(long timeoutSecs, String... command) throws IOException, InterruptedException {
        Files.writeString(log, "$ " + String.join(" ", command) + "\n", StandardCharsets.UTF_8,
                java.nio.file.StandardOpenOption.CREATE, java.nio.file.StandardOpenOption.APPEND);
        ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
        pb.environment().put("MERIDIAN_HOME", home.toString());
        classpathForDaemons().ifPresent(cp -> pb.environment().put("MERIDIAN_CLASSPATH", cp));
        Process p = pb.start();
        if (!p.waitFor(timeoutSecs, TimeUnit.SECONDS)) {
            p.descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly();
            throw new IllegalStateException(String.join(" ", command) + " did not finish within " + timeoutSecs
                    + " s; see " + log + "; its last lines:\n" + tail(log, 25));
        }
        if (p.exitValue() != 0) {
            throw new ScriptFailed(String.join(" ", command) + " failed with exit " + p.exitValue() + "; see "
                    + log + "; its last lines:\n" + tail(log, 25) + listeners());
        }
    }

    /**
     * The classes the cluster's daemons that run Meridian's own code (the targets daemon) take: under Maven, the test's
     * class path, since a build inside {@code mvn verify} writes no {@code .meridian/classpath}; otherwise none, and
     * the script uses the build's. A MERIDIAN_CLASSPATH the caller set wins.
     */
    public static Optional<String> classpathForDaemons() {
        if (System.getenv("MERIDIAN_CLASSPATH") != null) {
            return Optional.empty();
        }
        return Optional.ofNullable(System.getProperty("surefire.test.class.path"));
    }

    /** A script that ended with a non-zero exit (not one that timed out, which is not tried again). */
    private static final class ScriptFailed extends IllegalStateException {
        private static final long serialVersionUID = 1L;

        ScriptFailed(String message) {
            super(message);
        }
    }

    /** The last {@code lines} lines of {@code file}: a failure's reason, in the test report that CI keeps. */
    private static String tail(Path file, int lines) {
        try {
            List<String> all = Files.readAllLines(file, StandardCharsets.UTF_8);
            return String.join("\n", all.subList(Math.max(0, all.size() - lines), all.size()));
        } catch (IOException | RuntimeException e) {
            return "(unreadable: " + e.getMessage() + ")";
        }
    }

    /** Who listens on which TCP port (ss -ltnp), for a start that found a port taken. */
    private static String listeners() {
        try {
            Process ss = new ProcessBuilder("ss", "-ltnp").redirectErrorStream(true).start();
            String out = new String(ss.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            ss.waitFor(5, TimeUnit.SECONDS);
            return "\nlistening sockets (ss -ltnp):\n" + out.strip();
        } catch (IOException | InterruptedException e) {
            return "";
        }
    }

    /** Stops the cluster if this object started it, then releases the lock. */
    @Override
    public void close() throws IOException, InterruptedException {
        try {
            if (started) {
                stop();
            }
        } finally {
            try (OutputStream in = lockHolder.getOutputStream()) {
                in.flush();
            }
            if (!lockHolder.waitFor(10, TimeUnit.SECONDS)) {
                lockHolder.destroyForcibly();
            }
        }
    }
}
