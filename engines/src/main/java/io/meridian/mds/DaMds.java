package io.meridian.mds;

import io.meridian.collective.BlockSync;
import io.meridian.engine.BadInputException;
import io.meridian.engine.BadInputException.Input;
import io.meridian.matrix.DistanceSource;
import io.meridian.matrix.LowerRows;
import io.meridian.matrix.RowBlock;
import io.meridian.matrix.RowPartition;
import io.meridian.matrix.Weighting;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Random;

/**
 * Deterministic-annealing SMACOF (DA-MDS) as in SPIDAL's damds, for the rows this process owns.
 *
 * <p>The N rows are split over {@code sync.blocks()} processes like SPIDAL splits them ({@link RowPartition}); this
 * process owns block {@code sync.block()}, which it may split further into {@link MdsOptions#localBlocks} row blocks,
 * each with its own mapped {@link RowBlock} and {@link RowKernel}. Every process keeps the whole configuration X (N x
 * dim, row-major for exchange, column-wise for the kernels). Per SMACOF iteration:
 * <ol>
 *   <li>each kernel makes one fused pass over its rows: rows of B(X)X and the stress numerator;</li>
 *   <li>unit weights, no missing distances: X_new = B(X)X / N on the local rows (the Guttman transform), then one
 *       call that gathers the N x dim result and sums the stress numerator (the stopping test needs the global
 *       stress), {@link BlockSync#allgathervAndSum}; otherwise {@code allreduceSum} of the stress numerator, then CG
 *       on V X = B(X)X, one {@code allgatherv} of the initial residual and one per matrix-vector product (the CG
 *       vectors are kept whole in every process, so the update needs no more).</li>
 * </ol>
 * V (V_ii = sum_j w_ij, V_ij = -w_ij) is singular: its null space is the constant vectors of each group of points
 * linked by distances of non-zero weight. B(X)X has zero column sums over every such group, so the system is
 * consistent and CG, which only adds vectors of V's range to its start, converges; the update then centres the layout,
 * which makes it V^+ B(X)X (the minimum-norm solution). A matrix whose distances split the points into groups with
 * none between them is refused in {@link #prepare()}: the groups' places relative to each other would be arbitrary.
 * With fixed points CG solves the free points' block of V, which is invertible once every group holds a fixed point.
 * {@link MdsOptions.Update#SPIDAL} runs the original's update instead (V + I, B(X)X / (N + 1)).
 *
 * <p>The passes over the distances sit behind {@link DistancePasses}: full rows of a square matrix, as above, or the
 * lower triangle ({@link #DaMds(LowerRows, int, Path, MdsOptions, BlockSync)}: the row stores as the topology keeps
 * them), where each process owns a block of rows of about equal pairs, credits each pair to both of its rows, and
 * the exchanges above become {@code allreduceSum}s of the N x dim sums (one per iteration with the closed form, one
 * per CG product otherwise). The schedule, the stopping tests, CG, fixed points and the update rules are this class's
 * for both.
 * Everything is allocated in the constructor; an iteration allocates nothing.
 */
public final class DaMds {
    private final int n;
    private final int dim;
    private final MdsOptions options;
    private final BlockSync sync;
    private final Weighting weighting;
    private final DistancePasses passes;
    /** The full-row passes, for the classical initial layout; null over the lower triangle. */
    private final FullRowPasses fullRows;
    private final int lo;
    private final int localRows;
    private final int[] counts;
    private final int[] displs;

    private final double[] xRows;
    private final double[] xs;
    private final double[] bx;
    private final double[] sums = new double[4];
    private final double[] target = RowKernel.newTargetTable();
    private double targetShift = Double.NaN;
    private final double[] stats = new double[4];
    private final double[] maxBox = new double[1];
    private final double[] minBox = new double[1];
    // lostDirections: the layout's mean, covariance (then variances along its axes) and axes
    private final double[] spreadMean;
    private final double[] spread;
    private final double[] spreadAxes;

    // weighted case (CG); null for the closed form
    private double[] ap;
    private double[] rG;
    private double[] pG;
    private double[] apG;
    private double[] ps;

    private boolean prepared;
    private boolean closedForm;
    private double maxValue;
    private double minPositive;
    private double sumSquaresRaised;
    /** Zero for the Guttman update; SPIDAL's raises every smaller distance to the smallest positive one. */
    private double targetFloor;
    /** The stress denominator of {@link #iterate}: sum of delta^2 as the update sees them (raised for SPIDAL's). */
    private double stressDenominator;
    private double sammonFloor;
    private long missing;
    private long iterations;
    private long cgSteps;
    private double lastStress = Double.NaN;

