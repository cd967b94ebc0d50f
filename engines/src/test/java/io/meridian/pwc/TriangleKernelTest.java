package io.meridian.pwc;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.meridian.collective.BlockSync;
import io.meridian.collective.SingleProcessSync;
import io.meridian.collective.ThreadedBlockSync;
import io.meridian.engine.BadInputException;
import io.meridian.matrix.LowerRows;
import io.meridian.matrix.RowBlock;
import io.meridian.matrix.RowPartition;
import io.meridian.synthetic.SyntheticDataset;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * DA-PWC over the lower triangle of owned, interleaved row blocks (the live map's layout), in 1, 2 and 3 tasks in
 * threads, against the single-process engine over full rows on the same generated matrix.
 */
class TriangleKernelTest {
    /** Rows per ownership block, small so that every task owns several interleaved blocks. */
    private static final int BLOCK_ROWS = 32;

    @TempDir
    Path dir;

    private RowBlock blobs(int n, int dim, int centers, double std, long seed) throws Exception {
        Path file = dir.resolve("blobs-" + n + "-" + seed + ".bin");
        SyntheticDataset.blobs(n, dim, centers, std, seed).writeMatrix(file, ByteOrder.LITTLE_ENDIAN);
        return RowBlock.mapAll(BadInputException.Input.DISTANCES, file, n, ByteOrder.LITTLE_ENDIAN);
    }

    /** Task t owns every t-th block of {@link #BLOCK_ROWS} ids, up to {@code capacity} (beyond the points clustered). */
    static int[][] interleaved(int capacity, int tasks) {
        int[][] owned = new int[tasks][];
        for (int t = 0; t < tasks; t++) {
            List<Integer> ids = new ArrayList<>();
            for (int b = t; b * BLOCK_ROWS < capacity; b += tasks) {
                for (int i = b * BLOCK_ROWS; i < Math.min(capacity, (b + 1) * BLOCK_ROWS); i++) {
                    ids.add(i);
                }
            }
            owned[t] = ids.stream().mapToInt(Integer::intValue).toArray();
        }
        return owned;
    }

    private static PwcResult fullRows(RowBlock all, PwcSettings settings) {
        return new PwcEngine(all, RowPartition.of(all.n(), 1), SingleProcessSync.INSTANCE, settings, null).run();
    }

    /** Runs {@code body} once per task, each in its own thread with its member of one threaded group. */
    private static <T> List<T> inThreads(int tasks, Function<BlockSync, T> body) throws Exception {
        ThreadedBlockSync.Group group = new ThreadedBlockSync.Group(tasks);
        ExecutorService pool = Executors.newFixedThreadPool(tasks);
        try {
            List<Future<T>> futures = new ArrayList<>();
            for (int t = 0; t < tasks; t++) {
                BlockSync member = group.member(t);
                futures.add(pool.submit(() -> body.apply(member)));
            }
            List<T> results = new ArrayList<>();
            for (Future<T> f : futures) {
                results.add(f.get(300, TimeUnit.SECONDS));
            }
            return results;
        } finally {
            pool.shutdownNow();
        }
    }

    private void agreesWithFullRows(RowBlock all, PwcSettings settings, int expectedClusters) throws Exception {
        int n = all.n();
        PwcResult single = fullRows(all, settings);
        assertEquals(expectedClusters, single.clusters(), "the single-process engine's clusters");
        for (int tasks = 1; tasks <= 3; tasks++) {
            int[][] owned = interleaved(n + 50, tasks);
            List<PwcResult> results = inThreads(tasks, sync ->
                    PwcEngine.overLowerRows(LowerRows.of(all), n, owned, sync, settings, null).run());
            PwcResult first = results.get(0);
            for (PwcResult other : results) {
                assertArrayEquals(first.labels(), other.labels(), tasks + " tasks: every task ends with the same labels");
                assertArrayEquals(first.memberships(), other.memberships(), 0.0, "and the same frozen state");
                assertArrayEquals(first.centers(), other.centers());
            }
            String what = tasks + " task(s), sizes " + Arrays.toString(first.sizes()) + " vs "
                    + Arrays.toString(single.sizes());
            assertEquals(single.clusters(), first.clusters(), what);
            assertArrayEquals(single.labels(), first.labels(), what);
            assertEquals(1.0, Ari.adjustedRandIndex(single.labels(), first.labels()), 1e-12, what);
            assertArrayEquals(single.centers(), first.centers(), what);
            assertEquals(single.hamiltonian(), first.hamiltonian(), 1e-9 * Math.abs(single.hamiltonian()), what);
            assertArrayEquals(single.memberships(), first.memberships(), 1e-6, what);
            assertEquals(single.emIterations(), first.emIterations(), 3, what + ": the same schedule");
            assertEquals(single.splits(), first.splits(), what);
        }
    }

    @Test
    void separatedBlobsGiveTheSingleProcessLabelsInOneTwoAndThreeTasks() throws Exception {
        agreesWithFullRows(blobs(400, 6, 4, 1.0, 11), PwcSettings.builder().maxClusters(8).build(), 4);
    }

    @Test
    void overlappingBlobsWithDapwcsSplitTestGiveTheSingleProcessLabels() throws Exception {
        // dapwc's settings: EM re-converged with a duplicated cluster in the split tests, the trial state kept
        agreesWithFullRows(blobs(500, 8, 6, 2.0, 3), PwcSettings.builder().dapwc().maxClusters(6).build(), 6);
    }

    @Test
    void aProductOverTheTriangleEqualsTheFullRowsProduct() throws Exception {
        productsAgree(blobs(333, 5, 3, 1.5, 7));
    }

    @Test
    void withTheVectorPassCompiledRowsLongerThanATileGiveTheSameProduct() throws Exception {
        // rows past 1024 entries: whole tiles, whose columns the vector pass takes four rows (then two) at a time
        warmUpVectorPass();
        productsAgree(blobs(2600, 5, 3, 1.5, 9));
    }

    @Test
    void theVectorWideningTakesAMissingEntryAsZero() {
        if (!ModuleLayer.boot().findModule("jdk.incubator.vector").isPresent()) {
            return;
        }
        warmUpVectorPass();
        short[] raw = new short[37];
        for (int t = 0; t < raw.length; t++) {
            raw[t] = (short) (t % 4 == 1 ? -1 - t : 900 * t);
        }
        double[] values = new double[3 + raw.length];
        Arrays.fill(values, 7);
        PairVectors.widen(raw, raw.length, values, 3);
        assertEquals(7, values[2]);
        for (int t = 0; t < raw.length; t++) {
            assertEquals(raw[t] < 0 ? 0 : raw[t], values[3 + t], "entry " + t);
        }
    }

    /** Waits (at most a minute) until C2 has compiled the kernel's vector pass, if this JVM has the vector module. */
    private static void warmUpVectorPass() {
        if (ModuleLayer.boot().findModule("jdk.incubator.vector").isPresent()) {
            PairVectors.Scratch scratch = new PairVectors.Scratch();
            long deadline = System.nanoTime() + 60_000_000_000L;
            while (!PairVectors.warmUp(scratch) && System.nanoTime() < deadline) {
                Thread.onSpinWait();
            }
        }
    }

    private void productsAgree(RowBlock all) throws Exception {
        int n = all.n();
        int k = 5;
        double[] x = new double[n * k];
        Random random = new Random(1);
        for (int p = 0; p < x.length; p++) {
            x[p] = random.nextDouble();
        }
        double[] expected = new double[n * k];
        new FullRowKernel(all, RowPartition.of(n, 1), SingleProcessSync.INSTANCE, k).multiply(x, k, expected);
        for (int tasks = 1; tasks <= 3; tasks++) {
            int[][] owned = interleaved(n, tasks);
            List<double[]> products = inThreads(tasks, sync -> {
                TriangleKernel kernel = new TriangleKernel(LowerRows.of(all), n, owned, sync, k);
                double[] local = new double[kernel.rows() * k];
                kernel.multiply(x, k, local);
                double[] gathered = new double[n * k];
                kernel.gather(local, k, gathered);
                return gathered;
            });
            for (double[] product : products) {
                // sums of at most N products of integers and doubles: equal up to the order of summation
                for (int p = 0; p < expected.length; p++) {
                    assertEquals(expected[p], product[p], 1e-9 * Math.abs(expected[p]), tasks + " tasks, entry " + p);
                }
            }
        }
    }

    @Test
    void theAnnealingOverTheTriangleAllocatesNothingOnceUnderWay() throws Exception {
        // EM iterations, split tests (power methods), splits and freezing: from the 6th EM iteration to the last
        RowBlock all = blobs(300, 6, 4, 1.0, 13);
        int n = all.n();
        com.sun.management.ThreadMXBean threads =
                (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
        long[] bytes = {-1, 0};
        PwcProgress probe = engine -> {
            long now = threads.getCurrentThreadAllocatedBytes();
            if (engine.emIterations() > 5) {
                if (bytes[0] < 0) {
                    bytes[0] = now;
                }
                bytes[1] = now;
            }
        };
        PwcSettings settings = PwcSettings.builder().maxClusters(6).build();
        // a first run loads and initialises the classes the annealing touches (without it: 248 bytes, once per JVM)
        PwcEngine.overLowerRows(LowerRows.of(all), n, interleaved(n, 1), SingleProcessSync.INSTANCE, settings, null)
                .run();
        warmUpVectorPass(); // and the vector pass is compiled by C2 (its warm-up allocates until then)
        PwcResult r = PwcEngine.overLowerRows(LowerRows.of(all), n, interleaved(n, 1), SingleProcessSync.INSTANCE,
                settings, probe).run();
        assertTrue(r.powerIterations() > 0 && r.splits() >= 2, "split tests ran and split: " + r.splits());
        assertEquals(0, bytes[1] - bytes[0], "bytes allocated from EM iteration 6 to iteration " + r.emIterations());
    }

    @Test
    void ownershipThatLeavesARowOutOrOwnsItTwiceIsRefusedNamingIt() throws Exception {
        RowBlock all = blobs(100, 3, 2, 1.0, 5);
        LowerRows rows = LowerRows.of(all);
        int[][] gap = {java.util.stream.IntStream.range(0, 100).filter(i -> i != 42).toArray()};
        IllegalArgumentException missing = assertThrows(IllegalArgumentException.class,
                () -> new TriangleKernel(rows, 100, gap, SingleProcessSync.INSTANCE, 4));
        assertTrue(missing.getMessage().contains("no participant owns row 42 of 100"), missing.getMessage());
        int[][] twice = {{0, 1, 2}, {2, 3}};
        IllegalArgumentException both = assertThrows(IllegalArgumentException.class,
                () -> new TriangleKernel(rows, 4, twice, new ThreadedBlockSync.Group(2).member(0), 4));
        assertTrue(both.getMessage().contains("participant 1 owns id 2, which another owns too"), both.getMessage());
    }
}
