package io.meridian.matrix;

import java.nio.ByteOrder;
import java.nio.file.Path;

/**
 * Where an engine reads its N x N distances from: rows of the full symmetric matrix, by global index, as memory-mapped
 * {@link RowBlock}s in the SPIDAL 16-bit layout: a matrix file ({@link #matrixFile}). What the topology stored is
 * read as its lower triangle instead, in place ({@link TriangleSource}), with no square copy.
 */
public interface DistanceSource {
    /** The number of points. */
    int n();

    /** Maps rows {@code [rowStart, rowEnd)} of the full matrix, off-heap. */
    RowBlock rows(int rowStart, int rowEnd);

    /** Maps the whole matrix as one block. */
    default RowBlock all() {
        return rows(0, n());
    }

    /** The rows of block {@code block} of {@code partition}. */
    default RowBlock rows(RowPartition partition, int block) {
        return rows(partition.start(block), partition.end(block));
    }

    /** What the distances are, for messages. */
    String describe();

    /** A SPIDAL 16-bit N x N matrix file; its size is checked on the first mapping. */
    static DistanceSource matrixFile(Path file, int n, ByteOrder order) {
        return new MatrixFileSource(file, n, order);
    }
}
