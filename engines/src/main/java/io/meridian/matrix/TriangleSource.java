package io.meridian.matrix;

import io.meridian.engine.BadInputException;
import io.meridian.engine.BadInputException.Input;
import io.meridian.stream.row.RowStoreLayout;
import io.meridian.stream.row.RowStoreReader;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The lower triangle of points {@code 0 .. n-1} read in place, with no square copy: from the row stores the topology
 * wrote ({@link RowStoreReader}), once every row is known to be stored whole, or from one {@link TriangleFile}. The
 * batch jobs ({@code MdsJob}, {@code PwcJob}) open their input here; {@link #close()} unmaps it.
 */
public final class TriangleSource implements AutoCloseable {
    private final LowerRows rows;
    private final Runnable unmap;
    private final Path origin;
    private final int n;

    private TriangleSource(LowerRows rows, Runnable unmap, Path origin, int n) {
        this.rows = rows;
        this.unmap = unmap;
        this.origin = origin;
        this.n = n;
    }

    /**
     * Points {@code 0 .. n-1} of the row stores in {@code directory} ({@code blockRows} rows a block). A missing row,
     * a store of another block size or a missing directory is a {@link BadInputException} naming it.
     */
    public static TriangleSource rowStores(Path directory, int blockRows, int n) {
        RowStoreReader stores = openWhole(directory, blockRows, n);
        return new TriangleSource(stores, stores::close, directory, n);
    }

    /**
     * Points {@code 0 .. n-1} of a lower-triangle file; a file that is not the triangle of at least n points is a
     * {@link BadInputException} naming its size and the expected one.
     */
    public static TriangleSource file(Path file, int n) {
        TriangleFile triangle = new TriangleFile(file, n);
        return new TriangleSource(triangle, triangle::close, file, n);
    }

    /**
     * Refuses, with a {@link BadInputException} naming what and where, row stores that do not hold every row of points
     * {@code 0 .. n-1} in blocks of {@code blockRows} rows (for a command to check before it makes its output).
     */
    public static void checkRowStores(Path directory, int blockRows, int n) {
        openWhole(directory, blockRows, n).close();
    }

    /** The rows, valid until {@link #close()}. */
    public LowerRows rows() {
        return rows;
    }

    /** The row store directory or the triangle file, for messages. */
    public Path origin() {
        return origin;
    }

    public int n() {
        return n;
    }

    @Override
    public void close() {
        unmap.run();
    }

    /** The row stores, once every row of points {@code 0 .. n-1} is known to be stored whole. */
    private static RowStoreReader openWhole(Path directory, int blockRows, int n) {
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
}
