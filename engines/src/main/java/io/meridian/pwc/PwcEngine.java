package io.meridian.pwc;

import io.meridian.collective.BlockSync;
import io.meridian.matrix.LowerRows;
import io.meridian.matrix.RowBlock;
import io.meridian.matrix.RowPartition;
import io.meridian.matrix.ShortMatrixFormat;
import java.util.Arrays;
import java.util.Locale;

/**
 * Deterministic-annealing pairwise clustering (DA-PWC) as SPIDAL's dapwc computes it, for the rows of one block.
 *
 * <p>At temperature T the EM iteration is: M_a(k) = exp(-(eps_a(k) - min_j eps_a(j)) / T) / sum_j w_j exp(...),
 * C_k = sum_a M_a(k), B_a(k) = sum_b d(a,b) M_b(k) / C_k, A_k = -1/2 sum_a B_a(k) M_a(k) / C_k,
 * eps_a(k) = B_a(k) + A_k (w_j = 1 except for a duplicated cluster in a split test, w = 2). It starts with one cluster at
 * T = 2 * mean distance; at each converged temperature it may test the clusters for a split (smallest eigenvalue of the
 * second-derivative matrix by the power method, split along its eigenvector when clearly negative), then cools; once
 * the number of clusters is final it cools by the freezing factor until every cluster is frozen, drops clusters that
 * are too small and refreezes.
 *
 * <p>State: four {@link ClusterState}s: {@code current} (the annealing), {@code best} (lowest Hamiltonian so far),
 * {@code trial} (a split test's EM runs with one cluster duplicated, so they never touch {@code current}) and
 * {@code eigen} (each cluster's inputs to its power method). A split test returns a {@link SplitDecision} naming the
 * state the annealing goes on from: {@code current} as it was before the test, or with
 * {@link PwcSettings.SplitStart#AFTER_TEST} the state dapwc's test leaves in {@code trial}. The schedule is a
 * {@link Phase}.
 *
 * <p>Parallel structure: each participant owns some rows and its {@link PairKernel} multiplies them with N x K
 * matrices: contiguous blocks of full rows ({@link FullRowKernel}, dapwc's layout, {@link BlockProduct} holding the
 * block's 16-bit rows), or any owned rows read as their lower triangle ({@link TriangleKernel}, the live map's, which
 * adds one allreduce of N x K per product). Every per-iteration sum over all points goes through {@link BlockSync}: per
 * EM iteration one gather of the rows' M (rows x K) that also sums the first 2K values
 * ({@link BlockSync#allgathervAndSum}), and two allreduces of K values; per (batched) power iteration one gather of
 * N x K values with a sum of 2K, and one allreduce. Working arrays are 1-D, sized once for the largest K, so neither
 * an EM iteration nor a split test allocates.
 *
 * <p>Where the defaults differ from dapwc ({@link PwcSettings.Builder#dapwc()} switches each back): the split test
 * halves M instead of re-converging EM with a duplicated cluster; a cluster whose dominant eigenvalue is negative is
 * split when no other cluster passes the test, rather than skipped; {@link PwcSettings#failedSplitTestsToStop} can end
 * the splitting below maxClusters; small clusters are dropped even when no best solution with the same K exists. Set
 * MERIDIAN_PWC_TRACE to trace the split tests on stderr.
 */
public final class PwcEngine {
    /** Where the annealing is; reported to {@link PwcProgress}. */
    public enum Phase {
        /** Cooling (the initial factor until the first split, then the fine one), split tests at converged temperatures. */
        ANNEALING,
        /** Inside a split test: EM runs with a duplicated cluster, power methods. */
        SPLIT_TEST,
        /** The number of clusters is final: cooling by the freezing factor until every cluster is frozen. */
        FREEZING,
        /** Clusters too small were removed: refreezing the others from the best solution. */
        REFREEZING
    }

    private static final double INV_SCALE = ShortMatrixFormat.INV_SCALE;
    /** Set MERIDIAN_PWC_TRACE to print every split test (each cluster's C, eigenvalues, convergence) on stderr. */
    private static final boolean TRACE = System.getenv("MERIDIAN_PWC_TRACE") != null;

    private final PwcSettings settings;
    private final BlockSync sync;
    private final PairKernel kernel;
    private final PwcProgress progress;
    private final int points;
    private final int rows;
    private final int maxK;
    /** k of the last EM iteration (whose eps changes {@link #epsDiff} holds). */
    private int layoutK;

