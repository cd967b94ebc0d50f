package io.meridian.pwc;

/**
 * The outcome of one DA-PWC run, the same in every block: each point's cluster (from 0, numbered in the order the
 * engine holds them, empty clusters dropped), each cluster's size and center, the run's figures, and the frozen final
 * state (M, C, A, T) that {@code io.meridian.live.FrozenClusters} clusters new points with.
 */
public final class PwcResult {
    private final int[] labels;
    private final int[] sizes;
    private final int[] centers;
    private final double[] centerMeanDistances;
    private final double finalTemperature;
    private final double initialTemperature;
    private final int emIterations;
    private final int duplicateEmIterations;
    private final int powerIterations;
    private final int splits;
    private final int removedClusters;
    private final double hamiltonian;
    private final double seconds;
    private final double[] memberships;
    private final double[] softSizes;
    private final double[] epsilonOffsets;

    PwcResult(int[] labels, int[] sizes, int[] centers, double[] centerMeanDistances, double finalTemperature,
              double initialTemperature, int emIterations, int duplicateEmIterations, int powerIterations, int splits,
              int removedClusters, double hamiltonian, double seconds, double[] memberships, double[] softSizes,
              double[] epsilonOffsets) {
        this.labels = labels;
        this.sizes = sizes;
        this.centers = centers;
        this.centerMeanDistances = centerMeanDistances;
        this.finalTemperature = finalTemperature;
        this.initialTemperature = initialTemperature;
        this.emIterations = emIterations;
        this.duplicateEmIterations = duplicateEmIterations;
        this.powerIterations = powerIterations;
        this.splits = splits;
        this.removedClusters = removedClusters;
        this.hamiltonian = hamiltonian;
        this.seconds = seconds;
        this.memberships = memberships;
        this.softSizes = softSizes;
        this.epsilonOffsets = epsilonOffsets;
    }

    public int clusters() {
        return sizes.length;
    }

    /** Cluster of every point (global index), from 0. */
    public int[] labels() {
        return labels.clone();
    }

    public int label(int point) {
        return labels[point];
    }

    public int[] sizes() {
        return sizes.clone();
    }

    /** For each cluster, the member with the smallest mean distance to the cluster's members. */
    public int[] centers() {
        return centers.clone();
    }

    /** That smallest mean distance, per cluster. */
    public double[] centerMeanDistances() {
        return centerMeanDistances.clone();
    }

    public double finalTemperature() {
        return finalTemperature;
    }

    public double initialTemperature() {
        return initialTemperature;
    }

    /** EM iterations of the annealing (the count the original reports), not those of split tests. */
    public int emIterations() {
        return emIterations;
    }

    /** EM iterations run inside split tests with a duplicated cluster. */
    public int duplicateEmIterations() {
        return duplicateEmIterations;
    }

    public int powerIterations() {
        return powerIterations;
    }

    public int splits() {
        return splits;
    }

    public int removedClusters() {
        return removedClusters;
    }

    /** The final pairwise Hamiltonian sum_k sum_ab d(a,b) M_a(k) M_b(k) / C_k (= -2 sum_k A_k C_k). */
    public double hamiltonian() {
        return hamiltonian;
    }

    /** Wall time of {@link PwcEngine#run()}, statistics pass and output gathering included. */
    public double seconds() {
        return seconds;
    }

    /**
     * The final membership M_a(k) of every point a in every cluster k, row-major N x {@link #clusters()} (columns of
     * clusters with no point dropped, as in the labels). The engine's last E-step made M, {@link #softSizes()} and
     * {@link #epsilonOffsets()} at {@link #finalTemperature()} together.
     */
    public double[] memberships() {
        return memberships.clone();
    }

    /** C_k = sum_a M_a(k), per cluster. */
    public double[] softSizes() {
        return softSizes.clone();
    }

    /** A_k = -sum_ab d(a,b) M_a(k) M_b(k) / (2 C_k^2), per cluster: eps_a(k) = sum_b d(a,b) M_b(k) / C_k + A_k. */
    public double[] epsilonOffsets() {
        return epsilonOffsets.clone();
    }
}
