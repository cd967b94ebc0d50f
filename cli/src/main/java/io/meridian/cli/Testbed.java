package io.meridian.cli;

import io.meridian.config.MeridianConfig;
import io.meridian.topology.Processes;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The two-host testbed ({@code ./meridian testbed}, {@code deploy/bin/meridian-testbed}) seen from Java: benchmarks and
 * tests start it (or use the one running), run commands on its hosts, and stop it if they started it.
 */
public final class Testbed implements AutoCloseable {
    public static final String HOST_1 = "meridian-h1";
    public static final String HOST_2 = "meridian-h2";

    private final Path script;
    private final Path state;
    private final boolean owned;

    private Testbed(Path script, boolean owned) {
        this.script = script;
        this.state = script.getParent().getParent().getParent().resolve(".meridian/testbed"); // deploy/bin/.. /..
        this.owned = owned;
    }

    /** The testbed as it runs, or the hosts alone (no cluster) started now and stopped by {@link #close()}. */
    public static Testbed ensureRunning(Path home) throws IOException, InterruptedException {
        Path script = script(home);
        if (Files.exists(Path.of("/run/netns", HOST_1))) {
            return new Testbed(script, false);
        }
        run(List.of(script.toString(), "start", "--no-cluster"), 2);
        return new Testbed(script, true);
    }

    /** Starts the testbed with its cluster (fails if one runs already: a test must not reuse another's state). */
    public static Testbed startWithCluster(Path home) throws IOException, InterruptedException {
        return startWithCluster(home, null);
    }

    /**
     * {@link #startWithCluster(Path)}, with the daemons (and so the workers and the leader daemons a live map starts)
     * running Meridian's classes from {@code classpath} instead of the build's {@code .meridian/classpath}: a test run
     * by Maven has no such file.
     */
    public static Testbed startWithCluster(Path home, String classpath) throws IOException, InterruptedException {
        Path script = script(home);
        if (Files.exists(Path.of("/run/netns", HOST_1))) {
            throw new IllegalStateException("a testbed is already running: stop it first (./meridian testbed stop)");
        }
        Testbed testbed = new Testbed(script, true);
        try {
            run(classpath == null ? List.of(script.toString(), "start")
                    : List.of("env", "MERIDIAN_CLASSPATH=" + classpath, script.toString(), "start"), 5);
        } catch (IOException | RuntimeException e) {
            try {
                testbed.close(); // whatever did start goes
            } catch (IOException | RuntimeException stopFailure) {
                e.addSuppressed(stopFailure);
            }
            throw e;
        }
        return testbed;
    }

    /** The words that run the rest of a command line on {@code host}, with that host's settings. */
    public List<String> exec(String host) {
        return List.of(script.toString(), "exec", host);
    }

    /** Runs {@code command} on {@code host} and returns its output; fails with the output when it fails. */
    public String run(String host, List<String> command, int timeoutMinutes) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(exec(host));
        cmd.addAll(command);
        return run(cmd, timeoutMinutes);
    }

    /**
     * Where a path under {@code host}'s own data root (row stores, snapshots) is seen from this machine's namespace:
     * the testbed mounts {@code .meridian/testbed/HOST/data} on each host's {@link MeridianConfig#dataRoot()}. The
     * testbed runs as root, and so do this process and the hosts' processes: one user, one data root.
     */
    public Path hostPath(String host, Path insideHost) {
        Path own = MeridianConfig.dataRoot();
        if (!insideHost.startsWith(own)) {
            throw new IllegalArgumentException(insideHost + " is not under a host's own data root " + own);
        }
        return state.resolve(host).resolve("data").resolve(own.relativize(insideHost).toString());
    }

    /** The address of {@code host} on the testbed's bridge, which this (the root) namespace reaches, from its hosts file. */
    public String address(String host) throws IOException {
        for (String line : java.nio.file.Files.readAllLines(state.resolve("hosts"))) {
            String[] f = line.trim().split("\\s+");
            if (f.length >= 2 && java.util.Arrays.asList(f).subList(1, f.length).contains(host)) {
                return f[0];
            }
        }
        throw new IllegalStateException("no address of " + host + " in " + state.resolve("hosts"));
    }

    /** The Open MPI hostfile of the testbed's hosts (2 slots each). */
    public String hostfile() throws IOException, InterruptedException {
        return run(List.of(script.toString(), "hostfile"), 1).strip();
    }

    @Override
    public void close() throws IOException, InterruptedException {
        if (owned) {
            run(List.of(script.toString(), "stop"), 5);
        }
    }

    /** The testbed script of the checkout at {@code home}. */
    private static Path script(Path home) {
        Path script = home.resolve("deploy/bin/meridian-testbed");
        if (!Files.isExecutable(script)) {
            throw new IllegalStateException("the testbed script " + script + " is missing (is " + home
                    + " a Meridian checkout?)");
        }
        return script;
    }

    private static String run(List<String> cmd, int timeoutMinutes) throws IOException, InterruptedException {
        return Processes.output(cmd, Duration.ofMinutes(timeoutMinutes));
    }
}