    private final ClusterState current;
    private final ClusterState best;
    private final ClusterState trial;
    private final ClusterState eigen;
    private boolean bestSet;
    private final SplitDecision decision = new SplitDecision();

    // EM scratch
    private final double[] mAll;
    private final double[] weight;
    private final double[] epsDiff;
    private final double[] scale;
    private final double[] sums;
    /** EM iterations since the last split (dapwc's oldepsiset): the change of eps is measured from the second on. */
    private int oldEpsSet;

    // split-test scratch
    private final double[] startVector;
    private final double[] x;
    private final double[] y;
    private final double[] z;
    private final double[] zAll;
    private final double[] dz;
    private final double[] coef;
    private final double[] twoA;
    private final double[] s1;
    private final double[] s2;
    private final double[] previous;
    private final double[] norm;
    private final double[] lambda0;
    private final double[] lambda1;
    private final boolean[] converged0;
    private final boolean[] converged1;
    private final boolean[] tested;
    private final boolean[] active;
    private final double[] splitVector;
    private final boolean[] remove;
    /** M's factor in the second-derivative matrix: 1/2 when the duplicated cluster is estimated by halving M, else 1. */
    private double eigenFudge;

    // schedule
    private Phase phase = Phase.ANNEALING;
    private double cooling;
    private double minTemperature;
    private int actualMaxK;
    private int stepCount;
    private int betweenSplits;
    private int failedTests;
    private int splitFailures;
    private int freezeTemperatures;
    private int hamiltonianViolations;
    /** Hamiltonian at the previous converged temperature; NaN at the start and after small clusters were removed. */
    private double oldHamiltonian;

    // counters
    private int emIterations;
    private int duplicateEmIterations;
    private int powerIterations;
    private int splits;
    private int removedClusters;
    private double initialTemperature;

    /**
     * Over contiguous blocks of full rows, as dapwc.
     *
     * @param block     this block's rows of the N x N distance matrix (its rows must be block {@code sync.block()} of
     *                  {@code partition})
     * @param partition how the N rows are split over the {@code sync.blocks()} blocks
     */
    public PwcEngine(RowBlock block, RowPartition partition, BlockSync sync, PwcSettings settings, PwcProgress progress) {
        this(new FullRowKernel(block, partition, sync, settings.maxClusters), settings, progress);
    }

    /**
     * Over points {@code 0 .. points-1} whose rows come as their lower triangle, each participant of {@code sync}
     * owning the rows {@code ownedByTask[sync.block()]} (see {@link TriangleKernel}).
     */
    public static PwcEngine overLowerRows(LowerRows rows, int points, int[][] ownedByTask, BlockSync sync,
                                          PwcSettings settings, PwcProgress progress) {
        return new PwcEngine(new TriangleKernel(rows, points, ownedByTask, sync, settings.maxClusters), settings,
                progress);
    }

    /** Over the rows {@code kernel} owns; every participant of the kernel's group runs one. */
    public PwcEngine(PairKernel kernel, PwcSettings settings, PwcProgress progress) {
        this.settings = settings;
        this.kernel = kernel;
        this.sync = kernel.sync();
        this.progress = progress == null ? PwcProgress.NONE : progress;
        this.points = kernel.points();
        this.rows = kernel.rows();
        this.maxK = settings.maxClusters;

        int local = rows * maxK;
        current = new ClusterState(rows, maxK);
        best = new ClusterState(rows, maxK);
        trial = new ClusterState(rows, maxK);
        eigen = new ClusterState(rows, maxK);
        mAll = new double[points * maxK];
        weight = new double[maxK];
        epsDiff = new double[maxK];
        scale = new double[maxK];
        sums = new double[3 * maxK + 4];
        startVector = new double[rows];
        x = new double[local];
        y = new double[local];
        z = new double[local];
        zAll = new double[points * maxK];
        dz = new double[local];
        coef = new double[maxK];
        twoA = new double[maxK];
        s1 = new double[maxK];
        s2 = new double[maxK];
        previous = new double[maxK];
        norm = new double[maxK];
        lambda0 = new double[maxK];
        lambda1 = new double[maxK];
        converged0 = new boolean[maxK];
        converged1 = new boolean[maxK];
        tested = new boolean[maxK];
        active = new boolean[maxK];
        splitVector = new double[rows];
        remove = new boolean[maxK];
    }

    // ---------------------------------------------------------------------------------------------------- getters

    public int emIterations() {
        return emIterations;
    }

    public int duplicateEmIterations() {
        return duplicateEmIterations;
    }

    public int powerIterations() {
        return powerIterations;
    }

