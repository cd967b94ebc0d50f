package io.meridian.matrix;

import io.meridian.engine.BadInputException;
import io.meridian.engine.BadInputException.Input;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteOrder;
import java.nio.MappedByteBuffer;
import java.nio.ShortBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * Rows {@code [rowStart, rowEnd)} of an N x N SPIDAL 16-bit matrix file, memory-mapped read-only (off-heap; the page
 * cache holds the data, not the Java heap). The block is mapped in pieces of whole rows, each below 2 GB.
 *
 * <p>Hot loops should copy one row (or a column range of it) into a reused {@code short[]} with {@link #copyRow} and
 * work on the array: the copy is a bulk, byte-swapping memcpy and the loop over the array vectorises. {@link #raw} is
 * for occasional access. Rows are addressed by their global index.
 */
public final class RowBlock {
    /** Largest piece mapped at once (below the 2 GB limit of one {@link MappedByteBuffer}). */
    static final long MAX_PIECE_BYTES = 1L << 30;

    private final Path file;
    private final int n;
    private final ByteOrder order;
    private final int rowStart;
    private final int rowEnd;
    private final int rowsPerPiece;
    private final ShortBuffer[] pieces;

    private RowBlock(Path file, int n, ByteOrder order, int rowStart, int rowEnd, int rowsPerPiece, ShortBuffer[] pieces) {
        this.file = file;
        this.n = n;
        this.order = order;
        this.rowStart = rowStart;
        this.rowEnd = rowEnd;
        this.rowsPerPiece = rowsPerPiece;
        this.pieces = pieces;
    }

    /** Maps the whole matrix as one block. */
    public static RowBlock mapAll(Input input, Path file, int n, ByteOrder order) {
        return map(input, file, n, order, 0, n);
    }

    /** Maps block {@code block} of {@code partition}. */
    public static RowBlock map(Input input, Path file, ByteOrder order, RowPartition partition, int block) {
        return map(input, file, partition.n(), order, partition.start(block), partition.end(block));
    }

    /**
     * Maps rows {@code [rowStart, rowEnd)} of {@code file}, after checking that it holds exactly 2 N^2 bytes.
     * {@code input} says which matrix it is, for messages.
     */
    public static RowBlock map(Input input, Path file, int n, ByteOrder order, int rowStart, int rowEnd) {
        return map(input, file, n, order, rowStart, rowEnd, MAX_PIECE_BYTES);
    }

    static RowBlock map(Input input, Path file, int n, ByteOrder order, int rowStart, int rowEnd, long maxPieceBytes) {
        ShortMatrixFormat.checkFile(input, file, n);
        ShortMatrixFormat.checkByteOrder(input, file, order, "--big-endian");
        if (rowStart < 0 || rowEnd > n || rowStart > rowEnd) {
            throw new IllegalArgumentException("row block [" + rowStart + ", " + rowEnd + ") is outside 0.." + n);
        }
        long rowBytes = 2L * n;
        int rowsPerPiece = (int) Math.max(1, Math.min(Integer.MAX_VALUE, maxPieceBytes / rowBytes));
        int rows = rowEnd - rowStart;
        int pieceCount = rows == 0 ? 0 : (rows + rowsPerPiece - 1) / rowsPerPiece;
        ShortBuffer[] pieces = new ShortBuffer[pieceCount];
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ)) {
            for (int p = 0; p < pieceCount; p++) {
                int first = rowStart + p * rowsPerPiece;
                int count = Math.min(rowsPerPiece, rowEnd - first);
                MappedByteBuffer bytes = channel.map(FileChannel.MapMode.READ_ONLY, first * rowBytes, count * rowBytes);
                pieces[p] = bytes.order(order).asShortBuffer();
            }
        } catch (IOException e) {
            throw new BadInputException(input, file, "cannot map " + file + ": " + e.getMessage(), e);
        }
        return new RowBlock(file, n, order, rowStart, rowEnd, rowsPerPiece, pieces);
    }

    public Path file() {
        return file;
    }

    public int n() {
        return n;
    }

    public ByteOrder order() {
        return order;
    }

    public int rowStart() {
        return rowStart;
    }

    public int rowEnd() {
        return rowEnd;
    }

    public int rows() {
        return rowEnd - rowStart;
    }

    /** The raw 16-bit entry (row, col); row is global and must lie in this block. Negative means missing. */
    public short raw(int row, int col) {
        int local = row - rowStart;
        int piece = local / rowsPerPiece;
        return pieces[piece].get((local - piece * rowsPerPiece) * n + col);
    }

    /** The entry as a value in [0, 1], or a negative number when it is missing. */
    public double value(int row, int col) {
        return raw(row, col) * ShortMatrixFormat.INV_SCALE;
    }

    /** Copies the whole of {@code row} into {@code dst[0 .. n)}. */
    public void copyRow(int row, short[] dst) {
        copyRow(row, 0, n, dst, 0);
    }

    /** Copies entries {@code [colFrom, colTo)} of {@code row} into {@code dst} from {@code offset}. Allocates nothing. */
    public void copyRow(int row, int colFrom, int colTo, short[] dst, int offset) {
        int local = row - rowStart;
        if (local < 0 || row >= rowEnd) {
            throw new IndexOutOfBoundsException("row " + row + " is not in block [" + rowStart + ", " + rowEnd + ")");
        }
        int piece = local / rowsPerPiece;
        pieces[piece].get((local - piece * rowsPerPiece) * n + colFrom, dst, offset, colTo - colFrom);
    }

    @Override
    public String toString() {
        return file + " rows [" + rowStart + ", " + rowEnd + ") of " + n + " (" + order + ")";
    }
}
