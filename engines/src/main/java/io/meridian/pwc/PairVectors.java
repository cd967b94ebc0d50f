package io.meridian.pwc;

import jdk.incubator.vector.DoubleVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * {@link TriangleKernel}'s tile pass with explicit vectors: per lane an FMA for the row's own sum and one for the other
 * row of each pair. Loaded only when the vector module is there ({@link #AVAILABLE} is read without loading it), and
 * given real work only once C2 has compiled it ({@link #warmUp}): interpreted or compiled by C1 every vector operation
 * allocates, as {@link io.meridian.mds.TileVectors} found for the SMACOF pass.
 */
final class PairVectors {
    private static final VectorSpecies<Double> D = DoubleVector.SPECIES_PREFERRED;
    private static final int LANES = D.length();
    private static final com.sun.management.ThreadMXBean THREADS =
            (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
    /** Entries of the warm-up tile: two vector iterations and a scalar tail, so every path is profiled. */
    private static final int WARM_LEN = 2 * LANES + 3;
    /** Calls per {@link #warmUp} until {@link #WARM_BUDGET} calls are made (C2 queues a method after ~5000). */
    private static final int WARM_CALLS = 200;
    private static final int WARM_BUDGET = 6000;
    /** Calls per {@link #warmUp} after the budget, while C2 compiles. */
    private static final int PROBE_CALLS = 16;
    /** Warm-up calls made so far in this JVM (a racy count across threads is good enough here). */
    private static int warmCalls;
    private static volatile boolean compiled;

    private PairVectors() {
    }

    /** Scratch of one kernel for {@link #warmUp} (each kernel its own, as kernels may run in threads). */
    static final class Scratch {
        final double[] d = new double[WARM_LEN];
        final double[] x = new double[WARM_LEN];
        final double[] acc = new double[WARM_LEN];
        final double[] rowSums = new double[2];

        Scratch() {
            for (int t = 0; t < WARM_LEN; t++) {
                d[t] = 1000 * t;
                x[t] = 0.01 * t;
            }
        }
    }

    /**
     * Whether {@link #pairs} runs C2-compiled; if not yet, runs it on a small tile a few hundred times and tests
     * whether one more call allocates nothing, which only the C2 form (vectors in registers) does.
     */
    static boolean warmUp(Scratch s) {
        if (compiled) {
            return true;
        }
        int calls = warmCalls < WARM_BUDGET ? WARM_CALLS : PROBE_CALLS;
        warmCalls += calls;
        for (int k = 0; k < calls; k++) {
            pairs(s.d, WARM_LEN, s.x, s.acc, 0, 0.5);
            pairs2(s.d, s.x, WARM_LEN, s.x, s.acc, 0, 0.5, 0.25, s.rowSums);
        }
        long before = THREADS.getCurrentThreadAllocatedBytes();
        pairs(s.d, WARM_LEN, s.x, s.acc, 0, 0.5);
        pairs2(s.d, s.x, WARM_LEN, s.x, s.acc, 0, 0.5, 0.25, s.rowSums);
        if (THREADS.getCurrentThreadAllocatedBytes() - before == 0) {
            compiled = true;
        }
        return compiled;
    }

    /**
     * {@link #pairs} for two rows a and b against the same tile: {@code out[0]} and {@code out[1]} get their own sums,
     * {@code acc[from + t]} gets {@code da_t xa + db_t xb}; x and acc are loaded once for both rows.
     */
    static void pairs2(double[] da, double[] db, int len, double[] x, double[] acc, int from, double xa, double xb,
                       double[] out) {
        DoubleVector sumA = DoubleVector.zero(D);
        DoubleVector sumB = DoubleVector.zero(D);
        DoubleVector otherA = DoubleVector.broadcast(D, xa);
        DoubleVector otherB = DoubleVector.broadcast(D, xb);
        int t = 0;
        for (int end = D.loopBound(len); t < end; t += LANES) {
            DoubleVector a = DoubleVector.fromArray(D, da, t);
            DoubleVector b = DoubleVector.fromArray(D, db, t);
            DoubleVector xv = DoubleVector.fromArray(D, x, from + t);
            sumA = a.fma(xv, sumA);
            sumB = b.fma(xv, sumB);
            b.fma(otherB, a.fma(otherA, DoubleVector.fromArray(D, acc, from + t))).intoArray(acc, from + t);
        }
        double sa = sumA.reduceLanes(VectorOperators.ADD);
        double sb = sumB.reduceLanes(VectorOperators.ADD);
        for (; t < len; t++) {
            sa += da[t] * x[from + t];
            sb += db[t] * x[from + t];
            acc[from + t] += da[t] * xa + db[t] * xb;
        }
        out[0] = sa;
        out[1] = sb;
    }

    /** As {@link TriangleKernel}'s scalar pass: returns sum_t d_t x[from + t] and adds d_t xi to acc[from + t]. */
    static double pairs(double[] d, int len, double[] x, double[] acc, int from, double xi) {
        DoubleVector sum = DoubleVector.zero(D);
        DoubleVector other = DoubleVector.broadcast(D, xi);
        int t = 0;
        for (int end = D.loopBound(len); t < end; t += LANES) {
            DoubleVector dv = DoubleVector.fromArray(D, d, t);
            sum = dv.fma(DoubleVector.fromArray(D, x, from + t), sum);
            dv.fma(other, DoubleVector.fromArray(D, acc, from + t)).intoArray(acc, from + t);
        }
        double s = sum.reduceLanes(VectorOperators.ADD);
        for (; t < len; t++) {
            s += d[t] * x[from + t];
            acc[from + t] += d[t] * xi;
        }
        return s;
    }
}
