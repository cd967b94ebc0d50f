package io.meridian.transport.mmap;

import io.meridian.shm.IdleStrategy;
import io.meridian.shm.OwnerOnlyFiles;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Map;

/**
 * The transport's settings, read from the topology configuration (storm.yaml or the topology's {@code Config}). Every
 * key is optional; a bad value fails {@link MmapContext#prepare} with a message naming the key.
 */
public final class TransportConfig {
    /** Root directory of the queues; default {@code /dev/shm/meridian-transport-<user>} (tmpfs). */
    public static final String DIR = "meridian.transport.dir";
    /** {@code backoff} (default), {@code yield} or {@code spin}: how the receiving thread waits for messages. */
    public static final String IDLE = "meridian.transport.idle";
    /**
     * With the back-off strategy, how long the reader stays idle before it blocks on its doorbell until a sender
     * rings, microseconds (default 30; {@code off}: never block). Spin and yield never block.
     */
    public static final String IDLE_SLEEP_AFTER_US = "meridian.transport.idle.sleep.after.us";
    /** Longest park of the back-off idle strategy, microseconds (default 200). */
    public static final String IDLE_MAX_PARK_US = "meridian.transport.idle.max.park.us";
    /** Messages written but not yet delivered by the receiver above which the sender backs off (default 65536). */
    public static final String MAX_LAG_MESSAGES = "meridian.transport.max.lag.messages";
    /** Bytes written but not yet delivered above which the sender backs off (default 64 MiB). */
    public static final String MAX_LAG_BYTES = "meridian.transport.max.lag.bytes";
    /** Length of one queue cycle file, seconds (default 5): the granularity of deleting consumed data. */
    public static final String ROLL_SECONDS = "meridian.transport.roll.seconds";
    /** A receiver whose heartbeat is older than this is not live (default 3000 ms). */
    public static final String HEARTBEAT_TIMEOUT_MS = "meridian.transport.heartbeat.timeout.ms";
    /** Highest task id + 1 the control files have room for (default 16384). */
    public static final String MAX_TASKS = "meridian.transport.max.tasks";
    /** Host names to treat as this host, in addition to Storm's own host name and localhost. */
    public static final String LOCAL_HOSTS = "meridian.transport.local.hosts";
    /** Size of each sender's payload ring for large tuples (default 64 MiB; 0 = every tuple inline in the queue). */
    public static final String RING_BYTES = "meridian.transport.ring.bytes";
    /** Tuples of at least this many bytes go through the payload ring (default 4096). */
    public static final String RING_THRESHOLD = "meridian.transport.ring.threshold";
    /**
     * Whether a batch's frames go into the payload ring whenever it has room, the queue document carrying only the
     * header (default true; false: only tuples of {@link #RING_THRESHOLD} or more, the rest inline in the queue).
     */
    public static final String RING_BATCHES = "meridian.transport.ring.batches";

    /** Receiver directories of dead workers are deleted after this many minutes without a heartbeat (default 10). */
    public static final String STALE_MINUTES = "meridian.transport.stale.minutes";

    final long staleMillis;
    final Path root;
    final String idle;
    final long maxParkNanos;
    /** -1: the reader never blocks */
    final long sleepAfterNanos;
    final long maxLagMessages;
    final long maxLagBytes;
    final int rollSeconds;
    final long heartbeatTimeoutMs;
    final int maxTasks;
    final java.util.List<String> localHosts;
    final int ringBytes;
    final int ringThreshold;
    final boolean ringBatches;

    private TransportConfig(Path root, String idle, long maxParkNanos, long sleepAfterNanos, long maxLagMessages, long maxLagBytes,
                            int rollSeconds, long heartbeatTimeoutMs, int maxTasks, java.util.List<String> localHosts,
                            int ringBytes, int ringThreshold, boolean ringBatches, long staleMillis) {
        this.staleMillis = staleMillis;
        this.root = root;
        this.idle = idle;
        this.maxParkNanos = maxParkNanos;
        this.sleepAfterNanos = sleepAfterNanos;
        this.maxLagMessages = maxLagMessages;
        this.maxLagBytes = maxLagBytes;
        this.rollSeconds = rollSeconds;
        this.heartbeatTimeoutMs = heartbeatTimeoutMs;
        this.maxTasks = maxTasks;
        this.localHosts = localHosts;
        this.ringBytes = ringBytes;
        this.ringThreshold = ringThreshold;
        this.ringBatches = ringBatches && ringBytes > 0;
    }

