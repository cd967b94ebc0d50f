package io.meridian.mds;

import java.nio.file.Path;

/**
 * The seam between DA-MDS's schedule ({@link DaMds}: annealing, stopping rules, CG, fixed points) and the distances
 * one process holds: full rows of a square matrix ({@link FullRowPasses}) or rows of the lower triangle
 * ({@link TrianglePasses}). Each pass leaves this process's share of an N x dim result in a "partial" vector, and
 * {@link #combine} turns the shares of all processes into the whole result in every process: the full-row passes
 * hold whole rows of it (combined by gathering them), the triangle passes a summand of every row (each pair is
 * visited once and credited to both of its rows; combined by summing). B(X)X and V p are linear in the shares, so
 * DaMds may add and scale partial vectors before combining them.
 */
interface DistancePasses {
    /** How many values of a partial vector this process fills (row-major, dim per row). */
    int partialLength();

    /** A partial vector, with room after the values for {@link #combineWithSum}'s sums. */
    double[] newPartial();

    /** The file to name when the distances are refused, if there is one. */
    Path origin();

    /**
     * Adds this process's share of the statistics of the square matrix (both triangles and the diagonal): stats[0]
     * count, [1] sum, [2] sum of squares, [3] zero entries; max[0] and min[0] the largest and smallest positive values.
     */
    void statistics(double[] stats, double[] max, double[] min);

    /** Joins in {@code parent} the pairs of this process's share; counts[0] += pairs joined, counts[1] += missing. */
    void link(int[] parent, double[] counts);

    /** Readies the CG's matrix-vector products (once, before the first; only with weights or missing distances). */
    void prepareMatvec(double sammonFloor);

    /**
     * This process's share of B(X)X into {@code partial}, and of the stress numerator (diagonal included, as the
     * original's) added to {@code sums[0]}.
     */
    void smacofPass(double[] xs, double[] target, double shift, double floor, double sammonFloor, boolean unit,
                    double[] partial, double[] sums);

    /** This process's share of V p into {@code partial}; {@code regularisation} is added to V's diagonal. */
    void matvec(double[] ps, double sammonFloor, double regularisation, double[] partial);

    /** Adds this process's share of {@link RowKernel#finalStress}'s four sums. */
    void finalStress(double[] xs, double minPositive, double sammonFloor, boolean unit, double[] sums);

    /** The whole N x dim vector, row-major, from every process's {@code partial} (which it may overwrite). */
    void combine(double[] partial, double[] whole);

    /** {@link #combine} and the sum over the processes of {@code sums[0 .. count)} in one call. Collective. */
    void combineWithSum(double[] partial, double[] whole, double[] sums, int count);
}
