package io.meridian.davs;

import java.util.Arrays;

/**
 * DA-VS, deterministic annealing clustering of vectors with a sponge (Fox et al.; the original is SPIDAL's
 * {@code DSC-SPIDAL/davs}, a Java port of the C# {@code DAVectorSponge}), in one process.
 *
 * <p>At temperature T a point a belongs to cluster k with M_a(k) = P_k exp(-d^2(a, k) / 2T) / sum_l (same), d^2 the
 * distance scaled per dimension by the cluster's sigma ({@link SigmaMethod}); the sponge is one more cluster at the
 * fixed scaled distance {@link DavsSettings#spongeFactor}, so a point farther than that from every centre ends in it.
 * The M step sets C_k = sum_a M_a(k), P_k = C_k / N (the sponge's P fixed or free,
 * {@link DavsSettings#fixedSpongeWeight}) and Y_k = sum_a M_a(k) x_a / C_k. The run starts with one cluster at the centroid and T_0 = 1.5 x the mean scaled
 * squared distance to it, converges EM at each temperature and cools by {@link DavsSettings#coolingFactor}; every
 * {@link DavsSettings#splitWait} temperatures the clusters whose second-derivative matrix
 * C_k / 2 I - sum_a (M_a(k) / 2) dx dx^T / T (dx the scaled offset of the point from the centre) has a negative
 * smallest eigenvalue are split along its eigenvector (at most {@link DavsSettings#maxSplitsAtOnce}, most negative first).
 * Clusters too small are removed at the clean-up temperatures; of two close ones the smaller is removed below the
 * closeness temperature.
 *
 * <p>With {@link DavsSettings#originalSchedule} the same steps follow the original's control flow instead
 * ({@code annealAsOriginal}; docs/davs.md, "Reference runs"): removals at every converged temperature, split
 * priorities, the fine cooling factor after the first split, and an end that cools on until the freezing measures
 * are small. On the reference runs it gives the original's labels.
 *
 * <p>Layout: points {@code xRowMajor} N x D; every per-cluster array has one column per cluster slot, slot 0 the
 * sponge and slots 1..k the clusters (so the labels come out as 0 = sponge, 1..K). M is N x slots, row-major. All
 * arrays are sized once, for {@link DavsSettings#maxClusters} + 1 slots: the EM iterations allocate nothing.
 */
public final class DavsEngine {
    /** The original's MinP_k_: a cluster's P in a point's sum is at least this. */
    static final double MIN_P = 1e-7;
    /** The original's CountforCluster_C_ktobezero: a cluster this small keeps its centre where it is. */
    private static final double ZERO_COUNT = 0.001;
    /** The original's PowerIterationLimit. */
    private static final int POWER_ITERATIONS = 200;
    private static final double POWER_CHANGE = 1e-9;
    /** The closeness test runs again once T has fallen this much since it last ran (the original's 0.25). */
    private static final double CLOSENESS_STEP = 0.25;

    private final double[] x;
    private final int n;
    private final int d;
    private final DavsSettings s;
    private final int slots;
    private final double[] y;
    private final double[] invSigma2;
    private final double[] p;
    private final double[] c;
    private final double[] m;
    private final double[] ySum;
    private final double[] scatter;
    private final double[] slopes;
    private final double[] width2;
    private final double[] eigenvector;
    private final double[] eigenScratch;
    private final double[] offsets;
    private final double[] terms;
    private final int[] sizes;
    private final int[] splitSlots;
    private final double[] splitEigenvalues;
    private final int[] splitPriorities;
    /** Per slot: sum_a M_a(k)(1 - M_a(k)), after each E step divided by C_k: the original's freezing measure. */
    private final double[] freezing;
    private final double[] yPrevious;
    /** Per slot: the original's SplitPriority_k_ (original schedule only). */
    private final int[] priority;
    private final boolean[] removals;
    /** The settings' clean-up temperatures, copied once (the accessor clones). */
    private final double[] cleanUps;

    private int k = 1;
    private boolean spongeOn;
    private double temperature;
    private double initialTemperature;
    private double sigma0;
    private int temperatures;
    private int emIterations;
    private int splits;
    private int removed;
    private int closeRemoved;

    private DavsEngine(double[] xRowMajor, int n, int d, DavsSettings s) {
        this.x = xRowMajor;
        this.n = n;
        this.d = d;
        this.s = s;
        this.slots = s.maxClusters() + 1;
        this.y = new double[slots * d];
        this.invSigma2 = new double[slots * d];
        this.p = new double[slots];
        this.c = new double[slots];
        this.m = new double[n * slots];
        this.ySum = new double[slots * d];
        this.scatter = new double[slots * d * d];
        this.slopes = new double[slots * d];
        this.width2 = new double[slots];
        this.eigenvector = new double[slots * d];
        this.eigenScratch = new double[d];
        this.offsets = new double[d];
        this.terms = new double[slots];
        this.sizes = new int[slots];
        this.splitSlots = new int[s.maxSplitsAtOnce()];
        this.splitEigenvalues = new double[s.maxSplitsAtOnce()];
        this.splitPriorities = new int[s.maxSplitsAtOnce()];
        this.freezing = new double[slots];
        this.yPrevious = new double[slots * d];
        this.priority = new int[slots];
        this.removals = new boolean[slots];
        this.cleanUps = s.cleanUpTemperatures();
        this.sigma0 = s.sigmaParameter(0);
    }

