package io.meridian.collective;

import java.util.concurrent.BrokenBarrierException;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A test {@link BlockSync} for P engines running in P threads of one JVM, each owning one block and nothing else: data
 * moves between blocks only through these calls, as it would between processes. Every call is two barrier phases
 * around copies in a shared area; it allocates, which is fine for tests of results, not of allocation.
 */
public final class ThreadedBlockSync implements BlockSync {
    /** What the P threads share. */
    public static final class Group {
        final int blocks;
        final CyclicBarrier barrier;
        final double[][] doubles;
        final long[][] longs;
        volatile double[] gathered = new double[0];

        public Group(int blocks) {
            this.blocks = blocks;
            this.barrier = new CyclicBarrier(blocks);
            this.doubles = new double[blocks][];
            this.longs = new long[blocks][];
        }

        public ThreadedBlockSync member(int block) {
            return new ThreadedBlockSync(this, block);
        }
    }

    private final Group group;
    private final int block;

    private ThreadedBlockSync(Group group, int block) {
        this.group = group;
        this.block = block;
    }

    @Override
    public int blocks() {
        return group.blocks;
    }

    @Override
    public int block() {
        return block;
    }

    private void await() {
        try {
            group.barrier.await(60, TimeUnit.SECONDS);
        } catch (InterruptedException | BrokenBarrierException | TimeoutException e) {
            throw new IllegalStateException("block " + block + ": barrier failed", e);
        }
    }

    @Override
    public void allgatherv(double[] local, double[] global, int[] counts, int[] displs) {
        // the part is at local[0..) or, when local is global, already in place at displs[block]
        int from = local == global ? displs[block] : 0;
        group.doubles[block] = java.util.Arrays.copyOfRange(local, from, from + counts[block]);
        await();
        for (int b = 0; b < group.blocks; b++) {
            System.arraycopy(group.doubles[b], 0, global, displs[b], counts[b]);
        }
        await();
    }

    private void reduce(double[] values, int length, int op) {
        group.doubles[block] = java.util.Arrays.copyOf(values, length);
        await();
        for (int i = 0; i < length; i++) {
            double r = group.doubles[0][i];
            for (int b = 1; b < group.blocks; b++) {
                double v = group.doubles[b][i];
                r = op == 0 ? r + v : op == 1 ? Math.max(r, v) : Math.min(r, v);
            }
            values[i] = r;
        }
        await();
    }

    @Override
    public void allreduceSum(double[] values, int length) {
        reduce(values, length, 0);
    }

    @Override
    public void allreduceMax(double[] values, int length) {
        reduce(values, length, 1);
    }

    @Override
    public void allreduceMin(double[] values, int length) {
        reduce(values, length, 2);
    }

    @Override
    public void allreduceSum(long[] values, int length) {
        group.longs[block] = java.util.Arrays.copyOf(values, length);
        await();
        for (int i = 0; i < length; i++) {
            long s = 0;
            for (int b = 0; b < group.blocks; b++) {
                s += group.longs[b][i];
            }
            values[i] = s;
        }
        await();
    }

    @Override
    public void broadcast(double[] values, int length, int root) {
        if (block == root) {
            group.doubles[root] = java.util.Arrays.copyOf(values, length);
        }
        await();
        System.arraycopy(group.doubles[root], 0, values, 0, length);
        await();
    }

    @Override
    public void barrier() {
        await();
    }
}
