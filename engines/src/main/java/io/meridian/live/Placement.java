package io.meridian.live;

import io.meridian.matrix.ShortMatrixFormat;

/**
 * Places one new point into a map whose points stay where they are: SPIDAL's majorizing interpolation (MI-MDS, after
 * Bae, Qiu and Fox; DSC-SPIDAL Twister-DACIDR {@code inter/mimds/Interpolation.java}) over the whole row. The point
 * starts at the mean of its {@code nearest} mapped points by original distance and takes Guttman steps with every
 * mapped point fixed, {@code x <- sum_j w_j [p_j + delta_j (x - p_j) / |x - p_j|] / sum_j w_j}, until the local stress
 * {@code sum_j w_j (|x - p_j| - delta_j)^2 / sum_j w_j delta_j^2} changes by at most {@code threshold} relatively, or
 * after {@code maxSteps} steps. Why the whole row: on a measured data set (under 2,000 points, 85 % mapped, 3-D) it
 * gave the stress of mapping every point at once (0.0516) in 36-38 steps, 0.7-0.9 ms a point, where SPIDAL's k = 2
 * nearest gave 0.053-0.054 and k = 5..200 gave 0.061-0.080; Meridian receives whole rows anyway.
 *
 * <p>Distances arrive as a SPIDAL 16-bit row ({@link ShortMatrixFormat}: raw / 32767, negative = missing); a missing
 * entry or a zero weight leaves that mapped point out. A mapped point within {@value #COINCIDENT} of x contributes as
 * SMACOF's {@code b_ij = 0} case: its {@code w_j p_j} stays in the sum, its direction term (undefined there) is
 * dropped; the update still does not increase the stress. Special cases: no mapped point ({@code n = 0}) places x at
 * the origin; a row with no usable entry (all missing or all weight 0) is refused with an
 * {@link IllegalArgumentException}, because a position made up for it would look like data; when every usable mapped
 * point sits on x (one known distance, or all of them coincident), x moves from there along the first axis by the
 * weighted mean of the distances, the best distance to a single location, so the result is deterministic.
 *
 * <p>One instance serves one thread; {@link #place} allocates nothing, and with the scalar pass nothing in it grows
 * with n: the working arrays hold dim and {@code nearest} values (the vector pass keeps the map by coordinate, grown
 * with the map). {@link #steps()} and {@link #stress()} describe the last call.
 */
public final class Placement {
    /** Distances below this count as "x sits on the mapped point" (SMACOF's b_ij = 0). */
    public static final double COINCIDENT = 1e-10;
    /**
     * A normalized stress at or below this ends the iteration: the distances are then exact to about 1e-12, and with
     * exact data the stress keeps falling geometrically, so its relative change never drops below the threshold.
     */
    static final double EXACT_STRESS = 1e-24;

    private static final double INV_SCALE = ShortMatrixFormat.INV_SCALE;
    /** Whether this JVM can run {@link PlacementVectors} ({@code --add-modules jdk.incubator.vector}). */
    public static final boolean VECTOR_AVAILABLE = ModuleLayer.boot().findModule("jdk.incubator.vector").isPresent()
            && !"false".equals(System.getProperty("meridian.placement.vector"));

    /**
     * @param nearest   how many mapped points, nearest by original distance, give the start position (SPIDAL: 2)
     * @param threshold the iteration stops once the stress changes by at most this fraction of its previous value
     * @param maxSteps  the most Guttman steps per point (0: the start position is the answer)
     */
    public record Options(int nearest, double threshold, int maxSteps) {
        public static final int NEAREST_DEFAULT = 2;
        public static final double THRESHOLD_DEFAULT = 1e-6;
        public static final int MAX_STEPS_DEFAULT = 1000;
        public static final Options DEFAULT = new Options(NEAREST_DEFAULT, THRESHOLD_DEFAULT, MAX_STEPS_DEFAULT);