    /** The most doubles one {@code allreduce*} call of this engine carries (for sizing a BlockSync's buffers). */
    public static final int REDUCE_CAPACITY = 4;

    /**
     * The most doubles one {@code allreduce*} call carries over the lower triangle: the N x dim rows of B(X)X or V p,
     * summed over the processes, and the stress (for sizing a BlockSync's buffers).
     */
    public static int triangleReduceCapacity(int n, int dim) {
        return n * dim + TrianglePasses.SUM_SLOTS;
    }

    /**
     * The most doubles one {@code allgatherv} call of this engine gathers: N x dim per iteration, N x (2 dim + 2)
     * during a classical initial layout (for sizing a BlockSync's buffers).
     */
    public static int allgatherCapacity(int n, int dim) {
        return n * Math.max(dim, Math.min(RowKernel.classicalColumns(dim), n));
    }

    public DaMds(Path distances, int n, ByteOrder order, Weighting weighting, MdsOptions options, BlockSync sync) {
        this(DistanceSource.matrixFile(distances, n, order), weighting, options, sync);
    }

    public DaMds(DistanceSource distances, Weighting weighting, MdsOptions options, BlockSync sync) {
        this(distances.n(), evenStarts(distances.n(), sync.blocks()), weighting, options, sync,
                (lo, rows, counts, displs) -> fullRowPasses(distances, weighting, options, sync, lo, rows, counts,
                        displs));
    }

    /**
     * DA-MDS over the lower triangle of points {@code 0 .. n-1} ({@link LowerRows}: the row stores, or a full matrix
     * read as one), with the same results as over the square matrix of the same values, to rounding (the sums run in
     * another order). Each process owns a contiguous block of rows holding about the same number of pairs
     * ({@link RowPartition#triangleStarts}). Unit weights (missing entries allowed); {@code origin} names the data
     * in messages (may be null).
     *
     * @throws IllegalArgumentException naming an option the triangle does not support
     */
    public DaMds(LowerRows rows, int n, Path origin, MdsOptions options, BlockSync sync) {
        this(n, RowPartition.triangleStarts(n, sync.blocks()), triangleWeighting(options), options, sync,
                (lo, count, counts, displs) -> new TrianglePasses(rows, origin, n, options.dim, lo, lo + count, sync));
    }

    /** What a run over the lower triangle cannot do: other weights than unit, a classical initial layout. */
    private static Weighting triangleWeighting(MdsOptions options) {
        if (options.init == MdsOptions.Init.CLASSICAL) {
            throw new IllegalArgumentException("a classical initial layout is not supported over the lower triangle"
                    + " (its product runs on full rows): use a random or given one");
        }
        if (options.localBlocks != 1) {
            throw new IllegalArgumentException("localBlocks is not supported over the lower triangle (one block of"
                    + " rows a process), got " + options.localBlocks);
        }
        return Weighting.unit();
    }

    private interface PassesFactory {
        DistancePasses make(int lo, int localRows, int[] counts, int[] displs);
    }

    private static int[] evenStarts(int n, int blocks) {
        RowPartition partition = RowPartition.of(n, blocks);
        int[] starts = new int[blocks + 1];
        for (int b = 0; b < blocks; b++) {
            starts[b] = partition.start(b);
        }
        starts[blocks] = n;
        return starts;
    }

    private static FullRowPasses fullRowPasses(DistanceSource distances, Weighting weighting, MdsOptions options,
                                               BlockSync sync, int lo, int localRows, int[] counts, int[] displs) {
        int n = distances.n();
        int k = Math.max(1, Math.min(options.localBlocks, localRows));
        RowPartition local = RowPartition.of(localRows, k);
        RowKernel[] kernels = new RowKernel[k];
        for (int b = 0; b < k; b++) {
            int start = lo + local.start(b);
            int end = lo + local.end(b);
            RowBlock block = distances.rows(start, end);
            RowBlock weights = weighting.kind() == Weighting.Kind.MATRIX ? weighting.mapBlock(n, start, end) : null;
            kernels[b] = new RowKernel(block, weights, weighting, options.dim);
        }
        return new FullRowPasses(kernels, sync, lo, localRows, options.dim, counts, displs);
    }

