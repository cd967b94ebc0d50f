package io.meridian.topology.probe;

import java.util.concurrent.atomic.AtomicLongArray;

/**
 * A log-linear histogram of nanosecond values (64 sub-buckets per power of two, under 1.6 % error), written by one
 * thread without allocation and read by another as snapshots: percentiles of a window are those of the difference
 * of two snapshots.
 */
public final class LatencyHistogram {
    private static final int SUB_BITS = 6;
    private static final int SUB = 1 << SUB_BITS;
    private static final int BUCKETS = 64 * SUB;
    private final AtomicLongArray counts = new AtomicLongArray(BUCKETS);

    /** Single writer. */
    public void record(long nanos) {
        int i = index(Math.max(nanos, 0));
        counts.lazySet(i, counts.get(i) + 1);
    }

    public static int index(long v) {
        if (v < SUB) {
            return (int) v;
        }
        int msb = 63 - Long.numberOfLeadingZeros(v);
        int shift = msb - SUB_BITS;
        return ((shift + 1) << SUB_BITS) + (int) ((v >>> shift) & (SUB - 1));
    }

    /** The smallest value of bucket {@code i}'s upper neighbour, i.e. an upper bound of the bucket's values. */
    public static long upperBound(int i) {
        if (i < SUB) {
            return i;
        }
        int shift = (i >>> SUB_BITS) - 1;
        long mantissa = (i & (SUB - 1)) | SUB;
        return ((mantissa + 1) << shift) - 1;
    }

    public long[] snapshot() {
        long[] s = new long[BUCKETS];
        for (int i = 0; i < BUCKETS; i++) {
            s[i] = counts.get(i);
        }
        return s;
    }

    public static long[] minus(long[] later, long[] earlier) {
        long[] d = new long[BUCKETS];
        for (int i = 0; i < BUCKETS; i++) {
            d[i] = later[i] - earlier[i];
        }
        return d;
    }

    /** @return the value at quantile q (0..1) of a snapshot difference, in nanoseconds, or -1 when it is empty */
    public static long quantile(long[] counts, double q) {
        long total = 0;
        for (long c : counts) {
            total += c;
        }
        if (total == 0) {
            return -1;
        }
        long rank = (long) Math.ceil(q * total);
        long seen = 0;
        for (int i = 0; i < counts.length; i++) {
            seen += counts[i];
            if (seen >= Math.max(rank, 1)) {
                return upperBound(i);
            }
        }
        return upperBound(counts.length - 1);
    }
}
