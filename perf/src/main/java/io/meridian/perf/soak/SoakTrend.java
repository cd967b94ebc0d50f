package io.meridian.perf.soak;

import io.meridian.metrics.MetricSamples;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.ToDoubleFunction;

/**
 * The soak's trend rules over the samples of a run of length T. The first T/6 is warm-up (5 of 30 minutes); the
 * early window is T/6..T/3 (minutes 5-10), the late window the last T/6 (minutes 25-30). A measure is compared by the
 * median of its samples in each window, which a single collection or a burst of threads does not move.
 */
final class SoakTrend {
    /** RSS and heap after GC: late median / early median - 1 below this. */
    static final double MAX_GROWTH = 0.05;
    /** Threads, open files, mappings: the late median at most the early one plus this many (a pooled thread or two). */
    static final int FLAT_SLACK = 2;
    /**
     * Open files and mappings a row store block file may rightly add to a worker: its writer's, and the map task
     * reader's that maps it (the late points add a block or two between the windows).
     */
    static final int PER_STORE_FILE = 2;
    /** Placement p99 of the late window at most this times the early window's (histogram buckets are coarse). */
    static final double P99_SLACK = 1.10;
    static final String RULE = "windows: warm-up T/6, early T/6..T/3, late 5T/6..T; per JVM, medians of the samples in"
            + " each window, except: RSS and heap after GC, each read right after a full GC (jcmd"
            + " GC.class_histogram at the first 3 samples after the warm-up and at the last 3; the least of each 3),"
            + " grow < 5 %; threads: late <= early + 2; open files,"
            + " mappings: late <= early + 2 + 2 x (row store files late - early);"
            + " run's /dev/shm files: late <= early + 2; placement p99 (bucket counts differenced over the window)"
            + " late <= 1.1 x early";

    private final List<SoakSample> samples;
    private final double runSeconds;

    SoakTrend(List<SoakSample> samples, double runSeconds) {
        this.samples = samples;
        this.runSeconds = runSeconds;
    }

    double earlyFrom() {
        return runSeconds / 6;
    }

    double earlyTo() {
        return runSeconds / 3;
    }

    double lateFrom() {
        return runSeconds * 5 / 6;
    }

    /** The median of {@code f} over the samples in [from, to] (NaN where f is NaN or none fall there). */
    double median(ToDoubleFunction<SoakSample> f, double from, double to) {
        double[] v = samples.stream().filter(s -> s.seconds() >= from && s.seconds() <= to).mapToDouble(f)
                .filter(Double::isFinite).toArray();
        if (v.length == 0) {
            return Double.NaN;
        }
        Arrays.sort(v);
        return v.length % 2 == 1 ? v[v.length / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
    }

    double early(ToDoubleFunction<SoakSample> f) {
        return median(f, earlyFrom(), earlyTo());
    }

    double late(ToDoubleFunction<SoakSample> f) {
        return median(f, lateFrom(), Double.MAX_VALUE);
    }

    /** Late median over early median, minus one. */
    double growth(ToDoubleFunction<SoakSample> f) {
        return late(f) / early(f) - 1;
    }

    /**
     * The least {@code f} of the samples taken after a full collection in the run's second half over the least in its
     * first half, minus one. The least, because a full collection of a streaming worker also keeps the rows in flight
     * at that moment: in one 3-minute run a worker's live heap read +8.8 % between two single collections, of which
     * +2.0 MB were 954 byte[] of about a row's size (36 MB in all); a leak raises the floor, rows in flight only some
     * of the readings.
     */
    double growthBetweenFullCollections(ToDoubleFunction<SoakSample> f) {
        double half = samples.isEmpty() ? 0 : samples.get(samples.size() - 1).seconds() / 2;
        double early = Double.POSITIVE_INFINITY;
        double late = Double.POSITIVE_INFINITY;
        for (SoakSample s : samples) {
            double v = f.applyAsDouble(s);
            if (s.afterFullGc() && !Double.isNaN(v)) {
                if (s.seconds() < half) {
                    early = Math.min(early, v);
                } else {
                    late = Math.min(late, v);
                }
            }
        }
        return Double.isInfinite(early) || Double.isInfinite(late) ? Double.NaN : late / early - 1;
    }

    boolean flat(ToDoubleFunction<SoakSample> f) {
        return flat(f, 0);
    }

    /** Flat, allowing {@code rightful} more (what the data added between the windows accounts for). */
    boolean flat(ToDoubleFunction<SoakSample> f, double rightful) {
        return late(f) <= early(f) + FLAT_SLACK + rightful;
    }

    /** Open files and mappings the row store files added between the windows may account for, per worker. */
    double storeFileAllowance() {
        return PER_STORE_FILE * Math.max(0, late(SoakSample::storeFiles) - early(SoakSample::storeFiles));
    }

    /**
     * Quantile {@code q} (seconds) of the placements between the first sample at or after {@code from} and the last
     * at or before {@code to}: the later sample's bucket counts minus the earlier's.
     */
    double placementQuantile(double q, double from, double to) {
        MetricSamples counted = placementsBetween(from, to);
        return counted == null ? Double.NaN : counted.quantile(PLACEMENT, q, x -> true);
    }

    /** Placements counted between the two windows' ends, as {@link #placementQuantile} sees them. */
    long placements(double from, double to) {
        MetricSamples counted = placementsBetween(from, to);
        return counted == null ? 0 : Math.round(counted.sum(PLACEMENT + "_bucket", s -> s.label("le").equals("+Inf")));
    }

    /** Placement buckets counted from the first sample at or after {@code from} to the last at or before {@code to}. */
    private MetricSamples placementsBetween(double from, double to) {
        SoakSample first = null;
        SoakSample last = null;
        for (SoakSample s : samples) {
            if (s.seconds() >= from && first == null) {
                first = s;
            }
            if (s.seconds() <= to) {
                last = s;
            }
        }
        if (first == null || last == null || last.seconds() <= first.seconds()) {
            return null;
        }
        return difference(first.placement(), last.placement());
    }

    static final String PLACEMENT = "meridian_map_placement_seconds";

    /** {@code end - start}, bucket by bucket (a bucket missing at the start counts from 0). */
    static MetricSamples difference(MetricSamples start, MetricSamples end) {
        List<MetricSamples.Sample> out = new ArrayList<>();
        for (MetricSamples.Sample e : end.all()) {
            double before = start.sum(e.name(), x -> x.labels().equals(e.labels()));
            out.add(new MetricSamples.Sample(e.name(), e.labels(), e.value() - before));
        }
        return MetricSamples.of(out);
    }
}
