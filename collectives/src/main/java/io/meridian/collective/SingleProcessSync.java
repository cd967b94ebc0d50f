package io.meridian.collective;

/** The {@link BlockSync} of a process that holds every block itself: all data is already where it belongs. */
public final class SingleProcessSync implements BlockSync {
    public static final SingleProcessSync INSTANCE = new SingleProcessSync();

    private SingleProcessSync() {
    }

    @Override
    public int blocks() {
        return 1;
    }

    @Override
    public int block() {
        return 0;
    }

    @Override
    public void allgatherv(double[] local, double[] global, int[] counts, int[] displs) {
        if (local != global) {
            System.arraycopy(local, 0, global, displs[0], counts[0]);
        }
    }

    @Override
    public void allreduceSum(double[] values, int length) {
    }

    @Override
    public void allreduceMax(double[] values, int length) {
    }

    @Override
    public void allreduceMin(double[] values, int length) {
    }

    @Override
    public void allreduceSum(long[] values, int length) {
    }

    @Override
    public void broadcast(double[] values, int length, int root) {
    }

    @Override
    public void barrier() {
    }
}
