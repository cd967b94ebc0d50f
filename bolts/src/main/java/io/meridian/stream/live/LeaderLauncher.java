package io.meridian.stream.live;

import io.meridian.collective.CollectiveException;
import io.meridian.shm.OwnerOnlyFiles;
import io.meridian.shm.ProcessIdentity;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

/**
 * Starts and stops the leader daemons of a live map whose tasks span hosts: one daemon per host, started together by
 * mpirun across the hosts with the same command a user runs ({@code deploy/bin/meridian-leaders start}, i.e.
 * {@code ./meridian leaders start} with a hostfile of the map's hosts in group order), from the Meridian installation
 * at {@code $MERIDIAN_HOME}, which every host has at the same path. Its pid file, log and hostfile sit in a state
 * directory of the topology's own, beside the map's snapshots.
 */
final class LeaderLauncher {
    private static final long START_TIMEOUT_SECONDS = 90;
    private final Path script;
    private final Path stateDir;

    LeaderLauncher(Path stateDir) {
        String home = System.getenv("MERIDIAN_HOME");
        if (home == null || home.isBlank()) {
            throw new IllegalStateException("the live map spans hosts, so its leader daemons are started by mpirun from"
                    + " the Meridian installation, but this worker has no MERIDIAN_HOME: start the supervisors with"
                    + " ./meridian cluster start (deploy/MULTI-HOST.md)");
        }
        this.script = Path.of(home, "deploy", "bin", "meridian-leaders");
        if (!Files.isExecutable(script)) {
            throw new IllegalStateException("MERIDIAN_HOME=" + home + " has no executable " + script);
        }
        this.stateDir = stateDir;
        OwnerOnlyFiles.createMissing(stateDir);
    }

    /**
     * Starts the daemons of job {@code jobId}: daemon g leads group g on {@code hosts.get(g)} with {@code members[g]}
     * members, serving Prometheus metrics on the port {@code metricsPorts} gives its host ({@code HOST=PORT,...}; empty:
     * none). Returns once every daemon serves its region; throws {@link CollectiveException} with the launch's
     * output when they do not start.
     */
    void start(String jobId, int[] members, List<String> hosts, int capacity, int reduceCapacity, long timeoutMs,
               Path regionRoot, String metricsPorts) {
        start(jobId, members, hosts, capacity, reduceCapacity, timeoutMs, regionRoot, metricsPorts, List.of());
    }

    /**
     * As {@link #start(String, int[], List, int, int, long, Path, String)}, and each daemon also leads a second group
     * of job {@code secondJobId} (the same members per host; a live map's clustering group): its own region, sized by
     * {@code secondCapacity} and {@code secondReduceCapacity}, and call timeout {@code secondTimeoutMs}, in the same
     * mpirun job (one daemon per host for both). A failure in either group fails both; {@link #stop} and
     * {@link #failures} go by {@code jobId}. Returns once every daemon serves both regions.
     */
    void start(String jobId, int[] members, List<String> hosts, int capacity, int reduceCapacity, long timeoutMs,
               Path regionRoot, String metricsPorts, String secondJobId, int secondCapacity, int secondReduceCapacity,
               long secondTimeoutMs) {
        start(jobId, members, hosts, capacity, reduceCapacity, timeoutMs, regionRoot, metricsPorts, List.of(
                "--second-job", secondJobId, "--second-capacity", Integer.toString(secondCapacity),
                "--second-reduce-capacity", Integer.toString(secondReduceCapacity), "--second-timeout-ms",
                Long.toString(secondTimeoutMs)));
    }

