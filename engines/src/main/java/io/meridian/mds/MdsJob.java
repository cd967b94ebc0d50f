package io.meridian.mds;

import io.meridian.collective.BlockSync;
import io.meridian.engine.BadInputException;
import io.meridian.matrix.DistanceSource;
import io.meridian.matrix.TriangleFile;
import io.meridian.matrix.TriangleSource;
import io.meridian.matrix.Weighting;
import java.io.IOException;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;

/** A batch DA-MDS run from files to files: {@code points.tsv} and {@code summary.json} in an output directory. */
public final class MdsJob {
    public static final String POINTS_FILE = "points.tsv";
    public static final String SUMMARY_FILE = "summary.json";

    private MdsJob() {
    }

    public static MdsResult run(Path distances, int n, ByteOrder order, Weighting weighting, MdsOptions options,
                                BlockSync sync, Path outDir) throws IOException {
        return run(DistanceSource.matrixFile(distances, n, order), weighting, options, sync, outDir);
    }

    /** Refuses a layout or stress that is not finite, naming the first such point; nothing has been written. */
    static void requireFinite(MdsResult result, Path outDir) {
        String what = null;
        for (int i = 0; i < result.n && what == null; i++) {
            for (int k = 0; k < result.dim; k++) {
                double v = result.points[i * result.dim + k];
                if (!Double.isFinite(v)) {
                    what = "point " + i + " has coordinate " + k + " = " + v;
                    break;
                }
            }
        }
        if (what == null && !Double.isFinite(result.normalizedStress)) {
            what = "the stress is " + result.normalizedStress;
        }
        if (what != null) {
            throw new NonFiniteResultException("the layout is not finite (" + what + "), so nothing was written to "
                    + outDir + "; weights too large or too small for double arithmetic, or every distance of a point"
                    + " missing, cause this");
        }
    }

    /** Runs DA-MDS on {@code distances}; block 0 writes the results to {@code outDir}. */
    public static MdsResult run(DistanceSource distances, Weighting weighting, MdsOptions options, BlockSync sync,
                                Path outDir) throws IOException {
        DaMds engine = new DaMds(distances, weighting, options, sync);
        MdsResult result = engine.run();
        requireFinite(result, outDir);
        if (sync.block() == 0) {
            Files.createDirectories(outDir);
            result.writePoints(outDir.resolve(POINTS_FILE));
            result.writeSummary(outDir.resolve(SUMMARY_FILE));
        }
        return result;
    }

    /**
     * Runs DA-MDS on points {@code 0 .. n-1} of the row stores in {@code directory} ({@code blockRows} rows a block),
     * reading their lower triangle in place (no square copy); block 0 writes the results to {@code outDir}. Every
     * row must be stored: a missing one, a store of another block size or a missing directory is a
     * {@link BadInputException} naming it.
     */
    public static MdsResult runOnRowStores(Path directory, int blockRows, int n, MdsOptions options, BlockSync sync,
                                           Path outDir) throws IOException {
        try (TriangleSource stores = TriangleSource.rowStores(directory, blockRows, n)) {
            return run(stores, options, sync, outDir);
        }
    }

    /**
     * Runs DA-MDS on points {@code 0 .. n-1} of a lower-triangle file ({@link TriangleFile}: the row stores' value
     * files concatenated), read in place; block 0 writes the results to {@code outDir}.
     */
    public static MdsResult runOnTriangleFile(Path file, int n, MdsOptions options, BlockSync sync, Path outDir)
            throws IOException {
        try (TriangleSource triangle = TriangleSource.file(file, n)) {
            return run(triangle, options, sync, outDir);
        }
    }

    /** Runs DA-MDS on the lower triangle {@code triangle} holds, read in place; block 0 writes to {@code outDir}. */
    public static MdsResult run(TriangleSource triangle, MdsOptions options, BlockSync sync, Path outDir)
            throws IOException {
        DaMds engine = new DaMds(triangle.rows(), triangle.n(), triangle.origin(), options, sync);
        MdsResult result = engine.run();
        requireFinite(result, outDir);
        if (sync.block() == 0) {
            Files.createDirectories(outDir);
            result.writePoints(outDir.resolve(POINTS_FILE));
            result.writeSummary(outDir.resolve(SUMMARY_FILE));
        }
        return result;
    }

    /**
     * Runs MDS as a chi-square by Levenberg-Marquardt ({@link LmMds}) on {@code distances}, from the layout DA-MDS
     * would start from with {@code options}; block 0 writes the same files as DA-MDS to {@code outDir}.
     */
    public static LmResult runLm(DistanceSource distances, Weighting weighting, MdsOptions options, LmOptions lm,
                                 BlockSync sync, Path outDir) throws IOException {
        LmResult result = new LmMds(distances, weighting, options, lm, sync).run();
        for (double v : result.points()) {
            if (!Double.isFinite(v) || !Double.isFinite(result.normalizedStress())) {
                throw new NonFiniteResultException("the LM layout is not finite, so nothing was written to " + outDir
                        + "; weights too large or too small for double arithmetic cause this");
            }
        }
        if (sync.block() == 0) {
            Files.createDirectories(outDir);
            result.writePoints(outDir.resolve(POINTS_FILE));
            result.writeSummary(outDir.resolve(SUMMARY_FILE));
        }
        return result;
    }
}
