package io.meridian.pwc;

import io.meridian.collective.BlockSync;
import io.meridian.matrix.RowBlock;
import io.meridian.matrix.RowPartition;

/**
 * {@link PairKernel} over a contiguous block of full rows, as SPIDAL's dapwc splits the N x N matrix: the product is
 * {@link BlockProduct} on the block's rows, and the local rows are already in point order, so a gather is one
 * allgatherv.
 */
final class FullRowKernel implements PairKernel {
    private final RowBlock block;
    private final BlockSync sync;
    private final BlockProduct product;
    private final int[] rowCounts;
    private final int[] rowDispls;
    /** Counts and displacements of rows x {@link #layoutK} values per block. */
    private final int[] countsK;
    private final int[] displsK;
    private int layoutK = -1;

    /**
     * @param block     this block's rows of the N x N distance matrix (block {@code sync.block()} of {@code partition})
     * @param partition how the N rows are split over the {@code sync.blocks()} blocks
     */
    FullRowKernel(RowBlock block, RowPartition partition, BlockSync sync, int maxColumns) {
        if (partition.blocks() != sync.blocks()) {
            throw new IllegalArgumentException("partition has " + partition.blocks() + " blocks, sync has "
                    + sync.blocks());
        }
        int me = sync.block();
        if (partition.n() != block.n() || partition.start(me) != block.rowStart()
                || partition.end(me) != block.rowEnd()) {
            throw new IllegalArgumentException("row block " + block + " is not block " + me + " of " + partition);
        }
        this.block = block;
        this.sync = sync;
        this.product = new BlockProduct(block, maxColumns);
        this.rowCounts = partition.counts(1);
        this.rowDispls = partition.displacements(1);
        this.countsK = new int[rowCounts.length];
        this.displsK = new int[rowCounts.length];
    }

    @Override
    public int points() {
        return block.n();
    }

    @Override
    public int rows() {
        return block.rows();
    }

    @Override
    public int globalRow(int row) {
        return block.rowStart() + row;
    }

    @Override
    public BlockSync sync() {
        return sync;
    }

    @Override
    public void multiply(double[] x, int k, double[] y) {
        product.multiply(x, k, y);
    }

    @Override
    public void gatherAndSum(double[] local, int k, double[] all, double[] sums, int sumLength) {
        layout(k);
        sync.allgathervAndSum(local, all, countsK, displsK, sums, sumLength);
    }

    @Override
    public void gather(double[] local, int k, double[] all) {
        layout(k);
        sync.allgatherv(local, all, countsK, displsK);
    }

    private void layout(int k) {
        if (k == layoutK) {
            return;
        }
        layoutK = k;
        for (int b = 0; b < countsK.length; b++) {
            countsK[b] = rowCounts[b] * k;
            displsK[b] = rowDispls[b] * k;
        }
    }

    @Override
    public void localDistanceSums(double[] out) {
        int points = block.n();
        long sum = 0;
        long count = 0;
        for (int i = 0; i < block.rows(); i++) {
            int global = block.rowStart() + i;
            for (int j = 0; j < points; j++) {
                int v = product.raw(i, j);
                if (j != global && (v > 0 || !product.hadMissing() || block.raw(global, j) >= 0)) {
                    sum += v;
                    count++;
                }
            }
        }
        out[0] = sum;
        out[1] = count;
    }
}
