package io.meridian.mds;

import io.meridian.collective.BlockSync;
import io.meridian.matrix.LowerRows;
import io.meridian.matrix.ShortMatrixFormat;
import java.nio.file.Path;
import java.util.Arrays;

/**
 * {@link DistancePasses} over rows {@code [lo, hi)} of the lower triangle ({@link LowerRows}: row i holds d(i, j),
 * j &lt; i; the diagonal is zero). Each pair (i, j &lt; i) of an owned row is visited once and credited to rows i and j
 * (the matrix is symmetric), so a partial vector is a summand of all N rows, and {@link #combine} sums the partials
 * of every process with one {@code allreduceSum} of N x dim doubles (plus the stress). Statistics and stresses count
 * each pair twice and add the diagonal, so every sum equals the square matrix's. Unit weights only (a missing entry,
 * negative, has weight 0): {@link DaMds} refuses the other weightings over the triangle.
 *
 * <p>With dim 3 the B(X)X pass runs the batch and live kernels' explicit-vector tile ({@link TileVectors#unit3}), in
 * its scalar twin until C2 has compiled it; otherwise a scalar loop for any dim. Arrays are allocated here; a pass
 * allocates nothing.
 */
final class TrianglePasses implements DistancePasses {
    private static final int TILE = RowKernel.TILE;
    private static final double INV = ShortMatrixFormat.INV_SCALE;
    /** Slots after the values of a partial vector for the sums {@link #combineWithSum} carries. */
    static final int SUM_SLOTS = DaMds.REDUCE_CAPACITY;

    private final LowerRows rows;
    private final Path origin;
    private final BlockSync sync;
    private final int n;
    private final int dim;
    private final int lo;
    private final int hi;
    private final short[] tile = new short[TILE];
    /** Per point j: sum of c_ij over the pairs visited (first n), then sum of c_ij x_ik for each k (n each). */
    private final double[] acc;
    private final double[] rowSums;
    /** A tile's weights for the CG's products: 1, or 0 where the distance is missing. */
    private final double[] weights = new double[TILE];
    private final boolean vector;
    private final VectorPassGate gate;

    TrianglePasses(LowerRows rows, Path origin, int n, int dim, int lo, int hi, BlockSync sync) {
        this.rows = rows;
        this.origin = origin;
        this.sync = sync;
        this.n = n;
        this.dim = dim;
        this.lo = lo;
        this.hi = hi;
        this.acc = new double[(dim + 1) * n];
        this.rowSums = new double[dim + 1];
        this.vector = RowKernel.VECTOR_AVAILABLE && dim == 3;
        this.gate = new VectorPassGate(vector);
    }

    @Override
    public int partialLength() {
        return n * dim;
    }

    @Override
    public double[] newPartial() {
        return new double[n * dim + SUM_SLOTS];
    }

    @Override
    public Path origin() {
        return origin;
    }

    @Override
    public void statistics(double[] stats, double[] max, double[] min) {
        double count = 0;
        double sum = 0;
        double sumSq = 0;
        double zeros = 0;
        double largest = max[0];
        double smallest = min[0];
        for (int i = lo; i < hi; i++) {
            count++; // the diagonal's zero
            zeros++;
            for (int j0 = 0; j0 < i; j0 += TILE) {
                int len = Math.min(TILE, i - j0);
                rows.copy(i, j0, j0 + len, tile);
                for (int t = 0; t < len; t++) {
                    int r = tile[t];
                    if (r < 0) {
                        continue;
                    }
                    double v = r * INV;
                    count += 2;
                    sum += 2 * v;
                    sumSq += 2 * v * v;
                    if (r == 0) {
                        zeros += 2;
                    } else if (v < smallest) {
                        smallest = v;
                    }
                    largest = Math.max(largest, v);
                }
            }
        }
        stats[0] += count;
        stats[1] += sum;
        stats[2] += sumSq;
        stats[3] += zeros;
        max[0] = largest;
        min[0] = smallest;
    }

