package io.meridian.matrix;

/**
 * How N rows are split into P contiguous blocks, as SPIDAL splits them over processes: as evenly as possible, the
 * first {@code N mod P} blocks get one extra row. Block b holds rows {@code [start(b), end(b))}.
 */
public final class RowPartition {
    private final int n;
    private final int blocks;
    private final int base;
    private final int extra;

    private RowPartition(int n, int blocks) {
        this.n = n;
        this.blocks = blocks;
        this.base = n / blocks;
        this.extra = n % blocks;
    }

    public static RowPartition of(int n, int blocks) {
        if (n <= 0) {
            throw new IllegalArgumentException("n must be positive, got " + n);
        }
        if (blocks <= 0 || blocks > n) {
            throw new IllegalArgumentException("blocks must be in 1.." + n + ", got " + blocks);
        }
        return new RowPartition(n, blocks);
    }

    /**
     * Row boundaries {@code starts[0 .. blocks]} that give each block about the same number of pairs of the lower
     * triangle (rows [0, r) hold r (r - 1) / 2 of them, so block b starts near N sqrt(b / blocks)), every block at
     * least one row: equal rows would give the last block 2 - 1/blocks times the mean work.
     */
    public static int[] triangleStarts(int n, int blocks) {
        if (blocks <= 0 || blocks > n) {
            throw new IllegalArgumentException("blocks must be in 1.." + n + ", got " + blocks);
        }
        int[] starts = new int[blocks + 1];
        starts[blocks] = n;
        for (int b = 1; b < blocks; b++) {
            int even = (int) Math.round(n * Math.sqrt((double) b / blocks));
            starts[b] = Math.min(Math.max(even, starts[b - 1] + 1), n - (blocks - b));
        }
        return starts;
    }

    public int n() {
        return n;
    }

    public int blocks() {
        return blocks;
    }

    public int start(int block) {
        return block * base + Math.min(block, extra);
    }

    public int end(int block) {
        return start(block) + rows(block);
    }

    public int rows(int block) {
        return base + (block < extra ? 1 : 0);
    }

    /** The block holding {@code row}. */
    public int blockOf(int row) {
        int fat = (base + 1) * extra;
        return row < fat ? row / (base + 1) : extra + (row - fat) / base;
    }

    /** Counts of {@code perRow} values per block, e.g. rows x L doubles for an allgatherv. */
    public int[] counts(int perRow) {
        int[] counts = new int[blocks];
        for (int b = 0; b < blocks; b++) {
            counts[b] = rows(b) * perRow;
        }
        return counts;
    }

    /** Offsets matching {@link #counts(int)}. */
    public int[] displacements(int perRow) {
        int[] displs = new int[blocks];
        for (int b = 0; b < blocks; b++) {
            displs[b] = start(b) * perRow;
        }
        return displs;
    }

    @Override
    public String toString() {
        return n + " rows in " + blocks + " blocks";
    }
}