    private DaMds(int n, int[] starts, Weighting weighting, MdsOptions options, BlockSync sync,
                  PassesFactory factory) {
        this.n = n;
        this.dim = options.dim;
        this.options = options;
        this.sync = sync;
        this.weighting = weighting;
        int blocks = sync.blocks();
        this.lo = starts[sync.block()];
        this.localRows = starts[sync.block() + 1] - lo;
        this.counts = new int[blocks];
        this.displs = new int[blocks];
        for (int b = 0; b < blocks; b++) {
            counts[b] = (starts[b + 1] - starts[b]) * dim;
            displs[b] = starts[b] * dim;
        }
        this.passes = factory.make(lo, localRows, counts, displs);
        this.fullRows = passes instanceof FullRowPasses full ? full : null;
        this.xRows = new double[n * dim];
        this.xs = new double[n * dim];
        this.bx = passes.newPartial();
        this.spreadMean = new double[dim];
        this.spread = new double[dim * dim];
        this.spreadAxes = new double[dim * dim];
        checkInitialAndFixed();
        peakHeapBytes(); // creates the memory pool beans now: their first readings can be stale
    }

    private void checkInitialAndFixed() {
        if (options.initial != null && options.initial.length != n * dim) {
            throw new BadInputException(Input.INITIAL_LAYOUT, null, "initial layout has " + options.initial.length / Math.max(1, dim) + " points of "
                    + dim + " coordinates, expected " + n);
        }
        if (options.fixed != null && (options.fixed.length != n || options.fixedCoordinates.length != n * dim)) {
            throw new BadInputException(Input.FIXED_POINTS, null, "expected flags and coordinates for N = " + n + " points");
        }
    }

    /**
     * Whether SMACOF passes with unit weights and dim 3 run on explicit vectors rather than the scalar kernel: that
     * needs {@code --add-modules jdk.incubator.vector}, and the vector loop compiled by C2 (the first few passes of a
     * JVM run the scalar kernel while it warms up).
     */
    public static boolean vectorKernel() {
        return RowKernel.vectorPassInUse();
    }

    /** Whether this JVM can run the vector pass at all ({@code --add-modules jdk.incubator.vector}, not turned off). */
    public static boolean vectorKernelAvailable() {
        return RowKernel.VECTOR_AVAILABLE;
    }

    public int n() {
        return n;
    }

    public long iterations() {
        return iterations;
    }

    public long cgSteps() {
        return cgSteps;
    }

    public boolean closedForm() {
        return closedForm;
    }

    /** The largest distance value (after preparation). */
    public double maxDistance() {
        return maxValue;
    }

    /** The current configuration, row-major N x dim (live array; do not modify). */
    public double[] points() {
        return xRows;
    }

    // ------------------------------------------------------------------------------------------------ preparation

    /** Statistics of the distances, weights of the system, the initial layout. Collective. */
    public void prepare() {
        if (prepared) {
            return;
        }
        java.util.Arrays.fill(stats, 0);
        maxBox[0] = 0;
        minBox[0] = Double.MAX_VALUE;
        passes.statistics(stats, maxBox, minBox);
        sync.allreduceSum(stats, 4);
        sync.allreduceMax(maxBox, 1);
        sync.allreduceMin(minBox, 1);
        double count = stats[0];
        if (count == 0) {
            throw new BadInputException(Input.DISTANCES, passes.origin(),
                    "no pair has both a distance and a non-zero weight");
        }
        maxValue = maxBox[0];
        minPositive = minBox[0] == Double.MAX_VALUE ? 0 : minBox[0];
        sumSquaresRaised = stats[2] + stats[3] * minPositive * minPositive;
        boolean spidal = options.update == MdsOptions.Update.SPIDAL;
        targetFloor = spidal ? minPositive : 0;
        stressDenominator = spidal ? sumSquaresRaised : stats[2];
        sammonFloor = 0.001 * stats[1] / count;
        missing = (long) n * n - (long) count;
        closedForm = weighting.isUnit() && missing == 0 && options.fixed == null;
        if (!closedForm) {
            requireLinked();
            passes.prepareMatvec(sammonFloor);
            ap = passes.newPartial();
            rG = new double[n * dim];
            pG = new double[n * dim];
            apG = new double[n * dim];
            ps = new double[n * dim];
        }
        initialLayout(stats[2] / count);
        prepared = true;
    }