    public int clusters() {
        return current.k;
    }

    public double temperature() {
        return current.temperature;
    }

    public Phase phase() {
        return phase;
    }

    public int points() {
        return points;
    }

    // ---------------------------------------------------------------------------------------------------- the run

    /** Runs the whole annealing; collective: every block calls it. */
    public PwcResult run() {
        long started = System.nanoTime();
        initialTemperature = 2.0 * meanDistance();
        minTemperature = initialTemperature / 100000.0;
        current.k = 1;
        current.temperature = initialTemperature;
        current.hamiltonian = 0;
        cooling = settings.initialCooling;
        actualMaxK = maxK;
        Arrays.fill(weight, 1.0);
        phase = Phase.ANNEALING;
        emIterations = 0;
        duplicateEmIterations = 0;
        powerIterations = 0;
        splits = 0;
        removedClusters = 0;
        splitFailures = 0;
        failedTests = 0;
        stepCount = 0;
        betweenSplits = 0;
        freezeTemperatures = 0;
        hamiltonianViolations = 0;
        oldHamiltonian = Double.NaN;
        oldEpsSet = 0;
        bestSet = false;
        initStartVector();

        while (true) {
            emIterations++;
            stepCount++;
            emStep(current, emIterations == 1);
            progress.update(this);

            int convergence = convergence();
            if (convergence == 0) {
                continue;
            }
            stepCount = 0;
            boolean decreasing = saveIfBest();

            if (convergence == 2) {
                if (freezeStep(decreasing)) {
                    current.temperature *= cooling;
                    continue;
                }
                if (removeSmallClusters()) {
                    phase = Phase.REFREEZING;
                    freezeTemperatures = 0;
                    betweenSplits = 0;
                    oldHamiltonian = Double.NaN;
                    continue;
                }
                break;
            }

            // converged with room for more clusters: wait some temperatures between split tests once k > 1
            if (++betweenSplits > settings.splitWait) {
                betweenSplits = 0;
            }
            if (betweenSplits > 0 && settings.splitWait > 0 && current.k > 1) {
                current.temperature *= cooling;
                continue;
            }
            SplitDecision split = runSplitTest();
            if (split.from() != current) {
                current.copyFrom(split.from());
            }
            if (split.split()) {
                split(split.cluster());
                failedTests = 0;
                splitFailures = 0;
                cooling = settings.fineCooling;
                betweenSplits = 0;
            } else {
                if (current.k > 1 && settings.failedSplitTestsToStop > 0) {
                    failedTests++;
                }
                current.temperature *= cooling;
            }
        }

        if (bestSet && best.k == current.k && best.hamiltonian < current.hamiltonian) {
            current.copyFrom(best);
        }
        return finish(started);
    }

    /**
     * The convergence test after an EM iteration: 0 not yet converged at this temperature, 1 converged with room for
     * more clusters, 2 converged with no more splits to do (entering {@link Phase#FREEZING} if not there yet) or at
     * the limit of EM iterations per temperature (dapwc's HitConvergenceLoopLimit, which freezes one step but does not
     * end the splitting).
     */
    private int convergence() {
        if (oldEpsSet <= 1) {
            return 0;
        }
        if (maxEpsChange() <= settings.epsilonChange) {
            if (phase != Phase.ANNEALING) {
                return 2;
            }
            if (current.k >= actualMaxK || current.temperature < minTemperature || splitFailures > 1
                    || (settings.failedSplitTestsToStop > 0 && failedTests >= settings.failedSplitTestsToStop)) {
                phase = Phase.FREEZING;
                return 2;
            }
            return 1;
        }
        return stepCount > settings.temperatureIterationLimit ? 2 : 0;
    }

    /**
     * The Hamiltonian -2 sum_k A_k C_k of the converged solution; saves the solution as the best when it did not rise
     * since the previous converged temperature (or is the first). Returns whether it did not rise.
     */
    private boolean saveIfBest() {
        double hamiltonian = 0;
        for (int j = 0; j < current.k; j++) {
            hamiltonian += -2.0 * current.a[j] * current.c[j];
        }
        current.hamiltonian = hamiltonian;
        boolean decreasing = Double.isNaN(oldHamiltonian) || hamiltonian <= oldHamiltonian;
        if (decreasing) {
            best.copyFrom(current);
            bestSet = true;
        }
        oldHamiltonian = hamiltonian;
        return decreasing;
    }

