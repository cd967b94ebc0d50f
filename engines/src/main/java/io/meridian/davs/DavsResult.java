package io.meridian.davs;

/**
 * The outcome of one DA-VS run. Labels: {@link #SPONGE} (0) is the sponge, 1..K the clusters, in the order of the
 * other arrays (cluster c is row c - 1 of {@code centersRowMajor}, {@code sigmasRowMajor}, {@code widthsRowMajor} and
 * entry c - 1 of {@code weights}, {@code counts}, {@code sizes}); each point has the label of its largest M_a(k).
 *
 * @param dimension D, the vectors' dimension
 * @param labels per point: 0 = sponge, 1..K = cluster
 * @param centersRowMajor K x D cluster centres Y_k
 * @param sigmasRowMajor K x D the width model's sigma_k,i at the centre (what distances are scaled by)
 * @param widthsRowMajor K x D measured widths: sqrt(sum_a M_a(k) (x_a,i - y_k,i)^2 / C_k)
 * @param weights K cluster weights P_k
 * @param counts K soft sizes C_k = sum_a M_a(k)
 * @param sizes K numbers of points labelled with the cluster
 * @param spongeWeight P of the sponge (0 without one)
 * @param spongeSize points labelled 0
 * @param initialTemperature T_0 = 1.5 x mean scaled squared distance to the centroid
 * @param finalTemperature the temperature of the last EM iterations
 * @param temperatures converged temperature steps
 * @param emIterations EM iterations in all
 * @param splits clusters split
 * @param removed clusters removed as too small
 * @param closeRemoved clusters removed for being closer to a larger one than the closeness distance
 * @param seconds wall time of the run
 */
public record DavsResult(int dimension, int[] labels, double[] centersRowMajor, double[] sigmasRowMajor,
                         double[] widthsRowMajor, double[] weights, double[] counts, int[] sizes, double spongeWeight,
                         int spongeSize, double initialTemperature, double finalTemperature, int temperatures,
                         int emIterations, int splits, int removed, int closeRemoved, double seconds) {
    /** The sponge's label. */
    public static final int SPONGE = 0;

    /** K, the clusters besides the sponge. */
    public int clusters() {
        return weights.length;
    }

    public int points() {
        return labels.length;
    }
}