    /**
     * Refuses distances that split the points into groups with no pair of non-zero weight between them (V's null space
     * is then larger than the translations, and the groups' places relative to each other are arbitrary); with fixed
     * points, only groups that hold none. Each block joins the pairs of its own rows (a union-find forest over all N
     * points); the blocks then agree on each point's group, named by its first point, by exchanging their rows' labels
     * until no label falls (one exchange confirms it in one process). Collective; allocates (once, before the run).
     */
    private void requireLinked() {
        int[] parent = new int[n];
        for (int i = 0; i < n; i++) {
            parent[i] = i;
        }
        double[] counts = new double[2];
        passes.link(parent, counts);
        sync.allreduceSum(counts, 2);
        double[] labels = new double[n * dim];
        double[] next = new double[n * dim];
        double[] mine = new double[Math.max(1, localRows * dim)];
        double[] smallest = new double[n];
        for (int i = 0; i < n; i++) {
            labels[i * dim] = i;
        }
        for (int round = 0; round <= n; round++) {
            java.util.Arrays.fill(smallest, Double.MAX_VALUE);
            for (int v = 0; v < n; v++) {
                int root = RowKernel.find(parent, v);
                smallest[root] = Math.min(smallest[root], labels[v * dim]);
            }
            for (int r = 0; r < localRows; r++) {
                mine[r * dim] = smallest[RowKernel.find(parent, lo + r)];
            }
            sync.allgatherv(mine, next, this.counts, displs);
            boolean changed = false;
            for (int v = 0; v < n && !changed; v++) {
                changed = next[v * dim] != labels[v * dim];
            }
            double[] t = labels;
            labels = next;
            next = t;
            if (!changed) {
                break;
            }
        }
        int[] size = new int[n];
        boolean[] anchored = new boolean[n];
        for (int v = 0; v < n; v++) {
            int group = (int) labels[v * dim];
            size[group]++;
            anchored[group] |= options.fixed != null && options.fixed[v];
        }
        List<int[]> loose = new ArrayList<>(); // {size, first point} of each unanchored group
        int groups = 0;
        for (int v = 0; v < n; v++) {
            if (size[v] > 0) {
                groups++;
                if (!anchored[v]) {
                    loose.add(new int[] {size[v], v});
                }
            }
        }
        if (options.fixed == null ? groups == 1 : loose.isEmpty()) {
            return;
        }
        Input input = counts[1] > 0 || weighting.isUnit() ? Input.DISTANCES
                : weighting.kind() == Weighting.Kind.POINT ? Input.POINT_WEIGHTS : Input.WEIGHTS;
        Path file = input == Input.DISTANCES ? passes.origin() : null;
        if (counts[0] == 0) {
            throw new BadInputException(input, file, "no two points have a distance of non-zero weight between them"
                    + " (all " + n + " x " + (n - 1) + " entries off the diagonal are missing or weighted 0): there is"
                    + " nothing to map");
        }
        loose.sort((a, b) -> a[0] != b[0] ? Integer.compare(b[0], a[0]) : Integer.compare(a[1], b[1]));
        StringBuilder sizes = new StringBuilder();
        StringBuilder firsts = new StringBuilder();
        int shown = Math.min(loose.size(), 6);
        for (int g = 0; g < shown; g++) {
            sizes.append(g == 0 ? "" : ", ").append(loose.get(g)[0]);
            firsts.append(g == 0 ? "" : ", ").append(loose.get(g)[1]);
        }
        String more = loose.size() > shown ? " and " + (loose.size() - shown) + " more" : "";
        String problem = options.fixed == null
                ? "the distances of non-zero weight split the " + n + " points into " + groups + " groups with none"
                        + " between two groups: sizes " + sizes + more + " (first points " + firsts + "); their places"
                        + " relative to each other would be arbitrary: give distances that link the groups, or map each"
                        + " group on its own"
                : loose.size() + " groups of points have no distance of non-zero weight to a fixed point: sizes "
                        + sizes + more + " (first points " + firsts + "); their places relative to the fixed points"
                        + " would be arbitrary: give distances that link them, or fix a point of each";
        throw new BadInputException(input, file, problem);
    }

