package io.meridian.mds;

import io.meridian.collective.BlockSync;
import io.meridian.engine.BadInputException;
import io.meridian.engine.BadInputException.Input;
import io.meridian.matrix.DistanceSource;
import io.meridian.matrix.RowBlock;
import io.meridian.matrix.RowPartition;
import io.meridian.matrix.ShortMatrixFormat;
import io.meridian.matrix.Weighting;
import java.util.Arrays;

/**
 * MDS as a chi-square fitted by Levenberg-Marquardt, as MDSasChisq (Fox's Manxcat) does it, over the rows this
 * process owns (the same even row blocks as {@link DaMds}).
 *
 * <p>chi^2 = sum over ordered pairs i != j of c_ij (d_ij(X) - delta_ij)^2, c_ij = w_ij m^2 f(delta_ij)^2, with w_ij
 * the pair's weight (unit, point weights s_i s_j, or a weight matrix; 0 where the distance is missing), m = 10 (the
 * original's ChisqFunctionCalcMultiplier) and f the {@code Chisqnorm} choice ({@link LmOptions#chisqNorm}), which
 * depends only on delta's 16-bit value, so it is a table. Per iteration, on the local rows: half the gradient
 * a_i = 2 sum_j c_ij (d_ij - delta_ij) e_ij (e_ij = (x_i - x_j) / d_ij) and the diagonal of the Gauss-Newton matrix
 * M (M_ii = 2 sum_j c_ij e_ij e_ij^T, M_ij = -2 c_ij e_ij e_ij^T). The step solves (S + Q I) y = -D^-1/2 a, S =
 * D^-1/2 M D^-1/2 (D = diag M: the original's diagonal scaling), by CG with M applied as a product over the local rows,
 * one {@code allgatherv} of the search direction per product and {@code allreduceSum}s for the dot products; then
 * s = D^-1/2 y. Fixed points are out of the solve: their rows and columns of M, a and s are zero, and their
 * coordinates are never written after the start. The trial layout is kept when chi^2 falls; Q follows the original's
 * rules ({@link #controlQ}). Everything is allocated in the constructor or {@link #prepare}; an iteration allocates
 * nothing.
 */
public final class LmMds {
    private static final double INV = ShortMatrixFormat.INV_SCALE;
    private static final int POWER_ITERATIONS = 30;

    private final int n;
    private final int dim;
    private final MdsOptions options;
    private final LmOptions lm;
    private final BlockSync sync;
    private final Weighting weighting;
    private final DistanceSource source;
    private final int lo;
    private final int rows;
    private final int[] counts;
    private final int[] displs;
    /** The local rows' raw 16-bit distances, read in place (negative: missing): nothing O(N^2) on the heap. */
    private final RowBlock deltas;
    /** The local rows' raw 16-bit weights, read in place (weight matrix only). */
    private final RowBlock weights;
    /** Local row {@link #loadedRow}'s distances and weights, copied from the mapped blocks for a pass over it. */
    private final short[] deltaRow;
    private final short[] weightRow;
    private int loadedRow = -1;
    private final boolean[] fixed;
    /** c(delta)/w by the distance's raw value. */
    private final double[] normTable = new double[Short.MAX_VALUE + 1];

    private final double[] x;
    private final double[] xTrial;
    private final double[] step;
    private double[] half;
    private double[] halfTrial;
    private double[] diag;
    private double[] diagTrial;
    private final double[] sqLocal;
    private final double[] sqGlobal;
    private final double[] rhs;
    private final double[] y;
    private final double[] r;
    private final double[] p;
    private final double[] ap;
    private final double[] pGlobal;
    private final double[] sums = new double[3];
    private final double[] box = new double[2];
    private final double[] acc;
    private double[] chsave;
    /** Seconds from the start and stress after each iteration (index 0: the start), for secondsToWithin. */
    private double[] traceSeconds;
    private double[] traceStress;

    private double chisq;
    private double stress;
    private double chisqTrial;
    private double stressTrial;
    private double q;
    private double qLow;
    private double qHigh;
    private double qGood = -1;
    private double qGoodFactor = 1;
    private int good;
    private long iterations;
    private long cgSteps;
    private long rejected;
    private String stopReason = "";
    private boolean prepared;

    /** The most doubles one allreduce of this engine carries. */
    public static final int REDUCE_CAPACITY = 3;