    /**
     * One converged temperature of the freezing phase: true while some cluster is not frozen yet and the Hamiltonian
     * has not risen 5 times in a row (the caller cools and goes on), false when freezing is over.
     */
    private boolean freezeStep(boolean decreasing) {
        if (freezeTemperatures >= settings.freezeTemperatureLimit) {
            return false;
        }
        if (freezeTemperatures == 0) {
            hamiltonianViolations = 0;
            cooling = settings.freezeCooling;
        }
        int notFrozen = 0;
        for (int j = 0; j < current.k; j++) {
            if (current.freeze[j] > settings.freezingLimit) {
                notFrozen++;
            }
        }
        freezeTemperatures++;
        if (decreasing) {
            hamiltonianViolations = 0;
        } else if (++hamiltonianViolations < 5) {
            decreasing = true;
        }
        return notFrozen > 0 && decreasing;
    }

    // ---------------------------------------------------------------------------------------------------- EM

    /**
     * One EM iteration of {@code s} at its temperature and the current weights; {@code uniform} sets M = 1/k instead of
     * from eps.
     */
    private void emStep(ClusterState s, boolean uniform) {
        final int k = s.k;
        final int n = rows;
        final double[] m = s.m;
        final double[] eps = s.eps;
        final double[] b = s.b;
        final double[] c = s.c;
        final double[] sums = this.sums;
        final double invT = 1.0 / s.temperature;
        layoutK = k;
        Arrays.fill(sums, 0, 2 * k, 0.0);
        for (int i = 0, p = 0; i < n; i++, p += k) {
            if (uniform) {
                Arrays.fill(m, p, p + k, 1.0 / k);
            } else {
                double min = eps[p];
                for (int j = 1; j < k; j++) {
                    min = Math.min(min, eps[p + j]);
                }
                double total = 0;
                for (int j = 0; j < k; j++) {
                    double e = Math.exp(-(eps[p + j] - min) * invT);
                    m[p + j] = e;
                    total += weight[j] * e;
                }
                if (total != 0) {
                    double inv = 1.0 / total;
                    for (int j = 0; j < k; j++) {
                        m[p + j] *= inv;
                    }
                } else {
                    Arrays.fill(m, p, p + k, 1.0 / k);
                }
            }
            for (int j = 0; j < k; j++) {
                double mv = m[p + j];
                sums[j] += mv;
                sums[k + j] += mv * (1.0 - mv);
            }
        }
        kernel.gatherAndSum(m, k, mAll, sums, 2 * k);
        for (int j = 0; j < k; j++) {
            c[j] = sums[j];
            s.freeze[j] = c[j] > 0 ? sums[k + j] / c[j] : sums[k + j];
            scale[j] = c[j] > 0 ? INV_SCALE / c[j] : 0.0;
        }

        kernel.multiply(mAll, k, b);

        Arrays.fill(sums, 0, k, 0.0);
        for (int i = 0, p = 0; i < n; i++, p += k) {
            for (int j = 0; j < k; j++) {
                double bv = b[p + j] * scale[j];
                b[p + j] = bv;
                sums[j] += bv * m[p + j];
            }
        }
        sync.allreduceSum(sums, k);
        for (int j = 0; j < k; j++) {
            s.a[j] = c[j] > 0 ? -0.5 * sums[j] / c[j] : 0.0;
        }

        final double[] a = s.a;
        boolean track = oldEpsSet > 0;
        Arrays.fill(sums, 0, k, 0.0);
        for (int i = 0, p = 0; i < n; i++, p += k) {
            for (int j = 0; j < k; j++) {
                double e = b[p + j] + a[j];
                sums[j] += Math.abs(eps[p + j] - e);
                eps[p + j] = e;
            }
        }
        if (track) {
            sync.allreduceSum(sums, k);
            System.arraycopy(sums, 0, epsDiff, 0, k);
        }
        oldEpsSet++;
    }

    /** max over clusters of mean over points of |change of eps_a(k)| in the last EM iteration. */
    private double maxEpsChange() {
        double max = 0;
        for (int j = 0; j < layoutK; j++) {
            max = Math.max(max, epsDiff[j]);
        }
        return max / points;
    }

    /**
     * EM on {@code s} with {@code cluster} weighted 2 (duplicated) until eps converges or dapwc's limit of iterations;
     * {@code counted}: adds the iterations to {@link #duplicateEmIterations} (a replay does not).
     */
    private void duplicatedRun(ClusterState s, int cluster, boolean counted) {
        weight[cluster] = 2.0;
        for (int loop = 0; loop < settings.duplicateEmLimit; loop++) {
            emStep(s, false);
            if (counted) {
                duplicateEmIterations++;
            }
            progress.update(this);
            if (oldEpsSet > 1 && maxEpsChange() <= settings.epsilonChange) {
                break;
            }
        }
        weight[cluster] = 1.0;
    }

