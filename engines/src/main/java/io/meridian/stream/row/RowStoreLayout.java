package io.meridian.stream.row;

import java.util.Locale;

/**
 * Where the row stores keep a row: the lower triangle of the distance matrix, one row block per file set, offsets only
 * (the writer is {@link BlockRowStore}, the reader {@link RowStoreReader}).
 *
 * <pre>
 *   row i holds d(i, j) for j &lt; i: i little-endian 16-bit values (value / 32767; -1 missing), nothing else
 *   (no diagonal, no upper half, no padding to a capacity). Block b holds rows [b R, (b + 1) R), R = blockRows.
 *
 *   block-NNNNNN.tri          row bR | row bR+1 | ... | row bR+R-1        rows back to back, in id order:
 *                             bR values  bR+1 values    bR+R-1 values      row i starts at value T(i) - T(bR),
 *                                                                          T(i) = i (i - 1) / 2
 *   block-NNNNNN.tri-weights  the same layout: each row's weights (32767 = 1); created with the first weighted row,
 *                             from then on every row stored in the block gets its weights (unit ones if it has none)
 *   block-NNNNNN.rows         one byte per row of the block: 1 once the row is stored whole
 * </pre>
 *
 * The value files have their full size from their creation (the block's whole triangle), as sparse files: a row
 * takes disk space once it is written, so a growing store costs the rows it holds, and a reader maps a block once, at
 * its final size, instead of remapping it as it grows. Concatenating the blocks' value files in order gives the
 * lower triangle row by row (SPIDAL's square layout is rows of N values; see {@code io.meridian.matrix}).
 *
 * <p>Crash order: a row's values (and weights) are written before its marker byte, so a process killed in between
 * leaves the row unmarked and its replay writes it again; the value file is sized before the marker file is created,
 * and the marker file is written whole under a temporary name and renamed into place, so a reader that finds the
 * marker file finds both whole. A block's files of the wrong size, or a marker byte other than 0 and 1, are refused
 * when the block is opened for writing ({@link RowStoreCorruptException}).
 */
public final class RowStoreLayout {
    public static final String VALUES = ".tri";
    public static final String WEIGHTS = ".tri-weights";
    public static final String MARKERS = ".rows";
    /** The value files of the square layout of Meridian before the triangle store (rows of ingest.maxPoints values). */
    public static final String SQUARE_VALUES = ".dist";

    private RowStoreLayout() {
    }

    /** {@code block-NNNNNN}: the name every file of block {@code block} starts with. */
    public static String fileBase(int block) {
        return String.format(Locale.ROOT, "block-%06d", block);
    }

    /** Values before row {@code id} in the whole triangle: T(id) = id (id - 1) / 2. */
    public static long valuesBefore(int id) {
        return (long) id * (id - 1) / 2;
    }

    /** Where row {@code id} starts in its block's value file, in values. */
    public static long rowOffset(int id, int blockRows) {
        return valuesBefore(id) - valuesBefore(id / blockRows * blockRows);
    }

    /** Values in block {@code block}'s value file. */
    public static long blockValues(int block, int blockRows) {
        long first = (long) block * blockRows;
        return valuesBefore((int) (first + blockRows)) - valuesBefore((int) first);
    }

    /** Bytes of the largest block a store of {@code capacity} points can have (its last). */
    public static long largestBlockBytes(int capacity, int blockRows) {
        return 2 * blockValues((capacity - 1) / blockRows, blockRows);
    }

    /** Bytes of the lower triangle of {@code n} points, 16-bit: what a store holding rows 0..n-1 takes on disk. */
    public static long triangleBytes(long n) {
        return n * (n - 1);
    }
}