    public LmMds(DistanceSource distances, Weighting weighting, MdsOptions options, LmOptions lm, BlockSync sync) {
        if (weighting.sammon()) {
            throw new IllegalArgumentException("Sammon weights are not an LM option: use chisq-norm 2 (the original's"
                    + " Sammon chi-square)");
        }
        this.n = distances.n();
        this.dim = options.dim;
        this.options = options;
        this.lm = lm;
        this.sync = sync;
        this.weighting = weighting;
        this.source = distances;
        RowPartition partition = RowPartition.of(n, sync.blocks());
        this.lo = partition.start(sync.block());
        this.rows = partition.rows(sync.block());
        this.counts = partition.counts(dim);
        this.displs = partition.displacements(dim);
        if (options.fixed != null && (options.fixed.length != n || options.fixedCoordinates.length != n * dim)) {
            throw new BadInputException(Input.FIXED_POINTS, null, "fixed points given for " + options.fixed.length
                    + " points, the distances have " + n);
        }
        this.fixed = options.fixed == null ? new boolean[n] : options.fixed.clone();
        this.deltas = distances.rows(lo, lo + rows);
        this.deltaRow = new short[n];
        if (weighting.kind() == Weighting.Kind.MATRIX) {
            this.weights = weighting.mapBlock(n, lo, lo + rows);
            this.weightRow = new short[n];
        } else {
            this.weights = null;
            this.weightRow = null;
        }
        int local = rows * dim;
        this.x = new double[n * dim];
        this.xTrial = new double[n * dim];
        this.step = new double[n * dim];
        this.half = new double[local];
        this.halfTrial = new double[local];
        this.diag = new double[local];
        this.diagTrial = new double[local];
        this.sqLocal = new double[local];
        this.sqGlobal = new double[n * dim];
        this.rhs = new double[local];
        this.y = new double[local];
        this.r = new double[local];
        this.p = new double[local];
        this.ap = new double[local];
        this.pGlobal = new double[n * dim];
        this.acc = new double[dim];
    }

    // ------------------------------------------------------------------------------------------------ preparation

    /**
     * The mean distance (the original's SystemAverage) and the Chisqnorm table, then the start: the layout DA-MDS
     * would start from with the same options (so both solvers start alike), fixed points at their coordinates.
     * Collective.
     */
    public void prepare() {
        if (prepared) {
            return;
        }
        Arrays.fill(sums, 0);
        for (int i = 0; i < rows; i++) {
            loadRow(i);
            for (int j = 0; j < n; j++) {
                short v = deltaRow[j];
                if (v >= 0 && j != lo + i && pairWeight(i, j) > 0) {
                    sums[0] += 1;
                    sums[1] += v * INV;
                }
            }
        }
        sync.allreduceSum(sums, 2);
        if (sums[0] == 0) {
            throw new BadInputException(Input.DISTANCES, null, "no pair has both a distance and a non-zero weight");
        }
        double average = sums[1] / sums[0];
        if (!(average > 0)) {
            throw new BadInputException(Input.DISTANCES, null, "every distance is 0: nothing to lay out");
        }
        fillNormTable(average);
        DaMds start = new DaMds(source, weighting, options, sync);
        start.prepare();
        System.arraycopy(start.points(), 0, x, 0, n * dim);
        if (options.fixed != null) {
            for (int i = 0; i < n; i++) {
                if (fixed[i]) {
                    System.arraycopy(options.fixedCoordinates, i * dim, x, i * dim, dim);
                }
            }
        }
        chsave = new double[lm.nbadgo()];
        traceSeconds = new double[lm.maxIterations() + 1];
        traceStress = new double[lm.maxIterations() + 1];
        prepared = true;
    }

    /**
     * f(delta)^2 m^2 by raw value, MDSasChisq's SetChisqWeights with distance formula 1 (distances not squared).
     * Distances below the minimum distance (0.001 of the mean; the original's MinimumDistance is a setting) are
     * weighted as that minimum in the norms that divide by delta.
     */
    private void fillNormTable(double average) {
        double min = 0.001 * average;
        double m2 = LmOptions.FUNCTION_MULTIPLIER * LmOptions.FUNCTION_MULTIPLIER;
        for (int v = 0; v <= Short.MAX_VALUE; v++) {
            double delta = v * INV;
            double floor = Math.max(delta, min);
            double f2 = switch (lm.chisqNorm()) {
                case 0 -> 1 / (floor * floor);
                case 1 -> 1 / (Math.pow(floor, 1.5) * Math.sqrt(average));
                case 2 -> 1 / (floor * average);
                case 3 -> 1 / (average * average);
                default -> delta / (average * average * average);
            };
            normTable[v] = f2 * m2;
        }
    }

