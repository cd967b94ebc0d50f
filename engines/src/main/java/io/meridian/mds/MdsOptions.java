package io.meridian.mds;

import java.io.PrintStream;

/** Settings of one DA-MDS run; the defaults are the original's. Setters return {@code this}. */
public final class MdsOptions {
    public enum Init { RANDOM, CLASSICAL, GIVEN }

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
