package io.meridian.mds;

import io.meridian.collective.BlockSync;
import io.meridian.matrix.LowerRows;
import io.meridian.matrix.ShortMatrixFormat;
import java.util.Arrays;
import java.util.function.BooleanSupplier;

/**
 * SMACOF in 3-D over points {@code 0 .. n-1} whose distances come as lower-triangle rows ({@link LowerRows}: row i
 * holds d(i, j) for j &lt; i), for a map that grows while it is refined. Each participant of the {@link BlockSync}
 * owns some rows (any set: the live map interleaves row blocks so that the work stays even as n grows). For an owned
 * row i it visits each pair (i, j &lt; i) once and credits both rows of B(X)X, so no participant ever needs an entry
 * right of the diagonal, i.e. another participant's row. Per point j it sums c_j = sum_i c_ij and s_jk = sum_i c_ij x_ik
 * (row j of B(X)X is x_j c_j - s_j); these 4n sums and the stress are then summed over the participants by one
 * {@code allreduceSum} of 4n + 3 doubles (the last carries a signal of the caller's), and every participant computes the same new X = B(X)X / n: the Guttman
 * transform with unit weights (V^+ = (I - 11'/n) / n, and B(X)X has zero column sums). A tile of a row is the batch
 * kernel's own vector pass ({@link TileVectors#unit3}, with pair crediting on), so an iteration costs what the batch
 * one does on the same pairs.
 * A missing entry (negative) has weight 0; with missing entries this update is the unit-weight transform applied to the
 * known pairs, not the exact weighted one (which needs CG on V), as a stream of complete rows has none.
 *
 * <p>Deterministic annealing shifts every target down by {@code sqrt(2L) T} ({@link RowKernel#fillTargetTable}). A zero
 * distance (a duplicate) is a target of zero, as in the batch engine's Guttman update (SPIDAL's raises it to the
 * smallest positive distance, {@link MdsOptions.Update#SPIDAL}).
 * Positions are kept column-wise. The arrays grow with the points ({@link #reserve}: doubling, so a map of capacity
 * 1,000,000 holding 4000 points holds arrays for 8192 at most, not 150 MB of them); an iteration over points whose
 * arrays are reserved allocates nothing.
 */
public final class TriangleSmacof {
    public static final int DIM = 3;
    private static final int TILE = 1024;
    /** Consecutive rows whose tiles of the same columns are visited together ({@link #iterate}). */
    private static final int GROUP = 256;
    private static final double INV = ShortMatrixFormat.INV_SCALE;

    private final int capacity;
    private final LowerRows rows;
    private final BlockSync sync;
    private final OwnedIds owned;
    private double[] x0 = new double[0];
    private double[] x1 = new double[0];
    private double[] x2 = new double[0];
    /** X column-wise with the stride of the current n, as the tile pass reads it. */
    private double[] xs = new double[0];
    private double[] acc = new double[reduceCapacity(0)];
    private final double[] rowSums = new double[4];
    private final double[] groupSums = new double[4 * GROUP];
    private final short[] tile = new short[TILE];
    private final double[] extremes = new double[2];
    private final boolean vector;
    private final VectorPassGate gate;
    /** What targets below it are raised to: none, as in the batch engine's default update. */
    private static final double TARGET_FLOOR = 0;
    private int denominatorPoints = -1;
    private double denominator;
    private double signal;
    private long iterations;
    /** Passes over this participant's rows of the triangle: what a caller budgets (see {@link #passes()}). */
    private long passes;

    /**
     * @param capacity the most points the map will hold
     * @param owned    the rows this participant owns, ascending (ids below {@code capacity})
     */
    public TriangleSmacof(int capacity, LowerRows rows, BlockSync sync, int[] owned) {
        this(capacity, rows, sync, OwnedIds.of(owned, capacity));
    }

    /** @param owned the rows this participant owns, listed as the map grows ({@link #reserve}) */
    public TriangleSmacof(int capacity, LowerRows rows, BlockSync sync, OwnedIds owned) {
        if (capacity < 1) {
            throw new IllegalArgumentException("capacity must be at least 1, got " + capacity);
        }
        this.capacity = capacity;
        this.rows = rows;
        this.sync = sync;
        this.owned = owned;
        this.vector = RowKernel.VECTOR_AVAILABLE;
        this.gate = new VectorPassGate(vector);
    }

    /**
     * Makes room for points {@code 0 .. n-1} (and lists the owned rows below n): the arrays grow to at least twice
     * their length, keeping the points. A map calls it when its epoch is agreed, so its iterations allocate nothing;
     * every call that takes n does it too (a length test when there is room).
     */
    public void reserve(int n) {
        if (n > capacity) {
            throw new IllegalArgumentException(n + " points in a map of capacity " + capacity);
        }
        if (n > x0.length) {
            x0 = GrowingArrays.atLeast(x0, n, capacity);
            x1 = Arrays.copyOf(x1, x0.length);
            x2 = Arrays.copyOf(x2, x0.length);
            xs = new double[DIM * x0.length];
            acc = new double[reduceCapacity(x0.length)];
        }
        owned.cover(n);
    }

