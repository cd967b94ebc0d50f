package io.meridian.live;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.meridian.collective.ThreadedBlockSync;
import io.meridian.matrix.DistanceSource;
import io.meridian.matrix.RowBlock;
import io.meridian.stream.row.DistanceRow;
import io.meridian.stream.row.RowFormat;
import io.meridian.stream.row.RowStoreReader;
import io.meridian.stream.row.RowStores;
import io.meridian.synthetic.SyntheticDataset;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 32: a map's heap follows the points it holds, not its capacity. The same rows go into a map of capacity 8192
 * and one of capacity 1,000,000 (two tasks in threads, as {@link LiveMapTest} runs them); the rows are stored in steps
 * while no round runs, so both maps take the same decisions and end with the same points.
 */
class LiveMapCapacityTest {
    private static final int TASKS = 2;
    private static final int BLOCK_ROWS = 256;
    private static final int[] STEPS = {500, 1000, 2000};
    private static final int MAX_ROUNDS_PER_STEP = 20_000;

    @TempDir
    Path dir;

    private record Run(long retainedBytes, double[] map, int[] labels) {
    }

    @Test
    void aMapOfCapacityOneMillionHoldingTwoThousandPointsCostsWhatOneOfCapacity8192Does() throws Exception {
        int n = STEPS[STEPS.length - 1];
        SyntheticDataset blobs = SyntheticDataset.blobs(n, 8, 3, 1.5, 5);
        blobs.write(dir.resolve("gen"), ByteOrder.LITTLE_ENDIAN);
        RowBlock m = DistanceSource.matrixFile(dir.resolve("gen").resolve(SyntheticDataset.DISTANCES_FILE), n,
                ByteOrder.LITTLE_ENDIAN).all();
        Run small = run(8192, m);
        Run large = run(1_000_000, m);
        System.out.printf(Locale.ROOT, "retained heap of a %d-point map in %d tasks: capacity 8192 %d bytes, capacity"
                + " 1,000,000 %d bytes%n", n, TASKS, small.retainedBytes(), large.retainedBytes());
        assertArrayEquals(small.map(), large.map(), 1e-9, "the same rows make the same map at either capacity");
        assertArrayEquals(small.labels(), large.labels(), "and the same clusters");
        // the readers of the row stores are held outside the maps (they are the row store's); what is left are the
        // maps' own arrays, DA-PWC's frozen state and the tasks' small fixed parts
        assertTrue(large.retainedBytes() < small.retainedBytes() + (1 << 20), "capacity 1,000,000 retains "
                + large.retainedBytes() + " bytes, capacity 8192 " + small.retainedBytes());
    }

    /** Streams the rows into a map of {@code capacity} in {@link #STEPS}; measures what the converged map retains. */
    private Run run(int capacity, RowBlock m) throws Exception {
        int n = STEPS[STEPS.length - 1];
        Path rowStores = dir.resolve("rowstore-" + capacity);
        LiveMapSettings settings = new LiveMapSettings(capacity, BLOCK_ROWS, TASKS, STEPS[0], 20, 1e-4, 2.0, 0.25,
                0.95, 0.5, 3, 1);
        ThreadedBlockSync.Group group = new ThreadedBlockSync.Group(TASKS);
        CyclicBarrier step = new CyclicBarrier(TASKS + 1);
        double[][] maps = new double[TASKS][];
        int[][] labels = new int[1][];
        long held;
        long released;
        ExecutorService pool = Executors.newFixedThreadPool(TASKS);
        try (RowStores stores = new RowStores(rowStores, BLOCK_ROWS, capacity, b -> true)) {
            // held here, so that what the maps retain leaves the readers (the row store's own) out
            RowStoreReader[] readers = new RowStoreReader[TASKS];
            Future<?>[] runs = new Future<?>[TASKS];
            for (int t = 0; t < TASKS; t++) {
                int task = t;
                readers[t] = new RowStoreReader(rowStores, BLOCK_ROWS, capacity);
                runs[t] = pool.submit(() -> {
                    try (LiveMap live = new LiveMap(settings, task, readers[task], group.member(task),
                            dir.resolve("work-" + capacity), null)) {
                        for (int to : STEPS) {
                            step.await(60, TimeUnit.SECONDS); // rows up to `to` are stored
                            int rounds = 0;
                            // a reduced condition: both tasks leave after the same round
                            while (!(live.points() == to && live.converged()) && rounds++ < MAX_ROUNDS_PER_STEP) {
                                live.round();
                            }
                            step.await(60, TimeUnit.SECONDS);
                        }
                        maps[task] = new double[3 * live.points()];
                        live.copyPoints(maps[task]);
                        if (task == 0) {
                            labels[0] = live.awaitClusters(Duration.ofSeconds(60));
                        }
                        step.await(60, TimeUnit.SECONDS); // the main thread measures the settled maps
                        step.await(60, TimeUnit.SECONDS);
                    }
                    return null;
                });
            }
            int from = 0;
            for (int to : STEPS) {
                store(stores, m, from, to);
                from = to;
                step.await(60, TimeUnit.SECONDS);
                step.await(600, TimeUnit.SECONDS);
            }
            step.await(120, TimeUnit.SECONDS);
            held = heapAfterGc();
            step.await(60, TimeUnit.SECONDS);
            for (Future<?> f : runs) {
                f.get(60, TimeUnit.SECONDS);
            }
            released = heapAfterGc();
            assertEquals(TASKS, readers.length); // the readers stay reachable up to here
        } finally {
            pool.shutdownNow();
        }
        assertEquals(3 * n, maps[0].length, "capacity " + capacity + ": every point is in the map");
        assertArrayEquals(maps[0], maps[1], "capacity " + capacity + ": every task holds the same map");
        return new Run(held - released, maps[0], labels[0]);
    }

