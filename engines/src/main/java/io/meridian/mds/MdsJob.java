package io.meridian.mds;

import io.meridian.collective.BlockSync;
import io.meridian.engine.BadInputException;
import io.meridian.engine.BadInputException.Input;
import io.meridian.matrix.DistanceSource;
import io.meridian.matrix.LowerRows;
import io.meridian.matrix.TriangleFile;
import io.meridian.matrix.Weighting;
import io.meridian.stream.row.RowStoreLayout;
import io.meridian.stream.row.RowStoreReader;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

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
        try (RowStoreReader stores = openRowStores(directory, blockRows, n)) {
            return runOverTriangle(stores, n, directory, options, sync, outDir);
        }
    }

    /**
     * Runs DA-MDS on points {@code 0 .. n-1} of a lower-triangle file ({@link TriangleFile}: the row stores' value
     * files concatenated), read in place; block 0 writes the results to {@code outDir}.
     */
    public static MdsResult runOnTriangleFile(Path file, int n, MdsOptions options, BlockSync sync, Path outDir)
            throws IOException {
        try (TriangleFile triangle = new TriangleFile(file, n)) {
            return runOverTriangle(triangle, n, file, options, sync, outDir);
        }
    }

    private static MdsResult runOverTriangle(LowerRows rows, int n, Path origin, MdsOptions options, BlockSync sync,
                                             Path outDir) throws IOException {
        DaMds engine = new DaMds(rows, n, origin, options, sync);
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
     * Refuses, with a {@link BadInputException} naming what and where, row stores that do not hold every row of points
     * {@code 0 .. n-1} in blocks of {@code blockRows} rows (for a command to check before it makes its output).
     */
    public static void checkRowStores(Path directory, int blockRows, int n) {
        openRowStores(directory, blockRows, n).close();
    }

    /**
     * Refuses row stores written in blocks of another size, told by the first block's marker file (one byte a row):
     * read with a larger block size, their rows would only look missing.
     */
    private static void requireBlockRows(Path directory, int blockRows) {
        Path markers = directory.resolve(RowStoreLayout.fileBase(0) + RowStoreLayout.MARKERS);
        try {
            long size = Files.size(markers);
            if (size != 0 && size != blockRows) { // 0: being created (mapping sizes it)
                throw new BadInputException(Input.ROW_STORE, directory, "the row stores in " + directory + " hold"
                        + " blocks of " + size + " rows (" + markers.getFileName() + "), not of " + blockRows
                        + " (another ingest.rowStore.blockRows?)");
            }
        } catch (NoSuchFileException e) {
            // no first block: its rows are reported missing
        } catch (IOException e) {
            throw new BadInputException(Input.ROW_STORE, directory, "cannot read " + markers + ": " + e.getMessage());
        }
    }

    /** The row stores, once every row of points {@code 0 .. n-1} is known to be stored whole. */
    static RowStoreReader openRowStores(Path directory, int blockRows, int n) {
        if (!Files.isDirectory(directory)) {
            throw new BadInputException(Input.ROW_STORE, directory, "row store directory " + directory
                    + " does not exist");
        }
        requireBlockRows(directory, blockRows);
        RowStoreReader stores = new RowStoreReader(directory, blockRows, n);
        try {
            List<Integer> missing = new ArrayList<>();
            for (int i = 0; i < n && missing.size() < 10; i++) {
                if (!stores.isStored(i)) {
                    missing.add(i);
                }
            }
            if (!missing.isEmpty()) {
                throw new BadInputException(Input.ROW_STORE, directory, "the row stores in " + directory
                        + " do not hold every row of points 0.." + (n - 1) + ": missing " + missing
                        + (missing.size() == 10 ? " and perhaps more" : "") + " (fewer points, or wait for them)");
            }
            return stores;
        } catch (IllegalStateException | UncheckedIOException e) {
            // a block file of another size (another block-rows) or one that cannot be read
            stores.close();
            throw new BadInputException(Input.ROW_STORE, directory, e.getMessage());
        } catch (BadInputException e) {
            stores.close();
            throw e;
        }
    }
}
