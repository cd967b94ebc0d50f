package io.meridian.live;

import io.meridian.matrix.RowBlock;
import io.meridian.matrix.ShortMatrixFormat;
import io.meridian.pwc.PwcResult;

/**
 * The cluster of a new point from DA-PWC's frozen final state: one E-step for the new point with every mapped point's
 * membership held fixed, {@code eps_x(k) = sum_j d_xj M_j(k) / C_k + A_k} and
 * {@code M_x(k) = exp(-(eps_x(k) - min_k eps_x) / T) / sum_k exp(...)}, label = argmax M_x = argmin eps_x. O(N K) per
 * point. This follows dapwc's {@code Dist.java} E-step; it is not a routine of the original pipeline, which (DACIDR)
 * gave a new point the label of its nearest mapped point.
 *
 * <p>The numbers are the engine's own ({@code io.meridian.pwc.PwcEngine}'s E-step): distances are the SPIDAL 16-bit
 * values (raw / 32767), a missing distance counts as 0 as in the engine's B, {@code C_k = sum_a M_a(k)},
 * {@code A_k = -sum_ab d_ab M_a(k) M_b(k) / (2 C_k^2)}, every cluster weight is 1 (the split test's weight 2 is gone
 * by the end) and ties go to the first cluster, as in the engine's labels. Built from a {@link PwcResult}, it clusters
 * a mapped point's own row exactly as the engine labelled it. The clusters are the result's: columns of clusters
 * that no point ended in are not part of it.
 *
 * <p>One instance serves one thread; {@link #assign} allocates nothing.
 */
public final class FrozenClusters {
    private static final double INV_SCALE = ShortMatrixFormat.INV_SCALE;

    private final int points;
    private final int clusters;
    /** M, row-major points x clusters. */
    private final double[] memberships;
    private final double[] softSizes;
    private final double[] epsilonOffsets;
    /** INV_SCALE / C_k: turns a sum of raw distances times M into B, as the engine's E-step does. */
    private final double[] scale;
    private final double temperature;
    /** Per call: sum_j raw_xj M_j(k), then eps_x(k). */
    private final double[] eps;

    private FrozenClusters(double[] memberships, int points, int clusters, double[] softSizes, double[] epsilonOffsets,
                           double temperature) {
        if (points < 1 || clusters < 1) {
            throw new IllegalArgumentException("a frozen state needs at least one point and one cluster, got "
                    + points + " points and " + clusters + " clusters");
        }
        if (memberships == null || memberships.length != (long) points * clusters) {
            throw new IllegalArgumentException("memberships must be points x clusters = " + points + " x " + clusters
                    + " values, got " + (memberships == null ? "null" : memberships.length));
        }
        if (softSizes == null || softSizes.length != clusters || epsilonOffsets == null
                || epsilonOffsets.length != clusters) {
            throw new IllegalArgumentException("C and A must hold one value per cluster (" + clusters + ")");
        }
        if (!(temperature > 0) || Double.isInfinite(temperature)) {
            throw new IllegalArgumentException("the temperature must be finite and > 0, got " + temperature);
        }
        this.points = points;
        this.clusters = clusters;
        this.memberships = memberships;
        this.softSizes = softSizes;
        this.epsilonOffsets = epsilonOffsets;
        this.temperature = temperature;
        this.scale = new double[clusters];
        this.eps = new double[clusters];
        for (int k = 0; k < clusters; k++) {
            double c = softSizes[k];
            if (!(c > 0) || Double.isInfinite(c)) {
                throw new IllegalArgumentException("C of cluster " + k + " must be finite and > 0, got " + c);
            }
            if (!Double.isFinite(epsilonOffsets[k])) {
                throw new IllegalArgumentException("A of cluster " + k + " must be finite, got " + epsilonOffsets[k]);
            }
            scale[k] = INV_SCALE / c;
        }
    }

    /** The frozen state of a DA-PWC run: its M, C, A and final temperature. */
    public static FrozenClusters of(PwcResult result) {
        return new FrozenClusters(result.memberships(), result.labels().length, result.clusters(),
                result.softSizes(), result.epsilonOffsets(), result.finalTemperature());
    }

    /** A frozen state given as its parts (copied): M row-major points x clusters, C_k, A_k and T. */
    public static FrozenClusters of(double[] membershipsRowMajor, int points, int clusters, double[] softSizes,
                                    double[] epsilonOffsets, double temperature) {
        return new FrozenClusters(membershipsRowMajor == null ? null : membershipsRowMajor.clone(), points, clusters,
                softSizes == null ? null : softSizes.clone(), epsilonOffsets == null ? null : epsilonOffsets.clone(),
                temperature);
    }

