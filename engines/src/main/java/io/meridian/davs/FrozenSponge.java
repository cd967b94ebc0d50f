package io.meridian.davs;

/**
 * The final state of a DA-VS run, frozen: whether a point that came later belongs to the sponge. A point x is in the
 * sponge when the sponge's responsibility is the largest, the rule {@link DavsEngine} labels its own points by:
 * P_0 exp(-F^2 / 2T) at least every cluster's P_k exp(-d^2(x, k) / 2T) (d^2 scaled by the cluster's sigmas, P at
 * least the engine's floor, the sponge winning a tie), T the run's final temperature and F its sponge factor. In
 * logarithms, with nothing to normalize: O(K D) a point. Immutable, so any thread may ask; asking allocates nothing.
 */
public final class FrozenSponge {
    private final int dimension;
    private final int clusters;
    private final double[] centersRowMajor;
    /** 1 / (2T sigma_k,i^2), row-major K x D: d^2 / 2T in one multiply per coordinate. */
    private final double[] halfInverseVariancesOverT;
    /** -ln P_k, floored as the engine's E step floors P. */
    private final double[] negativeLogWeights;
    /** F^2 / 2T - ln P_0: a cluster whose d^2 / 2T - ln P_k is below this takes the point. */
    private final double spongeScore;

    private FrozenSponge(int dimension, double[] centersRowMajor, double[] sigmasRowMajor, double[] weights,
                         double spongeWeight, double spongeFactor, double temperature) {
        this.dimension = dimension;
        this.clusters = weights.length;
        this.centersRowMajor = centersRowMajor.clone();
        this.halfInverseVariancesOverT = new double[clusters * dimension];
        for (int q = 0; q < halfInverseVariancesOverT.length; q++) {
            halfInverseVariancesOverT[q] = 1.0 / (2 * temperature * sigmasRowMajor[q] * sigmasRowMajor[q]);
        }
        this.negativeLogWeights = new double[clusters];
        for (int k = 0; k < clusters; k++) {
            negativeLogWeights[k] = -Math.log(Math.max(DavsEngine.MIN_P, weights[k]));
        }
        this.spongeScore = spongeFactor * spongeFactor / (2 * temperature)
                - Math.log(Math.max(DavsEngine.MIN_P, spongeWeight));
    }

    /**
     * The state {@code result} ended in, with the sponge factor of the {@code settings} it ran with.
     *
     * @throws IllegalArgumentException when the run had no sponge (nothing would ever be in it)
     */
    public static FrozenSponge of(DavsResult result, DavsSettings settings) {
        if (!settings.sponge() || !(result.spongeWeight() > 0)) {
            throw new IllegalArgumentException("a frozen sponge needs a run with a sponge (sponge factor "
                    + settings.spongeFactor() + ", sponge weight " + result.spongeWeight() + ")");
        }
        return new FrozenSponge(result.dimension(), result.centersRowMajor(), result.sigmasRowMajor(),
                result.weights(), result.spongeWeight(), settings.spongeFactor(), result.finalTemperature());
    }

    public int dimension() {
        return dimension;
    }

    public int clusters() {
        return clusters;
    }

    /** Whether the point at {@code x[offset .. offset + D - 1]} belongs to the sponge. */
    public boolean inSponge(double[] x, int offset) {
        for (int k = 0, o = 0; k < clusters; k++, o += dimension) {
            double score = negativeLogWeights[k];
            for (int i = 0; i < dimension; i++) {
                double diff = x[offset + i] - centersRowMajor[o + i];
                score += diff * diff * halfInverseVariancesOverT[o + i];
            }
            if (score < spongeScore) {
                return false;
            }
        }
        return true;
    }
}