    @Override
    public void link(int[] parent, double[] counts) {
        long linked = 0;
        long missing = 0;
        for (int i = lo; i < hi; i++) {
            for (int j0 = 0; j0 < i; j0 += TILE) {
                int len = Math.min(TILE, i - j0);
                rows.copy(i, j0, j0 + len, tile);
                for (int t = 0; t < len; t++) {
                    if (tile[t] < 0) {
                        missing += 2;
                    } else {
                        linked += 2;
                        RowKernel.union(parent, i, j0 + t);
                    }
                }
            }
        }
        counts[0] += linked;
        counts[1] += missing;
    }

    @Override
    public void prepareMatvec(double sammonFloor) {
        // V's diagonal comes from the pairs themselves (each credits w_ij to both rows): nothing to precompute
    }

    @Override
    public void smacofPass(double[] xs, double[] target, double shift, double floor, double sammonFloor,
                           boolean unit, double[] partial, double[] sums) {
        Arrays.fill(acc, 0);
        boolean compiled = vector && gate.open();
        double stress = 0;
        for (int i = lo; i < hi; i++) {
            Arrays.fill(rowSums, 0);
            double rowStress = 0;
            for (int j0 = 0; j0 < i; j0 += TILE) {
                int len = Math.min(TILE, i - j0);
                rows.copy(i, j0, j0 + len, tile);
                if (compiled) {
                    rowStress += TileVectors.unit3(tile, xs, n, i, j0, len, shift, floor, rowSums, acc, n, j0);
                } else if (vector) {
                    rowStress += TileVectors.unit3Lanes(tile, xs, n, i, j0, len, shift, floor, rowSums, acc, n, j0,
                            gate.scratch());
                } else {
                    rowStress += scalarTile(xs, i, j0, len, target);
                }
            }
            for (int k = 0; k <= dim; k++) {
                acc[k * n + i] += rowSums[k];
            }
            double diagonal = target[0]; // the diagonal's zero, raised to the floor (SPIDAL's update) and shifted
            stress += 2 * rowStress + diagonal * diagonal;
        }
        for (int j = 0; j < n; j++) {
            double c = acc[j];
            for (int k = 0; k < dim; k++) {
                partial[j * dim + k] = xs[k * n + j] * c - acc[(k + 1) * n + j];
            }
        }
        sums[0] += stress;
    }

    /** One tile of row i for any dim: the terms of {@link TileVectors#unit3}, from the target table. */
    private double scalarTile(double[] xs, int i, int j0, int len, double[] target) {
        double stress = 0;
        for (int t = 0; t < len; t++) {
            int j = j0 + t;
            int r = tile[t];
            double d2 = 0;
            for (int k = 0; k < dim; k++) {
                double diff = xs[k * n + i] - xs[k * n + j];
                d2 += diff * diff;
            }
            double d = Math.sqrt(d2);
            double h = target[r & 0xFFFF];
            double c = (r < 0 || d < RowKernel.MIN_DISTANCE) ? 0.0 : h / d;
            double e = r < 0 ? 0.0 : h - d;
            stress += e * e;
            rowSums[0] += c;
            acc[j] += c;
            for (int k = 0; k < dim; k++) {
                rowSums[k + 1] += c * xs[k * n + j];
                acc[(k + 1) * n + j] += c * xs[k * n + i];
            }
        }
        return stress;
    }

