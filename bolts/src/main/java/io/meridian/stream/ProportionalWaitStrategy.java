package io.meridian.stream;

import io.meridian.shm.ProportionalBackoff;
import java.util.Map;
import java.util.concurrent.locks.LockSupport;
import org.apache.storm.Config;
import org.apache.storm.policy.IWaitStrategy;
import org.apache.storm.utils.ObjectReader;

/**
 * How a Storm executor with nothing to do waits for its next tuple: the first idle call returns at once, then it parks
 * for 1/8 of the time it has been idle, at least the situation's first park (bolts {@code topology.bolt.wait.park.microsec},
 * spouts {@code topology.spout.wait.park.microsec}) and at most {@value #MAX_PARK_MS_DEFAULT} ms
 * ({@value #MAX_PARK_MS_PROP}; spouts {@value #SPOUT_MAX_PARK_US_DEFAULT} us, {@value #SPOUT_MAX_PARK_US_PROP}). A tuple that ends a gap of G therefore waits at most G/8 (and the cap) longer than it
 * would with a busy-spinning executor, while an executor idle for long wakes about 100 times a second instead of
 * Storm's 1,000 (progressive level 3, 1 ms sleeps).
 * <p>
 * Why it matters: with the kernel's autogroups, a session whose threads keep the cores busy and wake often keeps other
 * sessions (the Kafka broker, ZooKeeper, a producer) off the CPU for seconds (perf/sched/autogroup-starvation.sh: 2
 * busy threads plus 5 threads that sleep 1 ms at a time, 2-11 s; the same 5 sleeping 4 ms at a time, 10 ms). Every
 * executor of a worker is such a sleeper: an idle live-map topology's two workers woke 15,800 times a second.
 * <p>
 * Storm makes one instance per executor and calls it from the executor's thread only.
 */
public final class ProportionalWaitStrategy implements IWaitStrategy {
    /** Longest park of an idle bolt executor, milliseconds. */
    public static final String MAX_PARK_MS_PROP = "meridian.executor.idle.max.park.ms";
    public static final long MAX_PARK_MS_DEFAULT = 10;
    /**
     * Longest park of a spout, microseconds. Storm uses the spout's wait strategy also while max.spout.pending rows
     * are un-acked, where a long park delays the next emit: capped at 10 ms, bench ingest's rate fell from 115,948 to
     * 98,536 rows/s (one run each, back to back); an idle Kafka spout waits in its poll too (2 ms) between parks.
     */
    public static final String SPOUT_MAX_PARK_US_PROP = "meridian.executor.spout.idle.max.park.us";
    public static final long SPOUT_MAX_PARK_US_DEFAULT = 1_000;
    private static final int IDLE_SHIFT = 3;

    private long firstParkNanos;
    private long maxParkNanos;
    private long idleSinceNanos;

    @Override
    public void prepare(Map<String, Object> conf, WaitSituation situation) {
        String firstKey = switch (situation) {
            case BOLT_WAIT -> Config.TOPOLOGY_BOLT_WAIT_PARK_MICROSEC;
            case SPOUT_WAIT -> Config.TOPOLOGY_SPOUT_WAIT_PARK_MICROSEC;
            case BACK_PRESSURE_WAIT -> Config.TOPOLOGY_BACKPRESSURE_WAIT_PARK_MICROSEC;
        };
        long maxParkNanos = situation == WaitSituation.SPOUT_WAIT
            ? microseconds(conf, SPOUT_MAX_PARK_US_PROP, SPOUT_MAX_PARK_US_DEFAULT) * 1_000L
            : milliseconds(conf, MAX_PARK_MS_PROP, MAX_PARK_MS_DEFAULT) * 1_000_000L;
        configure(microseconds(conf, firstKey, 100) * 1_000L, maxParkNanos);
    }

    void configure(long firstParkNanos, long maxParkNanos) {
        this.firstParkNanos = firstParkNanos;
        this.maxParkNanos = Math.max(firstParkNanos, maxParkNanos);
    }

    @Override
    public int idle(int idleCounter) {
        long now = System.nanoTime();
        if (idleCounter == 0) {
            idleSinceNanos = now;
            return 1;
        }
        LockSupport.parkNanos(parkNanos(now - idleSinceNanos));
        return idleCounter == Integer.MAX_VALUE ? idleCounter : idleCounter + 1;
    }

    /** How long to park after having been idle for {@code idleNanos}. */
    long parkNanos(long idleNanos) {
        return ProportionalBackoff.parkNanos(idleNanos, IDLE_SHIFT, firstParkNanos, maxParkNanos);
    }

    private static long microseconds(Map<String, Object> conf, String key, long absent) {
        Object v = conf.get(key);
        long us = v == null ? absent : ObjectReader.getLong(v);
        if (us < 1) {
            throw new IllegalArgumentException(key + " is " + v + "; an idle executor's park must be at least 1 microsecond");
        }
        return us;
    }

    private static long milliseconds(Map<String, Object> conf, String key, long absent) {
        Object v = conf.get(key);
        long ms = v == null ? absent : ObjectReader.getLong(v);
        if (ms < 1 || ms > 1_000) {
            throw new IllegalArgumentException(key + " is " + v + "; it must be 1..1000 milliseconds");
        }
        return ms;
    }
}
