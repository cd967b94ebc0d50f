package io.meridian.stream.live;

import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.IOException;
import java.io.StringReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Instant;
import java.util.Locale;
import java.util.Properties;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What failed when the live map's group failed, and whether it resumed: map task 0 names the failed part and its host
 * ({@link #cause}) from its error and the leader daemons' lines, counts it in
 * {@code meridian_map_failed_parts_total{part,failed_host}} (the alerts MeridianLeaderDaemonLost and
 * MeridianHostLinkDown) and keeps the last failure in {@code <snapshots>/.failure-<job>}, which
 * {@code ./meridian status} shows with the time the map took to resume.
 */
public final class MapFailures {
    /** The part that failed: a leader daemon, the link to another host, a map task (its worker or host), or other. */
    public record Cause(String part, String host) {
        /** Whether the part is named: a leader daemon, a link or a map task, not only a timeout or unknown. */
        public boolean named() {
            return !part.equals(TIMEOUT) && !part.equals(OTHER);
        }

        public String describe() {
            String what = switch (part) {
                case LEADER_DAEMON -> "the leader daemon";
                case PEER_LINK -> "the link to";
                case MAP_TASK -> "a map task";
                case SHM_FULL -> "the shared memory tmpfs";
                case TIMEOUT -> "a collective call timed out";
                default -> "unknown";
            };
            return host.isEmpty() ? what : what + (part.equals(PEER_LINK) ? " " : " on ") + host;
        }
    }

    public static final String LEADER_DAEMON = "leader_daemon";
    public static final String PEER_LINK = "peer_link";
    public static final String MAP_TASK = "map_task";
    /** The tmpfs of a host's regions is full (a leader daemon there could not reserve its region's pages). */
    public static final String SHM_FULL = "shm_full";
    public static final String TIMEOUT = "timeout";
    public static final String OTHER = "other";
    private static final Pattern SHM_FULL_ON =
            Pattern.compile("\\S+ full: cannot reserve \\d+ bytes for \\S+ \\(host (\\S+)\\)");
    private static final Pattern LINK = Pattern.compile("the link to group \\d+ on (\\S+) is down");
    private static final Pattern DAEMON_KILLED =
            Pattern.compile("the leader daemon of group \\d+ on (\\S+) \\(MPI rank");
    private static final Pattern LEADER_GONE = Pattern.compile("the leader of group \\d+ \\(pid \\d+\\) is gone");
    private static final Pattern MEMBER_GONE = Pattern.compile("group \\d+ on (\\S+) failed: .*member \\d+ .*is gone");
    private static volatile Counter counter;

    private MapFailures() {
    }

    /**
     * The failed part named by {@code error} (what a map task's collective call threw) and {@code daemons} (what the
     * leader daemons' log said, possibly empty), seen from a task on {@code thisHost}.
     */
    public static Cause cause(String error, String daemons, String thisHost) {
        String text = error + " " + daemons;
        Matcher m;
        if ((m = SHM_FULL_ON.matcher(text)).find()) {
            return new Cause(SHM_FULL, m.group(1));
        }
        if ((m = LINK.matcher(text)).find()) {
            return new Cause(PEER_LINK, m.group(1));
        }
        if ((m = DAEMON_KILLED.matcher(text)).find()) {
            return new Cause(LEADER_DAEMON, m.group(1));
        }
        if (LEADER_GONE.matcher(text).find()) {
            return new Cause(LEADER_DAEMON, thisHost);
        }
        if ((m = MEMBER_GONE.matcher(text)).find()) {
            return new Cause(MAP_TASK, m.group(1));
        }
        if (text.contains("timed out")) {
            return new Cause(TIMEOUT, "");
        }
        return new Cause(OTHER, "");
    }

    /** Counts {@code cause} in this worker's {@code meridian_map_failed_parts_total}. */
    static void count(Cause cause) {
        Counter c = counter;
        if (c == null) {
            synchronized (MapFailures.class) {
                if (counter == null) {
                    counter = Counter.builder().name("meridian_map_failed_parts_total").help("Generations of the"
                            + " live map's group that failed, by the part that failed (leader_daemon, peer_link,"
                            + " map_task, shm_full, timeout, other) and its host (empty when unknown); counted by map task 0")
                            .labelNames("part", "failed_host").register(PrometheusRegistry.defaultRegistry);
                }
                c = counter;
            }
        }
        c.labelValues(cause.part(), cause.host()).inc();
    }

    /**
     * The failure that stopped the map's rounds last, and when the map resumed (resumedGeneration -1: not yet). The
     * generations that failed after it while the group re-formed (a host still unreachable, say) are counted in
     * {@code failedAgain}, the last of them in {@code lastReason}: the first failure names the part that failed.
     */
    public record Last(long generation, long failedAtMillis, String part, String host, String reason,
                       int failedAgain, String lastReason, long resumedGeneration, long resumedAtMillis) {
        /** One line for {@code ./meridian status}. */
        public String toText(long nowMillis) {
            String failed = String.format(Locale.ROOT, "generation %d failed at %s (%.0f s ago): %s; %s",
                    generation, Instant.ofEpochMilli(failedAtMillis).toString(), (nowMillis - failedAtMillis) / 1000.0,
                    new Cause(part, host).describe(), reason);
            String again = failedAgain == 0 ? "" : String.format(Locale.ROOT, "; %d more generation%s failed while"
                    + " the group re-formed, the last: %s", failedAgain, failedAgain == 1 ? "" : "s", lastReason);
            return failed + again + (resumedGeneration < 0 ? "; not resumed yet (the group re-forms)"
                    : String.format(Locale.ROOT, "; resumed in generation %d, %.1f s after the failure",
                            resumedGeneration, (resumedAtMillis - failedAtMillis) / 1000.0));
        }
    }

    static Path file(Path snapshots, String job) {
        return snapshots.resolve(".failure-" + job);
    }

    /**
     * Task 0: generation {@code generation} failed now, for {@code cause}, with the error line {@code reason}. While
     * the map has not resumed since the last failure, that one stays the failure shown and this one is counted again.
     */
    static void recordFailure(Path snapshots, String job, long generation, Cause cause, String reason) {
        Path f = file(snapshots, job);
        Last last = read(snapshots, job);
        Properties p;
        if (last != null && last.resumedGeneration() < 0) {
            p = properties(f);
            p.setProperty("failedAgain", Integer.toString(last.failedAgain() + 1));
            p.setProperty("lastReason", "generation " + generation + ": " + cause.describe() + "; " + reason);
        } else {
            p = new Properties();
            p.setProperty("generation", Long.toString(generation));
            p.setProperty("failedAtMillis", Long.toString(System.currentTimeMillis()));
            p.setProperty("part", cause.part());
            p.setProperty("host", cause.host());
            p.setProperty("reason", reason);
            p.setProperty("failedAgain", "0");
            p.setProperty("lastReason", "");
            p.setProperty("resumedGeneration", "-1");
            p.setProperty("resumedAtMillis", "0");
        }
        write(f, p);
    }

    /** Task 0: generation {@code generation} showed its first frame after the last failure (none recorded: nothing). */
    static void recordResumed(Path snapshots, String job, long generation) {
        Last last = read(snapshots, job);
        if (last == null || last.resumedGeneration() >= 0 || generation <= last.generation()) {
            return;
        }
        Properties p = properties(file(snapshots, job));
        p.setProperty("resumedGeneration", Long.toString(generation));
        p.setProperty("resumedAtMillis", Long.toString(System.currentTimeMillis()));
        write(file(snapshots, job), p);
    }

    /** The last failure of the map of job {@code job} (see {@link LiveMapBolt#jobId}), or null when none. */
    public static Last read(Path snapshots, String job) {
        Properties p = properties(file(snapshots, job));
        if (p == null) {
            return null;
        }
        try {
            return new Last(Long.parseLong(p.getProperty("generation")),
                    Long.parseLong(p.getProperty("failedAtMillis")),
                    p.getProperty("part", OTHER), p.getProperty("host", ""), p.getProperty("reason", ""),
                    Integer.parseInt(p.getProperty("failedAgain", "0")), p.getProperty("lastReason", ""),
                    Long.parseLong(p.getProperty("resumedGeneration", "-1")),
                    Long.parseLong(p.getProperty("resumedAtMillis", "0")));
        } catch (RuntimeException e) {
            return null; // not one of ours
        }
    }

    private static Properties properties(Path f) {
        try {
            Properties p = new Properties();
            p.load(new StringReader(Files.readString(f, StandardCharsets.UTF_8)));
            return p;
        } catch (NoSuchFileException e) {
            return null;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + f + ": " + e.getMessage(), e);
        }
    }

    private static void write(Path f, Properties p) {
        Path tmp = f.resolveSibling(f.getFileName() + ".tmp");
        try (var out = Files.newBufferedWriter(tmp, StandardCharsets.UTF_8)) {
            p.store(out, "the live map's last failure (MapFailures)");
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + tmp + ": " + e.getMessage(), e);
        }
        try {
            Files.move(tmp, f, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot replace " + f + ": " + e.getMessage(), e);
        }
    }
}
