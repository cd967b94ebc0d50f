package io.meridian.perf;

import io.meridian.collective.CollectiveBlockSync;
import io.meridian.collective.CollectiveOptions;
import io.meridian.collective.Collectives;
import io.meridian.collective.MpiCollectives;
import io.meridian.collective.TwoLevelCollectives;
import java.nio.DoubleBuffer;
import java.time.Duration;
import mpi.MPI;

/**
 * One rank of {@code ./meridian bench collectives}, run under mpirun by {@link CollectivesBenchmark}: times allgatherv
 * of {@code total} doubles split evenly over the ranks. Each timed call includes writing this rank's part (for
 * two-level that is the write into the shared region) and the collective; with {@code heap} it goes through the
 * {@link CollectiveBlockSync} adapter instead (heap part in, whole heap result out); with {@code mds-pattern} each call
 * is a DA-MDS iteration's communication as {@code DaMds} makes it: the allgatherv with a sum of one double
 * ({@code BlockSync.allgathervAndSum}; flat Open MPI runs an allreduce, then the allgatherv), with
 * {@code mds-pattern-separate} as two calls. Rank 0 prints one RESULT
 * line.
 */
public final class CollectivesBenchRank {
    public static void main(String[] args) throws Exception {
        String mode = args[0];              // flat | two-level
        int groupsPerNode = Integer.parseInt(args[1]);
        int total = Integer.parseInt(args[2]);
        int warmup = Integer.parseInt(args[3]);
        int iterations = Integer.parseInt(args[4]);
        boolean heap = args.length > 5 && (args[5].equals("heap") || args[5].startsWith("mds-pattern"));
        // DA-MDS's closed-form iteration, its communication alone: the new layout (allgatherv of N x 3 doubles,
        // total = 3N) and the stress sum (1 double) through the engines' BlockSync
        boolean mdsPattern = args.length > 5 && args[5].startsWith("mds-pattern");
        // the same as two calls, the allreduce then the allgatherv (how DaMds called them before allgathervAndSum)
        boolean mdsSeparate = args.length > 5 && args[5].equals("mds-pattern-separate");
        double[] stressSum = new double[1];
        MPI.Init(new String[0]);
        CollectiveOptions options = CollectiveOptions.of(total, 1024).groupsPerNode(groupsPerNode).timeout(Duration.ofMinutes(2));
        Collectives c = mode.equals("flat") ? MpiCollectives.flat(MPI.COMM_WORLD, options)
                : MpiCollectives.twoLevel(MPI.COMM_WORLD, options);
        int p = c.size();
        int me = c.rank();
        int[] counts = new int[p];
        int[] displs = new int[p];
        for (int b = 0, at = 0; b < p; b++) {
            counts[b] = total / p + (b < total % p ? 1 : 0);
            displs[b] = at;
            at += counts[b];
        }
        double[] part = new double[counts[me]];
        double[] global = new double[total];
        for (int i = 0; i < part.length; i++) {
            part[i] = me + i * 1e-6;
        }
        CollectiveBlockSync sync = new CollectiveBlockSync(c);
        double sumNanos = 0;
        double check = 0;
        for (int it = 0; it < warmup + iterations; it++) {
            MPI.COMM_WORLD.barrier(); // outside the timing: every call starts together
            long t0 = System.nanoTime();
            if (mdsPattern) {
                stressSum[0] = me;
                if (mdsSeparate) {
                    sync.allreduceSum(stressSum, 1);
                    sync.allgatherv(part, global, counts, displs);
                } else {
                    sync.allgathervAndSum(part, global, counts, displs, stressSum, 1);
                }
            } else if (heap) {
                sync.allgatherv(part, global, counts, displs);
            } else {
                DoubleBuffer in = c.allgathervInput();
                in.put(displs[me], part, 0, part.length);
                DoubleBuffer out = c.allgatherv(counts, displs);
                check += out.get(displs[(me + 1) % p]);
            }
            long t1 = System.nanoTime();
            if (it >= warmup) {
                sumNanos += t1 - t0;
            }
        }
        double[] mean = {sumNanos / iterations / 1e6};
        double[] max = {mean[0]};
        MPI.COMM_WORLD.allReduce(mean, 1, MPI.DOUBLE, MPI.SUM);
        MPI.COMM_WORLD.allReduce(max, 1, MPI.DOUBLE, MPI.MAX);
        // the result must be right, or the timing means nothing
        int next = (me + 1) % p;
        double expect = heap ? global[displs[next] + counts[next] - 1] : 0;
        if (heap && expect != next + (counts[next] - 1) * 1e-6) {
            throw new AssertionError("wrong allgatherv result at rank " + me);
        }
        if (me == 0) {
            String groups = c instanceof TwoLevelCollectives t ? String.valueOf(t.groups()) : "0";
            System.out.printf(java.util.Locale.ROOT, "RESULT mode=%s heap=%s P=%d groups=%d meanMs=%.4f maxRankMeanMs=%.4f check=%s%n",
                    mode, heap, p, Integer.parseInt(groups), mean[0] / p, max[0],
                    check != check || (mdsPattern && stressSum[0] != p * (p - 1) / 2.0) ? "nan" : "ok");
        }
        c.close();
        MPI.Finalize();
    }
}