    /**
     * A frozen state from memberships alone: C and A computed from M and the distances as the engine's E-step computes
     * them. Reads every row once (O(N^2 K)); allocates one row.
     *
     * @param distances the whole N x N matrix the memberships belong to (one block of all rows)
     */
    public static FrozenClusters fromMemberships(RowBlock distances, double[] membershipsRowMajor, int clusters,
                                                 double temperature) {
        int n = distances.n();
        if (distances.rowStart() != 0 || distances.rowEnd() != n) {
            throw new IllegalArgumentException("the distances must be all rows of the matrix, got " + distances);
        }
        if (clusters < 1 || membershipsRowMajor == null || membershipsRowMajor.length != (long) n * clusters) {
            throw new IllegalArgumentException("memberships must be N x clusters = " + n + " x " + clusters
                    + " values");
        }
        double[] m = membershipsRowMajor.clone();
        double[] c = new double[clusters];
        for (int i = 0; i < n; i++) {
            for (int k = 0; k < clusters; k++) {
                c[k] += m[i * clusters + k];
            }
        }
        // A_k = -1/2 sum_a B_a(k) M_a(k) / C_k with B_a(k) = sum_b d_ab M_b(k) / C_k
        double[] a = new double[clusters];
        double[] rowSums = new double[clusters];
        short[] row = new short[n];
        for (int i = 0; i < n; i++) {
            distances.copyRow(i, row);
            sumRow(row, n, m, clusters, rowSums);
            for (int k = 0; k < clusters; k++) {
                a[k] += rowSums[k] * (INV_SCALE / c[k]) * m[i * clusters + k];
            }
        }
        for (int k = 0; k < clusters; k++) {
            a[k] = c[k] > 0 ? -0.5 * a[k] / c[k] : 0.0;
        }
        return new FrozenClusters(m, n, clusters, c, a, temperature);
    }

    /**
     * The same frozen state for another thread: it shares this one's arrays (never written after construction) and has
     * its own working array, so each thread can {@link #assign} with its own instance.
     */
    public FrozenClusters forAnotherThread() {
        return new FrozenClusters(memberships, points, clusters, softSizes, epsilonOffsets, temperature);
    }

    public int points() {
        return points;
    }

    public int clusters() {
        return clusters;
    }

    public double temperature() {
        return temperature;
    }

    /** C_k = sum_a M_a(k). */
    public double softSize(int cluster) {
        return softSizes[cluster];
    }

    /** A_k. */
    public double epsilonOffset(int cluster) {
        return epsilonOffsets[cluster];
    }

    /**
     * Clusters one new point.
     *
     * @param distanceRow its distances to the mapped points 0..N-1 (SPIDAL 16-bit; negative = missing, counted as 0;
     *                    more entries may follow and are ignored)
     * @param membership  receives M_x(k) for every cluster, summing to 1; may be null
     * @return the cluster, argmin_k eps_x(k) (the first on ties)
     */
    public int assign(short[] distanceRow, double[] membership) {
        if (distanceRow == null || distanceRow.length < points) {
            throw new IllegalArgumentException("the distance row must hold N = " + points + " entries, got "
                    + (distanceRow == null ? "null" : distanceRow.length));
        }
        if (membership != null && membership.length < clusters) {
            throw new IllegalArgumentException("the membership output must hold " + clusters + " values, got "
                    + membership.length);
        }
        final int kCount = clusters;
        final double[] eps = this.eps;
        sumRow(distanceRow, points, memberships, kCount, eps);
        int best = 0;
        for (int k = 0; k < kCount; k++) {
            eps[k] = eps[k] * scale[k] + epsilonOffsets[k];
            if (eps[k] < eps[best]) {
                best = k;
            }
        }
        if (membership != null) {
            double min = eps[best];
            double invT = 1.0 / temperature;
            double total = 0;
            for (int k = 0; k < kCount; k++) {
                double e = Math.exp(-(eps[k] - min) * invT);
                membership[k] = e;
                total += e;
            }
            // total >= 1: the best cluster's term is exp(0)
            double inv = 1.0 / total;
            for (int k = 0; k < kCount; k++) {
                membership[k] *= inv;
            }
        }
        return best;
    }

    /** {@code out[k] = sum_j raw_j M_j(k)} over the first n entries; missing (negative) entries count as 0. */
    private static void sumRow(short[] row, int n, double[] m, int clusters, double[] out) {
        for (int k = 0; k < clusters; k++) {
            out[k] = 0;
        }
        for (int j = 0, p = 0; j < n; j++, p += clusters) {
            int raw = row[j];
            if (raw <= 0) {
                continue;
            }
            double d = raw;
            for (int k = 0; k < clusters; k++) {
                out[k] += d * m[p + k];
            }
        }
    }
}
