package io.meridian.pwc;

import io.meridian.collective.BlockSync;
import io.meridian.matrix.LowerRows;
import java.util.Arrays;

/**
 * {@link PairKernel} over rows given as their lower triangle ({@link LowerRows}: row i holds d(i, j) for j &lt; i),
 * each participant owning any set of rows (the live map: every t-th row block). As in
 * {@link io.meridian.mds.TriangleSmacof}, a participant visits each pair (i, j &lt; i) of its owned rows i once and
 * credits both rows: row i gets d_ij x_j, row j gets d_ij x_i. The N x k sums of every point are then added up over
 * the participants by one allreduce, and each keeps its own rows. No participant reads an entry right of the
 * diagonal (another's row), and none holds more than its rows: nothing O(N^2) in one process.
 *
 * <p>Sums are kept column-major (one column of N per cluster) so that a tile of a row is two unit-stride loops per
 * cluster, a dot product and an axpy, over a tile the row store copied once; the tile's 16-bit values are widened to
 * doubles once and reused by every cluster. Arrays are sized once for N and the largest k; nothing is allocated per
 * call.
 */
public final class TriangleKernel implements PairKernel {
    private static final int TILE = 1024;
    /**
     * Owned rows passed over one column tile before the next tile, so that the group reuses the tile's x and sums
     * (2 k TILE doubles, 160 KB at k = 10) from cache instead of every row streaming all of x and the sums (3.2 MB at
     * N = 20,000), and the vector pass can take two rows at a time. Scalar pass, N = 20,000, CPU time against row by
     * row: k = 5, 6, 9 14-25 % less, k = 4 and 8 no less (bench pwc-triangle --pass-only, load average 13).
     */
    private static final int ROW_GROUP = 32;
    /**
     * Columns of a tile that every row of the group passes over, for every cluster, before the next SUB columns: their
     * x and sums (2 k SUB doubles, 40 KB at k = 10) stay near L1 while the group's rows stream past them four at a
     * time ({@link PairVectors#pairs4}), where a whole tile's (160 KB) came from L2 for every two rows. With the
     * vector {@link PairVectors#widen}, one thread, N = 8000, k = 10, CPU ms per product against the two-row whole-tile
     * pass in the same JVM: SUB = 128 0.78x, 256 0.62x, 512 0.69x, 1024 0.69x; two rows at a time at 512: 0.90x.
     */
    private static final int SUB = 256;
    /**
     * Whether this JVM has the vector module ({@code --add-modules jdk.incubator.vector}) for {@link PairVectors};
     * {@code -Dmeridian.mds.vector=false} turns it off, as for the SMACOF pass.
     */
    private static final boolean VECTOR_AVAILABLE = ModuleLayer.boot().findModule("jdk.incubator.vector").isPresent()
            && !"false".equals(System.getProperty("meridian.mds.vector"));

    private final LowerRows source;
    private final int points;
    private final BlockSync sync;
    /** This participant's rows below {@link #points}, ascending. */
    private final int[] owned;
    /** The point ids in the order an allgatherv of every participant's rows lays them out. */
    private final int[] gatheredOrder;
    private final int[] rowCounts;
    private final int[] countsK;
    private final int[] displsK;
    private int layoutK = -1;
    private final double[] packed;
    /** x column-major: column j of point b at {@code j * points + b}. */
    private final double[] xColumns;
    /** The sums, column-major like {@link #xColumns}; exchanged by allreduce. */
    private final double[] sums;
    private final short[] tile = new short[TILE];
    /** The group's tiles widened to doubles: row r0 + g of a group at {@code g * TILE}. */
    private final double[] groupValues = new double[ROW_GROUP * TILE];
    /** The rows' own sums of {@link PairVectors#pairs2} and {@link PairVectors#pairs4}. */
    private final double[] rowPair = new double[4];
    /** {@link PairVectors.Scratch} when the vector module is there, else null (the class is then never loaded). */
    private final Object vectorScratch = VECTOR_AVAILABLE ? new PairVectors.Scratch() : null;