        public Options {
            if (nearest < 1) {
                throw new IllegalArgumentException("nearest must be at least 1, got " + nearest);
            }
            if (!(threshold >= 0) || Double.isInfinite(threshold)) {
                throw new IllegalArgumentException("threshold must be a finite number >= 0, got " + threshold);
            }
            if (maxSteps < 0) {
                throw new IllegalArgumentException("maxSteps must be >= 0, got " + maxSteps);
            }
        }
    }

    private final int dim;
    private final Options options;
    /** The start neighbours, sorted by raw distance, then index. */
    private final int[] nearestIndex;
    private final int[] nearestRaw;
    /** sum_j w_j p_j over the usable entries: the same in every step. */
    private final double[] weightedSum;
    private final double[] x;
    private final double[] next;
    /** The vector pass ({@link PlacementVectors}, dim 3): the mapped points by coordinate and the row as doubles. */
    private final boolean vector;
    private double[] xs = new double[0];
    private double[] ys = new double[0];
    private double[] zs = new double[0];
    private double[] deltas = new double[0];
    private double[] usable = new double[0];
    private final double[] sums = new double[6];
    /** The vector pass's partial sums, one per lane (empty without it). */
    private final double[] laneSums;

    // per call: the usable entries' totals, then what the last pass found
    private double weightTotal;
    private double weightedDeltaTotal;
    private double weightedDeltaSquares;
    private int farPoints;
    private int steps;
    private double stress;

    public Placement(int dim) {
        this(dim, Options.DEFAULT);
    }

    public Placement(int dim, Options options) {
        this(dim, options, false);
    }

    /**
     * @param vectorPass run each step's pass over explicit vectors ({@link PlacementVectors}) when dim is 3 and the
     *                   JVM has the Vector API: 1.18 -> 0.23 ms a point into a map of 3800 blobs, 53 steps a point
     *                   ({@code ./meridian bench placement}); the sums' order differs from the scalar pass', so the
     *                   results differ in the last bits (at most 1.7e-15 there), and the first calls run slowly until
     *                   C2 has compiled it. The map's rounds keep the scalar pass, whose results do not depend on when
     *                   the JIT finished.
     */
    public Placement(int dim, Options options, boolean vectorPass) {
        if (dim < 1) {
            throw new IllegalArgumentException("dim must be at least 1, got " + dim);
        }
        if (options == null) {
            throw new IllegalArgumentException("options must not be null (Options.DEFAULT for SPIDAL's)");
        }
        this.dim = dim;
        this.options = options;
        this.nearestIndex = new int[options.nearest()];
        this.nearestRaw = new int[options.nearest()];
        this.weightedSum = new double[dim];
        this.x = new double[dim];
        this.next = new double[dim];
        this.vector = vectorPass && dim == 3 && VECTOR_AVAILABLE;
        this.laneSums = new double[vector ? 5 * PlacementVectors.lanes() : 0];
    }

    public int dim() {
        return dim;
    }

    public Options options() {
        return options;
    }

    /** Guttman steps taken by the last {@link #place} call. */
    public int steps() {
        return steps;
    }

    /** Local normalized stress at the position the last {@link #place} returned (raw sum when every delta is 0). */
    public double stress() {
        return stress;
    }