    /**
     * Clusters {@code n} points of dimension {@code d}, {@code xRowMajor[a * d + i]} coordinate i of point a.
     *
     * @throws IllegalArgumentException for a wrong array size, a value that is not finite, fewer than 2 points, or a
     *     first coordinate that is not positive under an m/z-proportional {@link SigmaMethod}
     */
    public static DavsResult run(double[] xRowMajor, int n, int d, DavsSettings settings) {
        if (n < 2 || d < 1 || (long) n * d != xRowMajor.length) {
            throw new IllegalArgumentException("need N >= 2 points of D >= 1 values in N * D = " + xRowMajor.length
                    + " values (N " + n + ", D " + d + ")");
        }
        if ((long) n * (settings.maxClusters() + 1) > Integer.MAX_VALUE - 8) {
            throw new IllegalArgumentException("N x (--max-clusters + 1) memberships do not fit one array (N " + n
                    + "): lower --max-clusters");
        }
        boolean proportional = settings.sigmaMethod().code >= 2;
        for (int a = 0; a < n; a++) {
            for (int i = 0; i < d; i++) {
                double v = xRowMajor[a * d + i];
                if (!Double.isFinite(v)) {
                    throw new IllegalArgumentException("point " + a + " has a value that is not finite: " + v);
                }
                if (i == 0 && proportional && !(v > 0)) {
                    throw new IllegalArgumentException("--sigma-method " + settings.sigmaMethod().code + " scales"
                            + " the first dimension by its value (m/z): point " + a + " has " + v + ", not > 0");
                }
            }
        }
        DavsEngine engine = new DavsEngine(xRowMajor, n, d, settings);
        return settings.originalSchedule() ? engine.annealAsOriginal() : engine.anneal();
    }

    private DavsResult anneal() {
        long start = System.nanoTime();
        initialize();
        double tMin = s.minimumTemperature() > 0 ? s.minimumTemperature()
                : initialTemperature / Math.abs(s.minimumTemperature());
        int nextCleanUp = 0;
        int sinceSplit = 0;
        double lastCloseness = -1;
        while (true) {
            converge(s.emIterationLimit(), s.membershipChange());
            temperatures++;
            if (nextCleanUp < cleanUps.length && temperature <= cleanUps[nextCleanUp]) {
                while (nextCleanUp < cleanUps.length && temperature <= cleanUps[nextCleanUp]) {
                    nextCleanUp++;
                }
                removeSmall();
                removeClose();
                sinceSplit = 0;
            } else {
                if (temperature < s.closenessTemperature()
                        && (lastCloseness < 0 || temperature < lastCloseness - CLOSENESS_STEP)) {
                    lastCloseness = temperature;
                    removeClose();
                }
                if (sinceSplit >= s.splitWait() && k < s.maxClusters() && splitTest() > 0) {
                    sinceSplit = 0;
                    continue; // converge the split clusters at this temperature before cooling
                }
            }
            if (temperature <= tMin) {
                break;
            }
            temperature = Math.max(temperature * s.coolingFactor(), tMin);
            sinceSplit++;
            if (!spongeOn && s.sponge() && temperature <= s.spongeTemperature()) {
                addSponge();
            }
            if (s.sigmaMethod() == SigmaMethod.ANNEALED_PROPORTIONAL) {
                annealSigma0();
            }
        }
        converge(s.finalIterationLimit(), s.finalMembershipChange());
        if (removeSmall() + removeClose() > 0) {
            converge(s.finalIterationLimit(), s.finalMembershipChange());
        }
        return result((System.nanoTime() - start) / 1e9);
    }

    // ---- The original's schedule (DavsSettings#originalSchedule) ----
    // Ported from ControlVectorSpongeDA, ReduceTemperature, convergenceTest, shouldweSplit, dothesplit,
    // CheckValidSolution and AddSpongeCluster of DSC-SPIDAL/davs 6c6bf60, for one rank and one thread.

    /**
     * The original switches into its distributed mode when the clusters, sponge included, reach 4 x the number of
     * ranks (ClusterLimitforDistribution); with one rank that changes no arithmetic, but the switch costs two
     * temperature steps without cooling, and before it every converged temperature restarts the membership-change
     * test (its global-mode synchronization), so each temperature takes at least two EM iterations.
     */
    private static final int DISTRIBUTION_CLUSTERS = 4;
    /** The final loop's centre test: mean squared scaled move of a centre at most this times the mean width. */
    private static final double CENTRE_CHANGE = 1e-6;
    /** Consecutive rises of the objective the end phase tolerates (the original's HammyViolations < 5). */
    private static final int RISES_TOLERATED = 5;
    /** A split cluster's children may be split again on the fourth split test after (SplitPriority 2 -> 6). */
    private static final int CHILD_PRIORITY = 2;

