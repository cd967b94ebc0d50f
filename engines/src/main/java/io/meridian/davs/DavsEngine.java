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
        return new DavsEngine(xRowMajor, n, d, settings).anneal();
    }

    private DavsResult anneal() {
        long start = System.nanoTime();
        initialize();
        double tMin = s.minimumTemperature() > 0 ? s.minimumTemperature()
                : initialTemperature / Math.abs(s.minimumTemperature());
        double[] cleanUps = s.cleanUpTemperatures();
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
                if (col > 0 && mv > 0) {
                    int yo = col * d;
                    for (int i = 0; i < d; i++) {
                        ySum[yo + i] += mv * x[xo + i];
                    }
                }
            }
        }
        double clusters = 0;
        for (int col = 1; col <= k; col++) {
            clusters += c[col];
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
        int chosen = 0;
        for (int col = 1; col <= k; col++) {
            int so = col * dd;
            double trace = 0;
            for (int i = 0; i < d; i++) {
                trace += scatter[so + i * d + i];
                for (int j = 0; j < i; j++) {
                    scatter[so + i * d + j] = scatter[so + j * d + i];
                }
            }
            width2[col] = c[col] > 0 ? trace / c[col] : 0;
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
            split(splitSlots[q]);
            done++;
        }
        return done;
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
    private void split(int col) {
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
        setSigma(col);
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
            for (int other = 1; other <= k; other++) {
                if (other == col || sizes[col] > sizes[other] || (sizes[col] == sizes[other] && col < other)) {
                    continue;
                }
                double sum = 0;
                for (int q = 0; q < d; q++) {
                    double diff = y[col * d + q] - y[other * d + q];
                    sum += diff * diff * invSigma2[col * d + q];
                }
                if (sum < s.closenessDistanceSquared()) {
                    moveInto(k, col);
                    k--;
                    closeRemoved++;
                    break;
                }
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
