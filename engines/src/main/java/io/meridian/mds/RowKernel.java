package io.meridian.mds;

import io.meridian.matrix.RowBlock;
import io.meridian.matrix.ShortMatrixFormat;
import io.meridian.matrix.Weighting;

/**
 * The per-row-block work of DA-MDS: streaming passes over one {@link RowBlock} of the 16-bit distance matrix (and of
 * the weight matrix, if any) against the current configuration X, held column-wise ("SoA": coordinate k of point j at
 * {@code xs[k * n + j]}).
 *
 * <p>Each row is processed in column tiles of {@link #TILE} entries, so the tile's scratch arrays stay in L1 while
 * the X columns stream from L2. Per tile: (A) a vectorised loop computes d_ij = |x_i - x_j|; (B) one fused,
 * branch-light scalar loop turns the 16-bit entries into target distances (table lookup), divides, and accumulates
 * the row of B(X)X and the stress together; (C) for pairs with both rows in the block, a vectorised loop credits
 * the other row. Every array is allocated once, in the constructor.
 *
 * <p>With unit weights and L = 3 (the common case), when the JVM has {@code jdk.incubator.vector}, passes A, B and C
 * run instead as one loop over explicit vectors ({@link TileVectors}); the scalar passes remain for the other cases
 * and for JVMs without the module.
 */
final class RowKernel {
    static final int TILE = 1024;
    /** Below this, two points count as coincident and b_ij = 0 (as in the original). */
    static final double MIN_DISTANCE = 1e-10;
    private static final double INV = ShortMatrixFormat.INV_SCALE;

    private final RowBlock distances;
    private final RowBlock weightRows;
    private final Weighting weighting;
    private final int n;
    private final int dim;
    private final int rowStart;
    private final int rowEnd;

    private final short[] rowTile = new short[TILE];
    private final short[] weightTile;
    private final double[] dist = new double[TILE];
    private final double[] w = new double[TILE];
    private final double[] acc;
    private final double[] coef = new double[TILE];
    /** Per row of the block: sum of c (first block of rows), then sum of c x_k for each k. */
    private final double[] col;

    /**
     * Whether this JVM can run the explicit-vector pass ({@link TileVectors}): it needs
     * {@code --add-modules jdk.incubator.vector}; {@code -Dmeridian.mds.vector=false} turns it off.
     */
    static final boolean VECTOR_AVAILABLE = ModuleLayer.boot().findModule("jdk.incubator.vector").isPresent()
            && !"false".equals(System.getProperty("meridian.mds.vector"));

    private final boolean vector;
    private final double[] tileSums = new double[4];
    private final VectorPassGate gate;

    RowKernel(RowBlock distances, RowBlock weightRows, Weighting weighting, int dim) {
        this(distances, weightRows, weighting, dim, VECTOR_AVAILABLE);
    }

    java.nio.file.Path distancesFile() {
        return distances.file();
    }

    RowKernel(RowBlock distances, RowBlock weightRows, Weighting weighting, int dim, boolean vector) {
        this.vector = vector && VECTOR_AVAILABLE;
        this.gate = new VectorPassGate(this.vector);
        this.distances = distances;
        this.weightRows = weightRows;
        this.weighting = weighting;
        this.n = distances.n();
        this.dim = dim;
        this.rowStart = distances.rowStart();
        this.rowEnd = distances.rowEnd();
        this.weightTile = weightRows == null ? null : new short[TILE];
        this.acc = new double[classicalColumns(dim)];
        this.col = new double[(dim + 1) * Math.max(1, rowEnd - rowStart)];
    }

    /** Columns of the subspace iteration for classical MDS: a few more than dim, for faster convergence. */
    static int classicalColumns(int dim) {
        return 2 * dim + 2;
    }

    int rowStart() {
        return rowStart;
    }

    int rowEnd() {
        return rowEnd;
    }

    RowBlock distances() {
        return distances;
    }

    // ------------------------------------------------------------------------------------------------ statistics

