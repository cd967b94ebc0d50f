package io.meridian.mds;

import io.meridian.collective.BlockSync;
import io.meridian.matrix.LowerRows;
import io.meridian.matrix.ShortMatrixFormat;

/**
 * SMACOF in 3-D over points {@code 0 .. n-1} whose distances come as lower-triangle rows ({@link LowerRows}: row i
 * holds d(i, j) for j &lt; i), for a map that grows while it is refined. Each participant of the {@link BlockSync}
 * owns some rows (any set: the live map interleaves row blocks so that the work stays even as n grows). For an owned
 * row i it visits each pair (i, j &lt; i) once and credits both rows of B(X)X, so no participant ever needs an entry
 * right of the diagonal, i.e. another participant's row. The partial B(X)X of all n points and the stress sums are then
 * summed over the participants by one {@code allreduceSum} of 3n + 2 doubles, and every participant computes the same
 * new X = B(X)X / n: the Guttman transform with unit weights (V^+ = (I - 11'/n) / n, and B(X)X has zero column sums).
 * A missing entry (negative) has weight 0; with missing entries this update is the unit-weight transform applied to the
 * known pairs, not the exact weighted one (which needs CG on V), as a stream of complete rows has none.
 *
 * <p>Deterministic annealing shifts every target down by {@code sqrt(2L) T} ({@link RowKernel#fillTargetTable}).
 * Positions are kept column-wise; arrays are sized once for the capacity, and an iteration allocates nothing.
 */
public final class TriangleSmacof {
    public static final int DIM = 3;
    private static final int TILE = 1024;
    private static final double INV = ShortMatrixFormat.INV_SCALE;

    private final int capacity;
    private final LowerRows rows;
    private final BlockSync sync;
    private final int[] owned;
    private final double[] x0;
    private final double[] x1;
    private final double[] x2;
    private final double[] acc;
    private final short[] tile = new short[TILE];
    private final double[] target = RowKernel.newTargetTable();
    private final double[] extremes = new double[2];
    private double targetShift = Double.NaN;
    private double minPositive;
    private double sumNum;
    private double sumDen;
    private long iterations;

    /**
     * @param capacity the most points the map will hold
     * @param owned    the rows this participant owns, ascending (ids below {@code capacity})
     */
    public TriangleSmacof(int capacity, LowerRows rows, BlockSync sync, int[] owned) {
        this.capacity = capacity;
        this.rows = rows;
        this.sync = sync;
        this.owned = owned.clone();
        for (int k = 0; k < this.owned.length; k++) {
            if (this.owned[k] < 0 || this.owned[k] >= capacity || (k > 0 && this.owned[k] <= this.owned[k - 1])) {
                throw new IllegalArgumentException("owned rows must be ascending ids below " + capacity);
            }
        }
        this.x0 = new double[capacity];
        this.x1 = new double[capacity];
        this.x2 = new double[capacity];
        this.acc = new double[DIM * capacity + 2];
    }

    /** How many doubles one allreduce of this engine carries at most (for sizing a BlockSync). */
    public static int reduceCapacity(int capacity) {
        return DIM * capacity + 2;
    }

    public int capacity() {
        return capacity;
    }

    public long iterations() {
        return iterations;
    }

    /** Coordinate k of point i. */
    public double coordinate(int i, int k) {
        return switch (k) {
            case 0 -> x0[i];
            case 1 -> x1[i];
            case 2 -> x2[i];
            default -> throw new IndexOutOfBoundsException("coordinate " + k + " of a 3-D map");
        };
    }

    public void setPoint(int i, double x, double y, double z) {
        x0[i] = x;
        x1[i] = y;
        x2[i] = z;
    }

    /** Copies points {@code 0 .. n-1} row-major into {@code out} (n x 3). */
    public void copyPoints(int n, double[] out) {
        for (int i = 0; i < n; i++) {
            out[3 * i] = x0[i];
            out[3 * i + 1] = x1[i];
            out[3 * i + 2] = x2[i];
        }
    }

    /** Sets points {@code 0 .. n-1} from row-major {@code in} (n x 3). */
    public void setPoints(int n, double[] in) {
        for (int i = 0; i < n; i++) {
            x0[i] = in[3 * i];
            x1[i] = in[3 * i + 1];
            x2[i] = in[3 * i + 2];
        }
    }