    /**
     * Places a new point and writes its dim coordinates into {@code position[positionOffset ..]}; may write into
     * {@code positionsRowMajor} itself at or after row n (e.g. at {@code n * dim}, to append the point).
     *
     * @param positionsRowMajor the mapped points, row-major n x dim (only the first n rows are read)
     * @param n                 the number of mapped points
     * @param distanceRow       the new point's original distances to mapped points 0..n-1 (SPIDAL 16-bit; more
     *                          entries may follow and are ignored)
     * @param weights           w_j for mapped points 0..n-1, each finite and >= 0, or null for unit weights
     * @throws IllegalArgumentException if the arrays are too short, a weight is negative or not finite, or
     *                                  {@code n > 0} and no entry is usable (all missing or weight 0)
     */
    public void place(double[] positionsRowMajor, int n, short[] distanceRow, double[] weights, double[] position,
                      int positionOffset) {
        checkArguments(positionsRowMajor, n, distanceRow, weights, position, positionOffset);
        steps = 0;
        if (n == 0) {
            stress = 0;
            for (int c = 0; c < dim; c++) {
                position[positionOffset + c] = 0;
            }
            return;
        }
        int found = scanRow(positionsRowMajor, n, distanceRow, weights);
        startAtNearest(positionsRowMajor, found);
        if (vector) {
            layOut(positionsRowMajor, n, distanceRow, weights);
        }

        double current = pass(positionsRowMajor, n, distanceRow, weights);
        if (farPoints == 0 && weightedDeltaTotal > 0) {
            moveOffTheMappedPoints();
            current = pass(positionsRowMajor, n, distanceRow, weights);
        }
        double threshold = options.threshold();
        while (steps < options.maxSteps() && current > EXACT_STRESS) {
            System.arraycopy(next, 0, x, 0, dim);
            steps++;
            double previous = current;
            current = pass(positionsRowMajor, n, distanceRow, weights);
            if (Math.abs(previous - current) <= threshold * previous) {
                break;
            }
        }
        stress = current;
        System.arraycopy(x, 0, position, positionOffset, dim);
    }

    private void checkArguments(double[] positionsRowMajor, int n, short[] distanceRow, double[] weights,
                                double[] position, int positionOffset) {
        if (n < 0) {
            throw new IllegalArgumentException("n must be >= 0, got " + n);
        }
        if (positionsRowMajor == null || positionsRowMajor.length < (long) n * dim) {
            throw new IllegalArgumentException("positions must hold n x dim = " + n + " x " + dim + " values, got "
                    + (positionsRowMajor == null ? "null" : positionsRowMajor.length));
        }
        if (distanceRow == null || distanceRow.length < n) {
            throw new IllegalArgumentException("the distance row must hold n = " + n + " entries, got "
                    + (distanceRow == null ? "null" : distanceRow.length));
        }
        if (weights != null && weights.length < n) {
            throw new IllegalArgumentException("weights must hold n = " + n + " entries (or be null), got "
                    + weights.length);
        }
        if (position == null || positionOffset < 0 || positionOffset > position.length - dim) {
            throw new IllegalArgumentException("the output needs dim = " + dim + " values from offset "
                    + positionOffset + ", got " + (position == null ? "null" : position.length));
        }
    }

    /**
     * One pass over the row: checks the weights, sums the usable entries' weights, weighted distances and weighted
     * positions, and keeps the {@code nearest} smallest distances. Returns how many start neighbours it found.
     */
    private int scanRow(double[] p, int n, short[] row, double[] weights) {
        final int dim = this.dim;
        final int k = nearestIndex.length;
        double wTotal = 0;
        double wDelta = 0;
        double wDelta2 = 0;
        for (int c = 0; c < dim; c++) {
            weightedSum[c] = 0;
        }
        int found = 0;
        for (int j = 0; j < n; j++) {
            double w = 1.0;
            if (weights != null) {
                w = weights[j];
                if (!(w >= 0) || w == Double.POSITIVE_INFINITY) {
                    throw new IllegalArgumentException("weight " + j + " is " + w + "; weights must be finite, >= 0");
                }
            }
            int raw = row[j];
            if (raw < 0 || w == 0) {
                continue;
            }
            double delta = raw * INV_SCALE;
            wTotal += w;
            wDelta += w * delta;
            wDelta2 += w * delta * delta;
            for (int c = 0, o = j * dim; c < dim; c++) {
                weightedSum[c] += w * p[o + c];
            }
            if (found < k || raw < nearestRaw[k - 1]) {
                int at = Math.min(found, k - 1);
                while (at > 0 && nearestRaw[at - 1] > raw) {
                    nearestRaw[at] = nearestRaw[at - 1];
                    nearestIndex[at] = nearestIndex[at - 1];
                    at--;
                }
                nearestRaw[at] = raw;
                nearestIndex[at] = j;
                if (found < k) {
                    found++;
                }
            }
        }
        if (found == 0) {
            throw new IllegalArgumentException("the row has no usable distance to any of the " + n
                    + " mapped points (all missing or weight 0); it cannot be placed");
        }
        weightTotal = wTotal;
        weightedDeltaTotal = wDelta;
        weightedDeltaSquares = wDelta2;
        return found;
    }