    /** How many doubles one allreduce of this engine carries at most (for sizing a BlockSync). */
    public static int reduceCapacity(int capacity) {
        return (DIM + 1) * capacity + 3;
    }

    /** The sum over the participants of the signal the last {@link #iterate(int, double, BooleanSupplier)} carried. */
    public double signal() {
        return signal;
    }

    public int capacity() {
        return capacity;
    }

    public long iterations() {
        return iterations;
    }

    /**
     * Passes over the triangle so far: one per {@link #iterate}, {@link #stress} and {@link #distanceRange}, and one
     * more for an iteration whose n differs from the last (it sums the denominator first). At large n a pass is what
     * costs: 10 GB of distances at 100,000 points.
     */
    public long passes() {
        return passes;
    }

    /** The passes the next {@link #iterate} over points {@code 0 .. n-1} takes: 2 when it must sum the denominator. */
    public int iterationPasses(int n) {
        return n == denominatorPoints ? 1 : 2;
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
        if (i >= x0.length) {
            reserve(i + 1);
        }
        x0[i] = x;
        x1[i] = y;
        x2[i] = z;
    }

    /** Copies points {@code 0 .. n-1} row-major into {@code out} (n x 3). */
    public void copyPoints(int n, double[] out) {
        reserve(n);
        for (int i = 0; i < n; i++) {
            out[3 * i] = x0[i];
            out[3 * i + 1] = x1[i];
            out[3 * i + 2] = x2[i];
        }
    }