    /** Copies local row {@code i}'s distances (and weights) out of the mapped blocks, once per pass over the row. */
    private void loadRow(int i) {
        if (i == loadedRow) {
            return;
        }
        deltas.copyRow(lo + i, 0, n, deltaRow, 0);
        if (weights != null) {
            weights.copyRow(lo + i, 0, n, weightRow, 0);
        }
        loadedRow = i;
    }

    /**
     * The base weight of (local row i, column j), before the norm; 0 where the weight matrix says missing. For a weight
     * matrix it reads the row {@link #loadRow} loaded last, which must be row i.
     */
    private double pairWeight(int i, int j) {
        switch (weighting.kind()) {
            case UNIT:
                return 1;
            case POINT:
                return weighting.pointWeight(lo + i) * weighting.pointWeight(j);
            default:
                int raw = weightRow[j];
                return raw < 0 ? 0 : raw * INV;
        }
    }

    // ------------------------------------------------------------------------------------------------ the solve

    /** Runs LM to one of the stopping tests; returns the result (the same in every process). Collective. */
    public LmResult run() {
        long t0 = System.nanoTime();
        prepare();
        chisq = evaluate(x, half, diag);
        stress = stressTrial;
        double startStress = stress;
        traceSeconds[0] = (System.nanoTime() - t0) / 1e9;
        traceStress[0] = stress;
        findQLimits();
        q = Math.max(lm.qHighInitialFactor() * qHigh, qLow);
        Arrays.fill(chsave, chisq);
        double dellim = lm.chisqChangePerPoint() * n;
        long lastAccepted = System.nanoTime();
        while (true) {
            double expected = solveStep();
            for (int i = 0; i < n; i++) {
                for (int k = 0; k < dim; k++) {
                    // fixed points are copied, not added to: x + 0 would turn -0.0 into 0.0
                    xTrial[i * dim + k] = fixed[i] ? x[i * dim + k] : x[i * dim + k] + step[i * dim + k];
                }
            }
            chisqTrial = evaluate(xTrial, halfTrial, diagTrial);
            iterations++;
            double change = chisq - chisqTrial;
            boolean accepted = change > 0;
            if (accepted) {
                System.arraycopy(xTrial, 0, x, 0, n * dim);
                double[] t = half;
                half = halfTrial;
                halfTrial = t;
                t = diag;
                diag = diagTrial;
                diagTrial = t;
                chisq = chisqTrial;
                stress = stressTrial;
                lastAccepted = System.nanoTime();
            } else {
                rejected++;
            }
            chsave[(int) (iterations % chsave.length)] = chisq;
            traceSeconds[(int) iterations] = (System.nanoTime() - t0) / 1e9;
            traceStress[(int) iterations] = stress;
            if (iterations >= lm.maxIterations()) {
                stopReason = "iterations";
                break;
            }
            if (accepted && expected <= dellim) {
                stopReason = "predicted change";
                break;
            }
            if (iterations > chsave.length
                    && chsave[(int) ((iterations + 1) % chsave.length)] - chisq <= dellim) {
                stopReason = "no progress in " + chsave.length + " iterations";
                break;
            }
            controlQ(accepted ? change : -1, expected);
        }
        double seconds = (System.nanoTime() - t0) / 1e9;
        double toFinal = (lastAccepted - t0) / 1e9;
        return new LmResult(n, dim, x.clone(), stress, startStress, chisq, lm.chisqNorm(), iterations, rejected,
                cgSteps, q, stopReason, seconds, toFinal, secondsToWithin(1.01 * stress));
    }

    /** The seconds from the start to the first iteration whose stress was at most {@code stress}; NaN if none. */
    private double secondsToWithin(double bound) {
        for (int i = 0; i <= iterations; i++) {
            if (traceStress[i] <= bound) {
                return traceSeconds[i];
            }
        }
        return Double.NaN;
    }

