package io.meridian.mds;

import io.meridian.collective.BlockSync;
import java.nio.file.Path;

/**
 * {@link DistancePasses} over a contiguous block of full rows of the square matrix, split into row-block kernels: a
 * partial vector holds this process's rows of the result, gathered by one {@code allgatherv}.
 */
final class FullRowPasses implements DistancePasses {
    private final RowKernel[] kernels;
    private final BlockSync sync;
    private final int lo;
    private final int localRows;
    private final int dim;
    private final int[] counts;
    private final int[] displs;
    private double[] rowWeights;

    FullRowPasses(RowKernel[] kernels, BlockSync sync, int lo, int localRows, int dim, int[] counts, int[] displs) {
        this.kernels = kernels;
        this.sync = sync;
        this.lo = lo;
        this.localRows = localRows;
        this.dim = dim;
        this.counts = counts;
        this.displs = displs;
    }

    RowKernel[] kernels() {
        return kernels;
    }

    @Override
    public int partialLength() {
        return localRows * dim;
    }

    @Override
    public double[] newPartial() {
        return new double[Math.max(1, localRows * dim)];
    }

    @Override
    public Path origin() {
        return kernels[0].distancesFile();
    }

    @Override
    public void statistics(double[] stats, double[] max, double[] min) {
        for (RowKernel kernel : kernels) {
            kernel.statistics(stats, max, min);
        }
    }

    @Override
    public void link(int[] parent, double[] counts) {
        for (RowKernel kernel : kernels) {
            kernel.link(parent, counts);
        }
    }

    @Override
    public void prepareMatvec(double sammonFloor) {
        rowWeights = new double[Math.max(1, localRows)];
        for (RowKernel kernel : kernels) {
            kernel.rowWeightSums(sammonFloor, rowWeights, lo);
        }
    }

    @Override
    public void smacofPass(double[] xs, double[] target, double shift, double floor, double sammonFloor,
                           boolean unit, double[] partial, double[] sums) {
        for (RowKernel kernel : kernels) {
            kernel.smacofPass(xs, target, shift, floor, sammonFloor, unit, partial, lo, sums);
        }
    }

    @Override
    public void matvec(double[] ps, double sammonFloor, double regularisation, double[] partial) {
        for (RowKernel kernel : kernels) {
            kernel.matvec(ps, sammonFloor, rowWeights, lo, regularisation, partial, lo);
        }
    }

    @Override
    public void finalStress(double[] xs, double minPositive, double sammonFloor, boolean unit, double[] sums) {
        for (RowKernel kernel : kernels) {
            kernel.finalStress(xs, minPositive, sammonFloor, unit, sums);
        }
    }

    @Override
    public void combine(double[] partial, double[] whole) {
        sync.allgatherv(partial, whole, counts, displs);
    }

    @Override
    public void combineWithSum(double[] partial, double[] whole, double[] sums, int count) {
        // the new layout and the old one's stress in one exchange: two-level hands one call through its leaders
        sync.allgathervAndSum(partial, whole, counts, displs, sums, count);
    }
}
