package io.meridian.cli;

import io.meridian.collective.BlockSync;
import io.meridian.collective.SingleProcessSync;
import io.meridian.config.CommandLine;
import io.meridian.engine.BadInputException;
import io.meridian.config.UsageException;
import io.meridian.matrix.DistanceSource;
import io.meridian.matrix.RowBlock;
import io.meridian.matrix.TriangleSource;
import io.meridian.pwc.PwcEngine;
import io.meridian.pwc.PwcJob;
import io.meridian.pwc.PwcProgress;
import io.meridian.pwc.PwcResult;
import io.meridian.pwc.PwcSettings;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * {@code ./meridian pwc}: DA-PWC clustering of the N points of a SPIDAL 16-bit distance matrix, or of the lower
 * triangle the row stores hold (or a triangle file), read in place, in this process or in MPI ranks. Writes
 * {@code clusters.tsv} ({@code point<TAB>cluster}), {@code centers.tsv}
 * ({@code cluster<TAB>center point<TAB>size<TAB>mean distance of the center to the members}) and {@code summary.json}.
 */
public final class PwcCommand implements Command {
    private static final Set<String> VALUED = Set.of("distances", "row-stores", "block-rows", "triangle", "n", "out",
            "max-clusters", "seed", "epsilon-change",
            "initial-cooling", "fine-cooling", "freeze-cooling", "split-wait", "freezing-limit", "min-cluster-size",
            "too-small-to-split", "min-eigen-test", "power-iterations", "eigenvalue-change", "eigenvector-change",
            "temperature-iteration-limit", "freeze-temperature-limit", "duplicate-em-limit", "split-perturbation",
            "failed-split-tests-to-stop", "split-test", "negative-dominant");
    private static final Set<String> FLAGS = Set.of("big-endian", "quiet", "help", "dapwc", "force");
    private static final long PROGRESS_NANOS = 1_000_000_000L;
    /** Whether this run reads --triangle (names the file in a refusal of the distances). */
    private boolean triangleFile;

    @Override
    public String optionFor(BadInputException.Input input) {
        return switch (input) {
            case DISTANCES -> triangleFile ? "--triangle" : "--distances";
            case ROW_STORE -> "--row-stores";
            default -> null;
        };
    }

    @Override
    public String usage() {
        return "pwc --distances FILE (or --row-stores DIR --block-rows R, or --triangle FILE) --n N --out DIR"
                + " [--max-clusters K (8)] [--big-endian] [--seed S] [--quiet] [--dapwc] [--force]" + BatchMpi.USAGE
                + "\n"
                + "      --force: write over the clusters DIR already holds (without it, such a DIR is refused)\n"
                + "      --row-stores DIR --block-rows R: points 0..N-1 of the row stores the topology wrote\n"
                + "        (ingest.rowStore.directory, blocks of ingest.rowStore.blockRows rows), read in place as\n"
                + "        the lower triangle they hold, with no square copy: the square file's labels; each rank\n"
                + "        owns rows of about equal pairs; --big-endian is refused\n"
                + "      --triangle FILE: the same from one file of the lower triangle (rows 1, 2, ... of i 16-bit\n"
                + "        little-endian values each: gen --layout triangle, the row stores' block-*.tri\n"
                + "        concatenated)\n"
                + "      --procs P: P MPI ranks, each owning a block of rows (of the square file or of the triangle)\n"
                + "      annealing (dapwc's values): [--epsilon-change 0.001] [--initial-cooling 0.9] [--fine-cooling 0.99]\n"
                + "      [--freeze-cooling 0.98] [--split-wait 10] [--freezing-limit 0.002] [--min-cluster-size 25]\n"
                + "      [--too-small-to-split 5] [--min-eigen-test -0.01] [--power-iterations 200]\n"
                + "      [--eigenvalue-change 0.001] [--eigenvector-change 0.001] [--temperature-iteration-limit 2000]\n"
                + "      [--freeze-temperature-limit 2000] [--duplicate-em-limit 200] [--split-perturbation 1]\n"
                + "      Where the defaults differ from SPIDAL's dapwc (adjusted Rand index against the true classes, on dapwc's\n"
                + "      16 reference runs: iris, wine, breast cancer, 10 blobs of 2000 points; and on scikit-learn's digits, 1797\n"
                + "      points; on no reference run do the defaults end below dapwc):\n"
                + "      [--split-test halved|duplicated] halved (default): the split test estimates a cluster duplicated in two\n"
                + "        by halving its M, as dapwc does for one cluster; duplicated: dapwc's test for 2+ clusters, EM\n"
                + "        re-converged with the cluster duplicated (standardized digits 0.68 instead of 0.52, wine K=5 0.59\n"
                + "        instead of 0.76, and 1.3-2.1x the EM iterations)\n"
                + "      [--negative-dominant split-last|skip|split-first] a cluster whose dominant eigenvalue is negative:\n"
                + "        split-last (default) splits it only when no other cluster passes the test; skip = dapwc (blobs std 2\n"
                + "        0.87 instead of 1.0); split-first lets such clusters, often compact true classes, split first\n"
                + "        (digits 0.58 instead of 0.68)\n"
                + "      [--failed-split-tests-to-stop 3] this many split tests in a row without a split end the splitting\n"
                + "        below --max-clusters (wine K=5: 4 clusters, 0.76, dapwc 0.59); 0 = dapwc, split up to --max-clusters\n"
                + "      [--dapwc] everything as dapwc does it, to get its labels: the duplicated split test, annealing on from\n"
                + "        the state that test leaves (not the solution before it), splitting up to --max-clusters, negative\n"
                + "        dominant eigenvalues skipped, small clusters kept when no best solution has as many clusters, its\n"
                + "        power-method start vector (no --seed)";
    }