    /**
     * Marquardt's Q as ManxcatCentral sets it after a step: a change of at least rho x predicted is good; of at least
     * sigma x predicted very good and lowers Q (below Qlow after three good steps in a row); anything else raises Q
     * towards the last good Q or, with none, to sqrt(Qlow Qhigh). Differences: where the original, with Q already near
     * Qhigh, tries a steepest-descent step, this multiplies Q by 4 (the original's raise when a solve fails); a raise
     * is always at least by Q_SCALE; the limits are found once, at the start.
     */
    private void controlQ(double change, double expected) {
        if (change >= LmOptions.RHO * expected) {
            qGood = q;
            good++;
            if (q < 1e-10 || change < LmOptions.SIGMA * expected) {
                return;
            }
            if (q <= LmOptions.Q_SCALE * qLow) {
                if (good >= 3) {
                    qGoodFactor *= LmOptions.Q_GOOD_REDUCTION;
                    q = qLow * qGoodFactor;
                }
            } else {
                q = Math.max(Math.sqrt(q * qLow), q * 0.33);
            }
            return;
        }
        good = 0;
        qGoodFactor = 1;
        double raised;
        if (qHigh <= LmOptions.Q_SCALE * q) {
            raised = 4 * q;
        } else if (qGood <= LmOptions.Q_SCALE * q) {
            raised = Math.sqrt(qLow * qHigh);
        } else {
            raised = Math.sqrt(q * qGood);
        }
        q = Math.max(raised, LmOptions.Q_SCALE * q);
    }

    /**
     * Qhigh = the largest eigenvalue of S (power iteration), Qlow = qRange x Qhigh, as FindQlimits does when its
     * second power iteration (for the smallest) is not used.
     */
    private void findQLimits() {
        scaling();
        Arrays.fill(r, 0);
        for (int i = 0; i < rows; i++) {
            if (!fixed[lo + i]) {
                for (int k = 0; k < dim; k++) {
                    r[i * dim + k] = 1 + 0.1 * ((lo + i + k) % 7);
                }
            }
        }
        double lambda = 1;
        for (int it = 0; it < POWER_ITERATIONS; it++) {
            double norm = Math.sqrt(dot(r, r));
            if (norm == 0) {
                break;
            }
            for (int i = 0; i < r.length; i++) {
                p[i] = r[i] / norm;
            }
            product(0);
            lambda = dot(p, ap);
            System.arraycopy(ap, 0, r, 0, r.length);
        }
        qHigh = Math.max(lambda, 1e-12);
        qLow = lm.qRange() * qHigh;
    }

    /** D^-1/2 for the local rows, gathered; 0 for fixed points and points without curvature. */
    private void scaling() {
        for (int i = 0; i < rows * dim; i++) {
            sqLocal[i] = diag[i] > 0 ? 1 / Math.sqrt(diag[i]) : 0;
        }
        sync.allgatherv(sqLocal, sqGlobal, counts, displs);
    }

    /** Solves the scaled system by CG and gathers the step; returns the predicted chi^2 decrease. Collective. */
    private double solveStep() {
        scaling();
        for (int i = 0; i < rows * dim; i++) {
            rhs[i] = -sqLocal[i] * half[i];
        }
        Arrays.fill(y, 0);
        System.arraycopy(rhs, 0, r, 0, r.length);
        System.arraycopy(rhs, 0, p, 0, p.length);
        double rr = dot(r, r);
        double limit = lm.cgResidual() * lm.cgResidual() * rr;
        int maxSteps = Math.min(lm.cgIterations(), Math.max(1, n * dim - dim * (dim + 1) / 2));
        for (int k = 0; k < maxSteps && rr > limit; k++) {
            product(q);
            cgSteps++;
            double pap = dot(p, ap);
            if (!(pap > 0)) {
                break;
            }
            double alpha = rr / pap;
            for (int i = 0; i < r.length; i++) {
                y[i] += alpha * p[i];
                r[i] -= alpha * ap[i];
            }
            double rrNew = dot(r, r);
            double beta = rrNew / rr;
            rr = rrNew;
            for (int i = 0; i < p.length; i++) {
                p[i] = r[i] + beta * p[i];
            }
        }
        // s = D^-1/2 y; predicted decrease -a.s + Q s.D.s = -a.s + Q y.y (from (M + Q D) s = -a)
        sums[0] = 0;
        sums[1] = 0;
        for (int i = 0; i < rows * dim; i++) {
            double s = sqLocal[i] * y[i];
            y[i] = s;
            sums[0] -= half[i] * s;
            sums[1] += sqLocal[i] == 0 ? 0 : (s / sqLocal[i]) * (s / sqLocal[i]);
        }
        sync.allreduceSum(sums, 2);
        sync.allgatherv(y, step, counts, displs);
        return sums[0] + q * sums[1];
    }

