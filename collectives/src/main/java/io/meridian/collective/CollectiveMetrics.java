package io.meridian.collective;

import io.meridian.metrics.BucketHistogram;
import io.prometheus.metrics.core.datapoints.CounterDataPoint;
import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.model.registry.Collector;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.prometheus.metrics.model.snapshots.HistogramSnapshot;
import io.prometheus.metrics.model.snapshots.Labels;
import io.prometheus.metrics.model.snapshots.MetricMetadata;
import io.prometheus.metrics.model.snapshots.MetricSnapshot;
import java.util.ArrayList;
import java.util.List;

/**
 * The collectives' metrics of this process (docs/metrics.md), in {@link PrometheusRegistry#defaultRegistry}:
 * {@code meridian_collective_call_seconds{kind,level}} (level {@code shared_memory}: a call as a member of the host's
 * group sees it, waiting included; {@code mpi}: a leader's exchange with the other hosts' leaders), the time spent
 * waiting for others, bytes, timeouts and members found dead. Every data point is looked up once, here: recording a
 * call costs a few LongAdder additions and a bucket search, and allocates nothing (the call times go to
 * {@link BucketHistogram}s, read by a collector at scrape time).
 */
public final class CollectiveMetrics {
    static final String SHARED_MEMORY = "shared_memory";
    static final String MPI = "mpi";
    private static final String CALLS = "meridian_collective_call_seconds";
    private static final String[] KINDS = {"allgatherv", "allreduce", "broadcast", "barrier"};

    private final BucketHistogram[] sharedMemory = new BucketHistogram[KINDS.length];
    private final BucketHistogram[] mpi = new BucketHistogram[KINDS.length];
    private final CounterDataPoint[] sharedMemoryBytes = new CounterDataPoint[KINDS.length];
    private final CounterDataPoint[] mpiBytes = new CounterDataPoint[KINDS.length];
    private final CounterDataPoint[] waitSeconds = new CounterDataPoint[KINDS.length];
    private final Counter timeouts;
    private final Counter memberFailures;
    private final Counter leaderSleeps;
    private final Counter leaderRings;

    private CollectiveMetrics(PrometheusRegistry registry) {
        for (int k = 0; k < KINDS.length; k++) {
            sharedMemory[k] = new BucketHistogram();
            mpi[k] = new BucketHistogram();
        }
        registry.register(new Collector() {
            @Override
            public MetricSnapshot collect() {
                List<HistogramSnapshot.HistogramDataPointSnapshot> points = new ArrayList<>();
                for (int k = 0; k < KINDS.length; k++) {
                    points.add(sharedMemory[k].snapshot(Labels.of("kind", KINDS[k], "level", SHARED_MEMORY)));
                    points.add(mpi[k].snapshot(Labels.of("kind", KINDS[k], "level", MPI)));
                }
                return new HistogramSnapshot(new MetricMetadata(CALLS, "Time of one collective call: level"
                        + " shared_memory is the call as a member of its host's group sees it (waiting for the others"
                        + " included), level mpi the leader's exchange between hosts"), points);
            }

            @Override
            public String getPrometheusName() {
                return CALLS;
            }
        });
        Counter bytes = Counter.builder().name("meridian_collective_bytes_total")
                .help("Bytes this process contributed to collective calls, by call kind and level")
                .labelNames("kind", "level").withoutExemplars().register(registry);
        Counter wait = Counter.builder().name("meridian_collective_wait_seconds_total")
                .help("Time collective calls spent waiting for other members (the share of the call time that is"
                        + " load imbalance, not exchange)")
                .labelNames("kind").withoutExemplars().register(registry);
        timeouts = Counter.builder().name("meridian_collective_timeouts_total")
                .help("Collective calls that failed because a member or leader did not arrive within the timeout")
                .withoutExemplars().register(registry);
        memberFailures = Counter.builder().name("meridian_collective_member_failures_total")
                .help("Members or leaders found dead (their process gone) during a collective call")
                .withoutExemplars().register(registry);
        leaderSleeps = Counter.builder().name("meridian_collective_leader_sleeps_total")
                .help("Times an idle leader daemon blocked on its doorbell between calls instead of polling")
                .withoutExemplars().register(registry);
        leaderRings = Counter.builder().name("meridian_collective_leader_doorbell_rings_total")
                .help("Rings of an idle leader daemon's doorbell: members that arrived while it slept")
                .withoutExemplars().register(registry);
        for (int k = 0; k < KINDS.length; k++) {
            sharedMemoryBytes[k] = bytes.labelValues(KINDS[k], SHARED_MEMORY);
            mpiBytes[k] = bytes.labelValues(KINDS[k], MPI);
            waitSeconds[k] = wait.labelValues(KINDS[k]);
        }
        timeouts.inc(0);
        memberFailures.inc(0);
        leaderSleeps.inc(0);
        leaderRings.inc(0);
    }

    private static final class Holder {
        static final CollectiveMetrics INSTANCE = new CollectiveMetrics(PrometheusRegistry.defaultRegistry);
    }

    /** This process's collective metrics, registered on first use. */
    public static CollectiveMetrics get() {
        return Holder.INSTANCE;
    }

    /** A call as a member of the host's group saw it: {@code nanos} in all, {@code waitNanos} of it waiting. */
    void sharedMemoryCall(int code, long nanos, long waitNanos, long bytes) {
        int k = index(code);
        sharedMemory[k].recordNanos(nanos);
        waitSeconds[k].inc(waitNanos * 1e-9);
        sharedMemoryBytes[k].inc(bytes);
    }

    /** A leader's exchange with the other hosts' leaders. */
    void mpiExchange(int code, long nanos, long bytes) {
        int k = index(code);
        mpi[k].recordNanos(nanos);
        mpiBytes[k].inc(bytes);
    }

    void timeout() {
        timeouts.inc();
    }

    void memberFailure() {
        memberFailures.inc();
    }

    /** An idle leader daemon slept on its doorbell, which was rung {@code rings} times meanwhile. */
    void leaderSlept(long rings) {
        leaderSleeps.inc();
        leaderRings.inc(rings);
    }

    private static int index(int code) {
        return switch (Ops.kind(code)) {
            case Ops.ALLGATHERV, Ops.ALLGATHERV_SUM -> 0;
            case Ops.ALLREDUCE_DOUBLE, Ops.ALLREDUCE_LONG -> 1;
            case Ops.BROADCAST -> 2;
            default -> 3;
        };
    }
}
