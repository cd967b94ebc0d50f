package io.meridian.cli;

import io.meridian.collective.BlockSync;
import io.meridian.collective.SingleProcessSync;
import io.meridian.engine.BadInputException;
import io.meridian.config.CommandLine;
import io.meridian.config.UsageException;
import io.meridian.matrix.ShortMatrixFormat;
import io.meridian.matrix.TriangleFile;
import io.meridian.matrix.TriangleSource;
import io.meridian.matrix.Weighting;
import io.meridian.mds.DaMds;
import io.meridian.matrix.DistanceSource;
import io.meridian.mds.LayoutFiles;
import io.meridian.mds.LmMds;
import io.meridian.mds.LmOptions;
import io.meridian.mds.LmResult;
import io.meridian.mds.MdsJob;
import io.meridian.mds.MdsOptions;
import io.meridian.mds.MdsResult;
import io.meridian.mds.NonFiniteResultException;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.function.ToLongFunction;

/**
 * {@code meridian mds}: batch DA-MDS of a SPIDAL 16-bit distance matrix, or of the lower triangle the row stores hold
 * (read in place), in this process or in MPI ranks.
 */
final class MdsCommand implements Command {
    /** Whether this run reads --triangle (names the file in a refusal of the distances). */
    private boolean triangleFile;
    static final String USAGE = "mds --distances FILE (or --row-stores DIR --block-rows R, or --triangle FILE) --n N"
            + " --out DIR [--dim 3]"
            + " [--weights FILE | --point-weights FILE"
            + " | --sammon] [--big-endian] [--alpha 0.95] [--tmin-factor 0.5] [--threshold 1e-6] [--cg-iterations 20]"
            + " [--cg-threshold 1] [--max-temp-loops K] [--init random|classical|FILE] [--fixed FILE] [--seed S]"
            + " [--spidal-update] [--force] [--solver smacof|lm] [--chisq-norm 0|1|2|3|4] [--lm-iterations 200]"
            + " [--q-initial 0.01] [--q-range 0.001] [--lm-cg-iterations 200] [--lm-cg-residual 1e-5]"
            + " [--chisq-change-per-point 1e-6] [--nbadgo 6]" + BatchMpi.USAGE
            + "\n      --solver lm: MDSasChisq's MDS, the chi-square of the distances' residuals minimised by"
            + "\n      Levenberg-Marquardt from the start DA-MDS would take (same --seed, --init, --fixed); square"
            + "\n      --distances only, --weights or --point-weights, no --sammon (use --chisq-norm 2); see"
            + "\n      docs/mds-lm.md. --chisq-norm: residual (d - delta) divided by delta (0), delta^0.75 (1),"
            + "\n      delta^0.5 (2, Sammon), not (3, SMACOF's stress, the default), times delta^0.5 (4);"
            + "\n      --q-initial: first Marquardt Q as a fraction of the largest eigenvalue; --q-range: lowest Q"
            + "\n      as a fraction of it; stops after --lm-iterations, when the predicted chi-square change is at"
            + "\n      most --chisq-change-per-point x N, or when --nbadgo iterations gained no more than that"
            + "\n      --spidal-update: SPIDAL damds's update, for comparisons with it: V + I (layouts shrunk by"
            + "\n      N/(N+1)), distances below the smallest positive one (duplicates' zeros too) raised to it;"
            + "\n      by default the textbook Guttman transform"
            + "\n      --force: write over the map --out already holds (without it, such a DIR is refused)"
            + "\n      --row-stores DIR --block-rows R: points 0..N-1 of the row stores the topology wrote"
            + "\n      (ingest.rowStore.directory, blocks of ingest.rowStore.blockRows rows), read in place as the"
            + "\n      lower triangle they hold: the same map as from the square file of the same values, to"
            + "\n      rounding; each rank owns rows of about equal pairs. Unit weights, with or without missing"
            + "\n      distances; --weights, --point-weights, --sammon, --big-endian and --init classical are refused"
            + "\n      --triangle FILE: the same from one file of the lower triangle (rows 1, 2, ... of i 16-bit"
            + "\n      little-endian values each: the row stores' block-*.tri files concatenated in block order)";

    @Override
    public String optionFor(BadInputException.Input input) {
        return switch (input) {
            case WEIGHTS -> "--weights";
            case POINT_WEIGHTS -> "--point-weights";
            case INITIAL_LAYOUT -> "--init";
            case FIXED_POINTS -> "--fixed";
            case ROW_STORE -> "--row-stores";
            case DISTANCES -> triangleFile ? "--triangle" : "--distances";
            default -> null;
        };
    }

    @Override
    public String usage() {
        return USAGE;
    }