    /**
     * @param rows         the distance rows (only the owned ones are read)
     * @param points       N: rows {@code 0 .. N-1} are clustered
     * @param ownedByTask  for each participant of {@code sync}, the ids it owns, ascending; ids from N on are ignored,
     *                     the ids below N must be owned by exactly one participant each
     * @param maxColumns   the largest k a product is asked for (the most clusters)
     */
    public TriangleKernel(LowerRows rows, int points, int[][] ownedByTask, BlockSync sync, int maxColumns) {
        if (ownedByTask.length != sync.blocks()) {
            throw new IllegalArgumentException("ownership lists " + ownedByTask.length + " participants, the group has "
                    + sync.blocks());
        }
        if (points < 1 || maxColumns < 1) {
            throw new IllegalArgumentException("points " + points + " and maxColumns " + maxColumns + " must be >= 1");
        }
        this.source = rows;
        this.points = points;
        this.sync = sync;
        this.rowCounts = new int[ownedByTask.length];
        this.gatheredOrder = new int[points];
        boolean[] seen = new boolean[points];
        int next = 0;
        for (int t = 0; t < ownedByTask.length; t++) {
            int[] ids = ownedByTask[t];
            for (int q = 0; q < ids.length && ids[q] < points; q++) {
                int id = ids[q];
                if (id < 0 || (q > 0 && id <= ids[q - 1]) || seen[id]) {
                    throw new IllegalArgumentException("participant " + t + " owns id " + id
                            + (id < 0 ? ", a negative id" : seen[id] ? ", which another owns too" : " out of order"));
                }
                seen[id] = true;
                gatheredOrder[next++] = id;
                rowCounts[t]++;
            }
        }
        if (next != points) {
            int missing = 0;
            while (seen[missing]) {
                missing++;
            }
            throw new IllegalArgumentException("no participant owns row " + missing + " of " + points);
        }
        int me = sync.block();
        int start = 0;
        for (int t = 0; t < me; t++) {
            start += rowCounts[t];
        }
        this.owned = Arrays.copyOfRange(gatheredOrder, start, start + rowCounts[me]);
        this.countsK = new int[rowCounts.length];
        this.displsK = new int[rowCounts.length];
        this.packed = new double[points * maxColumns];
        this.xColumns = new double[points * maxColumns];
        this.sums = new double[points * maxColumns];
    }

    /**
     * Compiles the vector pass (C2) before anything is timed, waiting at most {@code millis}; returns whether it is
     * (false without the vector module). Until then a product takes the scalar pass: at a load average of 29 on 2
     * cores, 200 warm-up products left bench scale's EM iterations at N = 10,000 on it, 5.4x a SMACOF iteration.
     */
    public static boolean warmUpVectors(long millis) {
        if (!VECTOR_AVAILABLE) {
            return false;
        }
        PairVectors.Scratch scratch = new PairVectors.Scratch();
        long deadline = System.nanoTime() + millis * 1_000_000;
        boolean compiled = PairVectors.warmUp(scratch);
        while (!compiled && System.nanoTime() < deadline) {
            compiled = PairVectors.warmUp(scratch);
        }
        return compiled;
    }

    /** How many doubles one allreduce of this kernel carries at most (for sizing a BlockSync). */
    public static int reduceCapacity(int points, int maxColumns) {
        return points * maxColumns;
    }

    @Override
    public int points() {
        return points;
    }

    @Override
    public int rows() {
        return owned.length;
    }

    @Override
    public int globalRow(int row) {
        return owned[row];
    }

    @Override
    public BlockSync sync() {
        return sync;
    }

    @Override
    public void multiply(double[] x, int k, double[] y) {
        final int n = points;
        final double[] xc = xColumns;
        final double[] acc = sums;
        for (int b = 0, p = 0; b < n; b++) {
            for (int j = 0; j < k; j++, p++) {
                xc[j * n + b] = x[p];
            }
        }
        Arrays.fill(acc, 0, k * n, 0.0);
        boolean vector = vectorScratch != null && PairVectors.warmUp((PairVectors.Scratch) vectorScratch);
        for (int r0 = 0; r0 < owned.length; r0 += ROW_GROUP) {
            int r1 = Math.min(owned.length, r0 + ROW_GROUP);
            int last = owned[r1 - 1];
            for (int j0 = 0; j0 < last; j0 += TILE) {
                int first = r0;
                while (owned[first] <= j0) {
                    first++;
                }
                for (int r = first; r < r1; r++) {
                    widen(owned[r], j0, Math.min(TILE, owned[r] - j0), (r - r0) * TILE, vector);
                }
                int width = Math.min(TILE, last - j0);
                for (int s0 = 0; s0 < width; s0 += SUB) {
                    int from = j0 + s0;
                    for (int r = first; r < r1; r++) {
                        int i = owned[r];
                        int len = Math.min(SUB, i - from);
                        if (len <= 0) {
                            continue;
                        }
                        int d = (r - r0) * TILE + s0;
                        if (vector && len == SUB && r + 3 < r1) {
                            // four rows against the same columns (later rows reach at least as far): x and the sums
                            // are loaded and stored once for the four
                            int i2 = owned[r + 1];
                            int i3 = owned[r + 2];
                            int i4 = owned[r + 3];
                            r += 3;
                            for (int j = 0, base = 0; j < k; j++, base += n) {
                                PairVectors.pairs4(groupValues, d, TILE, SUB, xc, acc, base + from, xc[base + i],
                                        xc[base + i2], xc[base + i3], xc[base + i4], rowPair);
                                acc[base + i] += rowPair[0];
                                acc[base + i2] += rowPair[1];
                                acc[base + i3] += rowPair[2];
                                acc[base + i4] += rowPair[3];
                            }
                            continue;
                        }
                        if (vector && len == SUB && r + 1 < r1) {
                            int i2 = owned[++r];
                            for (int j = 0, base = 0; j < k; j++, base += n) {
                                PairVectors.pairs2(groupValues, d, d + TILE, SUB, xc, acc, base + from, xc[base + i],
                                        xc[base + i2], rowPair);
                                acc[base + i] += rowPair[0];
                                acc[base + i2] += rowPair[1];
                            }
                            continue;
                        }
                        for (int j = 0, base = 0; j < k; j++, base += n) {
                            acc[base + i] += vector
                                    ? PairVectors.pairs(groupValues, d, len, xc, acc, base + from, xc[base + i])
                                    : pairs(groupValues, d, len, xc, acc, base + from, xc[base + i]);
                        }
                    }
                }
            }
        }
        sync.allreduceSum(acc, k * n);
        for (int r = 0, p = 0; r < owned.length; r++) {
            int i = owned[r];
            for (int j = 0; j < k; j++, p++) {
                y[p] = acc[j * n + i];
            }
        }
    }