    @Override
    public int run(String[] args) throws Exception {
        CommandLine cl = CommandLine.parse("pwc", args, union(VALUED, BatchMpi.VALUED), union(FLAGS, BatchMpi.FLAGS));
        cl.requireNoPositional();
        if (cl.flag("help")) {
            System.out.println("usage: ./meridian " + usage());
            return 0;
        }
        int n = cl.requiredInt("n", 2, 1 << 20);
        boolean stores = cl.has("row-stores");
        triangleFile = cl.has("triangle");
        if ((cl.has("distances") ? 1 : 0) + (stores ? 1 : 0) + (triangleFile ? 1 : 0) != 1) {
            throw new UsageException("give one of --distances FILE (a square matrix), --row-stores DIR (the lower"
                    + " triangle the topology stored) and --triangle FILE (that triangle in one file)");
        }
        ByteOrder order = cl.flag("big-endian") ? ByteOrder.BIG_ENDIAN : ByteOrder.LITTLE_ENDIAN;
        if ((stores || triangleFile) && cl.flag("big-endian")) {
            throw new UsageException("--big-endian is not supported with " + (stores ? "--row-stores" : "--triangle")
                    + " (the lower triangle is little-endian)");
        }
        // the input is checked (size, byte order, every row stored) before --out is made: a refused run leaves nothing
        Path input;
        int blockRows = 0;
        if (triangleFile) {
            input = cl.existingFile("triangle");
            TriangleSource.file(input, n).close();
        } else if (stores) {
            input = Path.of(cl.requiredString("row-stores"));
            blockRows = cl.requiredInt("block-rows", 1, GenCommand.MAX_N);
            TriangleSource.checkRowStores(input, blockRows, n);
        } else {
            input = cl.existingFile("distances");
            mapWhole(input, n, order);
        }
        PwcSettings settings = settings(cl, n);
        boolean quiet = cl.flag("quiet");
        int procs = BatchMpi.procs(cl);
        if (procs > n) {
            throw new UsageException("--procs must be at most N = " + n + " (each process owns a block of rows), got "
                    + procs);
        }
        List<String> results = List.of(PwcJob.CLUSTERS_FILE, PwcJob.CENTERS_FILE, PwcJob.SUMMARY_FILE);
        // an earlier clustering in --out is kept unless --force (the ranks mpirun starts run after this check)
        Path out = cl.flag("mpi-rank") ? cl.outputDirectory("out") : cl.resultDirectory("out", results);
        if (procs > 1 && !cl.flag("mpi-rank")) {
            return BatchMpi.launch("pwc", args, procs, cl);
        }
        int doubles = PwcJob.collectiveCapacity(n, settings.maxClusters);
        BatchMpi mpi = cl.flag("mpi-rank") ? BatchMpi.rank(cl, doubles, doubles) : null;
        BlockSync sync = mpi != null ? mpi.sync : SingleProcessSync.INSTANCE;
        boolean talks = !quiet && sync.block() == 0;
        if (talks) {
            System.err.printf(Locale.ROOT, "meridian pwc: %d points from %s, %s%n", n, stores ? "the row stores in "
                    + input + " (lower triangle, in place)" : triangleFile ? "the lower triangle in " + input
                    : input + " (" + order + ")", settings);
        }
        PwcProgress progress = talks ? new StderrProgress(System.err) : PwcProgress.NONE;
        PwcResult result;
        try {
            if (stores || triangleFile) {
                try (TriangleSource triangle = stores ? TriangleSource.rowStores(input, blockRows, n)
                        : TriangleSource.file(input, n)) {
                    result = PwcJob.run(triangle, settings, sync, progress, out);
                }
            } else if (mpi != null) {
                result = PwcJob.run(DistanceSource.matrixFile(input, n, order), settings, sync, progress, out);
            } else {
                result = PwcJob.run(mapWhole(input, n, order), settings, progress, out);
            }
        } catch (BadInputException e) {
            // input the engine refuses is refused in every rank alike: each closes its collectives, rank 0 says why
            if (mpi != null) {
                boolean first = sync.block() == 0;
                mpi.close();
                if (!first) {
                    return Main.EXIT_USAGE;
                }
            }
            throw e;
        }
        if (mpi != null) {
            String communication = mpi.communicationSummary("pwc", "EM iteration", result.emIterations());
            mpi.close();
            if (sync.block() != 0) {
                return 0;
            }
            System.out.println(communication);
        }
        System.out.printf(Locale.ROOT, "pwc: %d clusters, sizes %s, %d EM iterations, %d power iterations, final T"
                        + " %.4g, %.2f s (%.4f s per EM iteration, the split tests' power iterations included) -> %s%n",
                result.clusters(), Arrays.toString(result.sizes()), result.emIterations(), result.powerIterations(),
                result.finalTemperature(), result.seconds(), result.seconds() / Math.max(1, result.emIterations()), out);
        return 0;
    }