    @Override
    public int run(String[] args) throws Exception {
        for (String a : args) {
            if ("--help".equals(a) || "-h".equals(a)) {
                System.out.println("usage: ./meridian " + USAGE);
                return 0;
            }
        }
        CommandLine cl = CommandLine.parse("mds", args,
                union(Set.of("distances", "row-stores", "block-rows", "triangle", "n", "out", "dim", "weights",
                        "point-weights", "alpha", "tmin-factor", "threshold",
                        "cg-iterations", "cg-threshold", "max-temp-loops", "init", "fixed", "seed", "solver",
                        "chisq-norm", "lm-iterations", "q-initial", "q-range", "lm-cg-iterations", "lm-cg-residual",
                        "chisq-change-per-point", "nbadgo"), BatchMpi.VALUED),
                union(Set.of("sammon", "big-endian", "spidal-update", "force"), BatchMpi.FLAGS));
        cl.requireNoPositional();
        int n = cl.requiredInt("n", 1, GenCommand.MAX_N);
        LmOptions lm = lmOptions(cl);
        boolean stores = cl.has("row-stores");
        triangleFile = cl.has("triangle");
        boolean triangle = stores || triangleFile;
        if ((cl.has("distances") ? 1 : 0) + (stores ? 1 : 0) + (triangleFile ? 1 : 0) != 1) {
            throw new UsageException("give one of --distances FILE (a square matrix), --row-stores DIR (the lower"
                    + " triangle the topology stored) and --triangle FILE (that triangle in one file)");
        }
        ByteOrder order = cl.flag("big-endian") ? ByteOrder.BIG_ENDIAN : ByteOrder.LITTLE_ENDIAN;
        Path distances = null;
        Path rowStores = null;
        int blockRows = 0;
        if (triangleFile) {
            refuseOverTriangle(cl, "--triangle");
            distances = cl.existingFile("triangle");
            // its size before --out is made: a refused run leaves nothing behind
            new TriangleFile(distances, n).close();
        } else if (stores) {
            refuseOverTriangle(cl, "--row-stores");
            rowStores = Path.of(cl.requiredString("row-stores"));
            blockRows = cl.requiredInt("block-rows", 1, GenCommand.MAX_N);
            // every row there, in blocks of that size, before --out is made: a refused run leaves nothing behind
            TriangleSource.checkRowStores(rowStores, blockRows, n);
        } else {
            distances = cl.existingFile("distances");
            // the matrix's size and byte order before --out is made: a refused run leaves nothing behind
            ShortMatrixFormat.checkFile(BadInputException.Input.DISTANCES, distances, n);
            ShortMatrixFormat.checkByteOrder(BadInputException.Input.DISTANCES, distances, order, "--big-endian");
        }
        // any dim for any N: N points fit exactly in N - 1 dimensions, and the rest are zero
        int dim = cl.intValue("dim", 3, 1, 100);
        Weighting weighting = weighting(cl, n, order);
        double alpha = cl.fraction("alpha", 0.95, 0, 1);
        MdsOptions options = new MdsOptions().dim(dim)
                .alpha(alpha)
                .tminFactor(cl.doubleValue("tmin-factor", 0.5, 0, 1e6, true))
                .threshold(cl.doubleValue("threshold", 1e-6, 0, 1, true))
                .cgIterations(cl.intValue("cg-iterations", 20, 1, 10_000))
                .cgThreshold(cl.doubleValue("cg-threshold", 1, 0, 1e6, true))
                .maxTemperatureLoops(cl.intValue("max-temp-loops", Integer.MAX_VALUE, 1, Integer.MAX_VALUE))
                .seed(cl.longValue("seed", 1, Long.MIN_VALUE, Long.MAX_VALUE))
                .update(cl.flag("spidal-update") ? MdsOptions.Update.SPIDAL : MdsOptions.Update.GUTTMAN)
                .progress(System.err, 2000);
        String init = cl.string("init", "random");
        if ("classical".equals(init)) {
            options.classicalInit();
        } else if (!"random".equals(init)) {
            Path file = CommandLine.checkReadableFile("--init", Path.of(init));
            options.initial(LayoutFiles.readLayout(file, n, dim));
        }
        if (cl.has("fixed")) {
            boolean[] fixed = new boolean[n];
            double[] coordinates = new double[n * dim];
            LayoutFiles.readFixed(cl.existingFile("fixed"), n, dim, fixed, coordinates);
            options.fixed(fixed, coordinates);
        }
        int procs = BatchMpi.procs(cl);
        if (procs > n) {
            throw new UsageException("--procs must be at most N = " + n + " (each process owns a block of rows), got "
                    + procs);
        }
        boolean outExisted = Files.exists(Path.of(cl.requiredString("out")));
        // an earlier map in --out is kept unless --force (the ranks mpirun starts run after this check)
        Path out = cl.flag("mpi-rank") ? cl.outputDirectory("out")
                : cl.resultDirectory("out", List.of(MdsJob.POINTS_FILE, MdsJob.SUMMARY_FILE));
        if (procs > 1 && !cl.flag("mpi-rank")) {
            int status = BatchMpi.launch("mds", args, procs, cl);
            if (status != 0 && !outExisted) {
                removeIfEmpty(out);
            }
            return status;
        }
        if (lm != null) {
            return runLm(cl, n, distances, order, weighting, options, lm, out, outExisted);
        }
        BatchMpi mpi = cl.flag("mpi-rank")
                ? BatchMpi.rank(cl, n * dim, triangle ? DaMds.triangleReduceCapacity(n, dim) : 1024) : null;
        Path matrix = distances;
        Path storeDirectory = rowStores;
        int storeBlockRows = blockRows;
        Ranked<MdsResult> ranked = ranked(mpi, out, outExisted, sync -> triangleFile
                ? MdsJob.runOnTriangleFile(matrix, n, options, sync, out)
                : stores ? MdsJob.runOnRowStores(storeDirectory, storeBlockRows, n, options, sync, out)
                : MdsJob.run(matrix, n, order, weighting, options, sync, out), "SMACOF iteration",
                r -> r.smacofIterations);
        MdsResult result = ranked.result();
        if (result == null) {
            return ranked.exitStatus();
        }
        System.out.printf(Locale.ROOT, "mds: N = %d, normalized stress %.6g (SPIDAL's %.6g), %d temperature loops, "
                        + "%d SMACOF iterations, %.1f s (%.2f ms per iteration)%n",
                n, result.normalizedStress, result.spidalStress, result.temperatureLoops, result.smacofIterations,
                result.seconds, result.msPerIteration);
        System.out.println("mds: wrote " + out.resolve(MdsJob.POINTS_FILE) + " and " + out.resolve(MdsJob.SUMMARY_FILE));
        return 0;
    }

