package io.meridian.collective;

import java.nio.DoubleBuffer;
import java.nio.LongBuffer;

/**
 * {@link BlockSync} for engines with heap arrays, over any {@link Collectives}: one copy in (heap to the input window,
 * which for two-level is the shared region itself) and one copy out (from the result read in place). No allocation.
 */
public final class CollectiveBlockSync implements BlockSync, AutoCloseable {
    private final Collectives collectives;

    public CollectiveBlockSync(Collectives collectives) {
        this.collectives = collectives;
    }

    public Collectives collectives() {
        return collectives;
    }

    @Override
    public int blocks() {
        return collectives.size();
    }

    @Override
    public int block() {
        return collectives.rank();
    }

    @Override
    public void allgatherv(double[] local, double[] global, int[] counts, int[] displs) {
        int me = collectives.rank();
        DoubleBuffer in = collectives.allgathervInput();
        in.put(displs[me], local, local == global ? displs[me] : 0, counts[me]);
        copyOut(collectives.allgatherv(counts, displs), local, global, counts, displs, me);
    }

    private static void copyOut(DoubleBuffer out, double[] local, double[] global, int[] counts, int[] displs, int me) {
        for (int b = 0; b < counts.length; b++) {
            if (b != me || local != global) {
                out.get(displs[b], global, displs[b], counts[b]);
            }
        }
    }

    @Override
    public void allgathervAndSum(double[] local, double[] global, int[] counts, int[] displs, double[] sums,
                                 int sumLength) {
        int me = collectives.rank();
        collectives.allgathervInput().put(displs[me], local, local == global ? displs[me] : 0, counts[me]);
        collectives.reduceInput().put(0, sums, 0, sumLength);
        DoubleBuffer out = collectives.allgathervSum(counts, displs, sumLength);
        copyOut(out, local, global, counts, displs, me);
        collectives.sums().get(0, sums, 0, sumLength);
    }

    @Override
    public void allreduceSum(double[] values, int length) {
        reduce(values, length, ReduceOp.SUM);
    }

    @Override
    public void allreduceMax(double[] values, int length) {
        reduce(values, length, ReduceOp.MAX);
    }

    @Override
    public void allreduceMin(double[] values, int length) {
        reduce(values, length, ReduceOp.MIN);
    }

    private void reduce(double[] values, int length, ReduceOp op) {
        collectives.reduceInput().put(0, values, 0, length);
        collectives.allreduce(length, op).get(0, values, 0, length);
    }

    @Override
    public void allreduceSum(long[] values, int length) {
        collectives.reduceInputLongs().put(0, values, 0, length);
        LongBuffer out = collectives.allreduceLongs(length, ReduceOp.SUM);
        out.get(0, values, 0, length);
    }

    @Override
    public void broadcast(double[] values, int length, int root) {
        if (collectives.rank() == root) {
            collectives.broadcastInput().put(0, values, 0, length);
        }
        DoubleBuffer out = collectives.broadcast(length, root);
        if (collectives.rank() != root) {
            out.get(0, values, 0, length);
        }
    }

    @Override
    public void barrier() {
        collectives.barrier();
    }

    @Override
    public void close() {
        collectives.close();
    }
}