    /**
     * Statistics over the entries with a distance and a non-zero base weight (before Sammon): stats[0] count,
     * [1] sum, [2] sum of squares, [3] count of zero entries (diagonal included); max[0] largest value, min[0]
     * smallest positive value. Adds to the arrays.
     */
    void statistics(double[] stats, double[] max, double[] min) {
        double count = 0;
        double sum = 0;
        double sumSq = 0;
        double zeros = 0;
        double hi = max[0];
        double lo = min[0];
        for (int i = rowStart; i < rowEnd; i++) {
            for (int j0 = 0; j0 < n; j0 += TILE) {
                int len = Math.min(TILE, n - j0);
                distances.copyRow(i, j0, j0 + len, rowTile, 0);
                baseWeights(i, j0, len);
                for (int j = 0; j < len; j++) {
                    int r = rowTile[j];
                    if (r < 0 || w[j] == 0) {
                        continue;
                    }
                    double v = r * INV;
                    count++;
                    sum += v;
                    sumSq += v * v;
                    if (r == 0) {
                        zeros++;
                    } else if (v < lo) {
                        lo = v;
                    }
                    if (v > hi) {
                        hi = v;
                    }
                }
            }
        }
        stats[0] += count;
        stats[1] += sum;
        stats[2] += sumSq;
        stats[3] += zeros;
        max[0] = hi;
        min[0] = lo;
    }

    /** rowWeights[i - outRow0] = sum over j != i of w_ij (Sammon included) for pairs with a distance. */
    void rowWeightSums(double sammonFloor, double[] rowWeights, int outRow0) {
        for (int i = rowStart; i < rowEnd; i++) {
            double s = 0;
            for (int j0 = 0; j0 < n; j0 += TILE) {
                int len = Math.min(TILE, n - j0);
                distances.copyRow(i, j0, j0 + len, rowTile, 0);
                weights(i, j0, len, sammonFloor);
                for (int j = 0; j < len; j++) {
                    s += (j0 + j == i) ? 0 : w[j];
                }
            }
            rowWeights[i - outRow0] = s;
        }
    }

    /**
     * Joins in the union-find forest {@code parent} (over all N points) every pair (i, j != i) of this block's rows
     * that has a distance and a non-zero weight, i.e. every non-zero off-diagonal entry of V. Adds to counts[0] the
     * pairs joined this way and to counts[1] the off-diagonal entries whose distance is missing.
     */
    void link(int[] parent, double[] counts) {
        long linked = 0;
        long missing = 0;
        for (int i = rowStart; i < rowEnd; i++) {
            for (int j0 = 0; j0 < n; j0 += TILE) {
                int len = Math.min(TILE, n - j0);
                distances.copyRow(i, j0, j0 + len, rowTile, 0);
                baseWeights(i, j0, len);
                for (int j = 0; j < len; j++) {
                    if (j0 + j == i) {
                        continue;
                    }
                    if (rowTile[j] < 0) {
                        missing++;
                    } else if (w[j] != 0) {
                        linked++;
                        union(parent, i, j0 + j);
                    }
                }
            }
        }
        counts[0] += linked;
        counts[1] += missing;
    }

    /** The root of {@code v} in a union-find forest, halving the path on the way. */
    static int find(int[] parent, int v) {
        while (parent[v] != v) {
            parent[v] = parent[parent[v]];
            v = parent[v];
        }
        return v;
    }

    static void union(int[] parent, int a, int b) {
        int ra = find(parent, a);
        int rb = find(parent, b);
        if (ra != rb) {
            // the smaller index is the root: a group's root is its first point
            parent[Math.max(ra, rb)] = Math.min(ra, rb);
        }
    }

    // ------------------------------------------------------------------------------------------------ weights