    /** The options of one solver refused with the other, by name; the LM options, or null for SMACOF. */
    static LmOptions lmOptions(CommandLine cl) {
        String solver = cl.string("solver", "smacof");
        List<String> lmOnly = List.of("chisq-norm", "lm-iterations", "q-initial", "q-range", "lm-cg-iterations",
                "lm-cg-residual", "chisq-change-per-point", "nbadgo");
        if ("smacof".equals(solver)) {
            for (String option : lmOnly) {
                if (cl.has(option)) {
                    throw new UsageException("--" + option + " is an option of --solver lm, not of DA-MDS (smacof)");
                }
            }
            return null;
        }
        if (!"lm".equals(solver)) {
            throw new UsageException("--solver must be smacof or lm, got " + solver);
        }
        for (String option : List.of("row-stores", "triangle", "sammon", "alpha", "tmin-factor", "threshold",
                "cg-iterations", "cg-threshold", "max-temp-loops", "spidal-update")) {
            if (cl.has(option)) {
                throw new UsageException("--" + option + " is an option of DA-MDS (smacof), not of --solver lm"
                        + ("sammon".equals(option) ? " (use --chisq-norm 2, the original's Sammon chi-square)" : ""));
            }
        }
        try {
            return new LmOptions(cl.intValue("chisq-norm", LmOptions.DEFAULT_CHISQ_NORM, 0, 4),
                    cl.intValue("lm-iterations", LmOptions.DEFAULT_MAX_ITERATIONS, 1, 1_000_000),
                    cl.doubleValue("q-initial", LmOptions.DEFAULT_Q_HIGH_INITIAL_FACTOR, 0, 1, true),
                    cl.fraction("q-range", LmOptions.DEFAULT_Q_RANGE, 0, 1),
                    cl.intValue("lm-cg-iterations", LmOptions.DEFAULT_CG_ITERATIONS, 1, 100_000),
                    cl.fraction("lm-cg-residual", LmOptions.DEFAULT_CG_RESIDUAL, 0, 1),
                    cl.doubleValue("chisq-change-per-point", LmOptions.DEFAULT_CHISQ_CHANGE_PER_POINT, 0, 1e300,
                            false),
                    cl.intValue("nbadgo", LmOptions.DEFAULT_NBADGO, 1, 1_000_000));
        } catch (IllegalArgumentException e) {
            throw new UsageException("--" + e.getMessage());
        }
    }