    private double cooling;
    private boolean distributed;
    private boolean distributeNextTime;
    private int cleanUpIndex;
    private int splitFailures;
    private int membershipTests = -1;
    private int centreTests = -1;
    private double centreChange;
    private double lastClosenessTest = -1;
    private double objective;
    private double previousObjective;
    private boolean objectiveUnset = true;
    /** The original's CountBetweenSplits: converged temperatures since the last split test. */
    private int sinceSplitTest;

    private DavsResult annealAsOriginal() {
        long start = System.nanoTime();
        initialize();
        priority[1] = -1;
        double tMin = s.minimumTemperature() > 0 ? s.minimumTemperature()
                : initialTemperature / Math.abs(s.minimumTemperature());
        cooling = s.coolingFactor();
        int wait = s.splitWait();
        int stepIterations = 0;
        int afterLastLeg = 0;
        int rises = 0;
        boolean lastLeg = false;
        boolean finalLoop = false;
        while (true) {
            emIterations++;
            stepIterations++;
            if (finalLoop) {
                System.arraycopy(y, 0, yPrevious, 0, (k + 1) * d);
            }
            double change = emStep();
            boolean counted = membershipTests >= 0;
            membershipTests++;
            centreChange = finalLoop && centreTests > -1 ? centreChange() : 0;
            centreTests++;
            // convergenceTest: 0 not converged, 1 converged, 2 converged on the last leg
            if (!counted || membershipTests < 1) {
                continue;
            }
            boolean notConverged = change > (finalLoop ? s.finalMembershipChange() : s.membershipChange())
                    || (finalLoop && centreChange > CENTRE_CHANGE * meanWidth());
            if (notConverged && stepIterations <= s.emIterationLimit()) {
                continue;
            }
            if (!lastLeg && !finalLoop && (k + 1 >= s.maxClusters() || temperature < tMin || splitFailures > 1)) {
                lastLeg = true;
            }
            stepIterations = 0;
            temperatures++;
            if (!distributed) {
                membershipTests = -1;
            }
            setWidths();
            boolean decreasing = updateObjective();
            if (lastLeg || finalLoop) {
                boolean finished = true;
                if (afterLastLeg < s.finalIterationLimit()) {
                    if (afterLastLeg == 0) {
                        rises = 0;
                        cooling = s.coolingFactor();
                    }
                    int tooBig = 0;
                    for (int col = spongeOn ? 0 : 1; col <= k; col++) {
                        if (freezing[col] > s.freezingLimit()) {
                            tooBig++;
                        }
                    }
                    afterLastLeg++;
                    if (decreasing && temperature >= tMin) {
                        afterLastLeg = Math.min(s.finalIterationLimit() - 10, afterLastLeg);
                    }
                    if (decreasing) {
                        rises = 0;
                    } else if (++rises < RISES_TOLERATED) {
                        decreasing = true;
                    }
                    finished = !(tooBig > 0 && decreasing);
                    if (!finished) {
                        reduceTemperatureAsOriginal();
                        continue;
                    }
                }
                if (!checkValidAsOriginal() || !finalLoop) {
                    // a last loop at this temperature with the tighter membership test and the centre test
                    membershipTests = -1;
                    centreTests = -1;
                    lastLeg = true;
                    afterLastLeg = Math.max(1, s.finalIterationLimit() - 100);
                    sinceSplitTest = 0;
                    objectiveUnset = true;
                    rises = 0;
                    finalLoop = true;
                    continue;
                }
                break;
            }
            if (!checkValidAsOriginal()) {
                sinceSplitTest = 0;
                wait = s.splitWaitAfterRemoval();
                objectiveUnset = true;
                continue;
            }
            if (++sinceSplitTest > wait) {
                sinceSplitTest = 0;
                wait = s.splitWait();
            }
            if (sinceSplitTest > 0 && wait > 0 && k + (spongeOn ? 1 : 0) > 1) {
                reduceTemperatureAsOriginal();
                continue;
            }
            if (splitTestAsOriginal() > 0) {
                splitFailures = 0;
                wait = s.splitWait();
                cooling = s.fineCoolingFactor();
                sinceSplitTest = 0;
            } else {
                reduceTemperatureAsOriginal();
            }
        }
        return result((System.nanoTime() - start) / 1e9);
    }

