package io.meridian.matrix;

import io.meridian.engine.BadInputException;
import io.meridian.engine.BadInputException.Input;
import io.meridian.stream.row.BlockRowStore;
import io.meridian.stream.row.RowStoreReader;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Distances of points {@code 0 .. n-1} as the ingestion topology stored them: the row stores hold row i's lower
 * triangle {@code d(i, j), j < i} (see {@link BlockRowStore}), so the full symmetric matrix is materialised once into a
 * SPIDAL matrix file (row r: its own stored row left of the diagonal, column r of the later rows right of it) and
 * mapped from there like any matrix file. The rows are read in place from the mapped store files; nothing N x N
 * is held on the heap.
 */
public final class RowStoreSource implements DistanceSource {
    private final MatrixFileSource matrix;
    private final Path rowStores;

    private RowStoreSource(MatrixFileSource matrix, Path rowStores) {
        this.matrix = matrix;
        this.rowStores = rowStores;
    }

    /**
     * Writes the full matrix of points {@code 0 .. n-1} from the row stores in {@code directory} (rows of
     * {@code width} entries, {@code blockRows} rows a block) to {@code matrixFile}, little-endian. Every row must have
     * been stored: a missing one is a {@link BadInputException} naming the first missing ids. The stores are only read
     * (their writers may go on storing rows meanwhile).
     */
    public static RowStoreSource assemble(Path directory, int blockRows, int width, int n, Path matrixFile) {
        if (n < 1 || n > width) {
            throw new BadInputException(Input.ROW_STORE, directory,
                    "cannot assemble " + n + " points from row stores of width " + width);
        }
        if (!Files.isDirectory(directory)) {
            throw new BadInputException(Input.ROW_STORE, directory, "row store directory " + directory + " does not exist");
        }
        try (RowStoreReader stores = new RowStoreReader(directory, blockRows, width)) {
            List<Integer> missing = new ArrayList<>();
            for (int i = 0; i < n && missing.size() < 10; i++) {
                if (!stores.isStored(i)) {
                    missing.add(i);
                }
            }
            if (!missing.isEmpty()) {
                throw new BadInputException(Input.ROW_STORE, directory, "the row stores in " + directory
                        + " do not hold every row of points 0.." + (n - 1) + ": missing " + missing
                        + (missing.size() == 10 ? " and perhaps more" : ""));
            }
            write(stores, n, matrixFile);
        }
        return new RowStoreSource(new MatrixFileSource(matrixFile, n, ByteOrder.LITTLE_ENDIAN), directory);
    }

    /**
     * Writes the full symmetric matrix of points {@code 0 .. n-1} of {@code rows} to {@code matrixFile}
     * (little-endian): row r is its own row left of the diagonal, column r of the later rows right of it.
     */
    public static void write(LowerRows rows, int n, Path matrixFile) {
        try {
            Path parent = matrixFile.toAbsolutePath().getParent();
            if (parent != null) {
                Files.createDirectories(parent);
            }
            short[] line = new short[n];
            try (ShortMatrixWriter writer = new ShortMatrixWriter(matrixFile, n, ByteOrder.LITTLE_ENDIAN)) {
                for (int r = 0; r < n; r++) {
                    rows.copy(r, 0, r, line);
                    line[r] = 0;
                    for (int j = r + 1; j < n; j++) {
                        line[j] = rows.get(j, r);
                    }
                    writer.writeRow(line);
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(new IOException("cannot write " + matrixFile + ": " + e.getMessage(), e));
        }
    }

    /** The assembled matrix file. */
    public Path matrixFile() {
        return matrix.file();
    }

    @Override
    public int n() {
        return matrix.n();
    }

    @Override
    public RowBlock rows(int rowStart, int rowEnd) {
        return matrix.rows(rowStart, rowEnd);
    }

    @Override
    public String describe() {
        return n() + " points from the row stores in " + rowStores + " (assembled into " + matrix.file() + ")";
    }
}
