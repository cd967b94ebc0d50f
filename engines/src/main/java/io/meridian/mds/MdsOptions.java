package io.meridian.mds;

import java.io.PrintStream;

/**
 * Settings of one DA-MDS run; the defaults are the original's, except the update rule (the textbook Guttman transform,
 * {@link Update}). Setters return {@code this}.
 */
public final class MdsOptions {
    public enum Init { RANDOM, CLASSICAL, GIVEN }

    /** How a SMACOF iteration turns B(X)X into the next layout. */
    public enum Update {
        /**
         * The textbook Guttman transform, X = V^+ B(X)X: B(X)X / N with unit weights and nothing missing, otherwise CG
         * on V (singular: the layout is defined up to a translation, and each update is centred); a zero distance is
         * a target of zero. Its fixed points are the stress's stationary points.
         */
        GUTTMAN,
        /**
         * The original's (SPIDAL damds), for comparisons with it: CG on V + I, B(X)X / (N + 1) with unit weights, so
         * the fixed point is the stress minimum shrunk by N / (N + 1) (two points 1.0 apart end 0.667 apart); and every
         * distance below the smallest positive one, zeros (duplicates) included, raised to it.
         */
        SPIDAL
    }

    int dim = 3;
    /** The annealing schedule's defaults (the original's), also the live map's. */
    public static final double DEFAULT_ALPHA = 0.95;
    public static final double DEFAULT_TMIN_FACTOR = 0.5;
    double alpha = DEFAULT_ALPHA;
    double tminFactor = DEFAULT_TMIN_FACTOR;
    double threshold = 1e-6;
    int cgIterations = 20;
    double cgThreshold = 1;
    int maxTemperatureLoops = Integer.MAX_VALUE;
    int maxIterationsPerTemperature = Integer.MAX_VALUE;
    boolean annealing = true;
    long seed = 1;
    Init init = Init.RANDOM;
    Update update = Update.GUTTMAN;
    double[] initial;
    boolean[] fixed;
    double[] fixedCoordinates;
    int localBlocks = 1;
    PrintStream progress;
    long progressIntervalNanos = 2_000_000_000L;

    public MdsOptions dim(int dim) {
        if (dim < 1) {
            throw new IllegalArgumentException("dim must be positive");
        }
        this.dim = dim;
        return this;
    }

    public int dim() {
        return dim;
    }

    public MdsOptions alpha(double alpha) {
        if (!(alpha > 0 && alpha < 1)) {
            throw new IllegalArgumentException("alpha must be > 0 and < 1 (the temperature's ratio from one loop to the"
                    + " next), got " + alpha);
        }
        this.alpha = alpha;
        return this;
    }

    public MdsOptions tminFactor(double f) {
        if (!(f > 0 && Double.isFinite(f))) {
            throw new IllegalArgumentException("tminFactor must be positive and finite (at 0 the temperature never"
                    + " reaches its minimum), got " + f);
        }
        this.tminFactor = f;
        return this;
    }

    public MdsOptions threshold(double t) {
        this.threshold = t;
        return this;
    }

    public MdsOptions cgIterations(int k) {
        this.cgIterations = k;
        return this;
    }

    public MdsOptions cgThreshold(double t) {
        this.cgThreshold = t;
        return this;
    }

    public MdsOptions maxTemperatureLoops(int k) {
        this.maxTemperatureLoops = k;
        return this;
    }

    public MdsOptions maxIterationsPerTemperature(int k) {
        this.maxIterationsPerTemperature = k;
        return this;
    }

    /** false: plain SMACOF, T = 0 from the start (one "temperature"). */
    public MdsOptions annealing(boolean on) {
        this.annealing = on;
        return this;
    }

    /** The update rule: {@link Update#GUTTMAN} (the default) or the original's {@link Update#SPIDAL}. */
    public MdsOptions update(Update update) {
        if (update == null) {
            throw new IllegalArgumentException("update must be GUTTMAN or SPIDAL, got null");
        }
        this.update = update;
        return this;
    }

    public Update update() {
        return update;
    }

    public MdsOptions seed(long seed) {
        this.seed = seed;
        return this;
    }

    public MdsOptions randomInit() {
        this.init = Init.RANDOM;
        this.initial = null;
        return this;
    }

    public MdsOptions classicalInit() {
        this.init = Init.CLASSICAL;
        this.initial = null;
        return this;
    }

    /** Start from these coordinates, row-major N x dim. */
    public MdsOptions initial(double[] rowMajor) {
        this.init = Init.GIVEN;
        this.initial = rowMajor.clone();
        return this;
    }

    /** Hold point i at {@code coordinates[i * dim ..]} wherever {@code fixed[i]}. */
    public MdsOptions fixed(boolean[] fixed, double[] coordinates) {
        this.fixed = fixed.clone();
        this.fixedCoordinates = coordinates.clone();
        return this;
    }

    /** Split this process's rows into this many row blocks, each with its own kernel (results equal to one block). */
    public MdsOptions localBlocks(int k) {
        this.localBlocks = k;
        return this;
    }

    /** Where progress lines go (null: nowhere), and how often at most. */
    public MdsOptions progress(PrintStream out, long intervalMillis) {
        this.progress = out;
        this.progressIntervalNanos = intervalMillis * 1_000_000L;
        return this;
    }
}