    private void initialLayout(double meanSquare) {
        switch (options.init) {
            case GIVEN -> System.arraycopy(options.initial, 0, xRows, 0, n * dim);
            case RANDOM -> {
                Random random = new Random(options.seed);
                for (int i = 0; i < n * dim; i++) {
                    xRows[i] = random.nextDouble();
                }
            }
            case CLASSICAL -> {
                long t0 = System.nanoTime();
                ClassicalMds.run(this, meanSquare);
                if (options.progress != null && sync.block() == 0) {
                    options.progress.printf(Locale.ROOT, "mds: classical initial layout: %d subspace iterations, %.1f s%n",
                            ClassicalMds.iterations, (System.nanoTime() - t0) / 1e9);
                }
            }
        }
        holdFixed();
        if (options.init == MdsOptions.Init.GIVEN && maxValue > 0) {
            requireSpread();
        }
        toColumns(xRows, xs);
    }

    /**
     * Refuses a given initial layout (fixed points in place) with every point in one place: B(X) = 0 there, so every
     * update maps it to the same place and SMACOF never moves.
     */
    private void requireSpread() {
        for (int i = 1; i < n; i++) {
            for (int k = 0; k < dim; k++) {
                if (xRows[i * dim + k] != xRows[k]) {
                    return;
                }
            }
        }
        StringBuilder at = new StringBuilder("(");
        for (int k = 0; k < dim; k++) {
            at.append(k == 0 ? "" : ", ").append(xRows[k]);
        }
        throw new BadInputException(Input.INITIAL_LAYOUT, null, "all " + n + " points of the initial layout are at "
                + at + "): SMACOF cannot move points that all coincide (every update leaves them there); give points"
                + " in different places, or a random or classical initial layout");
    }

    // ------------------------------------------------------------------------------------------------ the run

    /** Runs the whole annealing schedule from the prepared layout and returns the result. Collective. */
    public MdsResult run() {
        long start = System.nanoTime();
        prepare();
        double sqrt2L = Math.sqrt(2.0 * dim);
        double tMax = maxValue / sqrt2L;
        double tMin = options.tminFactor * minPositive / sqrt2L;
        double temperature = options.annealing ? options.alpha * tMax : 0;
        if (temperature < tMin) {
            temperature = 0;
        }
        int loops = 0;
        long smacofStart = System.nanoTime();
        long iterationsAtStart = iterations;
        report = options.progress != null && sync.block() == 0;
        reportStart = smacofStart;
        lastReport = smacofStart;
        reportIterations = iterationsAtStart;
        reportTMin = tMin;
        if (maxValue == 0 && options.fixed == null) {
            // every distance is zero: all points in one place is the answer; the closed form gets there in one update
            // (B(X) = 0), two CG steps from a spread layout do not
            temperature = 0;
            java.util.Arrays.fill(xRows, 0);
            toColumns(xRows, xs);
        }
        while (temperature > 0) {
            settle(temperature, loops);
            loops++;
            temperature *= options.alpha;
            // a subnormal temperature no longer falls (x * alpha rounds back to x): zero ends the schedule
            if (temperature < tMin || temperature < Double.MIN_NORMAL || loops >= options.maxTemperatureLoops) {
                temperature = 0;
            }
        }
        if (options.update == MdsOptions.Update.GUTTMAN && lostDirections() > 0) {
            settleFromBothSides(loops);
        } else {
            settle(0, loops);
        }
        loops++;
        long smacofNanos = System.nanoTime() - smacofStart;
        double[] stressValues = finalStress();
        long count = iterations - iterationsAtStart;
        double seconds = (System.nanoTime() - start) / 1e9;
        return new MdsResult(n, dim, xRows.clone(), stressValues[0], stressValues[1], loops, iterations, cgSteps,
                seconds, count == 0 ? 0 : smacofNanos / 1e6 / count, peakHeapBytes(), closedForm, maxValue,
                minPositive, missing);
    }

    /**
     * SMACOF iterations at one temperature until the stress falls by less than the threshold (or is NaN: nothing
     * left to fit). Collective.
     */
    private void settle(double temperature, int loopsDone) {
        double shift = Math.sqrt(2.0 * dim) * temperature;
        double previous = Double.NaN;
        for (int it = 0; it < options.maxIterationsPerTemperature; it++) {
            double stress = iterate(shift);
            // written so that a NaN stress (nothing left to fit) also stops
            boolean done = !(previous - stress >= options.threshold) && !Double.isNaN(previous);
            done |= Double.isNaN(stress);
            previous = stress;
            if (report && System.nanoTime() - lastReport >= options.progressIntervalNanos) {
                lastReport = System.nanoTime();
                progress(loopsDone + 1, temperature, reportTMin, stress, reportStart, iterations - reportIterations,
                        loopsDone);
            }
            if (done) {
                break;
            }
        }
    }

