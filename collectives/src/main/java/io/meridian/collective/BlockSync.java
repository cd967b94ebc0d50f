package io.meridian.collective;

/**
 * What an iterative engine that owns one row block needs from the owners of the other blocks at the end of a round.
 * Engines keep their working arrays on the heap and call this seam; implementations move the data (in one process:
 * nothing to move; across processes: the two-level shared-memory + MPI-leader collectives, or flat MPI as a baseline).
 * Calls are collective: every block calls them in the same order. No call may allocate.
 */
public interface BlockSync {
    /** Number of blocks taking part. */
    int blocks();

    /** This caller's block, from 0. */
    int block();

    /**
     * Gathers every block's part into {@code global}: block b contributes {@code counts[b]} doubles placed at
     * {@code displs[b]}. This block's part is read from {@code local[0 .. counts[block()])}; {@code local} may be
     * {@code global} itself when the part is already in place.
     */
    void allgatherv(double[] local, double[] global, int[] counts, int[] displs);

    /** Element-wise sum over all blocks of {@code values[0 .. length)}, in place. */
    void allreduceSum(double[] values, int length);

    /**
     * {@link #allgatherv} and {@link #allreduceSum}{@code (sums, sumLength)} as one collective call, for a round that
     * ends with both (DA-MDS: the new layout and the stress of the old one). An implementation that hands each call
     * through a leader (two-level) saves one hand-off round; by default the two calls run in turn.
     */
    default void allgathervAndSum(double[] local, double[] global, int[] counts, int[] displs, double[] sums,
                                  int sumLength) {
        allreduceSum(sums, sumLength);
        allgatherv(local, global, counts, displs);
    }

    /** Element-wise maximum over all blocks of {@code values[0 .. length)}, in place. */
    void allreduceMax(double[] values, int length);

    /** Element-wise minimum over all blocks of {@code values[0 .. length)}, in place. */
    void allreduceMin(double[] values, int length);

    /** Element-wise sum over all blocks of {@code values[0 .. length)}, in place. */
    void allreduceSum(long[] values, int length);

    /** Copies {@code values[0 .. length)} of block {@code root} to every block. */
    void broadcast(double[] values, int length, int root);

    void barrier();
}
