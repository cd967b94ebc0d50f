package io.meridian.pwc;

import java.util.Locale;
import java.util.Objects;

/**
 * The annealing settings of DA-PWC, named after what they do; the defaults are those of SPIDAL's dapwc
 * ({@code config.properties} and the constants of its {@code Program}), shown in brackets by their original names.
 */
public final class PwcSettings {
    /** Most clusters to find [MaxNcent]. */
    public final int maxClusters;
    /** EM at one temperature has converged when, for every cluster, mean_a |change of eps_a(k)| is at most this [EpsiMaxChange]. */
    public final double epsilonChange;
    /** Cooling factor until the first split [InitialCoolingFactor]. */
    public final double initialCooling;
    /** Cooling factor after the first split [FineCoolingFactor]. */
    public final double fineCooling;
    /** Cooling factor of the final freezing phase [ConvergingCoolingFactor]. */
    public final double freezeCooling;
    /** Converged temperatures between two split tests once there are two or more clusters [WaitIterations]. */
    public final int splitWait;
    /** A cluster is frozen when sum_a M_a(k)(1 - M_a(k)) / C_k is at most this [FreezingLimit]. */
    public final double freezingLimit;
    /** Clusters with fewer points than this are removed at the end [minimumclustercount]. */
    public final int minClusterSize;
    /** Clusters with C_k at most this are not tested for a split [TooSmallToSplit]. */
    public final double tooSmallToSplit;
    /** Split when the smallest eigenvalue is at most this times the largest one [MinEigTest]. */
    public final double minEigenTest;
    /** Most power-method iterations per eigenvalue [PowerIterationLimit]. */
    public final int powerIterations;
    /** Relative eigenvalue change that ends the power method [EigenValueChange]. */
    public final double eigenvalueChange;
    /** Relative eigenvector residual that ends the power method [EigenVectorChange]. */
    public final double eigenvectorChange;
    /** Most EM iterations at one temperature [ConvergenceLoopLimit]. */
    public final int temperatureIterationLimit;
    /** Most temperatures in the final freezing phase [IterationAtEnd]. */
    public final int freezeTemperatureLimit;
    /** Most EM iterations with a duplicated cluster in a split test [EMlimit_Duplication]. */
    public final int duplicateEmLimit;
    /**
     * Not in dapwc: once there are two or more clusters, this many split tests in a row without a split end the
     * splitting (the run goes on to the freezing phase), so K stops at the natural number of clusters below
     * {@link #maxClusters}. 0 switches it off: dapwc goes on until maxClusters, splitting compact clusters at low T.
     */
    public final int failedSplitTestsToStop;
    /** How the split test estimates a cluster duplicated in two, once there are two or more clusters. */
    public enum SplitTest {
        /** M halved, as dapwc does for one cluster (its methodology 2): no EM run, the default. */
        HALVED,
        /**
         * Each cluster duplicated for real (weight 2) and EM re-converged before its power method, as dapwc does for two
         * or more (its methodology 3); over-splits compact clusters.
         */
        DUPLICATED
    }

    /** Which state the annealing goes on from after a {@link SplitTest#DUPLICATED} split test. */
    public enum SplitStart {
        /** The solution the test started from (Meridian): a split perturbs it, a test without a split leaves it as it was. */
        BEFORE_TEST,
        /**
         * The state dapwc's test leaves: eps of the duplicated (weight 2) EM run of the cluster with the smallest
         * eigenvalue (of the solution before the test if none qualified, or if the last cluster was too small to test),
         * and M, B, C, A and the freezing measures of the last cluster's run. A split perturbs that eps and scales the
         * step with that M and C; after a test without a split the annealing cools on from that eps.
         */
        AFTER_TEST
    }

    /** How the split test estimates a duplicated cluster once there are two or more [Eigenvalue_Methodology 2 or 3]. */
    public final SplitTest splitTest;
    /** Where the annealing goes on from after a duplicated-cluster split test (dapwc: {@link SplitStart#AFTER_TEST}). */
    public final SplitStart splitStart;
    /**
     * What the split test does with a cluster whose dominant eigenvalue (power method, pass 0) is negative: the
     * second-derivative matrix is then more negative than positive anywhere, and its most negative eigenvalue is that
     * dominant one, with pass 0's vector as the direction.
     */
    public enum NegativeDominant {
        /** Left out of the test, as dapwc does (its pass 0 only converges on a positive eigenvalue). */
        SKIP,
        /** Split only when no cluster with a positive dominant eigenvalue passes the split test: the default. */
        SPLIT_LAST,
        /** Ranked with the others by that eigenvalue, which (-0.5 to -0.9 against -0.01 to -0.4) usually wins. */
        SPLIT_FIRST
    }

