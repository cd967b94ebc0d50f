package io.meridian.stream.metrics;

import com.codahale.metrics.Histogram;
import com.codahale.metrics.MetricSet;
import com.codahale.metrics.SlidingWindowReservoir;
import io.meridian.metrics.BucketHistogram;
import java.util.Map;
import org.apache.storm.task.TopologyContext;

/**
 * A Storm metrics v2 histogram of times, in nanoseconds, that also counts into the shared fixed buckets
 * ({@link BucketHistogram}):
 * {@link PrometheusReporter} exports it as a Prometheus histogram ({@code NAME_seconds_bucket}), which, unlike a
 * reservoir's quantiles, can be summed over tasks and workers before {@code histogram_quantile}. Other reporters (JMX)
 * see an ordinary Dropwizard histogram of the last 1028 values. Recording allocates nothing.
 */
public final class TimeHistogram extends Histogram {
    private final BucketHistogram buckets = new BucketHistogram();

    public TimeHistogram() {
        super(new SlidingWindowReservoir(1028));
    }

    /**
     * Registers a histogram named {@code name} (dots and all, e.g. {@code meridian.map.round}) as a task metric of
     * {@code context}, through {@code registerMetricSet}, which keeps the instance (the other register methods make
     * their own).
     */
    public static TimeHistogram register(TopologyContext context, String name) {
        int dot = name.lastIndexOf('.');
        TimeHistogram h = new TimeHistogram();
        MetricSet set = () -> Map.of(name.substring(dot + 1), h);
        context.registerMetricSet(name.substring(0, dot), set);
        return h;
    }

    /** Records a time of {@code nanos} nanoseconds (negative counts as 0). */
    @Override
    public void update(long nanos) {
        long v = Math.max(0, nanos);
        super.update(v);
        buckets.recordNanos(v);
    }

    @Override
    public void update(int nanos) {
        update((long) nanos);
    }

    public void updateMillis(long millis) {
        update(millis * 1_000_000L);
    }

    public void updateSeconds(double seconds) {
        update(Math.round(seconds * 1e9));
    }

    /** The Prometheus side: its buckets. */
    public BucketHistogram buckets() {
        return buckets;
    }
}
