package io.meridian.pwc;

/**
 * What one split test found: the cluster with the smallest eigenvalue of its second-derivative matrix (none: -1), that
 * eigenvalue and the cluster's dominant one, whether it is negative enough to split, and the state the annealing goes
 * on from ({@code PwcEngine}'s {@code current}, the solution before the test, unless the settings keep the state dapwc's
 * duplicated-cluster test leaves). The split direction is the engine's {@code splitVector}.
 *
 * <p>One instance per engine, filled by each test ({@code PwcEngine.runSplitTest}) and valid until the next: a run makes
 * dozens of tests and allocates nothing after its start ({@code ./meridian bench pwc} reports 0 bytes per EM iteration).
 */
final class SplitDecision {
    private int cluster = -1;
    private double smallestEigenvalue;
    private double dominantEigenvalue;
    private boolean split;
    private ClusterState from;

    SplitDecision set(int cluster, double smallestEigenvalue, double dominantEigenvalue, boolean split,
                      ClusterState from) {
        this.cluster = cluster;
        this.smallestEigenvalue = smallestEigenvalue;
        this.dominantEigenvalue = dominantEigenvalue;
        this.split = split;
        this.from = from;
        return this;
    }

    /** The cluster with the smallest eigenvalue among those tested with a converged power method; -1 if none. */
    int cluster() {
        return cluster;
    }

    double smallestEigenvalue() {
        return smallestEigenvalue;
    }

    double dominantEigenvalue() {
        return dominantEigenvalue;
    }

    /** Whether {@link #cluster()} splits: its smallest eigenvalue is at most minEigenTest times its dominant one. */
    boolean split() {
        return split;
    }

    /** The state to split (or, without a split, to cool on) from. */
    ClusterState from() {
        return from;
    }
}