    /**
     * ReduceTemperature: a step that adds the sponge, switches mode or reaches a clean-up temperature does only that;
     * any other multiplies T by the current cooling factor.
     */
    private void reduceTemperatureAsOriginal() {
        if (!spongeOn && s.sponge() && s.spongeTemperature() > 0 && temperature < s.spongeTemperature()
                && k + 1 < s.maxClusters()) {
            // AddSpongeCluster: P(sponge) = weight / clusters before it, the others scaled to fill the rest
            spongeOn = true;
            p[0] = s.spongeWeight() / k;
            for (int col = 1; col <= k; col++) {
                p[col] *= 1 - p[0];
            }
            membershipTests = -1;
            objectiveUnset = true;
            sinceSplitTest = 0;
            return;
        }
        if (!distributed && k + (spongeOn ? 1 : 0) >= DISTRIBUTION_CLUSTERS) {
            if (distributeNextTime) {
                distributed = true;
                objectiveUnset = true;
                sinceSplitTest = 0;
            } else {
                distributeNextTime = true;
                completeCleanUp();
            }
            return;
        }
        if (cleanUpIndex < cleanUps.length && temperature <= cleanUps[cleanUpIndex]) {
            // the original's "magic temperatures" only rebuild the per-point cluster lists here
            completeCleanUp();
            cleanUpIndex++;
            sinceSplitTest = 0;
            return;
        }
        temperature *= cooling;
    }

    /** CompleteCleanUp: restarts the membership-change test and the objective's history. */
    private void completeCleanUp() {
        membershipTests = -1;
        objectiveUnset = true;
    }

    /** SetClusterWidths: width2[k] = sum_a M_a(k) d^2(a, k) / C_k. */
    private void setWidths() {
        Arrays.fill(width2, 0, k + 1, 0.0);
        for (int a = 0; a < n; a++) {
            int row = a * slots;
            for (int col = 1; col <= k; col++) {
                double mv = m[row + col];
                if (mv != 0) {
                    width2[col] += mv * distance2(a, col);
                }
            }
        }
        for (int col = 1; col <= k; col++) {
            width2[col] = c[col] > ZERO_COUNT ? width2[col] / c[col] : 0;
        }
    }

    /** TotaloverVectorIndicesAverageWidth: the clusters' widths weighted by C_k, sponge left out. */
    private double meanWidth() {
        double sum = 0;
        double count = 0;
        for (int col = 1; col <= k; col++) {
            sum += width2[col] * c[col];
            count += c[col];
        }
        return count > 0 ? sum / count : 0;
    }

    /** Mean over the clusters of the squared scaled move of the centre in the last EM iteration. */
    private double centreChange() {
        double sum = 0;
        for (int col = 1; col <= k; col++) {
            for (int i = 0; i < d; i++) {
                double diff = y[col * d + i] - yPrevious[col * d + i];
                sum += diff * diff * invSigma2[col * d + i];
            }
        }
        return k > 0 ? sum / k : 0;
    }

    /**
     * UpdateHamiltonian: the objective sum_k C_k width2_k / 2 (the sponge's width is the sponge factor squared);
     * returns whether it did not rise since the last converged temperature.
     */
    private boolean updateObjective() {
        objective = spongeOn ? 0.5 * s.spongeFactor() * s.spongeFactor() * c[0] : 0;
        for (int col = 1; col <= k; col++) {
            objective += 0.5 * width2[col] * c[col];
        }
        boolean decreasing = objectiveUnset || objective <= previousObjective;
        objectiveUnset = false;
        previousObjective = objective;
        return decreasing;
    }

    /**
     * CheckValidSolution: at every converged temperature, clusters with C_k below the limit or fewer points than
     * {@link DavsSettings#minPoints} go, and below the closeness temperature (every 0.25 of it) so does the one of
     * two close clusters with fewer points; all are marked first, then removed, keeping the others' order and
     * dividing the weights left by their sum. Returns true when none went.
     */
    private boolean checkValidAsOriginal() {
        boolean closeness = false;
        if (temperature < s.closenessTemperature()
                && (lastClosenessTest < 0 || temperature < lastClosenessTest - CLOSENESS_STEP)) {
            closeness = true;
            lastClosenessTest = temperature;
        }
        countSizes();
        double limit = spongeOn ? s.minCountWithSponge() : s.minCount();
        boolean any = false;
        for (int col = 1; col <= k; col++) {
            removals[col] = c[col] < limit || sizes[col] < s.minPoints();
            if (!removals[col] && closeness) {
                removals[col] = closeToLarger(col);
            }
            any |= removals[col];
        }
        if (!any) {
            return true;
        }
        double sum = spongeOn ? p[0] : 0;
        for (int col = 1; col <= k; col++) {
            if (!removals[col]) {
                sum += p[col];
            }
        }
        for (int col = spongeOn ? 0 : 1; col <= k; col++) {
            p[col] /= sum;
        }
        for (int col = k; col >= 1; col--) {
            if (removals[col]) {
                removeKeepingOrder(col);
            }
        }
        if (!distributed) {
            membershipTests = -1;
        }
        return false;
    }

    /** CheckCloseClusters: another cluster with at least as many points (more, or an earlier slot on a tie) is near. */
    private boolean closeToLarger(int col) {
        for (int other = 1; other <= k; other++) {
            if (other == col) {
                continue;
            }
            int test = sizes[col] - sizes[other];
            if (test > 0 || (test == 0 && col < other)) {
                continue;
            }
            double sum = 0;
            for (int q = 0; q < d; q++) {
                double diff = y[col * d + q] - y[other * d + q];
                sum += diff * diff * invSigma2[col * d + q];
            }
            if (sum < s.closenessDistanceSquared()) {
                return true;
            }
        }
        return false;
    }

