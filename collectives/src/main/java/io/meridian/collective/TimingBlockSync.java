package io.meridian.collective;

/**
 * A {@link BlockSync} that adds up the wall time its calls take (the communication time of an engine), and optionally
 * keeps each call's time (the first {@code keep} calls, in an array sized once): every process makes the same calls
 * in the same order, so the fastest process's time per call, summed, is the exchange without the waiting for
 * processes still computing, which a slowest-process total mixes in.
 */
public final class TimingBlockSync implements BlockSync {
    private final BlockSync inner;
    private final long[] perCall;
    private long nanos;
    private long calls;

    public TimingBlockSync(BlockSync inner) {
        this(inner, 0);
    }

    public TimingBlockSync(BlockSync inner, int keep) {
        this.inner = inner;
        this.perCall = new long[keep];
    }

    /** Each kept call's time, ns: the first {@code min(calls, keep)} entries are filled. */
    public long[] perCallNanos() {
        return perCall;
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
        long took = System.nanoTime() - t0;
        nanos += took;
        if (calls < perCall.length) {
            perCall[(int) calls] = took;
        }
        calls++;
    }
}