    // progress reports of the current run
    private boolean report;
    private long reportStart;
    private long lastReport;
    private long reportIterations;
    private double reportTMin;

    /** A direction along which the layout spreads less than this fraction of its largest spread counts as lost. */
    static final double LOST_DIRECTION = 1e-6;
    /** The spread, as a fraction of the largest, that {@link #settleFromBothSides} gives the lost directions. */
    static final double RESTORED_SPREAD = 0.01;

    /**
     * The final temperature (zero) for a layout that spans fewer dimensions than it could ({@link #lostDirections}):
     * SMACOF from it, and SMACOF from it with the lost directions given a spread of {@link #RESTORED_SPREAD} of the
     * largest (seeded, the same in every block); the lower stress is kept. The Guttman transform never takes a layout
     * out of the affine subspace it spans, and the first temperatures, where only the longest distances have a
     * positive target, put small sets of points into one: the three points of a right triangle lie on a line after
     * the first update (only the hypotenuse's target is positive there), and ended there at stress 0.027, as rounding
     * alone had too few iterations to break out. A layout that is right in fewer dimensions (points on a line) keeps
     * its first run. Collective; runs only for such layouts, which need very few points.
     */
    private void settleFromBothSides(int loopsDone) {
        double[] lowRank = xRows.clone();
        settle(0, loopsDone);
        double flatStress = finalStress()[0];
        double[] flat = xRows.clone();
        System.arraycopy(lowRank, 0, xRows, 0, n * dim);
        lostDirections();
        double largest = 0;
        for (int k = 0; k < dim; k++) {
            largest = Math.max(largest, spread[k * dim + k]);
        }
        double size = RESTORED_SPREAD * Math.sqrt(largest);
        double lost = LOST_DIRECTION * LOST_DIRECTION * largest;
        for (int e = 0; e < dim; e++) {
            if (spread[e * dim + e] > lost) {
                continue;
            }
            for (int i = 0; i < n; i++) {
                if (options.fixed != null && options.fixed[i]) {
                    continue;
                }
                double u = size * (2 * unitHash(options.seed, (long) e * n + i) - 1);
                for (int k = 0; k < dim; k++) {
                    xRows[i * dim + k] += u * spreadAxes[k * dim + e];
                }
            }
        }
        toColumns(xRows, xs);
        settle(0, loopsDone);
        if (!(finalStress()[0] < flatStress)) {
            System.arraycopy(flat, 0, xRows, 0, n * dim);
            toColumns(xRows, xs);
        }
    }

    /**
     * How many directions the layout lacks to span min(dim, N - 1) dimensions: those along which it spreads less than
     * {@link #LOST_DIRECTION} of its largest spread (0 for a layout with every point in one place). Leaves the
     * variances along the layout's axes on the diagonal of {@code spread} and the axes in {@code spreadAxes}.
     */
    private int lostDirections() {
        int span = Math.min(dim, n - 1);
        java.util.Arrays.fill(spreadMean, 0);
        java.util.Arrays.fill(spread, 0);
        for (int i = 0; i < n; i++) {
            for (int k = 0; k < dim; k++) {
                spreadMean[k] += xRows[i * dim + k];
            }
        }
        for (int k = 0; k < dim; k++) {
            spreadMean[k] /= n;
        }
        for (int i = 0; i < n; i++) {
            for (int a = 0; a < dim; a++) {
                double da = xRows[i * dim + a] - spreadMean[a];
                for (int b = a; b < dim; b++) {
                    spread[a * dim + b] += da * (xRows[i * dim + b] - spreadMean[b]);
                }
            }
        }
        for (int a = 0; a < dim; a++) {
            for (int b = 0; b < a; b++) {
                spread[a * dim + b] = spread[b * dim + a];
            }
        }
        ClassicalMds.jacobi(spread, spreadAxes, dim);
        double largest = 0;
        for (int k = 0; k < dim; k++) {
            largest = Math.max(largest, spread[k * dim + k]);
        }
        // variances: a spread ratio of LOST_DIRECTION is a variance ratio of its square
        double lost = LOST_DIRECTION * LOST_DIRECTION * largest;
        int kept = 0;
        for (int k = 0; k < dim; k++) {
            kept += spread[k * dim + k] > lost ? 1 : 0;
        }
        return largest > 0 ? Math.max(0, span - kept) : 0;
    }