    // ---------------------------------------------------------------------------------------------------- splitting

    /**
     * dapwc's shouldweSplit: the second-derivative matrix of each cluster with the cluster duplicated, estimated with
     * M halved (f = 1/2, dapwc's methodology 2, which it uses for one cluster), or with {@link PwcSettings.SplitTest#DUPLICATED}
     * as dapwc does for two or more (methodology 3): each cluster big enough is duplicated for real (weight 2) in
     * {@code trial}, EM re-converged from the current eps, and the power method runs on that cluster's M, B, A, C
     * (f = 1). Methodology 3 leaves the soft tail of other clusters' points un-halved and finds spurious negative
     * eigenvalues well above a cluster's critical temperature (compact blobs split at T = 0.17 where
     * lambda_max(-JDJ)/N gives T_c = 0.015), hence the default. The cluster with the most negative smallest eigenvalue
     * is split if that eigenvalue is at most {@code minEigenTest} times its largest one. The clusters' power methods are
     * independent; they run side by side, one K-column product per iteration, each cluster stopping on its own
     * convergence test, so the matrix is streamed once per iteration instead of once per cluster. {@code current} is
     * not changed; the decision names the state to go on from.
     */
    private SplitDecision runSplitTest() {
        phase = Phase.SPLIT_TEST;
        final int k = current.k;
        boolean duplicated = k > 1 && settings.splitTest == PwcSettings.SplitTest.DUPLICATED;
        int lastTested = -1;
        if (!duplicated) {
            // the duplicated cluster estimated by halving M (dapwc's methodology 2, which dapwc uses for one cluster)
            eigenFudge = 0.5;
            eigen.copyFrom(current);
            for (int j = 0; j < k; j++) {
                tested[j] = current.c[j] > settings.tooSmallToSplit;
            }
        } else {
            eigenFudge = 1.0;
            trial.copyFrom(current);
            eigen.copyFrom(current);
            for (int cluster = 0; cluster < k; cluster++) {
                tested[cluster] = current.c[cluster] > settings.tooSmallToSplit;
                if (!tested[cluster]) {
                    continue;
                }
                if (lastTested >= 0) {
                    trial.copyEpsilonFrom(current);
                }
                lastTested = cluster;
                duplicatedRun(trial, cluster, true);
                eigen.copyClusterFrom(trial, cluster);
            }
        }

        // pass 0: largest eigenvalue lambda0 of H; pass 1: largest of (lambda0 I - H), so H's smallest is lambda0 - lambda1
        for (int j = 0; j < k; j++) {
            active[j] = tested[j];
        }
        powerMethod(false, lambda0, converged0);
        for (int j = 0; j < k; j++) {
            // one cluster (estimated duplication): dapwc uses pass 1 whenever lambda0 > 0; more: pass 0 must converge
            active[j] = tested[j] && lambda0[j] > 0 && (k == 1 || converged0[j]);
            lambda1[j] = 0;
            converged1[j] = false;
        }
        powerMethod(true, lambda1, converged1);
        // the cluster with the smallest eigenvalue among those with a positive dominant one (dapwc's choice), and
        // the one with the most negative dominant eigenvalue
        int chosen = -1;
        double minEigen = 99999999999.0;
        double chosenLambda0 = 0;
        int negative = -1;
        for (int j = 0; j < k; j++) {
            if (tested[j] && lambda0[j] < 0 && converged0[j]) {
                if (negative < 0 || lambda0[j] < lambda0[negative]) {
                    negative = j;
                }
                continue;
            }
            boolean candidate = tested[j] && lambda0[j] > 0 && (k == 1 || (converged0[j] && converged1[j]));
            if (candidate && lambda0[j] - lambda1[j] < minEigen) {
                minEigen = lambda0[j] - lambda1[j];
                chosen = j;
                chosenLambda0 = lambda0[j];
            }
        }
        int dapwcChoice = chosen;
        // a negative dominant eigenvalue is the cluster's smallest, with pass 0's vector (left in x, as pass 1 skipped
        // it) as the direction; by default it splits only when no other cluster would
        boolean negativeWins = negative >= 0 && switch (settings.negativeDominant) {
            case SKIP -> false;
            case SPLIT_LAST -> chosen < 0 || minEigen > settings.minEigenTest * chosenLambda0;
            case SPLIT_FIRST -> lambda0[negative] < minEigen;
        };
        if (negativeWins) {
            chosen = negative;
            minEigen = lambda0[negative];
            chosenLambda0 = -lambda0[negative];
        }
        if (TRACE) {
            trace(k);
        }
        ClusterState from = current;
        if (duplicated && settings.splitStart == PwcSettings.SplitStart.AFTER_TEST) {
            // dapwc: M, B, C, A and freezing measures of the last tested cluster's run (in trial); eps of the chosen
            // cluster's run if the last cluster was tested (trial's own when it is the chosen one; otherwise that
            // run is replayed, identically, from the same start), else the eps before the test
            if (dapwcChoice >= 0 && lastTested == k - 1) {
                if (dapwcChoice != lastTested) {
                    eigen.copyFrom(current); // the power methods are done with eigen's inputs
                    duplicatedRun(eigen, dapwcChoice, false);
                    trial.copyEpsilonFrom(eigen);
                }
            } else {
                trial.copyEpsilonFrom(current);
            }
            from = trial;
        }
        phase = Phase.ANNEALING;
        if (chosen < 0) {
            splitFailures++;
            return decision.set(-1, Double.NaN, Double.NaN, false, from);
        }
        for (int i = 0, p = chosen; i < rows; i++, p += k) {
            splitVector[i] = x[p];
        }
        return decision.set(chosen, minEigen, chosenLambda0, minEigen <= settings.minEigenTest * chosenLambda0, from);
    }

