package io.meridian.pwc;

import io.meridian.collective.BlockSync;

/**
 * The part of DA-PWC that touches the distance matrix, for the rows one participant owns: the product of those rows
 * with an N x k matrix (B = D M and the power method's D z), the distance sums for the initial temperature, and how a
 * per-row quantity of every participant comes together in point order. {@link PwcEngine} does everything else on its
 * rows (M, C, A, eps, the split tests, the schedule), so it runs the same over either kernel:
 * {@link FullRowKernel} (contiguous blocks of full rows, the batch job's) or {@link TriangleKernel} (any set of owned
 * rows given as their lower triangle, the live map's). Arrays are row-major with stride k; calls are collective
 * wherever they exchange (every participant calls them in the same order) and allocate nothing.
 */
public interface PairKernel {
    /** N: the points clustered, {@code 0 .. N-1}. */
    int points();

    /** How many rows this participant owns. */
    int rows();

    /** The point id of this participant's local row {@code row}. */
    int globalRow(int row);

    /** The group the participants exchange through. */
    BlockSync sync();

    /**
     * {@code y[r*k + j] = sum_b d(globalRow(r), b) x[b*k + j]} for every local row r and column j below k, in raw
     * 16-bit units, missing entries counted as 0; {@code x} holds all N points. Collective.
     */
    void multiply(double[] x, int k, double[] y);

    /**
     * Gathers every participant's local rows x k values ({@code local}) into {@code all} in point order
     * ({@code all[id*k + j]}) and sums {@code sums[0 .. sumLength)} over the participants in the same call.
     * Collective.
     */
    void gatherAndSum(double[] local, int k, double[] all, double[] sums, int sumLength);

    /** {@link #gatherAndSum} without sums. Collective. */
    void gather(double[] local, int k, double[] all);

    /**
     * This participant's share of the off-diagonal entries present (missing ones excluded): {@code out[0]} their sum
     * in raw units, {@code out[1]} their number. Summed over the participants, sum / number is the mean distance.
     */
    void localDistanceSums(double[] out);
}
