package io.meridian.mds;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.meridian.collective.SingleProcessSync;
import io.meridian.collective.ThreadedBlockSync;
import io.meridian.matrix.DistanceSource;
import io.meridian.matrix.LowerRows;
import io.meridian.matrix.RowBlock;
import io.meridian.matrix.ShortMatrixFormat;
import io.meridian.synthetic.SyntheticDataset;
import java.lang.management.ManagementFactory;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TriangleSmacofTest {
    private static final int N = 300;

    @TempDir
    Path dir;

    private RowBlock matrix(int n) throws Exception {
        SyntheticDataset data = SyntheticDataset.uniform(n, 3, 11);
        data.write(dir, ByteOrder.LITTLE_ENDIAN);
        return DistanceSource.matrixFile(dir.resolve(SyntheticDataset.DISTANCES_FILE), n, ByteOrder.LITTLE_ENDIAN).all();
    }

    private static int[] all(int n) {
        int[] ids = new int[n];
        for (int i = 0; i < n; i++) {
            ids[i] = i;
        }
        return ids;
    }

    private static void randomStart(TriangleSmacof s, int n) {
        Random r = new Random(3);
        for (int i = 0; i < n; i++) {
            s.setPoint(i, r.nextDouble(), r.nextDouble(), r.nextDouble());
        }
    }

    @Test
    void stressNeverRisesAndAnEmbeddableMatrixIsFitted() throws Exception {
        RowBlock m = matrix(N);
        TriangleSmacof s = new TriangleSmacof(N, LowerRows.of(m), SingleProcessSync.INSTANCE, all(N));
        s.distanceRange(N);
        randomStart(s, N);
        double last = Double.MAX_VALUE;
        for (int it = 0; it < 400; it++) {
            double stress = s.iterate(N, 0);
            assertTrue(stress <= last + 1e-12, "iteration " + it + ": stress rose from " + last + " to " + stress);
            last = stress;
        }
        // the points are uniform in a 3-D cube: an exact embedding exists; 16-bit quantisation leaves ~1e-9
        double stress = s.stress(N);
        assertTrue(stress < 1e-4, "stress " + stress);
    }

    @Test
    void duplicatedPointsEndInOnePlace() throws Exception {
        // 50 points uniform in a cube and 10 copies of the first 10: an exact embedding puts each copy on its twin
        int base = 50;
        int n = base + 10;
        SyntheticDataset data = SyntheticDataset.uniform(base, 3, 11);
        double scale = data.maxDistance();
        Path file = Fixtures.writeSymmetric(dir, "twins.bin", n, (i, j) ->
                io.meridian.matrix.ShortMatrixFormat.encode(data.distance(i % base, j % base) / scale));
        RowBlock m = DistanceSource.matrixFile(file, n, ByteOrder.LITTLE_ENDIAN).all();
        TriangleSmacof s = new TriangleSmacof(n, LowerRows.of(m), SingleProcessSync.INSTANCE, all(n));
        double smallest = s.distanceRange(n)[1];
        randomStart(s, n);
        for (int it = 0; it < 3000; it++) {
            s.iterate(n, 0);
        }
        double worst = 0;
        for (int i = base; i < n; i++) {
            double d2 = 0;
            for (int k = 0; k < 3; k++) {
                double t = s.coordinate(i, k) - s.coordinate(i - base, k);
                d2 += t * t;
            }
            worst = Math.max(worst, Math.sqrt(d2));
        }
        // a zero distance raised to the smallest positive one (SPIDAL's) held twins about that far apart
        assertTrue(worst < 1e-3 * smallest, "a copy ends " + worst + " from its twin; smallest distance " + smallest);
        assertTrue(s.stress(n) < 1e-6, "stress " + s.stress(n));
    }

    @Test
    void rowsSplitOverThreeTasksGiveTheSameMapAsOne() throws Exception {
        RowBlock m = matrix(N);
        TriangleSmacof single = new TriangleSmacof(N, LowerRows.of(m), SingleProcessSync.INSTANCE, all(N));
        single.distanceRange(N);
        randomStart(single, N);
        for (int it = 0; it < 30; it++) {
            single.iterate(N, it < 10 ? 0.05 : 0);
        }
        int tasks = 3;
        ThreadedBlockSync.Group group = new ThreadedBlockSync.Group(tasks);
        double[][] maps = new double[tasks][3 * N];
        ExecutorService pool = Executors.newFixedThreadPool(tasks);
        try {
            Future<?>[] runs = new Future<?>[tasks];
            for (int t = 0; t < tasks; t++) {
                int task = t;
                runs[t] = pool.submit(() -> {
                    int[] owned = java.util.stream.IntStream.range(0, N).filter(i -> (i / 16) % tasks == task).toArray();
                    TriangleSmacof s = new TriangleSmacof(N, LowerRows.of(m), group.member(task), owned);
                    s.distanceRange(N);
                    randomStart(s, N);
                    for (int it = 0; it < 30; it++) {
                        s.iterate(N, it < 10 ? 0.05 : 0);
                    }
                    s.copyPoints(N, maps[task]);
                    return null;
                });
            }
            for (Future<?> f : runs) {
                f.get();
            }
        } finally {
            pool.shutdownNow();
        }
        double[] expected = new double[3 * N];
        single.copyPoints(N, expected);
        for (int t = 0; t < tasks; t++) {
            for (int k = 0; k < 3 * N; k++) {
                assertEquals(expected[k], maps[t][k], 1e-9, "task " + t + ", coordinate " + k);
                assertEquals(maps[0][k], maps[t][k], 0.0, "every task holds the same map");
            }
        }
    }

    @Test
    void anIterationAllocatesNothing() throws Exception {
        assertTrue(!RowKernel.VECTOR_AVAILABLE || RowKernel.warmUpVectors(60_000), "the vector pass compiled");
        RowBlock m = matrix(N);
        TriangleSmacof s = new TriangleSmacof(N, LowerRows.of(m), SingleProcessSync.INSTANCE, all(N));
        s.distanceRange(N);
        randomStart(s, N);
        for (int it = 0; it < 50; it++) {
            s.iterate(N, 0);
        }
        com.sun.management.ThreadMXBean mx = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long before = mx.getCurrentThreadAllocatedBytes();
        for (int it = 0; it < 50; it++) {
            s.iterate(N - (it % 7), 0); // a growing map changes n from round to round
        }
        long allocated = mx.getCurrentThreadAllocatedBytes() - before;
        assertTrue(allocated < 1024, "50 iterations allocated " + allocated + " bytes");
    }

    /**
     * One iteration is the Guttman transform X' = B(X) X / n of the definition, summed pair by pair here, over a map
     * of several row groups and column tiles, rows split unevenly over two tasks, with missing distances.
     */
    @Test
    void anIterationIsTheGuttmanTransformOverEveryGroupAndTile() throws Exception {
        int n = 2300;
        RowBlock m = matrix(n);
        short[][] rows = new short[n][];
        for (int i = 0; i < n; i++) {
            rows[i] = new short[i];
            m.copyRow(i, 0, i, rows[i], 0);
            for (int j = 0; j < i; j++) {
                if ((i * 31 + j) % 97 == 0) {
                    rows[i][j] = -1; // missing
                }
            }
        }
        LowerRows lower = new LowerRows() {
            @Override
            public void copy(int id, int from, int to, short[] dst) {
                System.arraycopy(rows[id], from, dst, 0, to - from);
            }

            @Override
            public short get(int id, int column) {
                return rows[id][column];
            }
        };
        double[] x = new double[3 * n];
        Random r = new Random(5);
        for (int k = 0; k < x.length; k++) {
            x[k] = r.nextDouble();
        }
        double[] expected = new double[3 * n];
        double[] rowSum = new double[n];
        for (int i = 0; i < n; i++) {
            for (int j = 0; j < i; j++) {
                if (rows[i][j] < 0) {
                    continue;
                }
                double dx = x[3 * i] - x[3 * j];
                double dy = x[3 * i + 1] - x[3 * j + 1];
                double dz = x[3 * i + 2] - x[3 * j + 2];
                double c = rows[i][j] * ShortMatrixFormat.INV_SCALE / Math.sqrt(dx * dx + dy * dy + dz * dz);
                rowSum[i] += c;
                rowSum[j] += c;
                for (int k = 0; k < 3; k++) {
                    expected[3 * i + k] -= c * x[3 * j + k];
                    expected[3 * j + k] -= c * x[3 * i + k];
                }
            }
        }
        for (int i = 0; i < n; i++) {
            for (int k = 0; k < 3; k++) {
                expected[3 * i + k] = (expected[3 * i + k] + rowSum[i] * x[3 * i + k]) / n;
            }
        }
        int tasks = 2;
        ThreadedBlockSync.Group group = new ThreadedBlockSync.Group(tasks);
        double[][] maps = new double[tasks][3 * n];
        ExecutorService pool = Executors.newFixedThreadPool(tasks);
        try {
            Future<?>[] runs = new Future<?>[tasks];
            for (int t = 0; t < tasks; t++) {
                int task = t;
                runs[t] = pool.submit(() -> {
                    // task 0: blocks of 300 rows at even block numbers; task 1 the rest (groups end at 256 rows too)
                    int[] owned = java.util.stream.IntStream.range(0, n).filter(i -> (i / 300) % tasks == task)
                            .toArray();
                    TriangleSmacof s = new TriangleSmacof(n, lower, group.member(task), owned);
                    s.setPoints(n, x);
                    s.iterate(n, 0);
                    s.copyPoints(n, maps[task]);
                    return null;
                });
            }
            for (Future<?> f : runs) {
                f.get();
            }
        } finally {
            pool.shutdownNow();
        }
        for (int k = 0; k < 3 * n; k++) {
            assertEquals(expected[k], maps[0][k], 1e-9 * Math.max(1, Math.abs(expected[k])), "coordinate " + k);
            assertEquals(maps[0][k], maps[1][k], 0.0, "every task holds the same map");
        }
    }

    /**
     * Issue 32: sized for a capacity of 1,000,000 the arrays took 80 MB before the first point; they now grow with the
     * points, the map is the one an engine sized for its points makes, and an iteration still allocates nothing.
     */
    @Test
    void aMapOfCapacityOneMillionGrowsWithItsPointsAndIteratesAsOneSizedForThem() throws Exception {
        assertTrue(!RowKernel.VECTOR_AVAILABLE || RowKernel.warmUpVectors(60_000), "the vector pass compiled");
        RowBlock m = matrix(N);
        int capacity = 1_000_000;
        com.sun.management.ThreadMXBean mx = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        // an iteration's pass compiled first (while C2 has not compiled it, the vector pass allocates per operation:
        // 123 MB over this test's 60 iterations once), so that what is measured below is the growth
        TriangleSmacof warm = new TriangleSmacof(N, LowerRows.of(m), SingleProcessSync.INSTANCE, all(N));
        randomStart(warm, N);
        for (int it = 0; it < 200; it++) {
            warm.iterate(N - (it % 7), 0);
        }
        TriangleSmacof sized = new TriangleSmacof(N, LowerRows.of(m), SingleProcessSync.INSTANCE, all(N));
        long before = mx.getCurrentThreadAllocatedBytes();
        TriangleSmacof growing = new TriangleSmacof(capacity, LowerRows.of(m), SingleProcessSync.INSTANCE,
                OwnedIds.ofBlocks(capacity, 32, b -> true));
        long grown = mx.getCurrentThreadAllocatedBytes() - before;
        Random r = new Random(3);
        for (int n = 100; n <= N; n += 100) {
            for (int i = n - 100; i < n; i++) {
                double x = r.nextDouble();
                double y = r.nextDouble();
                double z = r.nextDouble();
                sized.setPoint(i, x, y, z);
                before = mx.getCurrentThreadAllocatedBytes();
                growing.setPoint(i, x, y, z);
                grown += mx.getCurrentThreadAllocatedBytes() - before;
            }
            sized.distanceRange(n);
            growing.distanceRange(n);
            for (int it = 0; it < 20; it++) {
                double expected = sized.iterate(n, 0);
                before = mx.getCurrentThreadAllocatedBytes();
                double stress = growing.iterate(n, 0);
                grown += mx.getCurrentThreadAllocatedBytes() - before;
                assertEquals(expected, stress, 1e-12, "n = " + n + ", iteration " + it);
            }
        }
        for (int i = 0; i < N; i++) {
            for (int k = 0; k < 3; k++) {
                assertEquals(sized.coordinate(i, k), growing.coordinate(i, k), 1e-9, "point " + i + ", coordinate "
                        + k);
            }
        }
        System.out.printf("TriangleSmacof of capacity %d growing to %d points allocated %d bytes%n", capacity, N, grown);
        // growing to 300 points: x, X column-wise, the sums and the owned ids for 100, 200, then 400 points (60 KB),
        // and the engine's fixed parts (its vector pass's scratch among them): 102 KB measured
        assertTrue(grown < 256 * 1024, "growing to " + N + " points allocated " + grown + " bytes");
        before = mx.getCurrentThreadAllocatedBytes();
        for (int it = 0; it < 50; it++) {
            growing.iterate(N - (it % 7), 0);
        }
        long allocated = mx.getCurrentThreadAllocatedBytes() - before;
        assertTrue(allocated < 1024, "50 iterations allocated " + allocated + " bytes");
    }
}