    /** w[0 .. len) = base weight of (i, j0 + j), 0 where the weight matrix says missing. */
    private void baseWeights(int i, int j0, int len) {
        switch (weighting.kind()) {
            case UNIT -> java.util.Arrays.fill(w, 0, len, 1.0);
            case MATRIX -> {
                weightRows.copyRow(i, j0, j0 + len, weightTile, 0);
                for (int j = 0; j < len; j++) {
                    int r = weightTile[j];
                    w[j] = r < 0 ? 0 : r * INV;
                }
            }
            case POINT -> {
                double si = weighting.pointWeight(i);
                for (int j = 0; j < len; j++) {
                    w[j] = si * weighting.pointWeight(j0 + j);
                }
            }
        }
    }

    /** w[0 .. len) = effective weight of (i, j0 + j): base, Sammon applied, 0 where the distance is missing. */
    private void weights(int i, int j0, int len, double sammonFloor) {
        baseWeights(i, j0, len);
        if (weighting.sammon()) {
            for (int j = 0; j < len; j++) {
                w[j] = w[j] / Math.max(rowTile[j] * INV, sammonFloor);
            }
        }
        for (int j = 0; j < len; j++) {
            w[j] = rowTile[j] < 0 ? 0 : w[j];
        }
    }

    // ------------------------------------------------------------------------------------------------ distances

    /**
     * Pass A: dist[j] = |x_i - x_{j0+j}|, vectorised. The division delta_hat / d is left to pass B: there the scalar
     * divider works in parallel with pass B's other instructions, while here it would queue behind the square roots.
     */
    private void distances(double[] xs, int i, int j0, int len) {
        final double[] dist = this.dist;
        if (dim == 3) {
            distances3(xs, i, j0, len);
            return;
        }
        double xi = xs[i];
        for (int j = 0; j < len; j++) {
            double t = xi - xs[j0 + j];
            dist[j] = t * t;
        }
        for (int k = 1; k < dim; k++) {
            int off = k * n + j0;
            double xik = xs[k * n + i];
            for (int j = 0; j < len; j++) {
                double t = xik - xs[off + j];
                dist[j] += t * t;
            }
        }
        for (int j = 0; j < len; j++) {
            dist[j] = Math.sqrt(dist[j]);
        }
    }

    /** Pass A for L = 3 in one loop (three input streams and the square root, vectorised by C2). */
    private void distances3(double[] xs, int i, int j0, int len) {
        final double[] dist = this.dist;
        final double xi = xs[i];
        final double yi = xs[n + i];
        final double zi = xs[2 * n + i];
        final int n1 = n + j0;
        final int n2 = 2 * n + j0;
        for (int j = 0; j < len; j++) {
            double tx = xi - xs[j0 + j];
            double ty = yi - xs[n1 + j];
            double tz = zi - xs[n2 + j];
            dist[j] = Math.sqrt(tx * tx + ty * ty + tz * tz);
        }
    }

    // ------------------------------------------------------------------------------------------------ SMACOF pass

    /** The table of delta_hat by raw 16-bit entry (index raw & 0xFFFF; missing entries map to 0). */
    static double[] newTargetTable() {
        return new double[1 << 16];
    }

    /** Fills {@code target} for a temperature: delta_hat = max(max(raw / 32767, minPositive) - shift, 0). */
    static void fillTargetTable(double[] target, double shift, double minPositive) {
        for (int raw = 0; raw <= Short.MAX_VALUE; raw++) {
            target[raw] = Math.max(Math.max(raw * INV, minPositive) - shift, 0);
        }
        java.util.Arrays.fill(target, Short.MAX_VALUE + 1, 1 << 16, 0);
    }