    private static Set<String> union(Set<String> a, Set<String> b) {
        Set<String> all = new HashSet<>(a);
        all.addAll(b);
        return all;
    }

    static PwcSettings settings(CommandLine cl, int n) {
        PwcSettings d = PwcSettings.defaults();
        int maxClusters = cl.intValue("max-clusters", Math.min(d.maxClusters, n), 1, n);
        PwcSettings.Builder b = PwcSettings.builder();
        if (cl.flag("dapwc")) {
            // what --dapwc fixes cannot be given as well: the run would be neither dapwc's nor the one asked for
            for (String fixed : new String[] {"split-test", "failed-split-tests-to-stop", "negative-dominant", "seed"}) {
                if (cl.has(fixed)) {
                    throw new UsageException("--" + fixed + " cannot be given with --dapwc, which reproduces SPIDAL's dapwc"
                            + " (duplicated split test, splitting up to --max-clusters, its fixed power-method start vector)");
                }
            }
            b.dapwc();
        } else {
            b.splitTest(cl.choice("split-test", "halved", "halved", "duplicated").equals("duplicated")
                            ? PwcSettings.SplitTest.DUPLICATED : PwcSettings.SplitTest.HALVED)
                    .failedSplitTestsToStop(cl.intValue("failed-split-tests-to-stop", d.failedSplitTestsToStop, 0, 1_000_000))
                    .negativeDominant(PwcSettings.NegativeDominant.valueOf(cl.choice("negative-dominant", "split-last",
                            "split-last", "skip", "split-first").toUpperCase(Locale.ROOT).replace('-', '_')))
                    .seed(cl.has("seed") ? cl.longValue("seed", 0, Long.MIN_VALUE, Long.MAX_VALUE) : null);
        }
        return b
                .maxClusters(maxClusters)
                .epsilonChange(cl.doubleValue("epsilon-change", d.epsilonChange, 0, 1e6, true))
                .initialCooling(cl.fraction("initial-cooling", d.initialCooling, 0, 1))
                .fineCooling(cl.fraction("fine-cooling", d.fineCooling, 0, 1))
                .freezeCooling(cl.fraction("freeze-cooling", d.freezeCooling, 0, 1))
                .splitWait(cl.intValue("split-wait", d.splitWait, 0, 1_000_000))
                .freezingLimit(cl.doubleValue("freezing-limit", d.freezingLimit, 0, 1, true))
                .minClusterSize(cl.intValue("min-cluster-size", d.minClusterSize, 0, n))
                .tooSmallToSplit(cl.doubleValue("too-small-to-split", d.tooSmallToSplit, 0, n, false))
                .minEigenTest(cl.doubleValue("min-eigen-test", d.minEigenTest, -1e6, 1e6, false))
                .powerIterations(cl.intValue("power-iterations", d.powerIterations, 12, 1_000_000))
                .eigenvalueChange(cl.doubleValue("eigenvalue-change", d.eigenvalueChange, 0, 1, true))
                .eigenvectorChange(cl.doubleValue("eigenvector-change", d.eigenvectorChange, 0, 1, true))
                .temperatureIterationLimit(cl.intValue("temperature-iteration-limit", d.temperatureIterationLimit, 1, Integer.MAX_VALUE))
                .freezeTemperatureLimit(cl.intValue("freeze-temperature-limit", d.freezeTemperatureLimit, 1, Integer.MAX_VALUE))
                .duplicateEmLimit(cl.intValue("duplicate-em-limit", d.duplicateEmLimit, 1, Integer.MAX_VALUE))
                .splitPerturbation(cl.doubleValue("split-perturbation", d.splitPerturbation, 0, 1e6, true))
                .build();
    }

    /** The whole N x N matrix as one row block; a file of the wrong size is refused here, before any work. */
    static RowBlock mapWhole(Path distances, int n, ByteOrder order) {
        return DistanceSource.matrixFile(distances, n, order).all();
    }

    /** Prints one line at most every second, so a long run is never silent for more than about two. */
    private static final class StderrProgress implements PwcProgress {
        private final PrintStream err;
        private final long start = System.nanoTime();
        private long last = start;

        StderrProgress(PrintStream err) {
            this.err = err;
        }

        @Override
        public void update(PwcEngine engine) {
            long now = System.nanoTime();
            if (now - last < PROGRESS_NANOS) {
                return;
            }
            last = now;
            err.printf(Locale.ROOT, "meridian pwc: %.1f s, EM iteration %d, %d clusters, T %.4g, %s, %d power iterations%n",
                    (now - start) / 1e9, engine.emIterations(), engine.clusters(), engine.temperature(),
                    engine.phase().name().toLowerCase(Locale.ROOT).replace('_', ' '), engine.powerIterations());
        }
    }
}
