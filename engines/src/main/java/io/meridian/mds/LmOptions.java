package io.meridian.mds;

/**
 * Settings of the Levenberg-Marquardt solver ({@link LmMds}), named as in MDSasChisq (Manxcat) where it has them.
 * Validated here; the defaults are written once, next to their names.
 *
 * @param chisqNorm           how a residual is weighted, MDSasChisq's {@code Chisqnorm} (distance formula 1):
 *                            0 (d - delta) / delta, 1 / delta^0.75, 2 / delta^0.5 (Sammon), 3 unweighted (SMACOF's
 *                            stress), 4 * delta^0.5; each times the pair's weight
 * @param maxIterations       LM iterations at most ({@code Maxit})
 * @param qHighInitialFactor  the first Q is this fraction of Qhigh ({@code QHighInitialFactor})
 * @param qRange              Qlow = qRange x Qhigh ({@code Qrange})
 * @param cgIterations        CG steps a solve at most ({@code CGIterationLimit})
 * @param cgResidual          CG stops when |r| <= cgResidual |b| ({@code CGResidualLimit}, relative here)
 * @param chisqChangePerPoint stop when the predicted chi^2 change is at most this times N ({@code ChisqChangePerPoint})
 * @param nbadgo              stop when the best chi^2 fell by at most that much over this many iterations
 */
public record LmOptions(int chisqNorm, int maxIterations, double qHighInitialFactor, double qRange, int cgIterations,
                        double cgResidual, double chisqChangePerPoint, int nbadgo) {
    public static final int DEFAULT_CHISQ_NORM = 3;
    public static final int DEFAULT_MAX_ITERATIONS = 200;
    public static final double DEFAULT_Q_HIGH_INITIAL_FACTOR = 0.01;
    public static final double DEFAULT_Q_RANGE = 0.001;
    public static final int DEFAULT_CG_ITERATIONS = 200;
    public static final double DEFAULT_CG_RESIDUAL = 1e-5;
    public static final double DEFAULT_CHISQ_CHANGE_PER_POINT = 1e-6;
    public static final int DEFAULT_NBADGO = 6;

    /** Fletcher's rho and sigma: a step is good when chi^2 falls by rho x predicted, very good above sigma x. */
    static final double RHO = 0.25;
    static final double SIGMA = 0.75;
    /** Q changes by at least this factor's square root; Q below Qlow is halved again after 3 good steps. */
    static final double Q_SCALE = 1.5;
    static final double Q_GOOD_REDUCTION = 0.5;
    /** ChisqFunctionCalcMultiplier: residuals are multiplied by this (chi^2 by its square). */
    static final double FUNCTION_MULTIPLIER = 10.0;

    public LmOptions {
        if (chisqNorm < 0 || chisqNorm > 4) {
            throw new IllegalArgumentException("chisq-norm must be 0, 1, 2, 3 or 4, got " + chisqNorm);
        }
        if (maxIterations < 1) {
            throw new IllegalArgumentException("lm-iterations must be at least 1, got " + maxIterations);
        }
        if (!(qHighInitialFactor > 0 && qHighInitialFactor <= 1)) {
            throw new IllegalArgumentException("q-initial must be > 0 and <= 1 (a fraction of Qhigh), got "
                    + qHighInitialFactor);
        }
        if (!(qRange > 0 && qRange < 1)) {
            throw new IllegalArgumentException("q-range must be > 0 and < 1, got " + qRange);
        }
        if (cgIterations < 1) {
            throw new IllegalArgumentException("lm-cg-iterations must be at least 1, got " + cgIterations);
        }
        if (!(cgResidual > 0 && cgResidual < 1)) {
            throw new IllegalArgumentException("lm-cg-residual must be > 0 and < 1, got " + cgResidual);
        }
        if (!(chisqChangePerPoint >= 0 && Double.isFinite(chisqChangePerPoint))) {
            throw new IllegalArgumentException("chisq-change-per-point must be finite and >= 0, got "
                    + chisqChangePerPoint);
        }
        if (nbadgo < 1) {
            throw new IllegalArgumentException("nbadgo must be at least 1, got " + nbadgo);
        }
    }

    public static LmOptions defaults() {
        return new LmOptions(DEFAULT_CHISQ_NORM, DEFAULT_MAX_ITERATIONS, DEFAULT_Q_HIGH_INITIAL_FACTOR,
                DEFAULT_Q_RANGE, DEFAULT_CG_ITERATIONS, DEFAULT_CG_RESIDUAL, DEFAULT_CHISQ_CHANGE_PER_POINT,
                DEFAULT_NBADGO);
    }

    public LmOptions withChisqNorm(int norm) {
        return new LmOptions(norm, maxIterations, qHighInitialFactor, qRange, cgIterations, cgResidual,
                chisqChangePerPoint, nbadgo);
    }

    public LmOptions withMaxIterations(int k) {
        return new LmOptions(chisqNorm, k, qHighInitialFactor, qRange, cgIterations, cgResidual,
                chisqChangePerPoint, nbadgo);
    }
}
