package io.meridian.mds;

import io.meridian.matrix.LowerRows;
import java.util.Random;

/**
 * What one SMACOF pass over a stored triangle costs at best on this machine: the participant's rows streamed from the
 * row store files in {@link TriangleSmacof}'s order (a group of up to {@link #GROUP} consecutive owned rows per
 * column tile of {@link #TILE}), each tile copied once and put through the same vector kernel (the same arithmetic
 * per pair: distance, target, weight c, stress, the row's sums and the column credits), but with the coordinates and
 * the column sums of a window of {@link #TILE} points that stays in the L1/L2 cache, and no bookkeeping: no copy of
 * the map into the pass's layout, no per-row sums carried between tiles, no exchange, no Guttman update. Whatever an
 * iteration costs above this is that bookkeeping and cache misses on the map's arrays.
 * {@code ./meridian bench scale} measures both in the same run. (Rows taken one by one through a window whose columns
 * were 8 KB apart, the roofline came out 0.81-0.91x the iteration at 10K-100K; as here, 0.99-0.95x in CPU seconds,
 * bench scale on a shared machine.)
 */
public final class TriangleRoofline {
    /** Columns per tile, and points in the cache-resident window: coordinates 3 x 8 KB, column sums 4 x 8 KB. */
    public static final int TILE = 1024;
    /** Consecutive owned rows that visit one column tile together, as in {@link TriangleSmacof#iterate}. */
    public static final int GROUP = 256;
    /**
     * The window's stride between its coordinate and sum columns: not TILE, whose 8 KB would put all seven columns
     * of a pair at one offset mod 4 KB (the kernel's stores then alias its loads, and the columns share L1 sets).
     */
    private static final int STRIDE = TILE + 24;

    private final LowerRows rows;
    private final int[] owned;
    private final double[] xs = new double[TriangleSmacof.DIM * STRIDE];
    private final double[] acc = new double[(TriangleSmacof.DIM + 1) * STRIDE];
    private final double[] sums = new double[4];
    private final short[] tile = new short[TILE];

    /** @param owned the rows this participant owns, ascending */
    public TriangleRoofline(LowerRows rows, int[] owned) {
        this.rows = rows;
        this.owned = owned.clone();
        Random random = new Random(1);
        for (int k = 0; k < xs.length; k++) {
            xs[k] = random.nextDouble();
        }
    }

    /**
     * Compiles the vector kernel (C2) before anything is timed, waiting at most {@code millis}; returns whether it is.
     * Until then a call of the kernel runs the Vector API interpreted, tens of times slower: a roofline timed after two
     * warm-up passes came out slower than the iteration it bounds (bench scale, 25K-100K: 0.7-0.95x).
     */
    public static boolean warmUp(long millis) {
        return RowKernel.warmUpVectors(millis);
    }

    /** One pass over this participant's pairs among points {@code 0 .. n-1}; returns a sum so nothing is elided. */
    public double pass(int n) {
        double stress = 0;
        int k = 0;
        while (k < owned.length && owned[k] < n) {
            int g1 = k + 1;
            while (g1 < owned.length && owned[g1] < n && owned[g1] == owned[g1 - 1] + 1 && g1 - k < GROUP) {
                g1++;
            }
            int last = owned[g1 - 1];
            for (int j0 = 0; j0 < last; j0 += TILE) {
                for (int g = k; g < g1; g++) {
                    int i = owned[g];
                    if (i <= j0) {
                        continue;
                    }
                    int len = Math.min(TILE, i - j0);
                    rows.copy(i, j0, j0 + len, tile);
                    // every tile's columns stand in the one window; row i's own point at a slot of it
                    stress += TileVectors.unit3(tile, xs, STRIDE, i % TILE, 0, len, 0, 0, sums, acc, STRIDE, 0);
                }
            }
            k = g1;
        }
        return stress + sums[0] + acc[0];
    }

    /** The pairs (i, j < i) of this participant's rows among points {@code 0 .. n-1}. */
    public long pairs(int n) {
        long pairs = 0;
        for (int k = 0; k < owned.length && owned[k] < n; k++) {
            pairs += owned[k];
        }
        return pairs;
    }
}