    /** Sets points {@code 0 .. n-1} from row-major {@code in} (n x 3). */
    public void setPoints(int n, double[] in) {
        reserve(n);
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
        reserve(n);
        int[] ids = owned.ids();
        int count = owned.count();
        double hi = 0;
        double lo = Double.MAX_VALUE;
        for (int k = 0; k < count && ids[k] < n; k++) {
            int i = ids[k];
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
        passes++;
        extremes[0] = hi;
        sync.allreduceMax(extremes, 1);
        hi = extremes[0];
        extremes[0] = lo;
        sync.allreduceMin(extremes, 1);
        lo = extremes[0];
        return new double[] {hi, lo == Double.MAX_VALUE ? 0 : lo};
    }

    /**
     * One SMACOF iteration over points {@code 0 .. n-1} at target shift {@code shift = sqrt(2L) T}: returns the
     * normalized stress of the current X against the shifted targets, sum (delta_hat - d)^2 / sum delta^2 over the
     * pairs with a distance, then replaces X by the Guttman update. Collective; allocates nothing.
     */
    public double iterate(int n, double shift) {
        return iterate(n, shift, NO_SIGNAL);
    }

    private static final BooleanSupplier NO_SIGNAL = () -> false;

    /**
     * {@link #iterate(int, double)}, carrying a signal in the same allreduce: {@code localSignal} is asked once this
     * participant's share of the pass is done, just before the exchange, and {@link #signal()} then counts the
     * participants that said yes (a round uses it to learn, at no extra exchange, that some task has new rows: asked
     * after the pass rather than before it, a row stored while the pass runs is seen one iteration sooner).
     */
    public double iterate(int n, double shift, BooleanSupplier localSignal) {
        reserve(n);
        int[] ids = owned.ids();
        int count = owned.count();
        for (int j = 0; j < n; j++) {
            xs[j] = x0[j];
            xs[n + j] = x1[j];
            xs[2 * n + j] = x2[j];
        }
        boolean compiled = gate.open();
        int sumsLength = (DIM + 1) * n;
        Arrays.fill(acc, 0, sumsLength + 3, 0);
        double stress = 0;
        // A group of up to GROUP consecutive owned rows visits the same TILE columns together, so that the columns'
        // coordinates and sums (56 KB) stay in the cache while every row of the group streams its tile past them;
        // row by row, each row's pass read 7 values of 8 bytes per pair from memory once the map outgrew the cache
        // (3N + 4N doubles: 5.6 MB at N = 100,000), against 2 bytes of distance.
        int k = 0;
        while (k < count && ids[k] < n) {
            int g0 = k;
            int g1 = k + 1;
            while (g1 < count && ids[g1] < n && ids[g1] == ids[g1 - 1] + 1 && g1 - g0 < GROUP) {
                g1++;
            }
            Arrays.fill(groupSums, 0, 4 * (g1 - g0), 0);
            int last = ids[g1 - 1];
            for (int j0 = 0; j0 < last; j0 += TILE) {
                for (int g = firstAbove(ids, g0, g1, j0); g < g1; g++) {
                    int i = ids[g];
                    int len = Math.min(TILE, i - j0);
                    rows.copy(i, j0, j0 + len, tile);
                    Arrays.fill(rowSums, 0);
                    if (compiled) {
                        stress += TileVectors.unit3(tile, xs, n, i, j0, len, shift, TARGET_FLOOR, rowSums, acc, n, j0);
                    } else if (vector) {
                        stress += TileVectors.unit3Lanes(tile, xs, n, i, j0, len, shift, TARGET_FLOOR, rowSums, acc, n,
                                j0, gate.scratch());
                    } else {
                        stress += scalarTile(i, j0, len, n, shift);
                    }
                    int o = 4 * (g - g0);
                    groupSums[o] += rowSums[0];
                    groupSums[o + 1] += rowSums[1];
                    groupSums[o + 2] += rowSums[2];
                    groupSums[o + 3] += rowSums[3];
                }
            }
            for (int g = g0; g < g1; g++) {
                int i = ids[g];
                int o = 4 * (g - g0);
                acc[i] += groupSums[o];
                acc[n + i] += groupSums[o + 1];
                acc[2 * n + i] += groupSums[o + 2];
                acc[3 * n + i] += groupSums[o + 3];
            }
            k = g1;
        }
        boolean newDenominator = n != denominatorPoints;
        acc[sumsLength] = stress;
        acc[sumsLength + 1] = newDenominator ? localDenominator(n) : 0;
        acc[sumsLength + 2] = localSignal.getAsBoolean() ? 1 : 0;
        sync.allreduceSum(acc, sumsLength + 3);
        signal = acc[sumsLength + 2];
        if (newDenominator) {
            denominator = acc[sumsLength + 1];
            denominatorPoints = n;
        }
        double inv = 1.0 / n;
        for (int j = 0; j < n; j++) {
            double c = acc[j];
            x0[j] = (xs[j] * c - acc[n + j]) * inv;
            x1[j] = (xs[n + j] * c - acc[2 * n + j]) * inv;
            x2[j] = (xs[2 * n + j] * c - acc[3 * n + j]) * inv;
        }
        iterations++;
        passes += newDenominator ? 2 : 1;
        return denominator == 0 ? 0 : acc[sumsLength] / denominator;
    }

    /** The first index in {@code [g0, g1)} whose owned row is above column {@code j0} (rows ascend), or g1. */
    private static int firstAbove(int[] ids, int g0, int g1, int j0) {
        int g = g0;
        while (g < g1 && ids[g] <= j0) {
            g++;
        }
        return g;
    }

    /** The tile pass without the vector module: the same terms as {@link TileVectors#unit3}, summed in order. */
    private double scalarTile(int i, int j0, int len, int n, double shift) {
        double xi = xs[i];
        double yi = xs[n + i];
        double zi = xs[2 * n + i];
        double stress = 0;
        for (int t = 0; t < len; t++) {
            int j = j0 + t;
            int r = tile[t];
            double h = Math.max(Math.max(r * INV, TARGET_FLOOR) - shift, 0);
            double px = xs[j];
            double py = xs[n + j];
            double pz = xs[2 * n + j];
            double tx = xi - px;
            double ty = yi - py;
            double tz = zi - pz;
            double d = Math.sqrt(tx * tx + ty * ty + tz * tz);
            double c = (r < 0 || d < RowKernel.MIN_DISTANCE) ? 0.0 : h / d;
            double e = r < 0 ? 0.0 : h - d;
            stress += e * e;
            rowSums[0] += c;
            rowSums[1] += c * px;
            rowSums[2] += c * py;
            rowSums[3] += c * pz;
            acc[j] += c;
            acc[n + j] += c * xi;
            acc[2 * n + j] += c * yi;
            acc[3 * n + j] += c * zi;
        }
        return stress;
    }

    /** Sum of delta^2 over this participant's pairs among points {@code 0 .. n-1} (once per n). */
    private double localDenominator(int n) {
        int[] ids = owned.ids();
        int count = owned.count();
        double den = 0;
        for (int k = 0; k < count && ids[k] < n; k++) {
            int i = ids[k];
            for (int j0 = 0; j0 < i; j0 += TILE) {
                int len = Math.min(TILE, i - j0);
                rows.copy(i, j0, j0 + len, tile);
                for (int t = 0; t < len; t++) {
                    int r = tile[t];
                    if (r >= 0) {
                        double delta = r * INV;
                        den += delta * delta;
                    }
                }
            }
        }
        return den;
    }

    /** The normalized stress sum (delta - d)^2 / sum delta^2 of points {@code 0 .. n-1} as they are. Collective. */
    public double stress(int n) {
        reserve(n);
        int[] ids = owned.ids();
        int count = owned.count();
        double num = 0;
        double den = 0;
        for (int k = 0; k < count && ids[k] < n; k++) {
            int i = ids[k];
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
        passes++;
        acc[0] = num;
        acc[1] = den;
        sync.allreduceSum(acc, 2);
        return acc[1] == 0 ? 0 : acc[0] / acc[1];
    }
}