    /** ClusteringSolution.RemoveCluster: the clusters after {@code col} move down one slot. */
    private void removeKeepingOrder(int col) {
        for (int to = col; to < k; to++) {
            int from = to + 1;
            System.arraycopy(y, from * d, y, to * d, d);
            System.arraycopy(invSigma2, from * d, invSigma2, to * d, d);
            p[to] = p[from];
            c[to] = c[from];
            freezing[to] = freezing[from];
            width2[to] = width2[from];
            priority[to] = priority[from];
            sizes[to] = sizes[from];
        }
        for (int a = 0; a < n; a++) {
            int row = a * slots;
            System.arraycopy(m, row + col + 1, m, row + col, k - col);
            m[row + k] = 0;
        }
        p[k] = 0;
        c[k] = 0;
        k--;
        removed++;
    }

    /**
     * shouldweSplit: a cluster is tested when its priority is not 0, its width is above the limit and C_k is above
     * the limit; if none is, that is a split failure (two end the annealing). A tested child of a split may split
     * only from its fourth test on (priority 2 counts up to 6; at 9 it becomes -1, as the first cluster's is). The
     * candidates, negative eigenvalue, are ranked by priority (-10 for children, +20 when C_k >= 2N / clusters,
     * +20 more at 6N / clusters), then by eigenvalue; the first {@link DavsSettings#maxSplitsAtOnce} split.
     */
    private int splitTestAsOriginal() {
        scatterAndSlopes();
        int limit = Math.min(s.maxSplitsAtOnce(), s.maxClusters() - k);
        int clustersThisNode = k + (spongeOn ? 1 : 0);
        boolean tested = false;
        int chosen = 0;
        for (int col = 1; col <= k; col++) {
            completeScatter(col);
            if (priority[col] == 0 || width2[col] <= s.minWidthSquaredToSplit() || c[col] <= s.tooSmallToSplit()) {
                continue;
            }
            tested = true;
            double hessian = 0.5 * c[col] * (1 - largestEigenvalue(col) / c[col] / temperature);
            boolean splittable = true;
            if (priority[col] >= 1) {
                priority[col]++;
                if (priority[col] >= 9) {
                    priority[col] = -1;
                }
                if (priority[col] < 6) {
                    splittable = false;
                }
            }
            if (!splittable || hessian >= 0) {
                continue;
            }
            int rank = priority[col] > 0 ? priority[col] - 10 : priority[col];
            double large = 2.0 * n / clustersThisNode;
            if (c[col] >= large) {
                rank += 20;
            }
            if (c[col] >= 3 * large) {
                rank += 20;
            }
            int at = chosen;
            for (int q = 0; q < chosen; q++) {
                if (rank > splitPriorities[q] || (rank == splitPriorities[q] && hessian < splitEigenvalues[q])) {
                    at = q;
                    break;
                }
            }
            if (at >= limit) {
                continue;
            }
            for (int q = chosen - 1; q >= at; q--) {
                if (q == limit - 1) {
                    continue;
                }
                splitSlots[q + 1] = splitSlots[q];
                splitEigenvalues[q + 1] = splitEigenvalues[q];
                splitPriorities[q + 1] = splitPriorities[q];
            }
            chosen = Math.min(chosen + 1, limit);
            splitSlots[at] = col;
            splitEigenvalues[at] = hessian;
            splitPriorities[at] = rank;
        }
        if (!tested) {
            splitFailures++;
            return 0;
        }
        for (int q = 0; q < chosen; q++) {
            split(splitSlots[q], false);
            priority[splitSlots[q]] = CHILD_PRIORITY;
            priority[k] = CHILD_PRIORITY;
        }
        if (chosen > 0) {
            membershipTests = -1;
        }
        return chosen;
    }

    private void initialize() {
        for (int a = 0; a < n; a++) {
            for (int i = 0; i < d; i++) {
                y[d + i] += x[a * d + i];
            }
        }
        for (int i = 0; i < d; i++) {
            y[d + i] /= n;
        }
        setSigma(1);
        double sum = 0;
        for (int a = 0; a < n; a++) {
            sum += distance2(a, 1);
        }
        initialTemperature = 1.5 * sum / n;
        temperature = initialTemperature;
        if (s.sigmaMethod() == SigmaMethod.ANNEALED_PROPORTIONAL) {
            annealSigma0();
        }
        p[1] = 1.0;
        c[1] = n;
        if (s.sponge() && (s.spongeTemperature() < 0 || temperature <= s.spongeTemperature())) {
            addSponge();
        }
    }

    private void addSponge() {
        spongeOn = true;
        p[0] = s.fixedSpongeWeight() ? s.spongeWeight() / (k + 1) : 1.0 / (k + 1);
        for (int col = 1; col <= k; col++) {
            p[col] *= 1 - p[0];
        }
    }