    private void trace(int k) {
        StringBuilder line = new StringBuilder(String.format(Locale.ROOT, "split test T=%.5g k=%d:", current.temperature, k));
        for (int j = 0; j < k; j++) {
            line.append(String.format(Locale.ROOT, " [C=%.0f l0=%.4g%s l1=%.4g%s min=%.3g]", eigen.c[j], lambda0[j],
                    converged0[j] ? "" : "*", lambda1[j], converged1[j] ? "" : "*", lambda0[j] - lambda1[j]));
        }
        System.err.println(line);
    }

    /**
     * The power method for every cluster with {@code active[j]}, side by side (stride k), on {@code eigen}'s inputs.
     * H_ab of cluster j is delta_ab f M_a + (f M_a M_b / (T C)) (-2A - B_a - B_b + d_ab) with that cluster's eigen
     * inputs; with {@code shifted} the matrix is (lambda0_j I - H). Ends with {@code x} holding each cluster's last
     * unit vector.
     */
    private void powerMethod(boolean shifted, double[] eigenvalue, boolean[] converged) {
        final int k = current.k;
        final int n = rows;
        final double f = eigenFudge;
        final double temperature = current.temperature;
        final double[] x = this.x;
        final double[] y = this.y;
        final double[] z = this.z;
        final double[] eM = eigen.m;
        final double[] eB = eigen.b;
        final double[] red = sums;
        int activeCount = 0;
        for (int j = 0; j < k; j++) {
            coef[j] = f / (temperature * eigen.c[j]);
            twoA[j] = -2.0 * eigen.a[j];
            previous[j] = 0;
            converged[j] = false;
            if (active[j]) {
                activeCount++;
            }
        }
        for (int i = 0, p = 0; i < n; i++) {
            for (int j = 0; j < k; j++, p++) {
                x[p] = startVector[i];
            }
        }
        for (int iteration = 0; iteration < settings.powerIterations && activeCount > 0; iteration++) {
            Arrays.fill(red, 0, 2 * k, 0.0);
            for (int i = 0, p = 0; i < n; i++) {
                for (int j = 0; j < k; j++, p++) {
                    double zj = eM[p] * x[p];
                    z[p] = zj;
                    red[j] += zj;
                    red[k + j] += zj * eB[p];
                }
            }
            kernel.gatherAndSum(z, k, zAll, red, 2 * k);
            for (int j = 0; j < k; j++) {
                s1[j] = red[j];
                s2[j] = red[k + j];
            }
            kernel.multiply(zAll, k, dz);

            Arrays.fill(red, 0, 3 * k, 0.0);
            for (int i = 0, p = 0; i < n; i++) {
                for (int j = 0; j < k; j++, p++) {
                    double mi = eM[p];
                    double xi = x[p];
                    double h = f * mi * xi + mi * coef[j] * ((twoA[j] - eB[p]) * s1[j] - s2[j] + dz[p] * INV_SCALE);
                    double yi = shifted ? lambda0[j] * xi - h : h;
                    y[p] = yi;
                    red[j] += yi * xi;
                    red[k + j] += xi * xi;
                    red[2 * k + j] += yi * yi;
                }
            }
            sync.allreduceSum(red, 3 * k);
            for (int j = 0; j < k; j++) {
                if (!active[j]) {
                    norm[j] = 0;
                    continue;
                }
                double t0 = red[j];
                double t1 = red[k + j];
                double t2 = red[2 * k + j];
                double e = t0 / t1;
                eigenvalue[j] = e;
                // dapwc's test asks e > 0; pass 0 also stops on a negative dominant one (see runSplitTest)
                if (iteration > 10 && (e > 0 || (!shifted && e < 0))
                        && Math.abs(e - previous[j]) <= Math.abs(e) * settings.eigenvalueChange
                        && Math.abs(t2 - 2.0 * t0 * e + t1 * e * e) <= e * e * settings.eigenvectorChange) {
                    converged[j] = true;
                }
                previous[j] = e;
                norm[j] = t2 > 0 ? 1.0 / Math.sqrt(t2) : 0.0;
            }
            for (int i = 0, p = 0; i < n; i++) {
                for (int j = 0; j < k; j++, p++) {
                    if (active[j]) {
                        x[p] = y[p] * norm[j];
                    }
                }
            }
            for (int j = 0; j < k; j++) {
                if (active[j] && converged[j]) {
                    active[j] = false;
                    activeCount--;
                }
            }
            powerIterations++;
            progress.update(this);
        }
    }