    private void startAtNearest(double[] p, int found) {
        for (int c = 0; c < dim; c++) {
            double s = 0;
            for (int i = 0; i < found; i++) {
                s += p[nearestIndex[i] * dim + c];
            }
            x[c] = s / found;
        }
    }

    /** The vector pass's inputs: the mapped points by coordinate, the targets and weights (0: not usable). */
    private void layOut(double[] p, int n, short[] row, double[] weights) {
        if (xs.length < n) {
            int size = Math.max(n, 2 * xs.length); // grown with the map, not per call
            xs = new double[size];
            ys = new double[size];
            zs = new double[size];
            deltas = new double[size];
            usable = new double[size];
        }
        for (int j = 0, o = 0; j < n; j++, o += 3) {
            xs[j] = p[o];
            ys[j] = p[o + 1];
            zs[j] = p[o + 2];
            int raw = row[j];
            double w = raw < 0 ? 0 : weights == null ? 1.0 : weights[j];
            usable[j] = w;
            deltas[j] = w == 0 ? 0 : raw * INV_SCALE;
        }
    }

    /** {@link #pass} over explicit vectors: the same update and stress. */
    private double passVector(int n) {
        PlacementVectors.pass3(x[0], x[1], x[2], xs, ys, zs, deltas, usable, n, laneSums, sums);
        double inv = 1.0 / weightTotal;
        for (int c = 0; c < 3; c++) {
            next[c] = (weightedSum[c] + x[c] * sums[1] - sums[2 + c]) * inv;
        }
        farPoints = (int) sums[5];
        return weightedDeltaSquares > 0 ? sums[0] / weightedDeltaSquares : sums[0];
    }

    /** Every usable mapped point is on x: the stress is least on the sphere of radius sum w delta / sum w. */
    private void moveOffTheMappedPoints() {
        x[0] += weightedDeltaTotal / weightTotal;
    }

    /**
     * Distances from x to every usable mapped point: returns the normalized stress at x, leaves the Guttman update of x
     * in {@code next} and the number of mapped points not on x in {@code farPoints}. The update is
     * {@code (sum w p + x sum f - sum f p) / sum w} with {@code f = w delta / d}, so only the f terms change per step.
     * About 6 ns per entry and step (n = 4000, this machine kind), bound by the square root and the division; a pass
     * written out for dim = 3 measured no faster.
     */
    private double pass(double[] p, int n, short[] row, double[] weights) {
        if (vector) {
            return passVector(n);
        }
        final int dim = this.dim;
        final double[] x = this.x;
        final double[] next = this.next;
        for (int c = 0; c < dim; c++) {
            next[c] = 0;
        }
        double residual = 0;
        double fTotal = 0;
        int far = 0;
        for (int j = 0, o = 0; j < n; j++, o += dim) {
            int raw = row[j];
            double w = weights == null ? 1.0 : weights[j];
            if (raw < 0 || w == 0) {
                continue;
            }
            double delta = raw * INV_SCALE;
            double d2 = 0;
            for (int c = 0; c < dim; c++) {
                double diff = x[c] - p[o + c];
                d2 += diff * diff;
            }
            double d = Math.sqrt(d2);
            double r = d - delta;
            residual += w * r * r;
            if (d >= COINCIDENT) {
                double f = w * delta / d;
                fTotal += f;
                for (int c = 0; c < dim; c++) {
                    next[c] -= f * p[o + c];
                }
                far++;
            }
        }
        double inv = 1.0 / weightTotal;
        for (int c = 0; c < dim; c++) {
            next[c] = (weightedSum[c] + x[c] * fTotal + next[c]) * inv;
        }
        farPoints = far;
        return weightedDeltaSquares > 0 ? residual / weightedDeltaSquares : residual;
    }
}