    /** SigmaMethod 3: p_0 falls geometrically in log T from its given value to the final one at the final T. */
    private void annealSigma0() {
        double first = s.sigmaParameter(0);
        double last = s.finalSigma0();
        double tLast = s.finalSigmaTemperature();
        if (temperature <= tLast || initialTemperature <= tLast) {
            sigma0 = last;
        } else {
            double f = (Math.log(initialTemperature) - Math.log(temperature))
                    / (Math.log(initialTemperature) - Math.log(tLast));
            sigma0 = Math.exp(Math.log(first) + f * (Math.log(last) - Math.log(first)));
        }
        for (int col = 1; col <= k; col++) {
            setSigma(col);
        }
    }

    private void setSigma(int col) {
        for (int i = 0; i < d; i++) {
            double sigma = sigma(col, i);
            invSigma2[col * d + i] = 1.0 / (sigma * sigma);
        }
    }

    private double sigma(int col, int i) {
        switch (s.sigmaMethod()) {
            case UNIT:
                return 1.0;
            case FIXED:
                return s.sigmaParameter(i);
            default:
                return i == 0 ? sigma0 * Math.abs(y[col * d]) : s.sigmaParameter(i);
        }
    }

    private double distance2(int a, int col) {
        double sum = 0;
        int xo = a * d;
        int yo = col * d;
        for (int i = 0; i < d; i++) {
            double diff = x[xo + i] - y[yo + i];
            sum += diff * diff * invSigma2[yo + i];
        }
        return sum;
    }

    /** EM at this temperature until mean_a sum_k |change of M_a(k)| is at most {@code tolerance}. */
    private void converge(int limit, double tolerance) {
        for (int it = 0; it < limit; it++) {
            emIterations++;
            if (emStep() <= tolerance) {
                return;
            }
        }
    }

    /** One E step (M from P and Y) and M step (C, P, Y, sigma); returns the mean change of a point's M. */
    private double emStep() {
        int first = spongeOn ? 0 : 1;
        Arrays.fill(c, 0, k + 1, 0.0);
        Arrays.fill(freezing, 0, k + 1, 0.0);
        Arrays.fill(ySum, 0, (k + 1) * d, 0.0);
        double spongeTerm = s.spongeFactor() * s.spongeFactor() / temperature;
        double cut = 2 * s.expCut();
        double change = 0;
        for (int a = 0; a < n; a++) {
            double smallest = Double.POSITIVE_INFINITY;
            for (int col = first; col <= k; col++) {
                double t = col == 0 ? spongeTerm : distance2(a, col) / temperature;
                terms[col] = t;
                smallest = Math.min(smallest, t);
            }
            double denominator = 0;
            for (int col = first; col <= k; col++) {
                double above = terms[col] - smallest;
                double e = above < cut ? Math.max(MIN_P, p[col]) * Math.exp(-0.5 * above) : 0.0;
                terms[col] = e;
                denominator += e;
            }
            double inverse = 1.0 / denominator;
            int row = a * slots;
            int xo = a * d;
            for (int col = first; col <= k; col++) {
                double mv = terms[col] * inverse;
                change += Math.abs(mv - m[row + col]);
                m[row + col] = mv;
                c[col] += mv;
                freezing[col] += mv * (1 - mv);
                if (col > 0 && mv > 0) {
                    int yo = col * d;
                    for (int i = 0; i < d; i++) {
                        ySum[yo + i] += mv * x[xo + i];
                    }
                }
            }
        }
        double clusters = 0;
        if (spongeOn && c[0] > 0) {
            freezing[0] /= c[0];
        }
        for (int col = 1; col <= k; col++) {
            clusters += c[col];
            if (c[col] > ZERO_COUNT) {
                freezing[col] /= c[col];
            }
            if (c[col] > ZERO_COUNT) {
                int yo = col * d;
                for (int i = 0; i < d; i++) {
                    y[yo + i] = ySum[yo + i] / c[col];
                }
                setSigma(col);
            }
        }
        setWeights(clusters);
        return change / n;
    }

    /** P_k = C_k / N, or with a fixed sponge weight P_0 = w / (K + 1) and the clusters' P_k filling the rest. */
    private void setWeights(double clusters) {
        if (spongeOn && s.fixedSpongeWeight()) {
            p[0] = s.spongeWeight() / (k + 1);
            for (int col = 1; col <= k; col++) {
                p[col] = clusters > 0 ? (1 - p[0]) * c[col] / clusters : (1 - p[0]) / k;
            }
        } else {
            for (int col = spongeOn ? 0 : 1; col <= k; col++) {
                p[col] = c[col] / n;
            }
        }
    }

