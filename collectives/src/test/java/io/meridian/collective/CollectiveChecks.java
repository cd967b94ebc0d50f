package io.meridian.collective;

import java.nio.DoubleBuffer;
import java.nio.LongBuffer;

/**
 * Checks every collective against values each participant computes itself, with uneven part sizes (one part empty),
 * a moving broadcast root and several rounds (both result buffers), through the off-heap API and the heap
 * {@link BlockSync} adapter. Shared by the MPI, leader-daemon and in-process tests. No MPI here.
 */
final class CollectiveChecks {
    static final int ROUNDS = 4;

    private CollectiveChecks() {
    }

    /** With {@code stuck} = this block, stops calling at round 1 (a hung member) and sleeps. */
    static void check(Collectives c, int stuck) throws InterruptedException {
        int p = c.size();
        int b = c.rank();
        CollectiveBlockSync sync = new CollectiveBlockSync(c);
        int[] counts = new int[p];
        int[] displs = new int[p];
        for (int round = 0; round < ROUNDS; round++) {
            if (round == 1 && b == stuck) {
                System.out.println("STUCK block " + b + " pid " + ProcessHandle.current().pid());
                System.out.flush();
                Thread.sleep(600_000);
            }
            // allgatherv, uneven parts (one empty part when p > 2), off-heap API
            int total = 0;
            for (int k = 0; k < p; k++) {
                counts[k] = (k == 1 && p > 2) ? 0 : 1 + (k * 37 + round * 11) % 53 + (k == 0 ? 500 : 0);
                displs[k] = total;
                total += counts[k];
            }
            DoubleBuffer in = c.allgathervInput();
            for (int i = 0; i < counts[b]; i++) {
                in.put(displs[b] + i, value(b, i, round));
            }
            DoubleBuffer out = c.allgatherv(counts, displs);
            for (int k = 0; k < p; k++) {
                for (int i = 0; i < counts[k]; i++) {
                    expect(out.get(displs[k] + i), value(k, i, round), "allgatherv round " + round + " block " + k + " [" + i + "]", c);
                }
            }
            // allgatherv through the heap adapter, part in place in the global array
            double[] global = new double[total];
            for (int i = 0; i < counts[b]; i++) {
                global[displs[b] + i] = -value(b, i, round);
            }
            sync.allgatherv(global, global, counts, displs);
            for (int k = 0; k < p; k++) {
                for (int i = 0; i < counts[k]; i++) {
                    expect(global[displs[k] + i], -value(k, i, round), "heap allgatherv block " + k, c);
                }
            }
            int len = 5 + round * 7;
            // allgatherv with a sum in one call: the off-heap API, then the heap adapter with the part in place
            in = c.allgathervInput();
            DoubleBuffer partials = c.reduceInput();
            for (int i = 0; i < counts[b]; i++) {
                in.put(displs[b] + i, value(b, i, round + 300));
            }
            for (int i = 0; i < len; i++) {
                partials.put(i, contribution(b, i, round + 300));
            }
            out = c.allgathervSum(counts, displs, len);
            DoubleBuffer sums = c.sums();
            for (int k = 0; k < p; k++) {
                for (int i = 0; i < counts[k]; i++) {
                    expect(out.get(displs[k] + i), value(k, i, round + 300), "allgathervSum block " + k + " [" + i + "]", c);
                }
            }
            for (int i = 0; i < len; i++) {
                expect(sums.get(i), sumOfContributions(p, i, round + 300), "allgathervSum's sum [" + i + "]", c);
            }
            double[] heapSums = new double[len];
            for (int i = 0; i < counts[b]; i++) {
                global[displs[b] + i] = value(b, i, round + 400);
            }
            for (int i = 0; i < len; i++) {
                heapSums[i] = contribution(b, i, round + 400);
            }
            sync.allgathervAndSum(global, global, counts, displs, heapSums, len);
            for (int k = 0; k < p; k++) {
                for (int i = 0; i < counts[k]; i++) {
                    expect(global[displs[k] + i], value(k, i, round + 400), "heap allgathervAndSum block " + k, c);
                }
            }
            for (int i = 0; i < len; i++) {
                expect(heapSums[i], sumOfContributions(p, i, round + 400), "heap allgathervAndSum's sum [" + i + "]", c);
            }
            // allreduce double sum / max / min
            for (ReduceOp op : ReduceOp.values()) {
                DoubleBuffer r = c.reduceInput();
                for (int i = 0; i < len; i++) {
                    r.put(i, contribution(b, i, round));
                }
                DoubleBuffer res = c.allreduce(len, op);
                for (int i = 0; i < len; i++) {
                    double want = contribution(0, i, round);
                    for (int k = 1; k < p; k++) {
                        want = op.apply(want, contribution(k, i, round));
                    }
                    expect(res.get(i), want, "allreduce " + op + " [" + i + "]", c);
                }
            }
            double[] heap = new double[len];
            for (int i = 0; i < len; i++) {
                heap[i] = contribution(b, i, round);
            }
            sync.allreduceMax(heap, len);
            for (int i = 0; i < len; i++) {
                double want = contribution(0, i, round);
                for (int k = 1; k < p; k++) {
                    want = Math.max(want, contribution(k, i, round));
                }
                expect(heap[i], want, "heap allreduceMax [" + i + "]", c);
            }
            // allreduce long sum, through both paths
            LongBuffer rl = c.reduceInputLongs();
            for (int i = 0; i < len; i++) {
                rl.put(i, (long) (b + 1) * 1_000_000_007L + i * round);
            }
            LongBuffer resl = c.allreduceLongs(len, ReduceOp.SUM);
            long[] heapLongs = new long[len];
            for (int i = 0; i < len; i++) {
                long want = 0;
                for (int k = 0; k < p; k++) {
                    want += (long) (k + 1) * 1_000_000_007L + i * round;
                }
                if (resl.get(i) != want) {
                    throw new AssertionError("long allreduce [" + i + "]: " + resl.get(i) + " != " + want + " at rank " + b);
                }
                heapLongs[i] = b + i;
            }
            sync.allreduceSum(heapLongs, len);
            for (int i = 0; i < len; i++) {
                long want = (long) p * i + (long) p * (p - 1) / 2;
                if (heapLongs[i] != want) {
                    throw new AssertionError("heap long allreduce [" + i + "]: " + heapLongs[i] + " != " + want);
                }
            }
            // broadcast from a moving root, both paths
            int root = round % p;
            if (b == root) {
                DoubleBuffer bin = c.broadcastInput();
                for (int i = 0; i < len; i++) {
                    bin.put(i, value(root, i, round + 100));
                }
            }
            DoubleBuffer bout = c.broadcast(len, root);
            for (int i = 0; i < len; i++) {
                expect(bout.get(i), value(root, i, round + 100), "broadcast root " + root + " [" + i + "]", c);
            }
            double[] bheap = new double[len];
            if (b == root) {
                for (int i = 0; i < len; i++) {
                    bheap[i] = value(root, i, round + 200);
                }
            }
            sync.broadcast(bheap, len, root);
            for (int i = 0; i < len; i++) {
                expect(bheap[i], value(root, i, round + 200), "heap broadcast [" + i + "]", c);
            }
            c.barrier();
        }
    }