    /**
     * A round looks at the row blocks up to the frontier and at a few absent ones beyond it, not at every block of the
     * capacity (one stat each: an idle round of a capacity-1,000,000 map took 21.7 ms): a row stored just past the
     * frontier is counted at once, one stored far ahead once the sweep reaches its block.
     */
    @Test
    void rowsStoredAheadOfTheMapAreCountedTheOnesFarAheadWithinASweep() throws Exception {
        int capacity = 1_000_000;
        int first = 100;
        int next = 2 * BLOCK_ROWS; // block 2, task 0's next block after block 0
        int farAhead = 1171 * BLOCK_ROWS; // task 1's block 1171 (the first row of a block: its file holds 16 rows)
        int sweep = (capacity / BLOCK_ROWS / TASKS) / 8 + 2; // SWEEP_BLOCKS = 8 blocks a round
        SyntheticDataset blobs = SyntheticDataset.blobs(first, 8, 3, 1.5, 5);
        blobs.write(dir.resolve("gen"), ByteOrder.LITTLE_ENDIAN);
        RowBlock m = DistanceSource.matrixFile(dir.resolve("gen").resolve(SyntheticDataset.DISTANCES_FILE), first,
                ByteOrder.LITTLE_ENDIAN).all();
        Path rowStores = dir.resolve("rowstore");
        LiveMapSettings settings = new LiveMapSettings(capacity, BLOCK_ROWS, TASKS, first, 20, 1e-4, 2.0, 0.25, 0.95,
                0.5, 3, 1);
        ThreadedBlockSync.Group group = new ThreadedBlockSync.Group(TASKS);
        long[][] counted = new long[TASKS][sweep + 1];
        int[] points = new int[TASKS];
        ExecutorService pool = Executors.newFixedThreadPool(TASKS);
        try (RowStores stores = new RowStores(rowStores, BLOCK_ROWS, capacity, b -> true)) {
            store(stores, m, 0, first);
            for (int id : new int[] {next, farAhead}) {
                short[] distances = new short[id];
                java.util.Arrays.fill(distances, (short) 1000);
                stores.store(DistanceRow.decode(RowFormat.encodeInt16(id, distances, 0, id, false), null));
            }
            Future<?>[] runs = new Future<?>[TASKS];
            for (int t = 0; t < TASKS; t++) {
                int task = t;
                runs[t] = pool.submit(() -> {
                    try (LiveMap live = new LiveMap(settings, task, new RowStoreReader(rowStores, BLOCK_ROWS,
                            capacity), group.member(task), dir.resolve("work"), null)) {
                        for (int r = 0; r <= sweep; r++) {
                            live.round();
                            counted[task][r] = live.storedRowsCounted();
                        }
                        points[task] = live.points();
                    }
                    return null;
                });
            }
            for (Future<?> f : runs) {
                f.get(120, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        assertEquals(first, points[0], "the map holds the rows up to the first missing one");
        assertEquals(first + 1, counted[0][0], "the first round counts the row just past the frontier");
        assertEquals(first + 2, counted[0][sweep], "the row far ahead is counted within a sweep: " + java.util.Arrays
                .toString(counted[0]));
        assertArrayEquals(counted[0], counted[1], "every task counts the same");
    }

    /**
     * A map resumed from a frame grows its arrays to the frame's points before it takes them (the first round
     * broadcasts them into arrays that did not hold them yet), then places the rows stored since.
     */
    @Test
    void aMapOfCapacityOneMillionResumesFromAFrameAndPlacesTheRowsStoredSince() throws Exception {
        int capacity = 1_000_000;
        int first = 250;
        int n = 300;
        SyntheticDataset blobs = SyntheticDataset.blobs(n, 8, 3, 1.5, 5);
        blobs.write(dir.resolve("gen"), ByteOrder.LITTLE_ENDIAN);
        RowBlock m = DistanceSource.matrixFile(dir.resolve("gen").resolve(SyntheticDataset.DISTANCES_FILE), n,
                ByteOrder.LITTLE_ENDIAN).all();
        Path rowStores = dir.resolve("rowstore");
        Path snapshots = dir.resolve("snapshots");
        LiveMapSettings settings = new LiveMapSettings(capacity, BLOCK_ROWS, TASKS, 200, 20, 1e-4, 2.0, 0.25, 0.95,
                0.5, 3, 1);
        try (RowStores stores = new RowStores(rowStores, BLOCK_ROWS, capacity, b -> true)) {
            store(stores, m, 0, first);
            runToConvergence(settings, rowStores, first, null, new SnapshotWriter(snapshots, "job"));
            Snapshot frame = Snapshot.load(snapshots, "job");
            assertEquals(first, frame.n());
            store(stores, m, first, n);
            double[][] maps = runToConvergence(settings, rowStores, n, frame, null);
            assertArrayEquals(maps[0], maps[1], "every task holds the same map");
            // the first points stay where the frame had them (a map started afresh lies anywhere): the rounds after
            // the resume place the new points and refine, moving the map by a few frames' worth at most
            double moved = 0;
            double radius = 0;
            double[] centre = new double[3];
            for (int i = 0; i < 3 * first; i++) {
                centre[i % 3] += frame.points()[i] / first;
            }
            for (int i = 0; i < 3 * first; i++) {
                moved += Math.pow(maps[0][i] - frame.points()[i], 2);
                radius += Math.pow(frame.points()[i] - centre[i % 3], 2);
            }
            assertTrue(Math.sqrt(moved / radius) < 0.05, "the resumed points moved by " + Math.sqrt(moved / radius)
                    + " of the map's radius");
        }
    }

    /** Runs a map of two tasks (task 0 resuming from {@code frame} if given) until it holds n points, converged. */
    private double[][] runToConvergence(LiveMapSettings settings, Path rowStores, int n, Snapshot frame,
                                        FrameListener listener) throws Exception {
        ThreadedBlockSync.Group group = new ThreadedBlockSync.Group(TASKS);
        double[][] maps = new double[TASKS][];
        ExecutorService pool = Executors.newFixedThreadPool(TASKS);
        try {
            Future<?>[] runs = new Future<?>[TASKS];
            for (int t = 0; t < TASKS; t++) {
                int task = t;
                runs[t] = pool.submit(() -> {
                    try (LiveMap live = new LiveMap(settings, task, new RowStoreReader(rowStores, BLOCK_ROWS,
                            settings.capacity()), group.member(task), dir.resolve("work"), task == 0 ? listener
                            : null)) {
                        if (task == 0 && frame != null) {
                            live.resume(frame);
                        }
                        int rounds = 0;
                        while (!(live.points() == n && live.converged()) && rounds++ < MAX_ROUNDS_PER_STEP) {
                            live.round();
                        }
                        maps[task] = new double[3 * live.points()];
                        live.copyPoints(maps[task]);
                    }
                    return null;
                });
            }
            for (Future<?> f : runs) {
                f.get(120, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        assertEquals(3 * n, maps[0].length, "the map holds every stored row");
        return maps;
    }

    private static void store(RowStores stores, RowBlock m, int from, int to) {
        short[] full = new short[m.n()];
        for (int id = from; id < to; id++) {
            m.copyRow(id, full);
            stores.store(DistanceRow.decode(RowFormat.encodeInt16(id, full, 0, id, false), null));
        }
    }

    private static long heapAfterGc() {
        MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
        long used = Long.MAX_VALUE;
        for (int i = 0; i < 3; i++) {
            System.gc();
            used = Math.min(used, memory.getHeapMemoryUsage().getUsed());
        }
        return used;
    }
}