    /**
     * Splits cluster {@code cluster} of {@code current} in two by moving eps up and down along {@link #splitVector}
     * (dapwc's dothesplit), the step scaled by that cluster's M and C.
     */
    private void split(int cluster) {
        final ClusterState s = current;
        final int k = s.k;
        final int n = rows;
        final double temperature = s.temperature;
        double perturbationFactor = settings.splitPerturbation;
        double shifts = 0;
        double shiftNorm = 0;
        double epsNorm = 0;
        for (int i = 0, p = cluster; i < n; i++, p += k) {
            double v = splitVector[i];
            double shift = s.m[p] * 0.5 * v / temperature;
            shifts += k == 1 ? Math.abs(shift) : shift;
            double scaled = v * perturbationFactor;
            shiftNorm += scaled * scaled;
            epsNorm += s.eps[p] * s.eps[p];
        }
        sums[0] = shifts;
        sums[1] = shiftNorm;
        sums[2] = epsNorm;
        sync.allreduceSum(sums, 3);
        double sizeShift = Math.abs(0.05 * s.c[cluster] / sums[0]);
        double normShift = 0.1 * Math.sqrt(sums[2] / sums[1]);
        double step = Math.min(sizeShift, normShift) * perturbationFactor;
        s.splitEpsilon(cluster, splitVector, step);
        oldEpsSet = 0;
        splits++;
    }

    /**
     * dapwc's CheckValidSolution: if some clusters have fewer than {@code minClusterSize} points, go back to the best
     * solution, drop them and return true (the caller refreezes); false when there is nothing to drop. Without a best
     * solution with the same K dapwc keeps them; by default ({@link PwcSettings#dropSmallClustersWithoutBest}) they
     * are dropped from the running one.
     */
    private boolean removeSmallClusters() {
        int drop = 0;
        for (int j = 0; j < current.k; j++) {
            remove[j] = current.c[j] < settings.minClusterSize - 0.5;
            if (remove[j]) {
                drop++;
            }
        }
        if (drop == 0 || drop == current.k) {
            return false;
        }
        if (bestSet && best.k == current.k) {
            current.copyFrom(best);
        } else if (!settings.dropSmallClustersWithoutBest) {
            return false;
        }
        current.removeClusters(remove);
        actualMaxK = current.k;
        removedClusters += drop;
        current.hamiltonian = 0;
        return true;
    }

    // ---------------------------------------------------------------------------------------------------- helpers

    /** Mean of the off-diagonal entries present (missing ones excluded), over all blocks. */
    private double meanDistance() {
        double[] totals = new double[2];
        kernel.localDistanceSums(totals);
        sync.allreduceSum(totals, 2);
        if (totals[1] == 0 || totals[0] == 0) {
            throw new IllegalArgumentException("the distance matrix has no positive off-diagonal distance");
        }
        return totals[0] / totals[1] * INV_SCALE;
    }