    /** What the split test does with a cluster whose dominant eigenvalue is negative (dapwc: {@link NegativeDominant#SKIP}). */
    public final NegativeDominant negativeDominant;
    /**
     * Not in dapwc: clusters below {@link #minClusterSize} at the end are dropped from the running solution when there is
     * no best solution with the same number of clusters to restart from. false = dapwc: they are then kept.
     */
    public final boolean dropSmallClustersWithoutBest;
    /** Scale of the perturbation along the eigenvector at a split [SplitPerturbationFactor]. */
    public final double splitPerturbation;
    /**
     * The original is deterministic; its power method starts from 1 + 0.5 i / N. A seed replaces that start vector by
     * 1 + 0.5 u_i with u_i a hash of (seed, i), the same for any partition into blocks. Null: the original's vector.
     */
    public final Long seed;

    private PwcSettings(Builder b) {
        this.maxClusters = b.maxClusters;
        this.epsilonChange = b.epsilonChange;
        this.initialCooling = b.initialCooling;
        this.fineCooling = b.fineCooling;
        this.freezeCooling = b.freezeCooling;
        this.splitWait = b.splitWait;
        this.freezingLimit = b.freezingLimit;
        this.minClusterSize = b.minClusterSize;
        this.tooSmallToSplit = b.tooSmallToSplit;
        this.minEigenTest = b.minEigenTest;
        this.powerIterations = b.powerIterations;
        this.eigenvalueChange = b.eigenvalueChange;
        this.eigenvectorChange = b.eigenvectorChange;
        this.temperatureIterationLimit = b.temperatureIterationLimit;
        this.freezeTemperatureLimit = b.freezeTemperatureLimit;
        this.duplicateEmLimit = b.duplicateEmLimit;
        this.splitPerturbation = b.splitPerturbation;
        this.failedSplitTestsToStop = b.failedSplitTestsToStop;
        this.splitTest = b.splitTest;
        this.splitStart = b.splitStart;
        this.negativeDominant = b.negativeDominant;
        this.dropSmallClustersWithoutBest = b.dropSmallClustersWithoutBest;
        this.seed = b.seed;
    }

    public static Builder builder() {
        return new Builder();
    }

    public static PwcSettings defaults() {
        return builder().build();
    }

    /** A builder holding these settings, to change some of them. */
    public Builder toBuilder() {
        Builder b = new Builder();
        b.maxClusters = maxClusters;
        b.epsilonChange = epsilonChange;
        b.initialCooling = initialCooling;
        b.fineCooling = fineCooling;
        b.freezeCooling = freezeCooling;
        b.splitWait = splitWait;
        b.freezingLimit = freezingLimit;
        b.minClusterSize = minClusterSize;
        b.tooSmallToSplit = tooSmallToSplit;
        b.minEigenTest = minEigenTest;
        b.powerIterations = powerIterations;
        b.eigenvalueChange = eigenvalueChange;
        b.eigenvectorChange = eigenvectorChange;
        b.temperatureIterationLimit = temperatureIterationLimit;
        b.freezeTemperatureLimit = freezeTemperatureLimit;
        b.duplicateEmLimit = duplicateEmLimit;
        b.splitPerturbation = splitPerturbation;
        b.failedSplitTestsToStop = failedSplitTestsToStop;
        b.splitTest = splitTest;
        b.splitStart = splitStart;
        b.negativeDominant = negativeDominant;
        b.dropSmallClustersWithoutBest = dropSmallClustersWithoutBest;
        b.seed = seed;
        return b;
    }

    /** Settings in the order and names of the CLI options, for logs and summaries. */
    @Override
    public String toString() {
        return "max-clusters=" + maxClusters + " epsilon-change=" + epsilonChange + " initial-cooling=" + initialCooling
                + " fine-cooling=" + fineCooling + " freeze-cooling=" + freezeCooling + " split-wait=" + splitWait
                + " freezing-limit=" + freezingLimit + " min-cluster-size=" + minClusterSize + " too-small-to-split="
                + tooSmallToSplit + " min-eigen-test=" + minEigenTest + " power-iterations=" + powerIterations
                + " split-test=" + splitTest.name().toLowerCase(Locale.ROOT)
                + " split-start=" + splitStart.name().toLowerCase(Locale.ROOT).replace('_', '-')
                + " negative-dominant=" + negativeDominant.name().toLowerCase(Locale.ROOT).replace('_', '-')
                + " drop-small-clusters-without-best=" + dropSmallClustersWithoutBest
                + " failed-split-tests-to-stop=" + failedSplitTestsToStop + " seed=" + seed;
    }