    /** ap = (S + shift I) p on the local rows, after gathering p. Collective. */
    private void product(double shift) {
        sync.allgatherv(p, pGlobal, counts, displs);
        double[] acc = this.acc;
        for (int i = 0; i < rows; i++) {
            loadRow(i);
            int gi = lo + i;
            int io = i * dim;
            int go = gi * dim;
            Arrays.fill(acc, 0);
            if (!fixed[gi]) {
                for (int j = 0; j < n; j++) {
                    short v = deltaRow[j];
                    if (v < 0 || j == gi) {
                        continue;
                    }
                    double c = normTable[v] * pairWeight(i, j);
                    if (c == 0) {
                        continue;
                    }
                    int jo = j * dim;
                    double d2 = 0;
                    double proj = 0;
                    for (int k = 0; k < dim; k++) {
                        double t = x[go + k] - x[jo + k];
                        d2 += t * t;
                        proj += t * (sqGlobal[go + k] * pGlobal[go + k] - sqGlobal[jo + k] * pGlobal[jo + k]);
                    }
                    if (d2 == 0) {
                        continue;
                    }
                    double f = 2 * c * proj / d2;
                    for (int k = 0; k < dim; k++) {
                        acc[k] += f * (x[go + k] - x[jo + k]);
                    }
                }
            }
            for (int k = 0; k < dim; k++) {
                ap[io + k] = sqLocal[io + k] * acc[k] + shift * p[io + k];
            }
        }
    }

    /**
     * chi^2 of {@code at}, and for the local rows half the gradient and the diagonal of M; {@link #stressTrial} gets
     * the normalised stress DA-MDS reports (sum w (delta - d)^2 / sum w delta^2). Collective.
     */
    private double evaluate(double[] at, double[] halfOut, double[] diagOut) {
        Arrays.fill(halfOut, 0);
        Arrays.fill(diagOut, 0);
        double chi = 0;
        double num = 0;
        double den = 0;
        for (int i = 0; i < rows; i++) {
            loadRow(i);
            int gi = lo + i;
            int io = i * dim;
            int go = gi * dim;
            boolean free = !fixed[gi];
            for (int j = 0; j < n; j++) {
                short v = deltaRow[j];
                if (v < 0 || j == gi) {
                    continue;
                }
                double w = pairWeight(i, j);
                if (w == 0) {
                    continue;
                }
                double c = normTable[v] * w;
                int jo = j * dim;
                double d2 = 0;
                for (int k = 0; k < dim; k++) {
                    double t = at[go + k] - at[jo + k];
                    d2 += t * t;
                }
                double d = Math.sqrt(d2);
                double delta = v * INV;
                double res = d - delta;
                chi += c * res * res;
                num += w * res * res;
                den += w * delta * delta;
                if (free && d > 0) {
                    double g = 2 * c * res / d;
                    double h = 2 * c / d2;
                    for (int k = 0; k < dim; k++) {
                        double t = at[go + k] - at[jo + k];
                        halfOut[io + k] += g * t;
                        diagOut[io + k] += h * t * t;
                    }
                }
            }
        }
        sums[0] = chi;
        sums[1] = num;
        sums[2] = den;
        sync.allreduceSum(sums, 3);
        stressTrial = sums[2] > 0 ? sums[1] / sums[2] : 0;
        return sums[0];
    }

    private double dot(double[] a, double[] b) {
        box[0] = 0;
        for (int i = 0; i < a.length; i++) {
            box[0] += a[i] * b[i];
        }
        sync.allreduceSum(box, 1);
        return box[0];
    }

    /** The current layout, row-major N x dim (live array; do not modify). */
    public double[] points() {
        return x;
    }

    public int n() {
        return n;
    }
}