    /**
     * One fused pass at temperature shift {@code shift = sqrt(2L) T}: writes row i of B(X)X to
     * {@code out[(i - outRow0) * dim ..]} for every row of the block and adds to {@code sums[0]} the stress numerator
     * sum over (i, j), diagonal included, of w (delta_hat - d)^2, where delta = max(value, minPositive) (the original's
     * quirk) and delta_hat = max(delta - shift, 0). {@code unit} skips the weights (all ones).
     *
     * <p>Columns outside the block are handled row by row. Pairs with both rows inside the block are handled once,
     * from the upper triangle, and credited to both rows (the matrix is symmetric), which halves the square roots and
     * divisions of the block's diagonal square.
     */
    void smacofPass(double[] xs, double[] target, double shift, double minPositive, double sammonFloor, boolean unit,
                    double[] out, int outRow0, double[] sums) {
        int rows = rowEnd - rowStart;
        java.util.Arrays.fill(col, 0, (dim + 1) * rows, 0);
        boolean vectorForm = vector && unit && dim == 3;
        boolean compiled = vectorForm && gate.open();
        double stress = 0;
        for (int i = rowStart; i < rowEnd; i++) {
            tRowSum = 0;
            tStress = 0;
            tA0 = 0;
            tA1 = 0;
            tA2 = 0;
            java.util.Arrays.fill(acc, 0, dim, 0);
            if (vectorForm) {
                vectorSegment(xs, i, 0, rowStart, false, shift, minPositive, compiled);
                vectorSegment(xs, i, i + 1, rowEnd, true, shift, minPositive, compiled);
                vectorSegment(xs, i, rowEnd, n, false, shift, minPositive, compiled);
            } else {
                segment(xs, i, 0, rowStart, false, target, sammonFloor, unit);
                segment(xs, i, i + 1, rowEnd, true, target, sammonFloor, unit);
                segment(xs, i, rowEnd, n, false, target, sammonFloor, unit);
            }
            stress += tStress + diagonalStress(i, target, sammonFloor, unit);
            int r = i - rowStart;
            col[r] += tRowSum;
            if (dim == 3) {
                col[rows + r] += tA0;
                col[2 * rows + r] += tA1;
                col[3 * rows + r] += tA2;
            } else {
                for (int k = 0; k < dim; k++) {
                    col[(k + 1) * rows + r] += acc[k];
                }
            }
        }
        for (int i = rowStart; i < rowEnd; i++) {
            int r = i - rowStart;
            double rowSum = col[r];
            int o = (i - outRow0) * dim;
            for (int k = 0; k < dim; k++) {
                out[o + k] = rowSum * xs[k * n + i] - col[(k + 1) * rows + r];
            }
        }
        sums[0] += stress;
    }

    // accumulators of the current row (fields, so the per-tile methods allocate nothing)
    private double tRowSum;
    private double tStress;
    private double tA0;
    private double tA1;
    private double tA2;


    /** Warms the vector pass up until C2 has compiled it or {@code millis} have passed; returns whether it is (tests). */
    static boolean warmUpVectors(long millis) {
        if (!VECTOR_AVAILABLE) {
            return false;
        }
        TileVectors.Scratch scratch = new TileVectors.Scratch();
        long end = System.nanoTime() + millis * 1_000_000L;
        while (!TileVectors.warmUp(scratch)) {
            if (System.nanoTime() > end) {
                return false;
            }
        }
        return true;
    }

    /** Whether SMACOF passes in this JVM now run on explicit vectors (for reports). */
    static boolean vectorPassInUse() {
        return VECTOR_AVAILABLE && TileVectors.isCompiled();
    }

    /**
     * {@link #segment} for L = 3 and unit weights, passes A, B and C fused in one loop over explicit vectors, or, until
     * that loop is compiled, in its scalar twin (same result to the bit).
     */
    private void vectorSegment(double[] xs, int i, int from, int to, boolean pairs, double shift, double minPositive,
                               boolean compiled) {
        final double[] sums = tileSums;
        final int rows = rowEnd - rowStart;
        for (int j0 = from; j0 < to; j0 += TILE) {
            int len = Math.min(TILE, to - j0);
            distances.copyRow(i, j0, j0 + len, rowTile, 0);
            java.util.Arrays.fill(sums, 0);
            double stress = compiled
                    ? TileVectors.unit3(rowTile, xs, n, i, j0, len, shift, minPositive, sums, pairs ? col : null, rows,
                            j0 - rowStart)
                    : TileVectors.unit3Lanes(rowTile, xs, n, i, j0, len, shift, minPositive, sums,
                            pairs ? col : null, rows, j0 - rowStart, gate.scratch());
            tRowSum += sums[0];
            tA0 += sums[1];
            tA1 += sums[2];
            tA2 += sums[3];
            tStress += pairs ? 2 * stress : stress;
        }
    }