    /** {@code --solver lm}: one process or MPI ranks over the same row blocks as DA-MDS. */
    private int runLm(CommandLine cl, int n, Path distances, ByteOrder order, Weighting weighting,
                      MdsOptions options, LmOptions lm, Path out, boolean outExisted) throws Exception {
        int dim = options.dim();
        BatchMpi mpi = cl.flag("mpi-rank")
                ? BatchMpi.rank(cl, DaMds.allgatherCapacity(n, dim), Math.max(1024, LmMds.REDUCE_CAPACITY)) : null;
        Ranked<LmResult> ranked = ranked(mpi, out, outExisted,
                sync -> MdsJob.runLm(DistanceSource.matrixFile(distances, n, order), weighting, options, lm, sync, out),
                "LM iteration", LmResult::iterations);
        LmResult result = ranked.result();
        if (result == null) {
            return ranked.exitStatus();
        }
        System.out.printf(Locale.ROOT, "mds: solver lm, N = %d, normalized stress %.6g (from %.6g), chi-square %.6g"
                        + " (Chisqnorm %d), %d iterations (%d rejected), %d CG steps, %.1f s (final stress at"
                        + " %.1f s, within 1%% of it at %.1f s), stopped: %s%n",
                n, result.normalizedStress(), result.startStress(), result.chisq(), result.chisqNorm(),
                result.iterations(), result.rejectedSteps(), result.cgIterations(), result.seconds(),
                result.secondsToFinal(), result.secondsToWithin1Percent(), result.stopReason());
        System.out.println("mds: wrote " + out.resolve(MdsJob.POINTS_FILE) + " and "
                + out.resolve(MdsJob.SUMMARY_FILE));
        return 0;
    }

    /** A solver's run over the collectives it is given. */
    private interface Solver<R> {
        R solve(BlockSync sync) throws Exception;
    }

    /** A run's result where this process reports it (one process, or MPI rank 0), else null and the exit status. */
    private record Ranked<R>(R result, int exitStatus) {
    }

    /**
     * Runs {@code solver} in this process, or as an MPI rank when {@code mpi} is given; rank 0 prints the
     * communication summary. Input the engine refuses is refused in every rank alike: each closes its collectives (no
     * region is left in /dev/shm), and rank 0 (or the one process) alone says why.
     */
    private static <R> Ranked<R> ranked(BatchMpi mpi, Path out, boolean outExisted, Solver<R> solver, String iteration,
                                        ToLongFunction<R> iterations) throws Exception {
        R result;
        try {
            result = solver.solve(mpi != null ? mpi.sync : SingleProcessSync.INSTANCE);
        } catch (BadInputException | NonFiniteResultException e) {
            if (mpi != null) {
                boolean first = mpi.sync.block() == 0;
                mpi.close();
                if (!first) {
                    return new Ranked<>(null, e instanceof BadInputException ? Main.EXIT_USAGE : 1);
                }
            } else if (!outExisted) {
                removeIfEmpty(out);
            }
            throw e;
        }
        if (mpi != null) {
            String communication = mpi.communicationSummary("mds", iteration, iterations.applyAsLong(result));
            boolean first = mpi.sync.block() == 0;
            mpi.close();
            if (!first) {
                return new Ranked<>(null, 0);
            }
            System.out.println(communication);
        }
        return new Ranked<>(result, 0);
    }

    /** The options a run over the lower triangle does not support, refused one at a time by name. */
    private static void refuseOverTriangle(CommandLine cl, String source) {
        for (String option : List.of("weights", "point-weights", "sammon", "big-endian")) {
            if (cl.has(option)) {
                throw new UsageException("--" + option + " is not supported with " + source + " (the lower triangle"
                        + " runs unit weights, with or without missing distances; it is little-endian)");
            }
        }
        if ("classical".equals(cl.string("init", "random"))) {
            throw new UsageException("--init classical is not supported with " + source + " (its product runs on"
                    + " full rows): use --init random or --init FILE");
        }
    }

    /** Removes a directory this command created for its results when it ends without any. */
    private static void removeIfEmpty(Path dir) {
        try (java.util.stream.Stream<Path> entries = Files.list(dir)) {
            if (entries.findAny().isEmpty()) {
                Files.delete(dir);
            }
        } catch (java.io.IOException e) {
            // left as it is: the run's own error says what went wrong
        }
    }

    private static Set<String> union(Set<String> a, Set<String> b) {
        java.util.HashSet<String> all = new java.util.HashSet<>(a);
        all.addAll(b);
        return all;
    }

    static Weighting weighting(CommandLine cl, int n, ByteOrder order) {
        int given = (cl.has("weights") ? 1 : 0) + (cl.has("point-weights") ? 1 : 0);
        if (given > 1) {
            throw new UsageException("give at most one of --weights and --point-weights");
        }
        Weighting weighting;
        if (cl.has("weights")) {
            Path file = cl.existingFile("weights");
            io.meridian.matrix.ShortMatrixFormat.checkFile(BadInputException.Input.WEIGHTS, file, n);
            weighting = Weighting.matrix(file, order);
        } else if (cl.has("point-weights")) {
            weighting = Weighting.points(Weighting.readPointWeights(cl.existingFile("point-weights"), n));
        } else {
            weighting = Weighting.unit();
        }
        return weighting.withSammon(cl.flag("sammon"));
    }
}