    private void start(String jobId, int[] members, List<String> hosts, int capacity, int reduceCapacity,
                       long timeoutMs, Path regionRoot, String metricsPorts, List<String> secondGroup) {
        Path hostfile = stateDir.resolve(jobId + ".hosts");
        Path output = stateDir.resolve(jobId + ".start.log");
        try {
            Files.write(hostfile, hosts.stream().map(h -> h + " slots=1").toList(), StandardCharsets.UTF_8);
            List<String> command = new ArrayList<>(List.of(script.toString(), "start", "--job", jobId, "--members",
                    IntStream.of(members).mapToObj(Integer::toString).collect(Collectors.joining(",")),
                    "--hostfile", hostfile.toString(), "--capacity", Integer.toString(capacity), "--reduce-capacity",
                    Integer.toString(reduceCapacity), "--timeout-ms", Long.toString(timeoutMs), "--region-root",
                    regionRoot.toString()));
            if (!metricsPorts.isEmpty()) {
                command.addAll(List.of("--metrics-port", metricsPorts));
            }
            command.addAll(secondGroup);
            // in the launcher's own directory: the worker's may be gone (an orphaned worker) and mpirun needs one
            ProcessBuilder pb = new ProcessBuilder(command).directory(stateDir.toFile()).redirectErrorStream(true)
                    .redirectOutput(output.toFile());
            pb.environment().put("MERIDIAN_LEADERS_STATE", stateDir.toString());
            Process p = pb.start();
            if (!p.waitFor(START_TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
                p.descendants().forEach(ProcessHandle::destroyForcibly);
                p.destroyForcibly();
                throw new CollectiveException("the leader daemons of " + jobId + " on " + hosts + " did not start within "
                        + START_TIMEOUT_SECONDS + " s: " + tail(output));
            }
            if (p.exitValue() != 0) {
                throw new CollectiveException("starting the leader daemons of " + jobId + " on " + hosts + " failed"
                        + " (exit " + p.exitValue() + "): " + tail(output));
            }
        } catch (IOException e) {
            throw new CollectiveException("starting the leader daemons of " + jobId + ": " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new CollectiveException("interrupted while starting the leader daemons of " + jobId, e);
        }
    }

    /**
     * Stops the daemons of job {@code jobId} (SIGTERM to their mpirun, which passes it on: each daemon marks its region
     * closed and removes it), waiting up to 5 s before killing what is left. Spawns no process, so a shutdown hook
     * may call it.
     */
    void stop(String jobId) {
        Path pidFile = stateDir.resolve(jobId + ".pid");
        Optional<ProcessHandle> mpirun;
        try {
            // "PID START-TICKS", as the leaders script writes it: a pid reused since is not the job's mpirun
            String[] fields = Files.readString(pidFile, StandardCharsets.UTF_8).trim().split(" ");
            long pid = Long.parseLong(fields[0]);
            boolean same = fields.length == 2 && ProcessIdentity.startTicks(pid) == Long.parseLong(fields[1]);
            mpirun = same ? ProcessHandle.of(pid) : Optional.empty();
        } catch (NoSuchFileException e) {
            return;
        } catch (IOException | NumberFormatException e) {
            throw new IllegalStateException("cannot read " + pidFile + ": " + e.getMessage(), e);
        }
        mpirun.ifPresent(p -> {
            List<ProcessHandle> daemons = p.descendants().toList();
            p.destroy();
            try {
                p.onExit().get(5, TimeUnit.SECONDS);
            } catch (Exception e) {
                daemons.forEach(ProcessHandle::destroyForcibly);
                p.destroyForcibly();
            }
        });
        try {
            Files.deleteIfExists(pidFile);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * What the daemons of job {@code jobId} said of a failure: their lines that name a group, host and reason, and
     * mpirun's line on a daemon killed by a signal (which says nothing itself), e.g. {@code the leader daemon of
     * group 1 on meridian-h2 (MPI rank 1, pid 4711) was killed by signal 9 (Killed)}.
     */
    String failures(String jobId) {
        return failuresIn(stateDir.resolve(jobId + ".log"));
    }

    /** Open MPI 4.1's report of a rank that died of a signal ("mpirun noticed that process rank ..."). */
    private static final Pattern KILLED = Pattern.compile(
            "noticed that process rank (\\d+) with PID (\\d+) on node (\\S+) exited on signal (\\d+) \\(([^)]*)\\)");

    static String failuresIn(Path log) {
        try {
            List<String> lines = new ArrayList<>();
            for (String line : Files.readAllLines(log, StandardCharsets.UTF_8)) {
                Matcher killed = KILLED.matcher(line);
                if (line.startsWith("meridian leader: group") && line.contains(" failed: ")) {
                    lines.add(line.substring("meridian leader: ".length()));
                } else if (killed.find()) {
                    // daemon rank r leads group r (LeaderDaemon)
                    lines.add("the leader daemon of group " + killed.group(1) + " on " + killed.group(3) + " (MPI rank "
                            + killed.group(1) + ", pid " + killed.group(2) + ") was killed by signal " + killed.group(4)
                            + " (" + killed.group(5) + ")");
                }
            }
            return String.join("; ", lines);
        } catch (IOException e) {
            return "";
        }
    }

    private static String tail(Path output) {
        try {
            List<String> lines = Files.readAllLines(output, StandardCharsets.UTF_8);
            return String.join(" | ", lines.subList(Math.max(0, lines.size() - 8), lines.size()));
        } catch (IOException e) {
            return "(no output: " + e.getMessage() + ")";
        }
    }
}