    private void segment(double[] xs, int i, int from, int to, boolean pairs, double[] target, double sammonFloor,
                         boolean unit) {
        for (int j0 = from; j0 < to; j0 += TILE) {
            int len = Math.min(TILE, to - j0);
            distances.copyRow(i, j0, j0 + len, rowTile, 0);
            distances(xs, i, j0, len);
            if (!unit) {
                weights(i, j0, len, sammonFloor);
            }
            double stress;
            if (dim == 3) {
                stress = unit ? fusedUnit3(xs, j0, len, target) : fusedWeighted3(xs, j0, len, target);
            } else {
                stress = coefficients(len, target, unit);
                for (int k = 0; k < dim; k++) {
                    acc[k] += dot(coef, xs, k * n + j0, len);
                }
            }
            if (pairs) {
                tStress += 2 * stress;
                creditColumns(xs, i, j0, len);
            } else {
                tStress += stress;
            }
        }
    }

    /** Pass C, pairs inside the block: row j0 + j gets c_j and c_j x_i. Element-wise, vectorisable. */
    private void creditColumns(double[] xs, int i, int j0, int len) {
        int rows = rowEnd - rowStart;
        int r0 = j0 - rowStart;
        final double[] col = this.col;
        final double[] coef = this.coef;
        if (dim == 3) {
            final double xi = xs[i];
            final double yi = xs[n + i];
            final double zi = xs[2 * n + i];
            final int o1 = rows + r0;
            final int o2 = 2 * rows + r0;
            final int o3 = 3 * rows + r0;
            for (int j = 0; j < len; j++) {
                double c = coef[j];
                col[r0 + j] += c;
                col[o1 + j] += c * xi;
                col[o2 + j] += c * yi;
                col[o3 + j] += c * zi;
            }
            return;
        }
        for (int j = 0; j < len; j++) {
            col[r0 + j] += coef[j];
        }
        for (int k = 0; k < dim; k++) {
            double xik = xs[k * n + i];
            int off = (k + 1) * rows + r0;
            for (int j = 0; j < len; j++) {
                col[off + j] += coef[j] * xik;
            }
        }
    }

    /** w_ii (delta_hat_ii - 0)^2: the diagonal's share of the original's stress (its value is raised to minPositive). */
    private double diagonalStress(int i, double[] target, double sammonFloor, boolean unit) {
        int raw = distances.raw(i, i);
        if (raw < 0) {
            return 0;
        }
        double h = target[raw];
        double weight = 1;
        if (!unit) {
            distances.copyRow(i, i, i + 1, rowTile, 0);
            weights(i, i, 1, sammonFloor);
            weight = w[0];
        }
        return weight * h * h;
    }