    /**
     * Pair-wise: a known pair (i, j) adds p_i - p_j to row i and p_j - p_i to row j, which sums to (V p)_i =
     * sum_j w_ij (p_i - p_j) with unit weights. Per tile the weights (1, or 0 where missing) are taken once; then per
     * coordinate row i's share is a dot product and the credit to the columns one stream over a column-wise
     * accumulator (both loops vectorised by C2). Pair by pair, in row-major order, the scattered updates made a CG
     * run over the triangle take more CPU than over the square file: N = 4000, 1/9 of the pairs missing, 124
     * iterations, 28.1 s against 22.7-23.1 s; this way 19.8-25.8 s (a 2-core host at load 11-16, so noisy).
     */
    @Override
    public void matvec(double[] ps, double sammonFloor, double regularisation, double[] partial) {
        Arrays.fill(acc, 0, n * dim, 0);
        for (int i = lo; i < hi; i++) {
            Arrays.fill(rowSums, 0);
            for (int j0 = 0; j0 < i; j0 += TILE) {
                int len = Math.min(TILE, i - j0);
                rows.copy(i, j0, j0 + len, tile);
                double known = 0;
                for (int t = 0; t < len; t++) {
                    double w = tile[t] < 0 ? 0.0 : 1.0;
                    weights[t] = w;
                    known += w;
                }
                for (int k = 0; k < dim; k++) {
                    int off = k * n + j0;
                    double pik = ps[k * n + i];
                    rowSums[k] += known * pik - dot(weights, ps, off, len);
                    for (int t = 0; t < len; t++) {
                        acc[off + t] -= weights[t] * (pik - ps[off + t]);
                    }
                }
            }
            for (int k = 0; k < dim; k++) {
                acc[k * n + i] += rowSums[k] + regularisation * ps[k * n + i];
            }
        }
        for (int j = 0; j < n; j++) {
            for (int k = 0; k < dim; k++) {
                partial[j * dim + k] = acc[k * n + j];
            }
        }
    }

    private static double dot(double[] w, double[] xs, int off, int len) {
        double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
        int t = 0;
        for (; t + 3 < len; t += 4) {
            s0 += w[t] * xs[off + t];
            s1 += w[t + 1] * xs[off + t + 1];
            s2 += w[t + 2] * xs[off + t + 2];
            s3 += w[t + 3] * xs[off + t + 3];
        }
        for (; t < len; t++) {
            s0 += w[t] * xs[off + t];
        }
        return (s0 + s1) + (s2 + s3);
    }

    @Override
    public void finalStress(double[] xs, double minPositive, double sammonFloor, boolean unit, double[] sums) {
        double num = 0, den = 0, sNum = 0, sDen = 0;
        for (int i = lo; i < hi; i++) {
            sNum += minPositive * minPositive; // the diagonal: its zero raised to minPositive, d = 0
            sDen += minPositive * minPositive;
            for (int j0 = 0; j0 < i; j0 += TILE) {
                int len = Math.min(TILE, i - j0);
                rows.copy(i, j0, j0 + len, tile);
                for (int t = 0; t < len; t++) {
                    int r = tile[t];
                    if (r < 0) {
                        continue;
                    }
                    int j = j0 + t;
                    double d2 = 0;
                    for (int k = 0; k < dim; k++) {
                        double diff = xs[k * n + i] - xs[k * n + j];
                        d2 += diff * diff;
                    }
                    double d = Math.sqrt(d2);
                    double v = r * INV;
                    double raised = Math.max(v, minPositive);
                    num += 2 * (v - d) * (v - d);
                    den += 2 * v * v;
                    sNum += 2 * (raised - d) * (raised - d);
                    sDen += 2 * raised * raised;
                }
            }
        }
        sums[0] += num;
        sums[1] += den;
        sums[2] += sNum;
        sums[3] += sDen;
    }

    @Override
    public void combine(double[] partial, double[] whole) {
        sync.allreduceSum(partial, n * dim);
        System.arraycopy(partial, 0, whole, 0, n * dim);
    }

    @Override
    public void combineWithSum(double[] partial, double[] whole, double[] sums, int count) {
        int len = n * dim;
        System.arraycopy(sums, 0, partial, len, count);
        sync.allreduceSum(partial, len + count);
        System.arraycopy(partial, 0, whole, 0, len);
        System.arraycopy(partial, len, sums, 0, count);
    }
}
