package io.meridian.pwc;

import io.meridian.collective.BlockSync;
import java.util.concurrent.BrokenBarrierException;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A {@link BlockSync} for P blocks run as P threads of one JVM (tests only): every collective is two barrier phases
 * around a shared area. It lets a test run the engine on a real row-block partition without MPI.
 */
final class ThreadedBlockSync {
    private final int blocks;
    private final CyclicBarrier barrier;
    private final double[][] slots;
    private final boolean[] inPlace;

    ThreadedBlockSync(int blocks) {
        this.blocks = blocks;
        this.barrier = new CyclicBarrier(blocks);
        this.slots = new double[blocks][];
        this.inPlace = new boolean[blocks];
    }

    BlockSync forBlock(int block) {
        return new BlockSync() {
            @Override
            public int blocks() {
                return blocks;
            }

            @Override
            public int block() {
                return block;
            }

            @Override
            public void allgatherv(double[] local, double[] global, int[] counts, int[] displs) {
                slots[block] = local;
                inPlace[block] = local == global;
                await();
                for (int b = 0; b < blocks; b++) {
                    if (b != block || !inPlace[b]) {
                        System.arraycopy(slots[b], inPlace[b] ? displs[b] : 0, global, displs[b], counts[b]);
                    }
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
                double[] copy = new double[length];
                for (int i = 0; i < length; i++) {
                    copy[i] = values[i];
                }
                reduce(copy, length, 0);
                for (int i = 0; i < length; i++) {
                    values[i] = (long) copy[i];
                }
            }

            @Override
            public void broadcast(double[] values, int length, int root) {
                slots[block] = values;
                await();
                if (block != root) {
                    System.arraycopy(slots[root], 0, values, 0, length);
                }
                await();
            }

            @Override
            public void barrier() {
                await();
            }

            private void reduce(double[] values, int length, int op) {
                slots[block] = values.clone();
                await();
                for (int i = 0; i < length; i++) {
                    double r = slots[0][i];
                    for (int b = 1; b < blocks; b++) {
                        double v = slots[b][i];
                        r = op == 0 ? r + v : op == 1 ? Math.max(r, v) : Math.min(r, v);
                    }
                    values[i] = r;
                }
                await();
            }
        };
    }

    private void await() {
        try {
            barrier.await(60, TimeUnit.SECONDS);
        } catch (InterruptedException | BrokenBarrierException | TimeoutException e) {
            throw new IllegalStateException("block synchronisation failed", e);
        }
    }
}