    /**
     * The split test: scaled scatter S_k = sum_a M_a(k) dx dx^T per cluster; the second-derivative matrix
     * C_k / 2 I - S_k / 2T has a negative smallest eigenvalue C_k / 2 (1 - lambda_max(S_k / C_k) / T) when the cluster
     * is wider along its main axis than T allows. Splits the most negative ones; returns how many it split.
     */
    private int splitTest() {
        scatterAndSlopes();
        int chosen = 0;
        for (int col = 1; col <= k; col++) {
            completeScatter(col);
            if (c[col] <= s.tooSmallToSplit() || width2[col] <= s.minWidthSquaredToSplit()) {
                continue;
            }
            double lambda = largestEigenvalue(col) / c[col];
            double hessian = 0.5 * c[col] * (1 - lambda / temperature);
            if (hessian >= 0) {
                continue;
            }
            // keep the most negative ones, in rising order
            int at = chosen;
            while (at > 0 && splitEigenvalues[at - 1] > hessian) {
                at--;
            }
            if (at >= splitSlots.length) {
                continue;
            }
            int last = Math.min(chosen, splitSlots.length - 1);
            for (int q = last; q > at; q--) {
                splitSlots[q] = splitSlots[q - 1];
                splitEigenvalues[q] = splitEigenvalues[q - 1];
            }
            splitSlots[at] = col;
            splitEigenvalues[at] = hessian;
            chosen = Math.min(chosen + 1, splitSlots.length);
        }
        int done = 0;
        for (int q = 0; q < chosen && k < s.maxClusters(); q++) {
            split(splitSlots[q], true);
            done++;
        }
        return done;
    }

    /**
     * Per cluster: the scaled scatter S_k = sum_a M_a(k) dx dx^T (upper triangle) and the slope
     * dC/dY = sum_a dx / T (M/2)(1 - M/2) of the half cluster (the original's SetClusterCorrelations), dx the point's
     * offset from the centre scaled by the cluster's sigma.
     */
    private void scatterAndSlopes() {
        int dd = d * d;
        Arrays.fill(scatter, 0, (k + 1) * dd, 0.0);
        Arrays.fill(slopes, 0, (k + 1) * d, 0.0);
        for (int a = 0; a < n; a++) {
            int row = a * slots;
            int xo = a * d;
            for (int col = 1; col <= k; col++) {
                double mv = m[row + col];
                if (mv == 0) {
                    continue;
                }
                int yo = col * d;
                double half = 0.5 * mv;
                for (int i = 0; i < d; i++) {
                    offsets[i] = (x[xo + i] - y[yo + i]) * Math.sqrt(invSigma2[yo + i]);
                    slopes[yo + i] += offsets[i] / temperature * half * (1 - half);
                }
                int so = col * dd;
                for (int i = 0; i < d; i++) {
                    for (int j = i; j < d; j++) {
                        scatter[so + i * d + j] += mv * offsets[i] * offsets[j];
                    }
                }
            }
        }
    }

    /** Fills the lower triangle of {@code col}'s scatter and sets its mean scaled squared width, trace / C_k. */
    private void completeScatter(int col) {
        int so = col * d * d;
        double trace = 0;
        for (int i = 0; i < d; i++) {
            trace += scatter[so + i * d + i];
            for (int j = 0; j < i; j++) {
                scatter[so + i * d + j] = scatter[so + j * d + i];
            }
        }
        width2[col] = c[col] > 0 ? trace / c[col] : 0;
    }

    /** Power method on the (symmetric, positive semi-definite) scatter of {@code col}; leaves its unit vector. */
    private double largestEigenvalue(int col) {
        int so = col * d * d;
        int vo = col * d;
        double norm = 0;
        for (int i = 0; i < d; i++) {
            eigenvector[vo + i] = 1.0 / (1 + i); // not symmetric in the dimensions, so rarely orthogonal to the answer
            norm += eigenvector[vo + i] * eigenvector[vo + i];
        }
        norm = Math.sqrt(norm);
        for (int i = 0; i < d; i++) {
            eigenvector[vo + i] /= norm;
        }
        double lambda = 0;
        for (int it = 0; it < POWER_ITERATIONS; it++) {
            double length = 0;
            for (int i = 0; i < d; i++) {
                double sum = 0;
                for (int j = 0; j < d; j++) {
                    sum += scatter[so + i * d + j] * eigenvector[vo + j];
                }
                eigenScratch[i] = sum;
                length += sum * sum;
            }
            length = Math.sqrt(length);
            if (length == 0) {
                return 0;
            }
            for (int i = 0; i < d; i++) {
                eigenvector[vo + i] = eigenScratch[i] / length;
            }
            boolean settled = Math.abs(length - lambda) <= POWER_CHANGE * length;
            lambda = length;
            if (settled) {
                break;
            }
        }
        return lambda;
    }