    /** The power method's start vector: dapwc's 1 + 0.5 i / N, or 1 + 0.5 u_i from the seed; unit length overall. */
    private void initStartVector() {
        double norm = 0;
        for (int i = 0; i < rows; i++) {
            int global = kernel.globalRow(i);
            double u = settings.seed == null ? (double) global / points : unitHash(settings.seed, global);
            startVector[i] = 1.0 + 0.5 * u;
            norm += startVector[i] * startVector[i];
        }
        sums[0] = norm;
        sync.allreduceSum(sums, 1);
        double inv = 1.0 / Math.sqrt(sums[0]);
        for (int i = 0; i < rows; i++) {
            startVector[i] *= inv;
        }
    }

    /** A value in [0, 1) from (seed, index): SplitMix64's finaliser, the same in every block. */
    static double unitHash(long seed, long index) {
        long h = seed * 0x9E3779B97F4A7C15L + index * 0xBF58476D1CE4E5B9L + 0x94D049BB133111EBL;
        h = (h ^ (h >>> 30)) * 0xBF58476D1CE4E5B9L;
        h = (h ^ (h >>> 27)) * 0x94D049BB133111EBL;
        h = h ^ (h >>> 31);
        return (h >>> 11) * 0x1.0p-53;
    }

    /** Labels (argmin eps), sizes, centers and the frozen state over all blocks; allocates, runs once. */
    private PwcResult finish(long started) {
        final int k = current.k;
        final double[] eps = current.eps;
        double[] labelLocal = new double[rows];
        for (int i = 0; i < rows; i++) {
            int best = 0;
            for (int j = 1; j < k; j++) {
                if (eps[i * k + j] < eps[i * k + best]) {
                    best = j;
                }
            }
            labelLocal[i] = best;
        }
        double[] labelAll = new double[points];
        kernel.gather(labelLocal, 1, labelAll);

        int[] count = new int[k];
        for (double l : labelAll) {
            count[(int) l]++;
        }
        int[] renumber = new int[k];
        int found = 0;
        for (int j = 0; j < k; j++) {
            renumber[j] = count[j] > 0 ? found++ : -1;
        }
        int[] labels = new int[points];
        int[] sizes = new int[found];
        for (int i = 0; i < points; i++) {
            labels[i] = renumber[(int) labelAll[i]];
            sizes[labels[i]]++;
        }

        // center of each cluster: the member with the smallest mean distance to the members (one product D * onehot)
        double[] oneHot = new double[points * found];
        for (int i = 0; i < points; i++) {
            oneHot[i * found + labels[i]] = 1.0;
        }
        double[] memberSums = new double[rows * found];
        kernel.multiply(oneHot, found, memberSums);
        double[] bestMean = new double[found];
        Arrays.fill(bestMean, Double.MAX_VALUE);
        double[] bestIndex = new double[found];
        Arrays.fill(bestIndex, Double.MAX_VALUE);
        for (int i = 0; i < rows; i++) {
            int l = labels[kernel.globalRow(i)];
            double mean = memberSums[i * found + l] * INV_SCALE / sizes[l];
            if (mean < bestMean[l]) {
                bestMean[l] = mean;
                bestIndex[l] = kernel.globalRow(i);
            }
        }
        double[] localMean = bestMean.clone();
        sync.allreduceMin(bestMean, found);
        for (int l = 0; l < found; l++) {
            if (localMean[l] != bestMean[l]) {
                bestIndex[l] = Double.MAX_VALUE;
            }
        }
        sync.allreduceMin(bestIndex, found);
        int[] centers = new int[found];
        for (int l = 0; l < found; l++) {
            centers[l] = (int) bestIndex[l];
        }
        // the frozen state, for clustering new points: M of every point, C and A of the clusters kept (M, C and A
        // come from one E-step: the best solution and the last emStep hold them together)
        kernel.gather(current.m, k, mAll);
        double[] memberships = new double[points * found];
        double[] softSizes = new double[found];
        double[] epsilonOffsets = new double[found];
        for (int j = 0; j < k; j++) {
            int l = renumber[j];
            if (l < 0) {
                continue;
            }
            softSizes[l] = current.c[j];
            epsilonOffsets[l] = current.a[j];
            for (int i = 0; i < points; i++) {
                memberships[i * found + l] = mAll[i * k + j];
            }
        }
        double seconds = (System.nanoTime() - started) / 1e9;
        return new PwcResult(labels, sizes, centers, bestMean, current.temperature, initialTemperature, emIterations,
                duplicateEmIterations, powerIterations, splits, removedClusters, current.hamiltonian, seconds,
                memberships, softSizes, epsilonOffsets);
    }
}