    /** A value in [0, 1) from (seed, index): SplitMix64's finaliser. */
    private static double unitHash(long seed, long index) {
        long h = seed * 0x9E3779B97F4A7C15L + index * 0xBF58476D1CE4E5B9L + 0x94D049BB133111EBL;
        h = (h ^ (h >>> 30)) * 0xBF58476D1CE4E5B9L;
        h = (h ^ (h >>> 27)) * 0x94D049BB133111EBL;
        h = h ^ (h >>> 31);
        return (h >>> 11) * 0x1.0p-53;
    }

    private void progress(int loop, double temperature, double tMin, double stress, long t0, long done, int loopsDone) {
        double elapsed = (System.nanoTime() - t0) / 1e9;
        String left = "";
        if (temperature > 0 && loopsDone > 0 && done > 0) {
            double loopsLeft = Math.max(0, Math.log(tMin / temperature) / Math.log(options.alpha)) + 1;
            double perLoop = elapsed / loopsDone;
            left = String.format(Locale.ROOT, ", about %.0f s left", loopsLeft * perLoop);
        }
        options.progress.printf(Locale.ROOT, "mds: temperature loop %d (T = %.3g), iteration %d, stress %.6g, %.1f s%s%n",
                loop, temperature, done, stress, elapsed, left);
    }

    /**
     * One SMACOF iteration at target shift {@code sqrt(2L) T}: returns the stress of the current X (the original's
     * normalisation), then replaces X by the Guttman update. Collective; allocates nothing.
     */
    public double iterate(double shift) {
        if (!prepared) {
            prepare();
        }
        if (shift != targetShift) {
            RowKernel.fillTargetTable(target, shift, targetFloor);
            targetShift = shift;
        }
        sums[0] = 0;
        boolean unit = weighting.isUnit();
        passes.smacofPass(xs, target, shift, targetFloor, sammonFloor, unit, bx, sums);
        double stress;
        if (closedForm) {
            double scale = options.update == MdsOptions.Update.SPIDAL ? 1.0 / (n + 1) : 1.0 / n;
            int partial = passes.partialLength();
            for (int i = 0; i < partial; i++) {
                bx[i] *= scale;
            }
            passes.combineWithSum(bx, xRows, sums, 1);
            stress = sums[0] / stressDenominator;
        } else {
            sync.allreduceSum(sums, 1);
            stress = sums[0] / stressDenominator;
            conjugateGradient();
            if (options.fixed == null && options.update == MdsOptions.Update.GUTTMAN) {
                centre();
            }
        }
        holdFixed();
        toColumns(xRows, xs);
        iterations++;
        lastStress = stress;
        return stress;
    }

    /** The stress computed by the last {@link #iterate} (of the layout before that update). */
    public double lastStress() {
        return lastStress;
    }

    /**
     * Solves V X = B(X)X (right-hand side in {@code bx}, local rows) by CG warm-started at X, V_ii = sum_j w_ij
     * (+ 1 for SPIDAL's update without fixed points), V_ij = -w_ij; with fixed points, for the free points only. The
     * stopping test compares the squared residual with cgThreshold times its value after the first step (with the
     * default 1 this makes two steps, as the original does). V may be singular (see the class comment): a direction
     * along which V has no curvature (rounding's share of the null space) ends the solve.
     */
    private void conjugateGradient() {
        int len = n * dim;
        matvec(xs);
        int partial = passes.partialLength();
        for (int i = 0; i < partial; i++) {
            ap[i] = bx[i] - ap[i];
        }
        passes.combine(ap, rG);
        zeroFixed(rG);
        System.arraycopy(rG, 0, pG, 0, len);
        double rTr = dot(rG, rG);
        double testEnd = 0;
        for (int step = 1; step <= options.cgIterations; step++) {
            if (rTr == 0) {
                break;
            }
            toColumns(pG, ps);
            matvec(ps);
            passes.combine(ap, apG);
            zeroFixed(apG);
            cgSteps++;
            double curvature = dot(pG, apG);
            if (!(curvature > 0)) {
                break;
            }
            double alpha = rTr / curvature;
            for (int i = 0; i < len; i++) {
                xRows[i] += alpha * pG[i];
                rG[i] -= alpha * apG[i];
            }
            double next = dot(rG, rG);
            if (step == 1) {
                testEnd = options.cgThreshold * next;
            } else if (next <= testEnd) {
                break;
            }
            double beta = next / rTr;
            for (int i = 0; i < len; i++) {
                pG[i] = rG[i] + beta * pG[i];
            }
            rTr = next;
        }
    }