    /**
     * The largest distance and the smallest positive one among points {@code 0 .. n-1}, over every participant's rows
     * (for the temperature schedule); the latter is 0 when there is none. Collective.
     */
    public double[] distanceRange(int n) {
        double hi = 0;
        double lo = Double.MAX_VALUE;
        for (int k = 0; k < owned.length && owned[k] < n; k++) {
            int i = owned[k];
            for (int j0 = 0; j0 < i; j0 += TILE) {
                int len = Math.min(TILE, i - j0);
                rows.copy(i, j0, j0 + len, tile);
                for (int t = 0; t < len; t++) {
                    int raw = tile[t];
                    if (raw > 0) {
                        double v = raw * INV;
                        hi = Math.max(hi, v);
                        lo = Math.min(lo, v);
                    }
                }
            }
        }
        extremes[0] = hi;
        sync.allreduceMax(extremes, 1);
        hi = extremes[0];
        extremes[0] = lo;
        sync.allreduceMin(extremes, 1);
        lo = extremes[0];
        minPositive = lo == Double.MAX_VALUE ? 0 : lo;
        return new double[] {hi, minPositive};
    }

    /**
     * One SMACOF iteration over points {@code 0 .. n-1} at target shift {@code shift = sqrt(2L) T}: returns the
     * normalized stress of the current X against the shifted targets, sum (delta_hat - d)^2 / sum delta^2 over the
     * pairs with a distance, then replaces X by the Guttman update. Collective; allocates nothing.
     */
    public double iterate(int n, double shift) {
        if (shift != targetShift) {
            RowKernel.fillTargetTable(target, shift, minPositive);
            targetShift = shift;
        }
        int len = DIM * n + 2;
        java.util.Arrays.fill(acc, 0, len, 0);
        sumNum = 0;
        sumDen = 0;
        for (int k = 0; k < owned.length && owned[k] < n; k++) {
            row(owned[k], n);
        }
        acc[DIM * n] = sumNum;
        acc[DIM * n + 1] = sumDen;
        sync.allreduceSum(acc, len);
        double inv = 1.0 / n;
        for (int i = 0; i < n; i++) {
            x0[i] = acc[i] * inv;
            x1[i] = acc[n + i] * inv;
            x2[i] = acc[2 * n + i] * inv;
        }
        iterations++;
        double den = acc[DIM * n + 1];
        return den == 0 ? 0 : acc[DIM * n] / den;
    }

    /** Pairs (i, j &lt; i) of one owned row: its own row of B(X)X whole, and each j's share. */
    private void row(int i, int n) {
        double xi = x0[i];
        double yi = x1[i];
        double zi = x2[i];
        double b0 = 0;
        double b1 = 0;
        double b2 = 0;
        double num = 0;
        double den = 0;
        int o1 = n;
        int o2 = 2 * n;
        for (int j0 = 0; j0 < i; j0 += TILE) {
            int len = Math.min(TILE, i - j0);
            rows.copy(i, j0, j0 + len, tile);
            for (int t = 0; t < len; t++) {
                int j = j0 + t;
                int raw = tile[t];
                double w = raw >= 0 ? 1 : 0;
                double delta = (raw & 0x7FFF) * INV;
                double targetDistance = target[raw & 0xFFFF];
                double dx = xi - x0[j];
                double dy = yi - x1[j];
                double dz = zi - x2[j];
                double d = Math.sqrt(dx * dx + dy * dy + dz * dz);
                double c = d > RowKernel.MIN_DISTANCE ? w * targetDistance / d : 0;
                double cx = c * dx;
                double cy = c * dy;
                double cz = c * dz;
                b0 += cx;
                b1 += cy;
                b2 += cz;
                acc[j] -= cx;
                acc[o1 + j] -= cy;
                acc[o2 + j] -= cz;
                double e = targetDistance - d;
                num += w * e * e;
                den += w * delta * delta;
            }
        }
        acc[i] += b0;
        acc[o1 + i] += b1;
        acc[o2 + i] += b2;
        sumNum += num;
        sumDen += den;
    }

    /** The normalized stress sum (delta - d)^2 / sum delta^2 of points {@code 0 .. n-1} as they are. Collective. */
    public double stress(int n) {
        double num = 0;
        double den = 0;
        for (int k = 0; k < owned.length && owned[k] < n; k++) {
            int i = owned[k];
            for (int j0 = 0; j0 < i; j0 += TILE) {
                int len = Math.min(TILE, i - j0);
                rows.copy(i, j0, j0 + len, tile);
                for (int t = 0; t < len; t++) {
                    int raw = tile[t];
                    if (raw < 0) {
                        continue;
                    }
                    int j = j0 + t;
                    double delta = raw * INV;
                    double dx = x0[i] - x0[j];
                    double dy = x1[i] - x1[j];
                    double dz = x2[i] - x2[j];
                    double e = delta - Math.sqrt(dx * dx + dy * dy + dz * dz);
                    num += e * e;
                    den += delta * delta;
                }
            }
        }
        acc[0] = num;
        acc[1] = den;
        sync.allreduceSum(acc, 2);
        return acc[1] == 0 ? 0 : acc[0] / acc[1];
    }
}