    /**
     * Pass B for L = 3, unit weights: c_j = delta_hat / d (0 if missing or coincident) into {@code coef}, sums c_j
     * and c_j x_j into the row accumulators, returns the tile's stress. delta_hat comes from {@code target}, indexed
     * by the raw 16-bit entry (no int-to-double conversion, no data-dependent branch); the remaining branches
     * (missing, coincident) are rare and predictable. Unrolled by two to break the FP add latency chains.
     */
    private double fusedUnit3(double[] xs, int j0, int len, double[] target) {
        final short[] row = rowTile;
        final double[] dist = this.dist;
        final double[] coef = this.coef;
        final int n1 = n + j0;
        final int n2 = 2 * n + j0;
        double s0 = 0, s1 = 0, c0 = 0, c1 = 0;
        double x0 = 0, x1 = 0, y0 = 0, y1 = 0, z0 = 0, z1 = 0;
        int j = 0;
        for (; j + 1 < len; j += 2) {
            int ra = row[j];
            int rb = row[j + 1];
            double ha = target[ra & 0xFFFF];
            double hb = target[rb & 0xFFFF];
            double da = dist[j];
            double db = dist[j + 1];
            double ca = (ra < 0 || da < MIN_DISTANCE) ? 0.0 : ha / da;
            double cb = (rb < 0 || db < MIN_DISTANCE) ? 0.0 : hb / db;
            double ea = ra < 0 ? 0.0 : ha - da;
            double eb = rb < 0 ? 0.0 : hb - db;
            coef[j] = ca;
            coef[j + 1] = cb;
            s0 += ea * ea;
            s1 += eb * eb;
            c0 += ca;
            c1 += cb;
            x0 += ca * xs[j0 + j];
            x1 += cb * xs[j0 + j + 1];
            y0 += ca * xs[n1 + j];
            y1 += cb * xs[n1 + j + 1];
            z0 += ca * xs[n2 + j];
            z1 += cb * xs[n2 + j + 1];
        }
        for (; j < len; j++) {
            int ra = row[j];
            double ha = target[ra & 0xFFFF];
            double da = dist[j];
            double ca = (ra < 0 || da < MIN_DISTANCE) ? 0.0 : ha / da;
            double ea = ra < 0 ? 0.0 : ha - da;
            coef[j] = ca;
            s0 += ea * ea;
            c0 += ca;
            x0 += ca * xs[j0 + j];
            y0 += ca * xs[n1 + j];
            z0 += ca * xs[n2 + j];
        }
        tRowSum += c0 + c1;
        tA0 += x0 + x1;
        tA1 += y0 + y1;
        tA2 += z0 + z1;
        return s0 + s1;
    }

    /** Pass B for L = 3 with the effective weights in {@code w} (0 where the distance is missing). */
    private double fusedWeighted3(double[] xs, int j0, int len, double[] target) {
        final short[] row = rowTile;
        final double[] dist = this.dist;
        final double[] w = this.w;
        final double[] coef = this.coef;
        final int n1 = n + j0;
        final int n2 = 2 * n + j0;
        double s0 = 0, c0 = 0, x0 = 0, y0 = 0, z0 = 0;
        for (int j = 0; j < len; j++) {
            double h = target[row[j] & 0xFFFF];
            double wj = w[j];
            double d = dist[j];
            double c = d < MIN_DISTANCE ? 0.0 : wj * h / d;
            double e = h - d;
            coef[j] = c;
            s0 += wj * e * e;
            c0 += c;
            x0 += c * xs[j0 + j];
            y0 += c * xs[n1 + j];
            z0 += c * xs[n2 + j];
        }
        tRowSum += c0;
        tA0 += x0;
        tA1 += y0;
        tA2 += z0;
        return s0;
    }

    /** Pass B for any L: the coefficients c_j into {@code coef}, the row sum into the accumulators; returns the stress. */
    private double coefficients(int len, double[] target, boolean unit) {
        double s = 0;
        double c0 = 0;
        for (int j = 0; j < len; j++) {
            int r = rowTile[j];
            double wj = unit ? (r < 0 ? 0.0 : 1.0) : w[j];
            double h = target[r & 0xFFFF];
            double d = dist[j];
            double c = d < MIN_DISTANCE ? 0.0 : wj * h / d;
            double e = h - d;
            s += wj * e * e;
            c0 += c;
            coef[j] = c;
        }
        tRowSum += c0;
        return s;
    }

    private static double dot(double[] w, double[] xs, int off, int len) {
        double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
        int j = 0;
        for (; j + 3 < len; j += 4) {
            s0 += w[j] * xs[off + j];
            s1 += w[j + 1] * xs[off + j + 1];
            s2 += w[j + 2] * xs[off + j + 2];
            s3 += w[j + 3] * xs[off + j + 3];
        }
        for (; j < len; j++) {
            s0 += w[j] * xs[off + j];
        }
        return (s0 + s1) + (s2 + s3);
    }

    // ------------------------------------------------------------------------------------------------ CG matvec