    /** The directory the queues of every topology live under, one directory per topology id. */
    public Path root() {
        return root;
    }

    public static TransportConfig from(Map<String, Object> conf) {
        Object dir = conf.get(DIR);
        Path root = dir == null ? defaultRoot() : Paths.get(dir.toString());
        String idle = String.valueOf(conf.getOrDefault(IDLE, "backoff")).trim().toLowerCase(java.util.Locale.ROOT);
        if (!idle.equals("backoff") && !idle.equals("yield") && !idle.equals("spin")) {
            throw new IllegalArgumentException(IDLE + " must be backoff, yield or spin, got '" + idle + "'");
        }
        java.util.List<String> hosts = new java.util.ArrayList<>();
        Object h = conf.get(LOCAL_HOSTS);
        if (h instanceof java.util.Collection<?> c) {
            c.forEach(x -> hosts.add(String.valueOf(x)));
        } else if (h != null) {
            for (String s : h.toString().split(",")) {
                if (!s.isBlank()) {
                    hosts.add(s.trim());
                }
            }
        }
        Object sleepAfter = conf.get(IDLE_SLEEP_AFTER_US);
        long sleepAfterNanos = !idle.equals("backoff") || "off".equals(String.valueOf(sleepAfter).trim()) ? -1
            : nonNegative(conf, IDLE_SLEEP_AFTER_US, 30) * 1000L;
        return new TransportConfig(root, idle,
            positive(conf, IDLE_MAX_PARK_US, 200) * 1000L,
            sleepAfterNanos,
            positive(conf, MAX_LAG_MESSAGES, 65536),
            positive(conf, MAX_LAG_BYTES, 64L << 20),
            (int) positive(conf, ROLL_SECONDS, 5),
            positive(conf, HEARTBEAT_TIMEOUT_MS, 3000),
            (int) positive(conf, MAX_TASKS, 16384),
            hosts,
            (int) Math.min(nonNegative(conf, RING_BYTES, 64L << 20), 1L << 30),
            (int) Math.min(positive(conf, RING_THRESHOLD, 4096), Integer.MAX_VALUE),
            bool(conf, RING_BATCHES, true),
            positive(conf, STALE_MINUTES, 10) * 60_000L);
    }

    static Path defaultRoot() {
        return OwnerOnlyFiles.perUserDirectory("meridian-transport");
    }

    private static boolean bool(Map<String, Object> conf, String key, boolean dflt) {
        Object v = conf.get(key);
        if (v == null) {
            return dflt;
        }
        String t = v.toString().trim().toLowerCase(java.util.Locale.ROOT);
        if (!t.equals("true") && !t.equals("false")) {
            throw new IllegalArgumentException(key + " must be true or false, got '" + v + "'");
        }
        return t.equals("true");
    }

    private static long positive(Map<String, Object> conf, String key, long dflt) {
        long v = nonNegative(conf, key, dflt);
        if (v == 0) {
            throw new IllegalArgumentException(key + " must be a positive number, got 0");
        }
        return v;
    }

    private static long nonNegative(Map<String, Object> conf, String key, long dflt) {
        Object v = conf.get(key);
        if (v == null) {
            return dflt;
        }
        try {
            long x = v instanceof Number n ? n.longValue() : Long.parseLong(v.toString().trim());
            if (x < 0) {
                throw new NumberFormatException();
            }
            return x;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(key + " must be a non-negative whole number, got '" + v + "'");
        }
    }

    IdleStrategy newIdleStrategy() {
        return switch (idle) {
            case "spin" -> new IdleStrategy.Spin();
            case "yield" -> new IdleStrategy.Yield();
            default -> new IdleStrategy.Backoff(maxParkNanos);
        };
    }
}