    /**
     * Heap-adapter calls of every kind, repeated: the bytes this thread allocates per round of them once warm
     * (0 when the calls allocate nothing; the few bytes of a rare slow-path check average out).
     */
    static long allocatedPerRound(Collectives c) {
        CollectiveBlockSync sync = new CollectiveBlockSync(c);
        int p = c.size();
        int[] counts = new int[p];
        int[] displs = new int[p];
        for (int k = 0; k < p; k++) {
            counts[k] = 100 + k;
            displs[k] = k == 0 ? 0 : displs[k - 1] + counts[k - 1];
        }
        double[] global = new double[displs[p - 1] + counts[p - 1]];
        double[] values = new double[32];
        long[] longs = new long[32];
        com.sun.management.ThreadMXBean threads =
                (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
        long before = 0;
        int rounds = 300;
        for (int r = 0; r < 2 * rounds; r++) {
            if (r == rounds) {
                before = threads.getCurrentThreadAllocatedBytes();
            }
            sync.allgatherv(global, global, counts, displs);
            sync.allgathervAndSum(global, global, counts, displs, values, 32);
            sync.allreduceSum(values, 32);
            sync.allreduceMin(values, 32);
            sync.allreduceSum(longs, 32);
            sync.broadcast(values, 32, r % p);
            sync.barrier();
        }
        return (threads.getCurrentThreadAllocatedBytes() - before) / rounds;
    }

    private static double value(int block, int i, int round) {
        return block * 1_000_000.0 + i + round * 0.25;
    }

    /** Exact in any order: the contributions are multiples of 1/8 far from 2^53. */
    private static double sumOfContributions(int p, int i, int round) {
        double want = 0;
        for (int k = 0; k < p; k++) {
            want += contribution(k, i, round);
        }
        return want;
    }

    private static double contribution(int block, int i, int round) {
        return ((block * 7 + i * 3 + round) % 13) - 6.5 + block * 0.125;
    }

    private static void expect(double got, double want, String what, Collectives c) {
        if (Double.doubleToLongBits(got) != Double.doubleToLongBits(want)) {
            throw new AssertionError(what + ": got " + got + ", want " + want + " (rank " + c.rank() + " of " + c.size() + ")");
        }
    }

}
