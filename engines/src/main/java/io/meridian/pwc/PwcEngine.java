package io.meridian.pwc;

import io.meridian.collective.BlockSync;
import io.meridian.matrix.RowBlock;
import io.meridian.matrix.RowPartition;
import io.meridian.matrix.ShortMatrixFormat;
import java.util.Arrays;

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
 * <p>Parallel structure: this block owns rows {@code [rowStart, rowEnd)}; every per-iteration sum over all points goes
 * through {@link BlockSync}: one allgatherv of the block's M (rows x K) and three allreduces of K values per EM
 * iteration; one allgatherv of N x K values and two allreduces per (batched) power iteration. Working arrays are 1-D,
 * sized once for the largest K, so neither an EM iteration nor a split test allocates. {@link BlockProduct} holds the
 * block's 16-bit rows.
 *
 * <p>Where this differs from dapwc (each documented where it happens): a cluster whose dominant eigenvalue is negative
 * is split rather than skipped; {@link PwcSettings#failedSplitTestsToStop} can end the splitting below maxClusters;
 * after a duplicated-cluster EM run eps is restored from the solution before the test (dapwc keeps the last run's);
 * small clusters are dropped even when no best solution with the same K exists. Set MERIDIAN_PWC_TRACE to trace the
 * split tests on stderr.
 */
public final class PwcEngine {
    /** Phases reported to {@link PwcProgress}. */
    public enum Phase { ANNEALING, SPLIT_TEST, FREEZING }

    private static final double INV_SCALE = ShortMatrixFormat.INV_SCALE;
    /** Set MERIDIAN_PWC_TRACE to print every split test (each cluster's C, eigenvalues, convergence) on stderr. */
    private static final boolean TRACE = System.getenv("MERIDIAN_PWC_TRACE") != null;

    private final PwcSettings settings;
    private final BlockSync sync;
    private final RowBlock block;
    private final PwcProgress progress;
    private final int points;
    private final int rows;
    private final int rowStart;
    private final int maxK;
    private final BlockProduct product;

    private final int[] rowCounts;
    private final int[] rowDispls;
    private final int[] countsK;
    private final int[] displsK;

    // running solution; per-point arrays have stride k
    private int k;
    private double temperature;
    private final double[] m;
    private final double[] eps;
    private final double[] b;
    private final double[] mAll;
    private final double[] c;
    private final double[] a;
    private final double[] freeze;
    private final double[] weight;
    private final double[] epsDiff;
    private final double[] scale;
    private final double[] sums;
    private double hamiltonian;
    private int oldEpsSet;

    // best solution so far (dapwc's BestPWC)
    private final double[] bestM;
    private final double[] bestEps;
    private final double[] bestC;
    private final double[] bestA;
    private final double[] bestFreeze;
    private int bestK;
    private double bestTemperature;
    private double bestHamiltonian;
    private boolean bestSet;

    // split test
    private final double[] masterEps;
    private final double[] masterM;
    private final double[] masterB;
    private final double[] masterC;
    private final double[] masterA;
    private final double[] masterFreeze;
    private final double[] eigenM;
    private final double[] eigenB;
    private final double[] eigenA;
    private final double[] eigenC;
    private double eigenFudge;
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
    private int clusterToSplit;
    private double splitLambda0;

    // schedule state and counters
    private Phase phase = Phase.ANNEALING;
    private int actualMaxK;
    private int splitFailures;
    private int emIterations;
    private int duplicateEmIterations;
    private int powerIterations;
    private int splits;
    private int removedClusters;
    private int stepCount;
    private double meanDistance;
    private double initialTemperature;

    /**
     * @param block     this block's rows of the N x N distance matrix (its rows must be block {@code sync.block()} of
     *                  {@code partition})
     * @param partition how the N rows are split over the {@code sync.blocks()} blocks
     */
    public PwcEngine(RowBlock block, RowPartition partition, BlockSync sync, PwcSettings settings, PwcProgress progress) {
        if (partition.blocks() != sync.blocks()) {
            throw new IllegalArgumentException("partition has " + partition.blocks() + " blocks, sync has " + sync.blocks());
        }
        int me = sync.block();
        if (partition.n() != block.n() || partition.start(me) != block.rowStart() || partition.end(me) != block.rowEnd()) {
            throw new IllegalArgumentException("row block " + block + " is not block " + me + " of " + partition);
        }
        this.settings = settings;
        this.sync = sync;
        this.block = block;
        this.progress = progress == null ? PwcProgress.NONE : progress;
        this.points = block.n();
        this.rows = block.rows();
        this.rowStart = block.rowStart();
        this.maxK = settings.maxClusters;
        this.rowCounts = partition.counts(1);
        this.rowDispls = partition.displacements(1);
        this.countsK = new int[rowCounts.length];
        this.displsK = new int[rowCounts.length];
        this.product = new BlockProduct(block, settings.maxClusters);

        int local = rows * maxK;
        m = new double[local];
        eps = new double[local];
        b = new double[local];
        mAll = new double[points * maxK];
        c = new double[maxK];
        a = new double[maxK];
        freeze = new double[maxK];
        weight = new double[maxK];
        epsDiff = new double[maxK];
        scale = new double[maxK];
        sums = new double[3 * maxK + 4];
        bestM = new double[local];
        bestEps = new double[local];
        bestC = new double[maxK];
        bestA = new double[maxK];
        bestFreeze = new double[maxK];
        masterEps = new double[local];
        masterM = new double[local];
        masterB = new double[local];
        masterC = new double[maxK];
        masterA = new double[maxK];
        masterFreeze = new double[maxK];
        eigenM = new double[local];
        eigenB = new double[local];
        eigenA = new double[maxK];
        eigenC = new double[maxK];
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
        return k;
    }

    public double temperature() {
        return temperature;
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
        meanDistance = meanDistance();
        initialTemperature = 2.0 * meanDistance;
        temperature = initialTemperature;
        double minTemperature = temperature / 100000.0;
        double cooling = settings.initialCooling;
        actualMaxK = maxK;
        setK(1);
        Arrays.fill(weight, 1.0);
        phase = Phase.ANNEALING;
        emIterations = 0;
        duplicateEmIterations = 0;
        powerIterations = 0;
        splits = 0;
        removedClusters = 0;
        splitFailures = 0;
        stepCount = 0;
        oldEpsSet = 0;
        bestSet = false;
        initStartVector();

        boolean uniform = true;
        boolean lastLeg = false;
        boolean justConverging = false;
        boolean hamiltonianSet = false;
        double oldHamiltonian = temperature * points * (double) points;
        int freezeTemperatures = 0;
        int hamiltonianViolations = 0;
        int betweenSplits = 0;
        int failedTests = 0;
        boolean splittingOver = false;
        int wait = settings.splitWait;

        while (true) {
            emIterations++;
            stepCount++;
            emStep(uniform);
            uniform = false;
            progress.update(this);

            // convergence test at this temperature: 0 not yet, 1 converged, 2 converged with no more splits to do
            int convergence = 0;
            if (oldEpsSet > 1) {
                if (maxEpsChange() <= settings.epsilonChange) {
                    if (lastLeg || justConverging) {
                        convergence = 2;
                    } else if (k >= actualMaxK || temperature < minTemperature || splitFailures > 1 || splittingOver) {
                        lastLeg = true;
                        convergence = 2;
                    } else {
                        convergence = 1;
                    }
                } else if (stepCount > settings.temperatureIterationLimit) {
                    convergence = 2;
                }
            }
            if (convergence == 0) {
                continue;
            }
            stepCount = 0;

            hamiltonian = 0;
            for (int j = 0; j < k; j++) {
                hamiltonian += -2.0 * a[j] * c[j];
            }
            boolean decreasing;
            if (!hamiltonianSet) {
                hamiltonianSet = true;
                decreasing = true;
            } else {
                decreasing = hamiltonian <= oldHamiltonian;
            }
            if (decreasing) {
                saveBest();
            }
            oldHamiltonian = hamiltonian;

            if (convergence == 2 || justConverging) {
                phase = Phase.FREEZING;
                boolean finished = true;
                if (freezeTemperatures < settings.freezeTemperatureLimit) {
                    if (freezeTemperatures == 0) {
                        hamiltonianViolations = 0;
                        cooling = settings.freezeCooling;
                    }
                    int notFrozen = 0;
                    for (int j = 0; j < k; j++) {
                        if (freeze[j] > settings.freezingLimit) {
                            notFrozen++;
                        }
                    }
                    freezeTemperatures++;
                    if (decreasing) {
                        hamiltonianViolations = 0;
                    } else if (++hamiltonianViolations < 5) {
                        decreasing = true;
                    }
                    finished = !(notFrozen > 0 && decreasing);
                    if (!finished) {
                        temperature *= cooling;
                        continue;
                    }
                }
                if (removeSmallClusters()) {
                    lastLeg = true;
                    justConverging = true;
                    freezeTemperatures = 0;
                    betweenSplits = 0;
                    hamiltonianSet = false;
                    continue;
                }
                break;
            }

            // converged with room for more clusters: wait some temperatures between split tests once k > 1
            if (++betweenSplits > wait) {
                betweenSplits = 0;
            }
            if (betweenSplits > 0 && wait > 0 && k > 1) {
                temperature *= cooling;
                continue;
            }
            phase = Phase.SPLIT_TEST;
            boolean split = shouldSplit();
            phase = Phase.ANNEALING;
            if (split) {
                split(clusterToSplit);
                failedTests = 0;
                splitFailures = 0;
                wait = settings.splitWait;
                cooling = settings.fineCooling;
                betweenSplits = 0;
            } else {
                if (k > 1 && settings.failedSplitTestsToStop > 0 && ++failedTests >= settings.failedSplitTestsToStop) {
                    splittingOver = true;
                }
                temperature *= cooling;
            }
        }

        if (bestSet && bestK == k && bestHamiltonian < hamiltonian) {
            restoreBest();
        }
        return finish(started);
    }

    // ---------------------------------------------------------------------------------------------------- EM

    /** One EM iteration at the current temperature and weights; {@code uniform} sets M = 1/k instead of from eps. */
    private void emStep(boolean uniform) {
        final int k = this.k;
        final int n = rows;
        final double[] m = this.m;
        final double[] eps = this.eps;
        final double[] b = this.b;
        final double[] sums = this.sums;
        final double invT = 1.0 / temperature;
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
        sync.allreduceSum(sums, 2 * k);
        for (int j = 0; j < k; j++) {
            c[j] = sums[j];
            freeze[j] = c[j] > 0 ? sums[k + j] / c[j] : sums[k + j];
            scale[j] = c[j] > 0 ? INV_SCALE / c[j] : 0.0;
        }

        sync.allgatherv(m, mAll, countsK, displsK);
        product.multiply(mAll, k, b);

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
            a[j] = c[j] > 0 ? -0.5 * sums[j] / c[j] : 0.0;
        }

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
        for (int j = 0; j < k; j++) {
            max = Math.max(max, epsDiff[j]);
        }
        return max / points;
    }

    // ---------------------------------------------------------------------------------------------------- splitting

    /**
     * dapwc's shouldweSplit: the second-derivative matrix of each cluster with the cluster duplicated, estimated with
     * M halved (f = 1/2, dapwc's methodology 2, which it uses for one cluster), or with {@code duplicatedSplitTest} as
     * dapwc does for two or more (methodology 3): each cluster big enough is duplicated for real (weight 2), EM
     * re-converged, and the power method runs on that cluster's M, B, A, C (f = 1). Methodology 3 leaves the soft tail
     * of other clusters' points un-halved and finds spurious negative eigenvalues well above a cluster's critical
     * temperature (compact blobs split at T = 0.17 where lambda_max(-JDJ)/N gives T_c = 0.015), hence the default. The cluster with the most negative smallest
     * eigenvalue is split if that eigenvalue is at most {@code minEigenTest} times its largest one. The clusters'
     * power methods are independent; they run side by side, one K-column product per iteration, each cluster stopping
     * on its own convergence test, so the matrix is streamed once per iteration instead of once per cluster.
     */
    private boolean shouldSplit() {
        final int k = this.k;
        clusterToSplit = -1;
        double minEigen = 99999999999.0;
        splitLambda0 = 0;
        int len = rows * k;
        if (k == 1 || !settings.duplicatedSplitTest) {
            // the duplicated cluster estimated by halving M (dapwc's methodology 2, which dapwc uses for one cluster)
            eigenFudge = 0.5;
            System.arraycopy(m, 0, eigenM, 0, len);
            System.arraycopy(b, 0, eigenB, 0, len);
            for (int j = 0; j < k; j++) {
                eigenA[j] = a[j];
                eigenC[j] = c[j];
                tested[j] = c[j] > settings.tooSmallToSplit;
            }
        } else {
            eigenFudge = 1.0;
            System.arraycopy(eps, 0, masterEps, 0, len);
            System.arraycopy(m, 0, masterM, 0, len);
            System.arraycopy(b, 0, masterB, 0, len);
            System.arraycopy(c, 0, masterC, 0, k);
            System.arraycopy(a, 0, masterA, 0, k);
            System.arraycopy(freeze, 0, masterFreeze, 0, k);
            for (int cluster = 0; cluster < k; cluster++) {
                tested[cluster] = masterC[cluster] > settings.tooSmallToSplit;
                if (!tested[cluster]) {
                    continue;
                }
                weight[cluster] = 2.0;
                for (int loop = 0; loop < settings.duplicateEmLimit; loop++) {
                    emStep(false);
                    duplicateEmIterations++;
                    progress.update(this);
                    if (oldEpsSet > 1 && maxEpsChange() <= settings.epsilonChange) {
                        break;
                    }
                }
                weight[cluster] = 1.0;
                for (int i = 0, p = cluster; i < rows; i++, p += k) {
                    eigenM[p] = m[p];
                    eigenB[p] = b[p];
                }
                eigenA[cluster] = a[cluster];
                eigenC[cluster] = c[cluster];
                System.arraycopy(masterEps, 0, eps, 0, len);
            }
            System.arraycopy(masterM, 0, m, 0, len);
            System.arraycopy(masterB, 0, b, 0, len);
            System.arraycopy(masterC, 0, c, 0, k);
            System.arraycopy(masterA, 0, a, 0, k);
            System.arraycopy(masterFreeze, 0, freeze, 0, k);
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
        for (int j = 0; j < k; j++) {
            if (tested[j] && lambda0[j] < 0 && converged0[j]) {
                // the dominant eigenvalue itself is negative: the cluster is more unstable than positive-definite
                // anywhere; dapwc drops such a cluster from the test (its Pass0 <= 0), we take it as the smallest
                // eigenvalue, with pass 0's vector (left in x, as pass 1 skipped it) as the split direction
                if (lambda0[j] < minEigen) {
                    minEigen = lambda0[j];
                    clusterToSplit = j;
                    splitLambda0 = -lambda0[j];
                }
                continue;
            }
            boolean candidate = tested[j] && lambda0[j] > 0 && (k == 1 || (converged0[j] && converged1[j]));
            if (candidate && lambda0[j] - lambda1[j] < minEigen) {
                minEigen = lambda0[j] - lambda1[j];
                clusterToSplit = j;
                splitLambda0 = lambda0[j];
            }
        }
        if (TRACE) {
            StringBuilder line = new StringBuilder(String.format(java.util.Locale.ROOT, "split test T=%.5g k=%d:", temperature, k));
            for (int j = 0; j < k; j++) {
                line.append(String.format(java.util.Locale.ROOT, " [C=%.0f l0=%.4g%s l1=%.4g%s min=%.3g]", eigenC[j], lambda0[j],
                        converged0[j] ? "" : "*", lambda1[j], converged1[j] ? "" : "*", lambda0[j] - lambda1[j]));
            }
            System.err.println(line);
        }
        if (clusterToSplit < 0) {
            splitFailures++;
            return false;
        }
        for (int i = 0, p = clusterToSplit; i < rows; i++, p += k) {
            splitVector[i] = x[p];
        }
        return minEigen <= settings.minEigenTest * splitLambda0;
    }

    /**
     * The power method for every cluster with {@code active[j]}, side by side (stride k). H_ab of cluster j is
     * delta_ab f M_a + (f M_a M_b / (T C)) (-2A - B_a - B_b + d_ab) with that cluster's eigen inputs; with
     * {@code shifted} the matrix is (lambda0_j I - H). Ends with {@code x} holding each cluster's last unit vector.
     */
    private void powerMethod(boolean shifted, double[] eigenvalue, boolean[] converged) {
        final int k = this.k;
        final int n = rows;
        final double f = eigenFudge;
        final double[] x = this.x;
        final double[] y = this.y;
        final double[] z = this.z;
        final double[] eM = eigenM;
        final double[] eB = eigenB;
        final double[] red = sums;
        int activeCount = 0;
        for (int j = 0; j < k; j++) {
            coef[j] = f / (temperature * eigenC[j]);
            twoA[j] = -2.0 * eigenA[j];
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
            sync.allreduceSum(red, 2 * k);
            for (int j = 0; j < k; j++) {
                s1[j] = red[j];
                s2[j] = red[k + j];
            }
            sync.allgatherv(z, zAll, countsK, displsK);
            product.multiply(zAll, k, dz);

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
                // dapwc's test asks e > 0; pass 0 also accepts a negative dominant eigenvalue (see shouldSplit)
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

    /** Splits {@code cluster} in two by moving eps up and down along the eigenvector (dapwc's dothesplit). */
    private void split(int cluster) {
        final int k = this.k;
        final int n = rows;
        double perturbationFactor = settings.splitPerturbation;
        double shifts = 0;
        double shiftNorm = 0;
        double epsNorm = 0;
        for (int i = 0, p = cluster; i < n; i++, p += k) {
            double v = splitVector[i];
            double shift = m[p] * 0.5 * v / temperature;
            shifts += k == 1 ? Math.abs(shift) : shift;
            double scaled = v * perturbationFactor;
            shiftNorm += scaled * scaled;
            epsNorm += eps[p] * eps[p];
        }
        sums[0] = shifts;
        sums[1] = shiftNorm;
        sums[2] = epsNorm;
        sync.allreduceSum(sums, 3);
        double sizeShift = Math.abs(0.05 * c[cluster] / sums[0]);
        double normShift = 0.1 * Math.sqrt(sums[2] / sums[1]);
        double step = Math.min(sizeShift, normShift) * perturbationFactor;

        restride(eps, k, k + 1);
        int k1 = k + 1;
        for (int i = 0; i < n; i++) {
            double original = eps[i * k1 + cluster];
            double perturbation = splitVector[i] * step;
            eps[i * k1 + cluster] = original + perturbation;
            eps[i * k1 + k] = original - perturbation;
        }
        setK(k1);
        oldEpsSet = 0;
        splits++;
    }

    /**
     * dapwc's CheckValidSolution: if some clusters have fewer than {@code minClusterSize} points, go back to the best
     * solution, drop them and return true (the caller refreezes); false when there is nothing to drop. Where the
     * original keeps the small clusters (no best solution with the same K), they are dropped from the running one.
     */
    private boolean removeSmallClusters() {
        int drop = 0;
        for (int j = 0; j < k; j++) {
            remove[j] = c[j] < settings.minClusterSize - 0.5;
            if (remove[j]) {
                drop++;
            }
        }
        if (drop == 0 || drop == k) {
            return false;
        }
        if (bestSet && bestK == k) {
            restoreBest();
        }
        int oldK = k;
        int newK = 0;
        for (int i = 0; i < rows; i++) {
            int to = i * (oldK - drop);
            for (int j = 0; j < oldK; j++) {
                if (!remove[j]) {
                    eps[to++] = eps[i * oldK + j];
                }
            }
        }
        for (int j = 0; j < oldK; j++) {
            if (!remove[j]) {
                c[newK] = c[j];
                a[newK] = a[j];
                freeze[newK] = freeze[j];
                newK++;
            }
        }
        setK(newK);
        actualMaxK = newK;
        removedClusters += drop;
        hamiltonian = 0;
        return true;
    }

    // ---------------------------------------------------------------------------------------------------- helpers

    private void setK(int newK) {
        k = newK;
        for (int blk = 0; blk < countsK.length; blk++) {
            countsK[blk] = rowCounts[blk] * newK;
            displsK[blk] = rowDispls[blk] * newK;
        }
    }

    /** Re-lays out rows x oldK values as rows x newK (newK > oldK), in place; new columns are left as they are. */
    private void restride(double[] values, int oldK, int newK) {
        for (int i = rows - 1; i >= 0; i--) {
            for (int j = oldK - 1; j >= 0; j--) {
                values[i * newK + j] = values[i * oldK + j];
            }
        }
    }

    private void saveBest() {
        int len = rows * k;
        System.arraycopy(m, 0, bestM, 0, len);
        System.arraycopy(eps, 0, bestEps, 0, len);
        System.arraycopy(c, 0, bestC, 0, k);
        System.arraycopy(a, 0, bestA, 0, k);
        System.arraycopy(freeze, 0, bestFreeze, 0, k);
        bestK = k;
        bestTemperature = temperature;
        bestHamiltonian = hamiltonian;
        bestSet = true;
    }

    private void restoreBest() {
        setK(bestK);
        int len = rows * k;
        System.arraycopy(bestM, 0, m, 0, len);
        System.arraycopy(bestEps, 0, eps, 0, len);
        System.arraycopy(bestC, 0, c, 0, k);
        System.arraycopy(bestA, 0, a, 0, k);
        System.arraycopy(bestFreeze, 0, freeze, 0, k);
        temperature = bestTemperature;
        hamiltonian = bestHamiltonian;
    }

    /** Mean of the off-diagonal entries present (missing ones excluded), over all blocks. */
    private double meanDistance() {
        long sum = 0;
        long count = 0;
        for (int i = 0; i < rows; i++) {
            int global = rowStart + i;
            for (int j = 0; j < points; j++) {
                int v = product.raw(i, j);
                if (j != global && (v > 0 || !product.hadMissing() || block.raw(global, j) >= 0)) {
                    sum += v;
                    count++;
                }
            }
        }
        double[] totals = {sum, count};
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
            int global = rowStart + i;
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
        final int k = this.k;
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
        sync.allgatherv(labelLocal, labelAll, rowCounts, rowDispls);

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
        product.multiply(oneHot, found, memberSums);
        double[] bestMean = new double[found];
        Arrays.fill(bestMean, Double.MAX_VALUE);
        double[] bestIndex = new double[found];
        Arrays.fill(bestIndex, Double.MAX_VALUE);
        for (int i = 0; i < rows; i++) {
            int l = labels[rowStart + i];
            double mean = memberSums[i * found + l] * INV_SCALE / sizes[l];
            if (mean < bestMean[l]) {
                bestMean[l] = mean;
                bestIndex[l] = rowStart + i;
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
        // come from one E-step: restoreBest and the last emStep set them together)
        sync.allgatherv(m, mAll, countsK, displsK);
        double[] memberships = new double[points * found];
        double[] softSizes = new double[found];
        double[] epsilonOffsets = new double[found];
        for (int j = 0; j < k; j++) {
            int l = renumber[j];
            if (l < 0) {
                continue;
            }
            softSizes[l] = c[j];
            epsilonOffsets[l] = a[j];
            for (int i = 0; i < points; i++) {
                memberships[i * found + l] = mAll[i * k + j];
            }
        }
        double seconds = (System.nanoTime() - started) / 1e9;
        return new PwcResult(labels, sizes, centers, bestMean, temperature, initialTemperature, emIterations,
                duplicateEmIterations, powerIterations, splits, removedClusters, hamiltonian, seconds,
                memberships, softSizes, epsilonOffsets);
    }
}
