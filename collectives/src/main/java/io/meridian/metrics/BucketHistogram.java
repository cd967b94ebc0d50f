package io.meridian.metrics;

import io.prometheus.metrics.model.snapshots.ClassicHistogramBuckets;
import io.prometheus.metrics.model.snapshots.Exemplars;
import io.prometheus.metrics.model.snapshots.HistogramSnapshot;
import io.prometheus.metrics.model.snapshots.Labels;
import java.util.Arrays;
import java.util.concurrent.atomic.LongAdder;

/**
 * A histogram of times in the shared {@link Buckets}, recorded in nanoseconds: a bucket search and two LongAdder
 * additions, nothing allocated. The Prometheus client's own {@code Histogram} allocates an {@code AtomicBoolean} on
 * every observation (its native-histogram reset check, 1.8.0), 16 bytes per collective call where escape analysis
 * does not remove it (TwoLevelCollectivesIT counted 96 bytes per round of 6 calls), so the hot paths record here and
 * a collector turns this into Prometheus's snapshot at scrape time.
 */
public final class BucketHistogram {
    private static final double[] UPPER_SECONDS = Buckets.seconds();
    private static final double[] UPPER_WITH_INF;
    private static final long[] UPPER_NANOS = new long[UPPER_SECONDS.length];

    static {
        for (int i = 0; i < UPPER_SECONDS.length; i++) {
            UPPER_NANOS[i] = Math.round(UPPER_SECONDS[i] * 1e9);
        }
        UPPER_WITH_INF = Arrays.copyOf(UPPER_SECONDS, UPPER_SECONDS.length + 1);
        UPPER_WITH_INF[UPPER_SECONDS.length] = Double.POSITIVE_INFINITY;
    }

    private final LongAdder[] counts = new LongAdder[UPPER_SECONDS.length + 1];
    private final LongAdder sumNanos = new LongAdder();

    public BucketHistogram() {
        for (int i = 0; i < counts.length; i++) {
            counts[i] = new LongAdder();
        }
    }

    /** Records a time of {@code nanos} nanoseconds (a negative one counts as 0). */
    public void recordNanos(long nanos) {
        long v = Math.max(0, nanos);
        int i = 0;
        while (i < UPPER_NANOS.length && v > UPPER_NANOS[i]) {
            i++;
        }
        counts[i].increment();
        sumNanos.add(v);
    }

    /** Per bucket (not cumulative; the last above the largest bound), read one bucket at a time. */
    public long[] bucketCounts() {
        long[] out = new long[counts.length];
        for (int i = 0; i < out.length; i++) {
            out[i] = counts[i].sum();
        }
        return out;
    }

    public double sumSeconds() {
        return sumNanos.sum() * 1e-9;
    }

    /** Its figures as one data point of a Prometheus histogram, in seconds. */
    public HistogramSnapshot.HistogramDataPointSnapshot snapshot(Labels labels) {
        return new HistogramSnapshot.HistogramDataPointSnapshot(ClassicHistogramBuckets.of(UPPER_WITH_INF, bucketCounts()),
                sumSeconds(), labels, Exemplars.EMPTY, 0);
    }
}
