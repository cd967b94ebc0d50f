package io.meridian.mds;

import io.meridian.matrix.LowerRows;

/**
 * What one SMACOF pass over a stored triangle costs at best on this machine: the participant's rows streamed from the
 * row store files tile by tile, as {@link TriangleSmacof} reads them, through the same vector kernel (the same
 * arithmetic per pair: distance, target, weight c, stress, the row's sums and the column credits), but with the
 * coordinates and the column sums of a window of {@link #WINDOW} points that stays in the L1/L2 cache, and no
 * exchange. Whatever an iteration costs above this is bookkeeping: cache misses on the coordinates and sums of the
 * whole map, the Guttman update, the allreduce. {@code ./meridian bench scale} measures both in the same run.
 */
public final class TriangleRoofline {
    /** Points in the cache-resident window: coordinates 3 x 8 KB, column sums 4 x 8 KB. */
    public static final int WINDOW = 1024;
    private static final int TILE = 1024;

    private final LowerRows rows;
    private final int[] owned;
    private final double[] xs = new double[TriangleSmacof.DIM * WINDOW];
    private final double[] acc = new double[(TriangleSmacof.DIM + 1) * WINDOW];
    private final double[] sums = new double[4];
    private final short[] tile = new short[TILE];

    /** @param owned the rows this participant owns, ascending */
    public TriangleRoofline(LowerRows rows, int[] owned) {
        this.rows = rows;
        this.owned = owned.clone();
        java.util.Random random = new java.util.Random(1);
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
        for (int k = 0; k < owned.length && owned[k] < n; k++) {
            int i = owned[k];
            for (int j0 = 0; j0 < i; j0 += TILE) {
                int len = Math.min(TILE, i - j0);
                rows.copy(i, j0, j0 + len, tile);
                // the same window for every tile (TILE == WINDOW): row i's own point stands at a slot of it
                stress += TileVectors.unit3(tile, xs, WINDOW, i % WINDOW, 0, len, 0, 0, sums, acc, WINDOW, 0);
            }
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
