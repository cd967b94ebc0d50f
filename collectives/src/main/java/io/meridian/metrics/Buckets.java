package io.meridian.metrics;

/**
 * The classic histogram buckets Meridian's time distributions share, in seconds: the same bounds everywhere so that
 * a dashboard can sum buckets across tasks, workers and hosts before {@code histogram_quantile}. From 50 us (a
 * shared-memory collective call between two tasks) to 60 s (a cold anneal of a large map), six per decade (1, 1.5,
 * 2, 3, 5, 7): a quantile interpolated within a bucket is off by at most a bucket's width, and the benchmarks quote
 * p99 from them, so 2.5x-wide buckets were too coarse. 37 bounds: a histogram is 40 series per task.
 */
public final class Buckets {
    private static final double[] SECONDS = {0.00005, 0.00007, 0.0001, 0.00015, 0.0002, 0.0003, 0.0005, 0.0007,
        0.001, 0.0015, 0.002, 0.003, 0.005, 0.007, 0.01, 0.015, 0.02, 0.03, 0.05, 0.07, 0.1, 0.15, 0.2, 0.3, 0.5, 0.7,
        1, 1.5, 2, 3, 5, 7, 10, 15, 20, 30, 60};

    private Buckets() {
    }

    /** A copy of the upper bounds, in seconds, ascending (+Inf is implied). */
    public static double[] seconds() {
        return SECONDS.clone();
    }
}
