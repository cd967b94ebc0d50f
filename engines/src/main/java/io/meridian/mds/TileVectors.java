package io.meridian.mds;

import io.meridian.matrix.ShortMatrixFormat;
import jdk.incubator.vector.DoubleVector;
import jdk.incubator.vector.ShortVector;
import jdk.incubator.vector.VectorMask;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorShape;
import jdk.incubator.vector.VectorSpecies;

/**
 * Pass A + B (+ C) of {@link RowKernel#smacofPass} for L = 3 and unit weights in one loop over explicit vectors
 * (the incubator Vector API): C2 cannot vectorise the scalar form, whose table lookup is a gather and whose
 * short-to-double conversion changes the element size. delta_hat is computed arithmetically, to the bit the value of
 * {@link RowKernel#fillTargetTable}; every term is the scalar kernel's, only the order of the sums differs (one partial
 * sum per lane, reduced once per tile).
 *
 * <p>Only loaded when the JVM runs with {@code --add-modules jdk.incubator.vector}
 * ({@link RowKernel#VECTOR_AVAILABLE}), and only given real work once C2 has compiled it ({@link #warmUp}).
 */
final class TileVectors {
    private static final VectorSpecies<Double> D = DoubleVector.SPECIES_PREFERRED;
    private static final VectorSpecies<Short> S = VectorSpecies.of(short.class, VectorShape.forBitSize(D.length() * 16));
    private static final int LANES = D.length();
    private static final double INV = ShortMatrixFormat.INV_SCALE;

    private TileVectors() {
    }

    /**
     * {@link #unit3} in scalar code, to the bit: the same terms summed in the same order (one partial sum per lane,
     * lanes reduced in order, then the tail). The kernel runs it while C2 compiles {@link #unit3}, so that the result
     * of a run does not depend on when the JIT finished.
     */
    static double unit3Lanes(short[] row, double[] xs, int n, int i, int j0, int len, double shift, double minPositive,
                             double[] sums, double[] col, int rows, int r0, Scratch scratch) {
        final double xi = xs[i];
        final double yi = xs[n + i];
        final double zi = xs[2 * n + i];
        final int n1 = n + j0;
        final int n2 = 2 * n + j0;
        final boolean pairs = col != null;
        final int o1 = rows + r0;
        final int o2 = 2 * rows + r0;
        final int o3 = 3 * rows + r0;
        final double[] lanes = scratch.lanes;
        java.util.Arrays.fill(lanes, 0);
        int vectorEnd = len < LANES ? 0 : (len - LANES) / LANES * LANES + LANES;
        for (int jb = 0; jb < vectorEnd; jb += LANES) {
            for (int l = 0; l < LANES; l++) {
                int j = jb + l;
                int r = row[j];
                double h = Math.max(Math.max(r * INV, minPositive) - shift, 0);
                double px = xs[j0 + j];
                double py = xs[n1 + j];
                double pz = xs[n2 + j];
                double tx = xi - px;
                double ty = yi - py;
                double tz = zi - pz;
                double d = Math.sqrt(tx * tx + ty * ty + tz * tz);
                double c = (r < 0 || d < RowKernel.MIN_DISTANCE) ? 0.0 : h / d;
                double e = r < 0 ? 0.0 : h - d;
                lanes[l] += e * e;
                lanes[LANES + l] += c;
                lanes[2 * LANES + l] += c * px;
                lanes[3 * LANES + l] += c * py;
                lanes[4 * LANES + l] += c * pz;
                if (pairs) {
                    col[r0 + j] += c;
                    col[o1 + j] += c * xi;
                    col[o2 + j] += c * yi;
                    col[o3 + j] += c * zi;
                }
            }
        }
        double s = 0;
        double c0 = 0;
        double x0 = 0;
        double y0 = 0;
        double z0 = 0;
        for (int l = 0; l < LANES; l++) {
            s += lanes[l];
            c0 += lanes[LANES + l];
            x0 += lanes[2 * LANES + l];
            y0 += lanes[3 * LANES + l];
            z0 += lanes[4 * LANES + l];
        }
        for (int j = vectorEnd; j < len; j++) {
            int r = row[j];
            double h = Math.max(Math.max(r * INV, minPositive) - shift, 0);
            double px = xs[j0 + j];
            double py = xs[n1 + j];
            double pz = xs[n2 + j];
            double tx = xi - px;
            double ty = yi - py;
            double tz = zi - pz;
            double d = Math.sqrt(tx * tx + ty * ty + tz * tz);
            double c = (r < 0 || d < RowKernel.MIN_DISTANCE) ? 0.0 : h / d;
            double e = r < 0 ? 0.0 : h - d;
            s += e * e;
            c0 += c;
            x0 += c * px;
            y0 += c * py;
            z0 += c * pz;
            if (pairs) {
                col[r0 + j] += c;
                col[o1 + j] += c * xi;
                col[o2 + j] += c * yi;
                col[o3 + j] += c * zi;
            }
        }
        sums[0] += c0;
        sums[1] += x0;
        sums[2] += y0;
        sums[3] += z0;
        return s;
    }