    public static final class Builder {
        private int maxClusters = 8;
        private double epsilonChange = 0.001;
        private double initialCooling = 0.9;
        private double fineCooling = 0.99;
        private double freezeCooling = 0.98;
        private int splitWait = 10;
        private double freezingLimit = 0.002;
        private int minClusterSize = 25;
        private double tooSmallToSplit = 5;
        private double minEigenTest = -0.01;
        private int powerIterations = 200;
        private double eigenvalueChange = 0.001;
        private double eigenvectorChange = 0.001;
        private int temperatureIterationLimit = 2000;
        private int freezeTemperatureLimit = 2000;
        private int duplicateEmLimit = 200;
        private double splitPerturbation = 1.0;
        private int failedSplitTestsToStop = 3;
        private SplitTest splitTest = SplitTest.HALVED;
        private SplitStart splitStart = SplitStart.BEFORE_TEST;
        private NegativeDominant negativeDominant = NegativeDominant.SPLIT_LAST;
        private boolean dropSmallClustersWithoutBest = true;
        private Long seed;

        private Builder() {
        }

        /** A factor the temperature is multiplied by each step: at 1 or above it never falls and the run never ends. */
        private static double coolingFactor(String name, double v) {
            if (!(v > 0 && v < 1)) {
                throw new IllegalArgumentException(name + " must be > 0 and < 1, got " + v);
            }
            return v;
        }

        public Builder maxClusters(int v) {
            if (v < 1) {
                throw new IllegalArgumentException("maxClusters must be at least 1, got " + v);
            }
            maxClusters = v;
            return this;
        }

        public Builder epsilonChange(double v) {
            epsilonChange = v;
            return this;
        }

        public Builder initialCooling(double v) {
            initialCooling = coolingFactor("initialCooling", v);
            return this;
        }

        public Builder fineCooling(double v) {
            fineCooling = coolingFactor("fineCooling", v);
            return this;
        }

        public Builder freezeCooling(double v) {
            freezeCooling = coolingFactor("freezeCooling", v);
            return this;
        }

        public Builder splitWait(int v) {
            splitWait = v;
            return this;
        }

        public Builder freezingLimit(double v) {
            freezingLimit = v;
            return this;
        }

        public Builder minClusterSize(int v) {
            minClusterSize = v;
            return this;
        }

        public Builder tooSmallToSplit(double v) {
            tooSmallToSplit = v;
            return this;
        }

        public Builder minEigenTest(double v) {
            minEigenTest = v;
            return this;
        }

        public Builder powerIterations(int v) {
            powerIterations = v;
            return this;
        }

        public Builder eigenvalueChange(double v) {
            eigenvalueChange = v;
            return this;
        }

        public Builder eigenvectorChange(double v) {
            eigenvectorChange = v;
            return this;
        }

        public Builder temperatureIterationLimit(int v) {
            temperatureIterationLimit = v;
            return this;
        }

        public Builder freezeTemperatureLimit(int v) {
            freezeTemperatureLimit = v;
            return this;
        }

        public Builder duplicateEmLimit(int v) {
            duplicateEmLimit = v;
            return this;
        }

        public Builder splitPerturbation(double v) {
            splitPerturbation = v;
            return this;
        }

        public Builder failedSplitTestsToStop(int v) {
            failedSplitTestsToStop = v;
            return this;
        }

        public Builder splitTest(SplitTest v) {
            splitTest = Objects.requireNonNull(v, "splitTest");
            return this;
        }

        public Builder splitStart(SplitStart v) {
            splitStart = Objects.requireNonNull(v, "splitStart");
            return this;
        }

        public Builder negativeDominant(NegativeDominant v) {
            negativeDominant = Objects.requireNonNull(v, "negativeDominant");
            return this;
        }

        public Builder dropSmallClustersWithoutBest(boolean v) {
            dropSmallClustersWithoutBest = v;
            return this;
        }

        /**
         * Everything as SPIDAL's dapwc does it, so that it gives dapwc's labels: the duplicated-cluster split test and
         * the state it leaves, splitting until {@link #maxClusters}, clusters with a negative dominant eigenvalue left
         * out of the test, small clusters removed only by restarting from a best solution with as many clusters.
         */
        public Builder dapwc() {
            return splitTest(SplitTest.DUPLICATED).splitStart(SplitStart.AFTER_TEST).failedSplitTestsToStop(0)
                    .negativeDominant(NegativeDominant.SKIP).dropSmallClustersWithoutBest(false);
        }

        public Builder seed(Long v) {
            seed = v;
            return this;
        }

        public PwcSettings build() {
            return new PwcSettings(this);
        }
    }
}
