package io.meridian.matrix;

import io.meridian.engine.BadInputException.Input;
import java.nio.ByteOrder;
import java.nio.file.Path;

/** Distances from a SPIDAL 16-bit N x N matrix file (either byte order), mapped block by block. */
public final class MatrixFileSource implements DistanceSource {
    private final Path file;
    private final int n;
    private final ByteOrder order;

    public MatrixFileSource(Path file, int n, ByteOrder order) {
        this.file = file;
        this.n = n;
        this.order = order;
    }

    public Path file() {
        return file;
    }

    @Override
    public int n() {
        return n;
    }

    @Override
    public RowBlock rows(int rowStart, int rowEnd) {
        return RowBlock.map(Input.DISTANCES, file, n, order, rowStart, rowEnd);
    }

    @Override
    public String describe() {
        return file + " (" + n + " x " + n + ", " + order + ")";
    }
}