    // ------------------------------------------------------------------------------------------------ warm-up

    private static final com.sun.management.ThreadMXBean THREADS =
            (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
    /** Entries of the warm-up tile: two vector iterations and a scalar tail, so every path of the loop is profiled. */
    private static final int WARM_LEN = 2 * LANES + 3;
    /**
     * Calls per {@link #warmUp} until {@link #WARM_BUDGET} calls are made (C2 queues {@link #unit3} after 5000). More
     * garbage per pass makes G1 grow the heap: {@code mds} at N = 4000 peaked at 340 MB RSS with 500, 112 MB with 200.
     */
    private static final int WARM_CALLS = 200;
    private static final int WARM_BUDGET = 6000;
    /** Calls per {@link #warmUp} after the budget, while C2 compiles (more would only make more garbage). */
    private static final int PROBE_CALLS = 16;
    /** Warm-up calls made so far in this JVM (a racy count across threads is good enough here). */
    private static int warmCalls;
    private static volatile boolean compiled;

    /** Scratch of one {@link RowKernel} for {@link #warmUp} (each kernel its own, as kernels may run in threads). */
    static final class Scratch {
        /** Per-lane partial sums of {@link #unit3Lanes}: stress, c, c x, c y, c z. */
        final double[] lanes = new double[5 * LANES];
        final short[] row = new short[WARM_LEN];
        final double[] xs = new double[3 * (WARM_LEN + 1)];
        final double[] col = new double[4 * (WARM_LEN + 1)];
        final double[] sums = new double[4];

        Scratch() {
            for (int j = 0; j < WARM_LEN; j++) {
                row[j] = (short) (j == 3 ? -1 : 1000 * j);
            }
            for (int k = 0; k < xs.length; k++) {
                xs[k] = 0.01 * k;
            }
        }
    }

    /**
     * Whether {@link #unit3} runs C2-compiled, as it must before it sees real work: interpreted or compiled by C1 every
     * vector operation allocates, and a first SMACOF pass at N = 4000 produced gigabytes of garbage (half a gigabyte of
     * heap with the default collector). Until then each call runs {@link #WARM_CALLS} calls on a small tile (all paths
     * of the loop; {@link #PROBE_CALLS} once C2 has had enough), then tests whether one more allocates nothing, which only the C2 form (vectors in registers) does.
     */
    static boolean isCompiled() {
        return compiled;
    }

    static boolean warmUp(Scratch s) {
        if (compiled) {
            return true;
        }
        int n = WARM_LEN + 1;
        int calls = warmCalls < WARM_BUDGET ? WARM_CALLS : PROBE_CALLS;
        warmCalls += calls;
        for (int k = 0; k < calls; k++) {
            unit3(s.row, s.xs, n, WARM_LEN, 0, WARM_LEN, 0.1, 1e-3, s.sums, (k & 1) == 0 ? s.col : null, n, 0);
        }
        long before = THREADS.getCurrentThreadAllocatedBytes();
        unit3(s.row, s.xs, n, WARM_LEN, 0, WARM_LEN, 0.1, 1e-3, s.sums, s.col, n, 0);
        unit3(s.row, s.xs, n, WARM_LEN, 0, WARM_LEN, 0.1, 1e-3, s.sums, null, n, 0);
        if (THREADS.getCurrentThreadAllocatedBytes() - before == 0) {
            compiled = true;
        }
        return compiled;
    }

    /**
     * Unit weights, L = 3, columns [j0, j0 + len) of row i (entries in {@code row[0 .. len)}): adds to
     * {@code sums} [0] sum of c, [1..3] sum of c x_k, and returns the stress of the tile. With {@code col != null}
     * (pairs inside the block) also credits row j0 + j: {@code col[r0 + j] += c}, {@code col[(k + 1) rows + r0 + j]
     * += c x_ik}.
     */
    static double unit3(short[] row, double[] xs, int n, int i, int j0, int len, double shift, double minPositive,
                        double[] sums, double[] col, int rows, int r0) {
        final double xi = xs[i];
        final double yi = xs[n + i];
        final double zi = xs[2 * n + i];
        final int n1 = n + j0;
        final int n2 = 2 * n + j0;
        final boolean pairs = col != null;
        final int o1 = rows + r0;
        final int o2 = 2 * rows + r0;
        final int o3 = 3 * rows + r0;
        final DoubleVector vxi = DoubleVector.broadcast(D, xi);
        final DoubleVector vyi = DoubleVector.broadcast(D, yi);
        final DoubleVector vzi = DoubleVector.broadcast(D, zi);
        DoubleVector vs = DoubleVector.zero(D);
        DoubleVector vc = DoubleVector.zero(D);
        DoubleVector vx = DoubleVector.zero(D);
        DoubleVector vy = DoubleVector.zero(D);
        DoubleVector vz = DoubleVector.zero(D);
        int j = 0;
        int bound = len - LANES;
        for (; j <= bound; j += LANES) {
            DoubleVector raw = (DoubleVector) ShortVector.fromArray(S, row, j).convertShape(VectorOperators.S2D, D, 0);
            VectorMask<Double> missing = raw.lt(0.0);
            DoubleVector h = raw.mul(INV).max(minPositive).sub(shift).max(0.0);
            DoubleVector px = DoubleVector.fromArray(D, xs, j0 + j);
            DoubleVector py = DoubleVector.fromArray(D, xs, n1 + j);
            DoubleVector pz = DoubleVector.fromArray(D, xs, n2 + j);
            DoubleVector tx = vxi.sub(px);
            DoubleVector ty = vyi.sub(py);
            DoubleVector tz = vzi.sub(pz);
            DoubleVector d = tx.mul(tx).add(ty.mul(ty)).add(tz.mul(tz)).sqrt();
            DoubleVector c = h.div(d).blend(0.0, missing.or(d.lt(RowKernel.MIN_DISTANCE)));
            DoubleVector e = h.sub(d).blend(0.0, missing);
            vs = vs.add(e.mul(e));
            vc = vc.add(c);
            vx = vx.add(c.mul(px));
            vy = vy.add(c.mul(py));
            vz = vz.add(c.mul(pz));
            if (pairs) {
                DoubleVector.fromArray(D, col, r0 + j).add(c).intoArray(col, r0 + j);
                DoubleVector.fromArray(D, col, o1 + j).add(c.mul(vxi)).intoArray(col, o1 + j);
                DoubleVector.fromArray(D, col, o2 + j).add(c.mul(vyi)).intoArray(col, o2 + j);
                DoubleVector.fromArray(D, col, o3 + j).add(c.mul(vzi)).intoArray(col, o3 + j);
            }
        }
        double s = vs.reduceLanes(VectorOperators.ADD);
        double c0 = vc.reduceLanes(VectorOperators.ADD);
        double x0 = vx.reduceLanes(VectorOperators.ADD);
        double y0 = vy.reduceLanes(VectorOperators.ADD);
        double z0 = vz.reduceLanes(VectorOperators.ADD);
        for (; j < len; j++) {
            int r = row[j];
            double h = Math.max(Math.max(r * INV, minPositive) - shift, 0);
            double px = xs[j0 + j];
            double py = xs[n1 + j];
            double pz = xs[n2 + j];
            double tx = xi - px;
            double ty = yi - py;
            double tz = zi - pz;
            double d = Math.sqrt(tx * tx + ty * ty + tz * tz);
            double c = (r < 0 || d < RowKernel.MIN_DISTANCE) ? 0.0 : h / d;
            double e = r < 0 ? 0.0 : h - d;
            s += e * e;
            c0 += c;
            x0 += c * px;
            y0 += c * py;
            z0 += c * pz;
            if (pairs) {
                col[r0 + j] += c;
                col[o1 + j] += c * xi;
                col[o2 + j] += c * yi;
                col[o3 + j] += c * zi;
            }
        }
        sums[0] += c0;
        sums[1] += x0;
        sums[2] += y0;
        sums[3] += z0;
        return s;
    }
}
