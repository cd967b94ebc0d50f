package io.meridian.davs;

import java.util.Arrays;
import java.util.Locale;

/**
 * The settings of DA-VS, validated when built: a bad value is refused with the {@code meridian davs} option that sets
 * it and why. Defaults are those of the original ({@code DSC-SPIDAL/davs}, its {@code Program} constants and
 * {@code DAVectorSpongeSection} defaults), named in brackets, except where a field says otherwise.
 *
 * @param sigmaMethod how distances are scaled per dimension [SigmaMethod; the original's default is 0, ours 2, the
 *     LC-MS model]
 * @param sigmaParameters p_i of {@link SigmaMethod}, one per dimension (missing ones are 1) [SigmaVectorParameters_i,
 *     default 0.000598,2.35]
 * @param finalSigma0 {@link SigmaMethod#ANNEALED_PROPORTIONAL}: p_0 at and below {@link #finalSigmaTemperature}
 *     [FinalTargetSigma0]
 * @param finalSigmaTemperature the temperature where p_0 reaches {@link #finalSigma0} [FinalTargetTemperature, 3.0]
 * @param spongeFactor the sponge's fixed scaled distance: a point is in the sponge with weight exp(-factor^2 / 2T); 0
 *     switches the sponge off [SpongeFactor1, 3.0; UseSponge; ours 4: at T 1 with the fixed sponge weight a point
 *     goes to the sponge beyond sqrt(F^2 + 2 ln(P_k / P_sponge)) widths, 3.7 at 3 and 4.5 at 4 for 20 peaks, and at
 *     3.7 widths 2-7 of 2700 Gaussian peak points fell in the sponge on every data set measured (docs/davs.md)]
 * @param spongeTemperature the sponge is added when the temperature first falls to this; negative: from the start
 *     [SpongeTemperature1, -1]
 * @param spongeWeight with {@link #fixedSpongeWeight}: P(sponge) = this / number of clusters (sponge included)
 *     [SpongePWeight, 0.1]
 * @param fixedSpongeWeight true: P(sponge) fixed as above and the others' P_k scaled to fill 1 [SpongePoption 1];
 *     false: P(sponge) = C(sponge) / N like any cluster [SpongePoption 0]
 * @param maxClusters most clusters besides the sponge [maxNcentCreated, 200]
 * @param minimumTemperature positive: the temperature where annealing stops; negative: the initial temperature divided
 *     by its absolute value [Tminimum, -1000; ours 1, since with LC-MS scaling T0 / 1000 stops far above the peaks'
 *     own scale and above every clean-up temperature]
 * @param coolingFactor T is multiplied by this after each converged temperature [InitialCoolingFactor, 0.9]
 * @param emIterationLimit most EM iterations at one temperature [ConvergenceLoopLimit, 20]
 * @param finalIterationLimit most EM iterations at the final temperature [Iterationatend, 2000]
 * @param membershipChange EM at a temperature has converged when mean_a sum_k |change of M_a(k)| is at most this
 *     [Malpha_MaxChange, 0.005]
 * @param finalMembershipChange the same at the final temperature [Malpha_MaxChange1, 0.0005]
 * @param splitWait converged temperatures between two split tests [Waititerations, 1]
 * @param maxSplitsAtOnce most clusters split at one test [MaxNumberSplitClusters, 3]
 * @param tooSmallToSplit clusters with C_k at most this are not split [ToosmalltoSplit, 4]
 * @param minWidthSquaredToSplit clusters whose mean scaled squared width is at most this are not split
 *     [MinimumScaledWidthsquaredtosplit, 6]
 * @param minCount clean-up removes clusters with C_k below this, without a sponge [MinimumCountforCluster_C_k, 0.5]
 * @param minCountWithSponge the same with a sponge [MinimumCountforCluster_C_kwithSponge, 1.5]
 * @param minPoints clean-up removes clusters with fewer points assigned [MinimumCountforCluster_Points, 2]
 * @param closenessTemperature below this, of two clusters closer than {@link #closenessDistanceSquared} the smaller
 *     is removed
 *     [TemperatureforClosenessTest, 6]
 * @param closenessDistanceSquared scaled squared distance between two centres below which one goes
 *     [ScaledSquaredDistanceatClosenessTest, 1]
 * @param cleanUpTemperatures the full clean-up runs when T first falls to each of these, in falling order
 *     [MagicTemperatures, 4, 3.5, 2.5, 2, 1.75]
 * @param expCut terms with (d^2 - min d^2) / 2T above this are left out of a point's sum [ExpArgumentCut1, 20]
 * @param originalSchedule true: anneal with the original's control flow ({@code ControlVectorSpongeDA}, see
 *     {@link DavsEngine}): clean-up at every converged temperature, split tests every other one with the split
 *     priorities, the fine cooling factor after the first split, the end when two split tests find nothing to test,
 *     then cooling on until the freezing measures are small; false: Meridian's simpler schedule (docs/davs.md)
 * @param fineCoolingFactor {@link #originalSchedule}: T's factor once a cluster has split [FineCoolingFactor, 0.99]
 * @param freezingLimit {@link #originalSchedule}: the run ends when every cluster's freezing measure
 *     sum_a M_a(k)(1 - M_a(k)) / C_k is at most this [FreezingLimit, 0.002]
 * @param splitWaitAfterRemoval {@link #originalSchedule}: converged temperatures without a split test after clusters
 *     were removed [Waititerations_Converge, 4]
 */
