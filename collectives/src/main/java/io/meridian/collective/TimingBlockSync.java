package io.meridian.collective;

/** A {@link BlockSync} that adds up the wall time its calls take (the communication time of an engine). */
public final class TimingBlockSync implements BlockSync {
    private final BlockSync inner;
    private long nanos;
    private long calls;

    public TimingBlockSync(BlockSync inner) {
        this.inner = inner;
    }

    public long nanos() {
        return nanos;
    }

    public long calls() {
        return calls;
    }

    @Override
    public int blocks() {
        return inner.blocks();
    }

    @Override
    public int block() {
        return inner.block();
    }

    @Override
    public void allgatherv(double[] local, double[] global, int[] counts, int[] displs) {
        long t0 = System.nanoTime();
        inner.allgatherv(local, global, counts, displs);
        add(t0);
    }

    @Override
    public void allreduceSum(double[] values, int length) {
        long t0 = System.nanoTime();
        inner.allreduceSum(values, length);
        add(t0);
    }

    @Override
    public void allgathervAndSum(double[] local, double[] global, int[] counts, int[] displs, double[] sums,
                                 int sumLength) {
        long t0 = System.nanoTime();
        inner.allgathervAndSum(local, global, counts, displs, sums, sumLength);
        add(t0);
    }

    @Override
    public void allreduceMax(double[] values, int length) {
        long t0 = System.nanoTime();
        inner.allreduceMax(values, length);
        add(t0);
    }

    @Override
    public void allreduceMin(double[] values, int length) {
        long t0 = System.nanoTime();
        inner.allreduceMin(values, length);
        add(t0);
    }

    @Override
    public void allreduceSum(long[] values, int length) {
        long t0 = System.nanoTime();
        inner.allreduceSum(values, length);
        add(t0);
    }

    @Override
    public void broadcast(double[] values, int length, int root) {
        long t0 = System.nanoTime();
        inner.broadcast(values, length, root);
        add(t0);
    }

    @Override
    public void barrier() {
        long t0 = System.nanoTime();
        inner.barrier();
        add(t0);
    }

    private void add(long t0) {
        nanos += System.nanoTime() - t0;
        calls++;
    }
}