    /**
     * With fixed points, CG runs on the free points' subsystem V_ff X_f = (B(X)X)_f - V_fx X_x: residuals and search
     * directions are kept at zero on the fixed rows, so those rows never move.
     */
    private void zeroFixed(double[] rows) {
        if (options.fixed == null) {
            return;
        }
        for (int i = 0; i < n; i++) {
            if (options.fixed[i]) {
                java.util.Arrays.fill(rows, i * dim, i * dim + dim, 0);
            }
        }
    }

    /** Moves the layout's centroid to the origin: V^+ B(X)X is the centred one of the solutions of V X = B(X)X. */
    private void centre() {
        for (int k = 0; k < dim; k++) {
            double sum = 0;
            for (int i = 0; i < n; i++) {
                sum += xRows[i * dim + k];
            }
            double mean = sum / n;
            for (int i = 0; i < n; i++) {
                xRows[i * dim + k] -= mean;
            }
        }
    }

    private void matvec(double[] columns) {
        // The original adds 1 to V's diagonal so that V is invertible, which shrinks the layout by N/(N+1). With fixed
        // points the free points' block of V is invertible already, and the +1 would pull every free point towards
        // the origin.
        double regularisation = options.fixed == null && options.update == MdsOptions.Update.SPIDAL ? 1 : 0;
        passes.matvec(columns, sammonFloor, regularisation, ap);
    }

    private static double dot(double[] a, double[] b) {
        double s0 = 0, s1 = 0;
        int i = 0;
        for (; i + 1 < a.length; i += 2) {
            s0 += a[i] * b[i];
            s1 += a[i + 1] * b[i + 1];
        }
        for (; i < a.length; i++) {
            s0 += a[i] * b[i];
        }
        return s0 + s1;
    }

    private void holdFixed() {
        if (options.fixed == null) {
            return;
        }
        for (int i = 0; i < n; i++) {
            if (options.fixed[i]) {
                System.arraycopy(options.fixedCoordinates, i * dim, xRows, i * dim, dim);
            }
        }
    }

    void toColumns(double[] rows, double[] columns) {
        for (int i = 0; i < n; i++) {
            for (int k = 0; k < dim; k++) {
                columns[k * n + i] = rows[i * dim + k];
            }
        }
    }

    /** {normalizedStress, spidalStress} of the current X. Collective. */
    public double[] finalStress() {
        java.util.Arrays.fill(sums, 0);
        passes.finalStress(xs, minPositive, sammonFloor, weighting.isUnit(), sums);
        sync.allreduceSum(sums, 4);
        return new double[] {sums[1] == 0 ? 0 : sums[0] / sums[1], sums[3] == 0 ? 0 : sums[2] / sums[3]};
    }

    /**
     * Heap in use at its peak, as the JVM reports it: the sum of the heap pools' peaks, or the heap in use now if that
     * is larger (G1 updates its young pools' peaks only at a collection, and a run without garbage may have none).
     */
    public static long peakHeapBytes() {
        long peak = 0;
        long now = 0;
        for (MemoryPoolMXBean pool : ManagementFactory.getMemoryPoolMXBeans()) {
            if (pool.getType() == MemoryType.HEAP) {
                if (pool.getPeakUsage() != null) {
                    peak += pool.getPeakUsage().getUsed();
                }
                if (pool.getUsage() != null) {
                    now += pool.getUsage().getUsed();
                }
            }
        }
        Runtime runtime = Runtime.getRuntime();
        return Math.max(Math.max(peak, now), runtime.totalMemory() - runtime.freeMemory());
    }

    // ------------------------------------------------------------------------------------------------ for ClassicalMds

    int dim() {
        return dim;
    }

    BlockSync sync() {
        return sync;
    }

    RowKernel[] kernels() {
        return fullRows.kernels();
    }

    int localStart() {
        return lo;
    }

    int localRows() {
        return localRows;
    }

    long seed() {
        return options.seed;
    }

    double[] rowsArray() {
        return xRows;
    }
}
