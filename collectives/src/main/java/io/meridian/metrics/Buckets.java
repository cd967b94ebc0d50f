package io.meridian.metrics;

/**
 * The classic histogram buckets Meridian's time distributions share, in seconds: the same bounds everywhere so that
 * a dashboard can sum buckets across tasks, workers and hosts before {@code histogram_quantile}. From 50 us (a
 * shared-memory collective call between two tasks) to 60 s (a cold anneal of a large map); about 2.5x apart.
 */
public final class Buckets {
    private static final double[] SECONDS = {0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
        0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60};

    private Buckets() {
    }

    /** A copy of the upper bounds, in seconds, ascending (+Inf is implied). */
    public static double[] seconds() {
        return SECONDS.clone();
    }
}