    /**
     * out[(i - outRow0) * dim + k] = (V p)_ik with V_ii = rowWeights_i + regularisation and V_ij = -w_ij (the
     * original's system has regularisation 1),
     * for the rows of this block; {@code ps} is p column-wise.
     */
    void matvec(double[] ps, double sammonFloor, double[] rowWeights, int rowWeights0, double regularisation,
                double[] out, int outRow0) {
        double[] acc = this.acc;
        for (int i = rowStart; i < rowEnd; i++) {
            java.util.Arrays.fill(acc, 0);
            for (int j0 = 0; j0 < n; j0 += TILE) {
                int len = Math.min(TILE, n - j0);
                distances.copyRow(i, j0, j0 + len, rowTile, 0);
                weights(i, j0, len, sammonFloor);
                if (i >= j0 && i < j0 + len) {
                    w[i - j0] = 0;
                }
                for (int k = 0; k < dim; k++) {
                    acc[k] += dot(w, ps, k * n + j0, len);
                }
            }
            double vii = rowWeights[i - rowWeights0] + regularisation;
            int o = (i - outRow0) * dim;
            for (int k = 0; k < dim; k++) {
                out[o + k] = vii * ps[k * n + i] - acc[k];
            }
        }
    }

    // ------------------------------------------------------------------------------------------------ final stress

    /**
     * Adds, for the rows of this block: sums[0] += sum over j != i of w (value - d)^2, sums[1] += sum over j != i of
     * w value^2 (the usual normalised stress on the distances as read), sums[2] += the original's numerator at T = 0
     * (diagonal included, values raised to minPositive), sums[3] += its denominator (sum of raised values squared).
     */
    void finalStress(double[] xs, double minPositive, double sammonFloor, boolean unit, double[] sums) {
        double num = 0, den = 0, sNum = 0, sDen = 0;
        for (int i = rowStart; i < rowEnd; i++) {
            for (int j0 = 0; j0 < n; j0 += TILE) {
                int len = Math.min(TILE, n - j0);
                distances.copyRow(i, j0, j0 + len, rowTile, 0);
                distances(xs, i, j0, len);
                if (unit) {
                    for (int j = 0; j < len; j++) {
                        w[j] = rowTile[j] < 0 ? 0 : 1;
                    }
                } else {
                    weights(i, j0, len, sammonFloor);
                }
                for (int j = 0; j < len; j++) {
                    double wj = w[j];
                    if (wj == 0) {
                        continue;
                    }
                    double v = rowTile[j] * INV;
                    double d = dist[j];
                    double raised = Math.max(v, minPositive);
                    sNum += wj * (raised - d) * (raised - d);
                    sDen += raised * raised;
                    if (j0 + j != i) {
                        num += wj * (v - d) * (v - d);
                        den += wj * v * v;
                    }
                }
            }
        }
        sums[0] += num;
        sums[1] += den;
        sums[2] += sNum;
        sums[3] += sDen;
    }

    // ------------------------------------------------------------------------------------------------ classical MDS

    /**
     * For classical MDS: out[(i - outRow0) * cols + k] = sum_j a_ij q_kj for the rows of this block, with
     * a_ij = value^2 (missing entries take {@code missingSquare}); {@code qs} holds {@code cols} columns of length n.
     */
    void squaredDistanceProduct(double[] qs, int cols, double missingSquare, double[] out, int outRow0) {
        double[] acc = this.acc;
        for (int i = rowStart; i < rowEnd; i++) {
            java.util.Arrays.fill(acc, 0, cols, 0);
            for (int j0 = 0; j0 < n; j0 += TILE) {
                int len = Math.min(TILE, n - j0);
                distances.copyRow(i, j0, j0 + len, rowTile, 0);
                for (int j = 0; j < len; j++) {
                    int r = rowTile[j];
                    double v = r * INV;
                    w[j] = r < 0 ? missingSquare : v * v;
                }
                for (int k = 0; k < cols; k++) {
                    acc[k] += dot(w, qs, k * n + j0, len);
                }
            }
            int o = (i - outRow0) * cols;
            for (int k = 0; k < cols; k++) {
                out[o + k] = acc[k];
            }
        }
    }
}