    /**
     * Splits {@code col} into itself and a new cluster, each moved along the eigenvector by the original's step: the
     * one that moves 0.025 C_k by the slope dC/dY, kept between 0.05 and 0.2 of the scaled width.
     */
    private void split(int col, boolean newSigmaForBoth) {
        int fresh = ++k;
        int vo = col * d;
        double along = 0;
        for (int i = 0; i < d; i++) {
            along += eigenvector[vo + i] * slopes[vo + i];
        }
        double width = Math.sqrt(width2[col]);
        double step = along != 0 ? Math.abs(0.025 * c[col] / along) : Double.POSITIVE_INFINITY;
        step = Math.max(Math.min(step, 0.2 * width), 0.05 * width);
        int fo = fresh * d;
        for (int i = 0; i < d; i++) {
            double shift = eigenvector[vo + i] * step / Math.sqrt(invSigma2[vo + i]);
            y[fo + i] = y[vo + i] - shift;
            y[vo + i] += shift;
        }
        if (newSigmaForBoth) {
            setSigma(col);
        }
        setSigma(fresh);
        p[col] *= 0.5;
        p[fresh] = p[col];
        c[col] *= 0.5;
        c[fresh] = c[col];
        for (int a = 0; a < n; a++) {
            int row = a * slots;
            m[row + col] *= 0.5;
            m[row + fresh] = m[row + col];
        }
        splits++;
    }

    /** Removes clusters with C_k below the limit or fewer points than {@link DavsSettings#minPoints}; keeps one. */
    private int removeSmall() {
        countSizes();
        double limit = spongeOn ? s.minCountWithSponge() : s.minCount();
        int before = removed;
        for (int col = k; col >= 1 && k > 1; col--) {
            if (c[col] < limit || sizes[col] < s.minPoints()) {
                moveInto(k, col);
                k--;
                removed++;
            }
        }
        if (removed > before) {
            renormalize();
        }
        return removed - before;
    }

    /**
     * The original's closeness test ({@code CheckCloseClusters}): of two clusters whose centres are closer than the
     * closeness distance (scaled by the sigma of the one tested), the one with fewer points assigned goes (the later
     * slot on a tie); its points go to the others at the next E step. Returns how many went.
     */
    private int removeClose() {
        countSizes();
        int before = closeRemoved;
        for (int col = k; col >= 1 && k > 1; col--) {
            if (closeToLarger(col)) {
                moveInto(k, col);
                k--;
                closeRemoved++;
            }
        }
        if (closeRemoved > before) {
            renormalize();
        }
        return closeRemoved - before;
    }

    /** Slot {@code from}'s cluster moves to slot {@code to} (whose cluster is gone). */
    private void moveInto(int from, int to) {
        if (from != to) {
            System.arraycopy(y, from * d, y, to * d, d);
            System.arraycopy(invSigma2, from * d, invSigma2, to * d, d);
            p[to] = p[from];
            c[to] = c[from];
            sizes[to] = sizes[from];
            for (int a = 0; a < n; a++) {
                m[a * slots + to] = m[a * slots + from];
            }
        }
        for (int a = 0; a < n; a++) {
            m[a * slots + from] = 0;
        }
        p[from] = 0;
        c[from] = 0;
    }

    private void renormalize() {
        double sum = 0;
        for (int col = spongeOn ? 0 : 1; col <= k; col++) {
            sum += p[col];
        }
        if (sum > 0) {
            for (int col = spongeOn ? 0 : 1; col <= k; col++) {
                p[col] /= sum;
            }
        }
    }

    private void countSizes() {
        Arrays.fill(sizes, 0);
        for (int a = 0; a < n; a++) {
            sizes[label(a)]++;
        }
    }

    /** The slot with the largest M_a(k) (the sponge, 0, wins a tie with a cluster). */
    private int label(int a) {
        int row = a * slots;
        int best = spongeOn ? 0 : 1;
        for (int col = best + 1; col <= k; col++) {
            if (m[row + col] > m[row + best]) {
                best = col;
            }
        }
        return best;
    }

    private DavsResult result(double seconds) {
        int[] labels = new int[n];
        for (int a = 0; a < n; a++) {
            labels[a] = label(a);
        }
        countSizes();
        double[] centers = Arrays.copyOfRange(y, d, (k + 1) * d);
        double[] sigmas = new double[k * d];
        double[] widths = new double[k * d];
        for (int a = 0; a < n; a++) {
            for (int col = 1; col <= k; col++) {
                double mv = m[a * slots + col];
                for (int i = 0; i < d; i++) {
                    double diff = x[a * d + i] - y[col * d + i];
                    widths[(col - 1) * d + i] += mv * diff * diff;
                }
            }
        }
        for (int col = 1; col <= k; col++) {
            for (int i = 0; i < d; i++) {
                sigmas[(col - 1) * d + i] = 1.0 / Math.sqrt(invSigma2[col * d + i]);
                widths[(col - 1) * d + i] = c[col] > 0 ? Math.sqrt(widths[(col - 1) * d + i] / c[col]) : 0;
            }
        }
        return new DavsResult(d, labels, centers, sigmas, widths, Arrays.copyOfRange(p, 1, k + 1),
                Arrays.copyOfRange(c, 1, k + 1), Arrays.copyOfRange(sizes, 1, k + 1), spongeOn ? p[0] : 0,
                spongeOn ? sizes[0] : 0, initialTemperature, temperature, temperatures, emIterations, splits,
                removed, closeRemoved, seconds);
    }
}
