package io.meridian.perf;

import io.meridian.collective.SingleProcessSync;
import io.meridian.config.CommandLine;
import io.meridian.matrix.DistanceSource;
import io.meridian.matrix.RowBlock;
import io.meridian.matrix.Weighting;
import io.meridian.mds.DaMds;
import io.meridian.mds.MdsOptions;
import io.meridian.mds.TriangleSmacof;
import io.meridian.stream.row.DistanceRow;
import io.meridian.stream.row.RowFormat;
import io.meridian.stream.row.RowStoreReader;
import io.meridian.stream.row.RowStores;
import io.meridian.synthetic.SyntheticDataset;
import java.lang.management.ManagementFactory;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Locale;
import java.util.Random;
import java.util.Set;

/**
 * {@code ./meridian bench live-kernel}: the live map's SMACOF iteration ({@link TriangleSmacof}: lower-triangle rows
 * read in place from the row store files, each pair visited once and credited to both rows) against the batch
 * kernel ({@link DaMds}: full rows of the matrix file, vector pass) on the same N, one process, one thread, at the final
 * temperature. Iterations of the two alternate, so both see the same machine load; reports the median ms per
 * iteration of each and their ratio (goal: the live kernel within 1.2x of the batch one), and the bytes an iteration
 * of the live kernel allocates.
 */
public final class LiveKernelBench implements Benchmark {
    @Override
    public String description() {
        return "live map SMACOF iteration (row stores, lower triangle) vs batch DA-MDS iteration, same N, 1 thread:"
                + " ms per iteration and ratio [--n 4000] [--rounds 15]";
    }

    @Override
    public void run(String[] args) throws Exception {
        CommandLine cl = CommandLine.parse("bench live-kernel", args, Set.of("n", "rounds"), Set.of());
        cl.requireNoPositional();
        int n = cl.intValue("n", 4000, 100, 32_000);
        int rounds = cl.intValue("rounds", 15, 3, 1000);
        Path dir = Files.createTempDirectory("meridian-bench-live-kernel");
        try {
            SyntheticDataset data = SyntheticDataset.uniform(n, 8, 42);
            data.write(dir, ByteOrder.LITTLE_ENDIAN);
            Path matrix = dir.resolve(SyntheticDataset.DISTANCES_FILE);
            RowBlock full = DistanceSource.matrixFile(matrix, n, ByteOrder.LITTLE_ENDIAN).all();
            Path stores = dir.resolve("rowstore");
            int blockRows = 256;
            try (RowStores out = new RowStores(stores, blockRows, n, b -> true)) {
                short[] row = new short[n];
                for (int i = 0; i < n; i++) {
                    full.copyRow(i, row);
                    out.store(DistanceRow.decode(RowFormat.encodeInt16(i, row, 0, i, false), null));
                }
            }
            System.out.println("bench live-kernel: N = " + n + " uniform 8-D, 1 process, 1 thread; load average "
                    + String.format(Locale.ROOT, "%.2f", ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage()));

            DaMds batch = new DaMds(matrix, n, ByteOrder.LITTLE_ENDIAN, Weighting.unit(), new MdsOptions().seed(1),
                    SingleProcessSync.INSTANCE);
            batch.prepare();
            int[] all = new int[n];
            for (int i = 0; i < n; i++) {
                all[i] = i;
            }
            TriangleSmacof live = new TriangleSmacof(n, new RowStoreReader(stores, blockRows, n),
                    SingleProcessSync.INSTANCE, all);
            live.distanceRange(n);
            Random random = new Random(1);
            for (int i = 0; i < n; i++) {
                live.setPoint(i, random.nextDouble(), random.nextDouble(), random.nextDouble());
            }
            for (int w = 0; w < 20; w++) { // warm-up: C2 compiles both, the batch kernel's vector pass included
                batch.iterate(0);
                live.iterate(n, 0);
            }
            double[] batchMs = new double[rounds];
            double[] liveMs = new double[rounds];
            com.sun.management.ThreadMXBean mx = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
            long allocated = 0;
            for (int r = 0; r < rounds; r++) {
                long t0 = System.nanoTime();
                batch.iterate(0);
                long t1 = System.nanoTime();
                long a0 = mx.getCurrentThreadAllocatedBytes();
                live.iterate(n, 0);
                allocated += mx.getCurrentThreadAllocatedBytes() - a0;
                long t2 = System.nanoTime();
                batchMs[r] = (t1 - t0) / 1e6;
                liveMs[r] = (t2 - t1) / 1e6;
            }
            double b = median(batchMs);
            double l = median(liveMs);
            System.out.printf(Locale.ROOT, "  batch DA-MDS iteration (full rows, %s kernel): median %.2f ms%n",
                    DaMds.vectorKernel() ? "vector" : "scalar", b);
            System.out.printf(Locale.ROOT, "  live map iteration (row stores, lower triangle): median %.2f ms, %.0f bytes"
                    + " allocated per iteration%n", l, (double) allocated / rounds);
            System.out.printf(Locale.ROOT, "  live / batch: %.2fx (goal <= 1.2x)%n", l / b);
            new Figures("live-kernel").put("n", n).put("rounds", rounds).put("batch_ms_per_iteration", b)
                    .put("live_ms_per_iteration", l).put("ratio", l / b).put("goal_ratio", 1.2)
                    .put("batch_vector_kernel", DaMds.vectorKernel())
                    .put("live_bytes_per_iteration", (double) allocated / rounds).print();
        } finally {
            io.meridian.shm.OwnerOnlyFiles.deleteTree(dir);
        }
    }

    private static double median(double[] values) {
        double[] s = values.clone();
        Arrays.sort(s);
        return s[s.length / 2];
    }
}