    /** Copies entries {@code [j0, j0 + len)} of row {@code i} into the group's values at {@code to}, missing as 0. */
    private void widen(int i, int j0, int len, int to, boolean vector) {
        source.copy(i, j0, j0 + len, tile);
        if (vector) {
            PairVectors.widen(tile, len, groupValues, to);
            return;
        }
        double[] values = groupValues;
        for (int t = 0; t < len; t++) {
            values[to + t] = Math.max(tile[t], 0);
        }
    }

    /**
     * Columns of one row against one cluster: returns sum_t d_t x[from + t] (the row's own sum) over the row's values
     * {@code d[dFrom + t]} and adds d_t xi to {@code acc[from + t]} (the other row of each pair). Four partial sums, so
     * the dot product is not one serial chain of additions.
     */
    private static double pairs(double[] values, int dFrom, int len, double[] x, double[] acc, int from, double xi) {
        double s0 = 0;
        double s1 = 0;
        double s2 = 0;
        double s3 = 0;
        int t = 0;
        for (; t + 3 < len; t += 4) {
            int q = from + t;
            double d0 = values[dFrom + t];
            double d1 = values[dFrom + t + 1];
            double d2 = values[dFrom + t + 2];
            double d3 = values[dFrom + t + 3];
            s0 += d0 * x[q];
            s1 += d1 * x[q + 1];
            s2 += d2 * x[q + 2];
            s3 += d3 * x[q + 3];
            acc[q] += d0 * xi;
            acc[q + 1] += d1 * xi;
            acc[q + 2] += d2 * xi;
            acc[q + 3] += d3 * xi;
        }
        for (; t < len; t++) {
            s0 += values[dFrom + t] * x[from + t];
            acc[from + t] += values[dFrom + t] * xi;
        }
        return (s0 + s1) + (s2 + s3);
    }

    @Override
    public void gatherAndSum(double[] local, int k, double[] all, double[] sums, int sumLength) {
        layout(k);
        sync.allgathervAndSum(local, packed, countsK, displsK, sums, sumLength);
        unpack(k, all);
    }

    @Override
    public void gather(double[] local, int k, double[] all) {
        layout(k);
        sync.allgatherv(local, packed, countsK, displsK);
        unpack(k, all);
    }

    private void unpack(int k, double[] all) {
        for (int q = 0, p = 0; q < points; q++) {
            int to = gatheredOrder[q] * k;
            for (int j = 0; j < k; j++, p++) {
                all[to + j] = packed[p];
            }
        }
    }

    private void layout(int k) {
        if (k == layoutK) {
            return;
        }
        layoutK = k;
        for (int t = 0, displ = 0; t < countsK.length; t++) {
            countsK[t] = rowCounts[t] * k;
            displsK[t] = displ;
            displ += countsK[t];
        }
    }

    @Override
    public void localDistanceSums(double[] out) {
        long sum = 0;
        long count = 0;
        for (int i : owned) {
            for (int j0 = 0; j0 < i; j0 += TILE) {
                int len = Math.min(TILE, i - j0);
                source.copy(i, j0, j0 + len, tile);
                for (int t = 0; t < len; t++) {
                    if (tile[t] >= 0) {
                        sum += tile[t];
                        count++;
                    }
                }
            }
        }
        out[0] = sum;
        out[1] = count;
    }
}