public record DavsSettings(SigmaMethod sigmaMethod, double[] sigmaParameters, double finalSigma0,
                           double finalSigmaTemperature, double spongeFactor, double spongeTemperature,
                           double spongeWeight, boolean fixedSpongeWeight, int maxClusters, double minimumTemperature,
                           double coolingFactor, int emIterationLimit, int finalIterationLimit, double membershipChange,
                           double finalMembershipChange, int splitWait, int maxSplitsAtOnce, double tooSmallToSplit,
                           double minWidthSquaredToSplit, double minCount, double minCountWithSponge, int minPoints,
                           double closenessTemperature, double closenessDistanceSquared, double[] cleanUpTemperatures,
                           double expCut, boolean originalSchedule, double fineCoolingFactor, double freezingLimit,
                           int splitWaitAfterRemoval) {

    /** The original's default widths: m/z 0.000598 * m/z, retention time 2.35. */
    public static final double[] DEFAULT_SIGMA_PARAMETERS = {0.000598, 2.35};
    /** Meridian's sponge distance; the original's {@code SpongeFactor1} is {@link #ORIGINAL_SPONGE_FACTOR}. */
    public static final double DEFAULT_SPONGE_FACTOR = 4.0;
    public static final double ORIGINAL_SPONGE_FACTOR = 3.0;
    public static final double[] DEFAULT_CLEAN_UP_TEMPERATURES = {4.0, 3.5, 2.5, 2.0, 1.75};

    public DavsSettings {
        if (sigmaMethod == null) {
            throw new IllegalArgumentException("--sigma-method must be given (0-3)");
        }
        sigmaParameters = sigmaParameters.clone();
        cleanUpTemperatures = cleanUpTemperatures.clone();
        if (sigmaParameters.length == 0) {
            throw new IllegalArgumentException("--sigma needs at least one width");
        }
        for (double p : sigmaParameters) {
            positive("--sigma", p, "a width per dimension");
        }
        if (sigmaMethod == SigmaMethod.ANNEALED_PROPORTIONAL) {
            positive("--final-sigma0", finalSigma0, "the m/z width factor reached at --final-sigma-temperature");
            if (finalSigma0 > sigmaParameters[0]) {
                throw new IllegalArgumentException(String.format(Locale.ROOT, "--final-sigma0 must be at most the"
                        + " first --sigma (%s) with --sigma-method 3, which anneals it down (was %s)",
                        sigmaParameters[0], finalSigma0));
            }
            positive("--final-sigma-temperature", finalSigmaTemperature, "a temperature");
        }
        atLeast("--sponge-factor", spongeFactor, 0, "a scaled distance; 0 = no sponge");
        finite("--sponge-temperature", spongeTemperature);
        if (!(spongeWeight > 0 && spongeWeight < 1)) {
            throw new IllegalArgumentException("--sponge-weight must be in (0, 1), the sponge's share times the number"
                    + " of clusters (was " + spongeWeight + ")");
        }
        if (maxClusters < 1 || maxClusters > 10_000) {
            throw new IllegalArgumentException("--max-clusters must be 1 to 10000 (was " + maxClusters + ")");
        }
        finite("--t-min", minimumTemperature);
        if (minimumTemperature == 0) {
            throw new IllegalArgumentException("--t-min must not be 0: positive is the last temperature, negative"
                    + " divides the first temperature");
        }
        if (!(coolingFactor > 0 && coolingFactor < 1)) {
            throw new IllegalArgumentException("--cooling must be in (0, 1), T's factor per step (was "
                    + coolingFactor + ")");
        }
        if (emIterationLimit < 1) {
            throw new IllegalArgumentException("--em-limit must be at least 1 (was " + emIterationLimit + ")");
        }
        if (finalIterationLimit < 1) {
            throw new IllegalArgumentException("--final-em-limit must be at least 1 (was " + finalIterationLimit
                    + ")");
        }
        positive("--membership-change", membershipChange, "the EM convergence limit");
        positive("--final-membership-change", finalMembershipChange, "the final EM convergence limit");
        if (splitWait < 0) {
            throw new IllegalArgumentException("--split-wait must be at least 0 (was " + splitWait + ")");
        }
        if (maxSplitsAtOnce < 1) {
            throw new IllegalArgumentException("--splits-at-once must be at least 1 (was " + maxSplitsAtOnce + ")");
        }
        atLeast("--too-small-to-split", tooSmallToSplit, 0, "a cluster size C_k");
        atLeast("--min-width-to-split", minWidthSquaredToSplit, 0, "a scaled squared width");
        atLeast("--min-count", minCount, 0, "a cluster size C_k");
        atLeast("--min-count-sponge", minCountWithSponge, 0, "a cluster size C_k");
        if (minPoints < 0) {
            throw new IllegalArgumentException("--min-points must be at least 0 (was " + minPoints + ")");
        }
        atLeast("--closeness-temperature", closenessTemperature, 0, "a temperature");
        atLeast("--closeness-distance", closenessDistanceSquared, 0, "a scaled squared distance");
        for (int i = 0; i < cleanUpTemperatures.length; i++) {
            positive("--clean-up-temperatures", cleanUpTemperatures[i], "temperatures");
            if (i > 0 && cleanUpTemperatures[i] >= cleanUpTemperatures[i - 1]) {
                throw new IllegalArgumentException("--clean-up-temperatures must fall (was "
                        + Arrays.toString(cleanUpTemperatures) + ")");
            }
        }
        positive("--exp-cut", expCut, "a cut on exponent differences");
        if (originalSchedule && sigmaMethod == SigmaMethod.ANNEALED_PROPORTIONAL) {
            throw new IllegalArgumentException("--original does not take --sigma-method 3: the original's annealed"
                    + " width (ChangeClusterSigmas) is not ported");
        }
        if (!(fineCoolingFactor > 0 && fineCoolingFactor < 1)) {
            throw new IllegalArgumentException("the fine cooling factor must be in (0, 1) (was " + fineCoolingFactor
                    + ")");
        }
        positive("the freezing limit", freezingLimit, "a limit on sum_a M(1 - M) / C_k");
        if (splitWaitAfterRemoval < 0) {
            throw new IllegalArgumentException("the split wait after a removal must be at least 0 (was "
                    + splitWaitAfterRemoval + ")");
        }
    }

    /** The original's defaults, with the LC-MS width model ({@link SigmaMethod#PROPORTIONAL}) and T_min = 1. */
    public static DavsSettings defaults() {
        return builder().build();
    }

    public static Builder builder() {
        return new Builder();
    }

    /** The configuration of the reference runs of the original: {@link Builder#original()}. */
    public static DavsSettings original() {
        return builder().original().build();
    }

    @Override
    public double[] sigmaParameters() {
        return sigmaParameters.clone();
    }

    @Override
    public double[] cleanUpTemperatures() {
        return cleanUpTemperatures.clone();
    }

    /** p_i for dimension {@code i}: the given one, or 1 beyond those given. */
    public double sigmaParameter(int i) {
        return i < sigmaParameters.length ? sigmaParameters[i] : 1.0;
    }

    /** Whether there is a sponge at all. */
    public boolean sponge() {
        return spongeFactor > 0;
    }

    private static void finite(String option, double v) {
        if (!Double.isFinite(v)) {
            throw new IllegalArgumentException(option + " must be a finite number (was " + v + ")");
        }
    }

    private static void positive(String option, double v, String what) {
        if (!(v > 0) || !Double.isFinite(v)) {
            throw new IllegalArgumentException(option + " must be > 0, " + what + " (was " + v + ")");
        }
    }

    private static void atLeast(String option, double v, double min, String what) {
        if (!(v >= min) || !Double.isFinite(v)) {
            throw new IllegalArgumentException(option + " must be >= " + min + ", " + what + " (was " + v + ")");
        }
    }

    /** Mutable holder of the settings, each starting at its default; {@link #build} validates. */
    public static final class Builder {
        private SigmaMethod sigmaMethod = SigmaMethod.PROPORTIONAL;
        private double[] sigmaParameters = DEFAULT_SIGMA_PARAMETERS.clone();
        private double finalSigma0 = DEFAULT_SIGMA_PARAMETERS[0];
        private double finalSigmaTemperature = 3.0;
        private double spongeFactor = DEFAULT_SPONGE_FACTOR;
        private double spongeTemperature = -1.0;
        private double spongeWeight = 0.1;
        private boolean fixedSpongeWeight = true;
        private int maxClusters = 200;
        private double minimumTemperature = 1.0;
        private double coolingFactor = 0.9;
        private int emIterationLimit = 20;
        private int finalIterationLimit = 2000;
        private double membershipChange = 0.005;
        private double finalMembershipChange = 0.0005;
        private int splitWait = 1;
        private int maxSplitsAtOnce = 3;
        private double tooSmallToSplit = 4.0;
        private double minWidthSquaredToSplit = 6.0;
        private double minCount = 0.5;
        private double minCountWithSponge = 1.5;
        private int minPoints = 2;
        private double closenessTemperature = 6.0;
        private double closenessDistanceSquared = 1.0;
        private double[] cleanUpTemperatures = DEFAULT_CLEAN_UP_TEMPERATURES.clone();
        private double expCut = 20.0;
        private boolean originalSchedule;
        private double fineCoolingFactor = 0.99;
        private double freezingLimit = 0.002;
        private int splitWaitAfterRemoval = 4;

        private Builder() {
        }

        /**
         * The original's control flow with the configuration of the reference runs
         * (engines/src/test/resources/io/meridian/davs/reference/config.properties): the defaults above, which are the
         * original's {@code Program} constants but for the sponge factor (the original's 3 here), written into that
         * file because the original reads every value from its configuration section, whose own defaults differ; and
         * the sponge added when T first falls below 10
         * ({@code UseSponge = false}, {@code SpongeTemperature1 = 10}), since the Java original fails with a sponge
         * from the start (README there). Any setter called afterwards overrides.
         */
        public Builder original() {
            originalSchedule = true;
            spongeFactor = ORIGINAL_SPONGE_FACTOR;
            spongeTemperature = 10.0;
            return this;
        }

        public Builder originalSchedule(boolean v) {
            originalSchedule = v;
            return this;
        }

        public Builder fineCoolingFactor(double v) {
            fineCoolingFactor = v;
            return this;
        }

        public Builder freezingLimit(double v) {
            freezingLimit = v;
            return this;
        }

        public Builder splitWaitAfterRemoval(int v) {
            splitWaitAfterRemoval = v;
            return this;
        }

        public Builder sigmaMethod(SigmaMethod v) {
            sigmaMethod = v;
            return this;
        }

        public Builder sigmaParameters(double... v) {
            sigmaParameters = v.clone();
            return this;
        }

        public Builder finalSigma0(double v) {
            finalSigma0 = v;
            return this;
        }

        public Builder finalSigmaTemperature(double v) {
            finalSigmaTemperature = v;
            return this;
        }

        public Builder spongeFactor(double v) {
            spongeFactor = v;
            return this;
        }

        public Builder spongeTemperature(double v) {
            spongeTemperature = v;
            return this;
        }

        public Builder spongeWeight(double v) {
            spongeWeight = v;
            return this;
        }

        public Builder fixedSpongeWeight(boolean v) {
            fixedSpongeWeight = v;
            return this;
        }

        public Builder maxClusters(int v) {
            maxClusters = v;
            return this;
        }

        public Builder minimumTemperature(double v) {
            minimumTemperature = v;
            return this;
        }

        public Builder coolingFactor(double v) {
            coolingFactor = v;
            return this;
        }

        public Builder emIterationLimit(int v) {
            emIterationLimit = v;
            return this;
        }

        public Builder finalIterationLimit(int v) {
            finalIterationLimit = v;
            return this;
        }

        public Builder membershipChange(double v) {
            membershipChange = v;
            return this;
        }

        public Builder finalMembershipChange(double v) {
            finalMembershipChange = v;
            return this;
        }

        public Builder splitWait(int v) {
            splitWait = v;
            return this;
        }

        public Builder maxSplitsAtOnce(int v) {
            maxSplitsAtOnce = v;
            return this;
        }

        public Builder tooSmallToSplit(double v) {
            tooSmallToSplit = v;
            return this;
        }

        public Builder minWidthSquaredToSplit(double v) {
            minWidthSquaredToSplit = v;
            return this;
        }

        public Builder minCount(double v) {
            minCount = v;
            return this;
        }

        public Builder minCountWithSponge(double v) {
            minCountWithSponge = v;
            return this;
        }

        public Builder minPoints(int v) {
            minPoints = v;
            return this;
        }

        public Builder closenessTemperature(double v) {
            closenessTemperature = v;
            return this;
        }

        public Builder closenessDistanceSquared(double v) {
            closenessDistanceSquared = v;
            return this;
        }

        public Builder cleanUpTemperatures(double... v) {
            cleanUpTemperatures = v.clone();
            return this;
        }

        public Builder expCut(double v) {
            expCut = v;
            return this;
        }

        public DavsSettings build() {
            return new DavsSettings(sigmaMethod, sigmaParameters, finalSigma0, finalSigmaTemperature, spongeFactor,
                    spongeTemperature, spongeWeight, fixedSpongeWeight, maxClusters, minimumTemperature,
                    coolingFactor, emIterationLimit, finalIterationLimit, membershipChange, finalMembershipChange,
                    splitWait, maxSplitsAtOnce, tooSmallToSplit, minWidthSquaredToSplit, minCount,
                    minCountWithSponge, minPoints, closenessTemperature, closenessDistanceSquared,
                    cleanUpTemperatures, expCut, originalSchedule, fineCoolingFactor, freezingLimit,
                    splitWaitAfterRemoval);
        }
    }
}
