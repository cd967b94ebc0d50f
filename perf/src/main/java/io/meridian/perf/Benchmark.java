package io.meridian.perf;

/**
 * One {@code ./meridian bench NAME}. It runs the baseline and Meridian's implementation in the same process run,
 * prints what it measures as it goes, and ends with exactly one JSON line of its figures (see {@link Figures}).
 */
public interface Benchmark {
    String description();

    /** Options, one per line, for {@code ./meridian bench NAME --help}; empty when the benchmark documents none. */
    default String usage() {
        return "";
    }

    void run(String[] args) throws Exception;
}
