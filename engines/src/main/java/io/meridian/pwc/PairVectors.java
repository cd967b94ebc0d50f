package io.meridian.pwc;

import jdk.incubator.vector.DoubleVector;
import jdk.incubator.vector.ShortVector;
import jdk.incubator.vector.VectorShape;
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
    /** As many 16-bit lanes as {@link #D} has doubles, for {@link #widen}. */
    private static final VectorSpecies<Short> S = VectorSpecies.of(short.class, VectorShape.forBitSize(16 * LANES));
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
        /** Room for {@link #pairs4}'s four rows at stride 1. */
        final double[] d = new double[WARM_LEN + 3];
        final double[] x = new double[WARM_LEN];
        final double[] acc = new double[WARM_LEN];
        final double[] rowSums = new double[4];
        final short[] raw = new short[WARM_LEN];

        Scratch() {
            for (int t = 0; t < WARM_LEN; t++) {
                d[t] = 1000 * t;
                raw[t] = (short) (t % 3 == 0 ? -1 : 1000 * t);
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
            pairs(s.d, 0, WARM_LEN, s.x, s.acc, 0, 0.5);
            pairs2(s.d, 0, 1, WARM_LEN - 1, s.x, s.acc, 0, 0.5, 0.25, s.rowSums);
            pairs4(s.d, 0, 1, WARM_LEN, s.x, s.acc, 0, 0.5, 0.25, 0.125, 0.0625, s.rowSums);
            widen(s.raw, WARM_LEN, s.acc, 0);
        }
        long before = THREADS.getCurrentThreadAllocatedBytes();
        pairs(s.d, 0, WARM_LEN, s.x, s.acc, 0, 0.5);
        pairs2(s.d, 0, 1, WARM_LEN - 1, s.x, s.acc, 0, 0.5, 0.25, s.rowSums);
        pairs4(s.d, 0, 1, WARM_LEN, s.x, s.acc, 0, 0.5, 0.25, 0.125, 0.0625, s.rowSums);
        widen(s.raw, WARM_LEN, s.acc, 0);
        if (THREADS.getCurrentThreadAllocatedBytes() - before == 0) {
            compiled = true;
        }
        return compiled;
    }

    /**
     * {@link #pairs} for two rows a and b against the same columns, their values {@code d[a + t]} and {@code d[b + t]}:
     * {@code out[0]} and {@code out[1]} get their own sums, {@code acc[from + t]} gets {@code da_t xa + db_t xb}; x and
     * acc are loaded once for both rows.
     */
    static void pairs2(double[] d, int a, int b, int len, double[] x, double[] acc, int from, double xa, double xb,
                       double[] out) {
        DoubleVector sumA = DoubleVector.zero(D);
        DoubleVector sumB = DoubleVector.zero(D);
        DoubleVector otherA = DoubleVector.broadcast(D, xa);
        DoubleVector otherB = DoubleVector.broadcast(D, xb);
        int t = 0;
        for (int end = D.loopBound(len); t < end; t += LANES) {
            DoubleVector va = DoubleVector.fromArray(D, d, a + t);
            DoubleVector vb = DoubleVector.fromArray(D, d, b + t);
            DoubleVector xv = DoubleVector.fromArray(D, x, from + t);
            sumA = va.fma(xv, sumA);
            sumB = vb.fma(xv, sumB);
            vb.fma(otherB, va.fma(otherA, DoubleVector.fromArray(D, acc, from + t))).intoArray(acc, from + t);
        }
        double sa = sumA.reduceLanes(VectorOperators.ADD);
        double sb = sumB.reduceLanes(VectorOperators.ADD);
        for (; t < len; t++) {
            sa += d[a + t] * x[from + t];
            sb += d[b + t] * x[from + t];
            acc[from + t] += d[a + t] * xa + d[b + t] * xb;
        }
        out[0] = sa;
        out[1] = sb;
    }

    /**
     * Raw 16-bit entries {@code raw[0 .. len)} as doubles into {@code values} from {@code to}, a missing (negative)
     * one as 0. Every tile of a row is widened once and read by every cluster; done a value at a time it cost as much
     * as the product at k = 1 (N = 8000, one thread: 1.0 ns per pair at k = 1, 2.6 at k = 10).
     */
    static void widen(short[] raw, int len, double[] values, int to) {
        int t = 0;
        for (int end = S.loopBound(len); t < end; t += LANES) {
            ShortVector v = ShortVector.fromArray(S, raw, t).max((short) 0);
            ((DoubleVector) v.convertShape(VectorOperators.S2D, D, 0)).intoArray(values, to + t);
        }
        for (; t < len; t++) {
            values[to + t] = Math.max(raw[t], 0);
        }
    }

    /**
     * {@link #pairs} for four rows whose values start at {@code d[a]}, {@code d[a + stride]}, {@code d[a + 2 stride]}
     * and {@code d[a + 3 stride]} against the same columns: {@code out[0..3]} get their own sums; x and acc are
     * loaded and stored once for the four.
     */
    static void pairs4(double[] d, int a, int stride, int len, double[] x, double[] acc, int from, double x0,
                       double x1, double x2, double x3, double[] out) {
        int b = a + stride;
        int c = b + stride;
        int e = c + stride;
        DoubleVector s0 = DoubleVector.zero(D);
        DoubleVector s1 = DoubleVector.zero(D);
        DoubleVector s2 = DoubleVector.zero(D);
        DoubleVector s3 = DoubleVector.zero(D);
        DoubleVector o0 = DoubleVector.broadcast(D, x0);
        DoubleVector o1 = DoubleVector.broadcast(D, x1);
        DoubleVector o2 = DoubleVector.broadcast(D, x2);
        DoubleVector o3 = DoubleVector.broadcast(D, x3);
        int t = 0;
        for (int end = D.loopBound(len); t < end; t += LANES) {
            DoubleVector v0 = DoubleVector.fromArray(D, d, a + t);
            DoubleVector v1 = DoubleVector.fromArray(D, d, b + t);
            DoubleVector v2 = DoubleVector.fromArray(D, d, c + t);
            DoubleVector v3 = DoubleVector.fromArray(D, d, e + t);
            DoubleVector xv = DoubleVector.fromArray(D, x, from + t);
            s0 = v0.fma(xv, s0);
            s1 = v1.fma(xv, s1);
            s2 = v2.fma(xv, s2);
            s3 = v3.fma(xv, s3);
            DoubleVector lo = v1.fma(o1, v0.fma(o0, DoubleVector.fromArray(D, acc, from + t)));
            v3.fma(o3, v2.fma(o2, lo)).intoArray(acc, from + t);
        }
        double r0 = s0.reduceLanes(VectorOperators.ADD);
        double r1 = s1.reduceLanes(VectorOperators.ADD);
        double r2 = s2.reduceLanes(VectorOperators.ADD);
        double r3 = s3.reduceLanes(VectorOperators.ADD);
        for (; t < len; t++) {
            double xt = x[from + t];
            r0 += d[a + t] * xt;
            r1 += d[b + t] * xt;
            r2 += d[c + t] * xt;
            r3 += d[e + t] * xt;
            acc[from + t] += d[a + t] * x0 + d[b + t] * x1 + d[c + t] * x2 + d[e + t] * x3;
        }
        out[0] = r0;
        out[1] = r1;
        out[2] = r2;
        out[3] = r3;
    }

    /**
     * As {@link TriangleKernel}'s scalar pass: over the row's values {@code d[dFrom + t]}, returns sum_t d_t
     * x[from + t] and adds d_t xi to acc[from + t].
     */
    static double pairs(double[] d, int dFrom, int len, double[] x, double[] acc, int from, double xi) {
        DoubleVector sum = DoubleVector.zero(D);
        DoubleVector other = DoubleVector.broadcast(D, xi);
        int t = 0;
        for (int end = D.loopBound(len); t < end; t += LANES) {
            DoubleVector dv = DoubleVector.fromArray(D, d, dFrom + t);
            sum = dv.fma(DoubleVector.fromArray(D, x, from + t), sum);
            dv.fma(other, DoubleVector.fromArray(D, acc, from + t)).intoArray(acc, from + t);
        }
        double s = sum.reduceLanes(VectorOperators.ADD);
        for (; t < len; t++) {
            s += d[dFrom + t] * x[from + t];
            acc[from + t] += d[dFrom + t] * xi;
        }
        return s;
    }
}
