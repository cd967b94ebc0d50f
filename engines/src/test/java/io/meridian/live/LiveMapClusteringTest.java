package io.meridian.live;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.meridian.collective.SingleProcessSync;
import io.meridian.collective.ThreadedBlockSync;
import io.meridian.matrix.DistanceSource;
import io.meridian.matrix.RowBlock;
import io.meridian.pwc.Ari;
import io.meridian.pwc.PwcEngine;
import io.meridian.pwc.PwcProgress;
import io.meridian.pwc.PwcResult;
import io.meridian.pwc.PwcSettings;
import io.meridian.stream.row.DistanceRow;
import io.meridian.stream.row.RowFormat;
import io.meridian.stream.row.RowStoreLayout;
import io.meridian.stream.row.RowStoreReader;
import io.meridian.stream.row.RowStores;
import io.meridian.synthetic.SyntheticDataset;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * DA-PWC distributed over the live map's tasks (threads, each with its own row store reader, exchanging only through
 * two groups: the rounds' and the clustering's): every task runs its rows' part of each run, and task 0 publishes the
 * labels. They are the single-process engine's on the same rows.
 */
class LiveMapClusteringTest {
    private static final int BLOCK_ROWS = 32;
    private static final int MAX_CLUSTERS = 4;

    @TempDir
    Path dir;

    private record Blobs(RowBlock matrix, int[] truth) {
    }

    private Blobs blobs(int n, int centers) throws Exception {
        SyntheticDataset data = SyntheticDataset.blobs(n, 8, centers, 1.5, 5);
        data.write(dir.resolve("gen"), ByteOrder.LITTLE_ENDIAN);
        RowBlock m = DistanceSource.matrixFile(dir.resolve("gen").resolve(SyntheticDataset.DISTANCES_FILE), n,
                ByteOrder.LITTLE_ENDIAN).all();
        int[] truth = new int[n];
        for (int i = 0; i < n; i++) {
            truth[i] = data.label(i);
        }
        return new Blobs(m, truth);
    }

    private static void store(RowStores stores, RowBlock m, int from, int to) {
        short[] full = new short[m.n()];
        for (int id = from; id < to; id++) {
            m.copyRow(id, full);
            stores.store(DistanceRow.decode(RowFormat.encodeInt16(id, full, 0, id, false), null));
        }
    }

    /** Stores the rows {@code from .. to-1} of the whole blocks that {@code which} accepts. */
    private static void storeBlocks(RowStores stores, RowBlock m, int from, int to,
                                    java.util.function.IntPredicate which) {
        for (int block = from / BLOCK_ROWS; block < to / BLOCK_ROWS; block++) {
            if (which.test(block)) {
                store(stores, m, block * BLOCK_ROWS, (block + 1) * BLOCK_ROWS);
            }
        }
    }

    /** DA-PWC as one process over the same stored rows: the labels the live map must give. */
    private static int[] singleProcessLabels(Path rowStores, int capacity, int n) {
        int[] every = new int[n];
        for (int i = 0; i < n; i++) {
            every[i] = i;
        }
        try (RowStoreReader rows = new RowStoreReader(rowStores, BLOCK_ROWS, capacity)) {
            PwcResult r = PwcEngine.overLowerRows(rows, n, new int[][] {every}, SingleProcessSync.INSTANCE,
                    PwcSettings.builder().maxClusters(MAX_CLUSTERS).build(), PwcProgress.NONE).run();
            return r.labels();
        }
    }

    /**
     * Runs a map of {@code tasks} threads with distributed clustering until task 0 publishes a settled frame of all
     * {@code n} points with clusters; {@code feed} stores the rows (from the test's thread) while the rounds go on.
     * Task 0's frames go to {@code frames}.
     */
    private void runUntilClustered(int tasks, int n, int capacity, int initialPoints, Path rowStores,
                                   List<Frame> frames, Runnable feed) throws Exception {
        runUntilClustered(tasks, n, capacity, initialPoints, task -> rowStores, frames, feed, live -> { });
    }

    /** The same, each task reading the row stores in its own directory, and task 0 calling {@code afterRound}. */
    private void runUntilClustered(int tasks, int n, int capacity, int initialPoints,
                                   java.util.function.IntFunction<Path> rowStoresOf, List<Frame> frames, Runnable feed,
                                   java.util.function.Consumer<LiveMap> afterRound) throws Exception {
        LiveMapSettings settings = new LiveMapSettings(capacity, BLOCK_ROWS, tasks, initialPoints, 20, 1e-4, 2.0, 0.25,
                0.95, 0.5, MAX_CLUSTERS, 1);
        ThreadedBlockSync.Group rounds = new ThreadedBlockSync.Group(tasks);
        ThreadedBlockSync.Group clustering = new ThreadedBlockSync.Group(tasks);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(150);
        AtomicBoolean done = new AtomicBoolean();
        // every task leaves after the same round: decided once all have finished it
        CyclicBarrier roundDone = new CyclicBarrier(tasks, () -> done.set(System.nanoTime() > deadline
                || frames.stream().anyMatch(f -> f.n() == n && f.settled() && f.clusters() > 0)));
        ExecutorService pool = Executors.newFixedThreadPool(tasks);
        try {
            Future<?>[] runs = new Future<?>[tasks];
            for (int t = 0; t < tasks; t++) {
                int task = t;
                runs[t] = pool.submit(() -> {
                    try (LiveMap live = new LiveMap(settings, task, new RowStoreReader(rowStoresOf.apply(task),
                            BLOCK_ROWS, capacity),
                            rounds.member(task), clustering.member(task), dir.resolve("work"),
                            task == 0 ? frames::add : null)) {
                        while (!done.get()) {
                            if (live.round() == null) {
                                Thread.sleep(2);
                            }
                            if (task == 0) {
                                afterRound.accept(live);
                            }
                            roundDone.await(90, TimeUnit.SECONDS);
                        }
                    }
                    return null;
                });
            }
            feed.run();
            for (Future<?> f : runs) {
                f.get(200, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        assertTrue(System.nanoTime() <= deadline, "no settled frame of all " + n + " points with clusters before the"
                + " deadline; frames: " + frames.size());
    }

    /**
     * Task 0's listener adds while the test's thread streams over the list: a synchronized list's stream is not
     * synchronized (CI read a ConcurrentModificationException in awaitFrame), a copy-on-write list's iterates a snapshot.
     */
    private static List<Frame> frames() {
        return new CopyOnWriteArrayList<>();
    }

    /** Waits until task 0 has published a frame that {@code wanted} accepts. */
    private static void awaitFrame(List<Frame> frames, java.util.function.Predicate<Frame> wanted, String what)
            throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (frames.stream().noneMatch(wanted)) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("no frame " + what + " within 60 s; frames: " + frames.size());
            }
            Thread.sleep(10);
        }
    }

    @ParameterizedTest(name = "{0} tasks")
    @ValueSource(ints = {1, 2, 3})
    void distributedDaPwcGivesTheSingleProcessEnginesLabels(int tasks) throws Exception {
        int n = 240;
        int capacity = 256;
        Blobs data = blobs(n, 3);
        Path rowStores = dir.resolve("rowstore");
        try (RowStores stores = new RowStores(rowStores, BLOCK_ROWS, capacity, b -> true)) {
            store(stores, data.matrix(), 0, n);
            List<Frame> frames = frames();
            runUntilClustered(tasks, n, capacity, n, rowStores, frames, () -> { });
            Frame last = frames.get(frames.size() - 1);
            int[] expected = singleProcessLabels(rowStores, capacity, n);
            assertEquals(n, last.labels().length);
            assertEquals(1.0, Ari.adjustedRandIndex(expected, last.labels()), 1e-12, tasks + " tasks: the labels are"
                    + " the single-process engine's up to their numbering");
            assertTrue(Ari.adjustedRandIndex(data.truth(), last.labels()) > 0.95, "the blobs are found");
        }
    }

    /**
     * Rows streamed in: points placed after a run began get their cluster from task 0's frozen state at once, and once
     * the stream stops a last distributed run covers every point.
     */
    @ParameterizedTest(name = "{0} tasks")
    @ValueSource(ints = {2, 3})
    void streamedPointsAreLabelledAndTheLastRunCoversThemAll(int tasks) throws Exception {
        int n = 360;
        int capacity = 384;
        Blobs data = blobs(n, 3);
        Path rowStores = dir.resolve("rowstore");
        List<Frame> frames = frames();
        try (RowStores stores = new RowStores(rowStores, BLOCK_ROWS, capacity, b -> true)) {
            store(stores, data.matrix(), 0, 120);
            runUntilClustered(tasks, n, capacity, 120, rowStores, frames, () -> {
                try {
                    // the first run's clusters, then points beyond it: labelled from its frozen state
                    awaitFrame(frames, f -> f.clusters() > 0, "with clusters");
                    store(stores, data.matrix(), 120, 240);
                    awaitFrame(frames, f -> f.n() == 240 && f.clusters() > 0, "of 240 points with clusters");
                    store(stores, data.matrix(), 240, n);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            for (Frame f : frames) {
                if (f.clusters() > 0) {
                    for (int i = 0; i < f.n(); i++) {
                        assertTrue(f.labels()[i] >= 0, "frame " + f.frame() + ": point " + i + " of " + f.n()
                                + " has no cluster although a frozen state exists");
                    }
                }
            }
            Frame last = frames.get(frames.size() - 1);
            assertEquals(n, last.n());
            assertEquals(1.0, Ari.adjustedRandIndex(singleProcessLabels(rowStores, capacity, n), last.labels()),
                    1e-12, "the last run's labels are the single-process engine's over all " + n + " points");
        }
    }

    /**
     * Across hosts task 0's host keeps copies of the other hosts' rows only from {@link LiveMap#rowsNeededFrom} on
     * (the row stores drop the rest). Here task 0 reads a directory of its own holding every row, and after each of
     * its rounds deletes the blocks it does not own below that id, as a row store drops a mirror block: were a label
     * ever read from a deleted block, the round would fail. The id never falls, and reaches every point.
     */
    @Test
    void taskZeroNeverReadsAnOtherTasksRowBelowWhatItSaysItNeeds() throws Exception {
        int tasks = 2;
        int n = 360;
        int capacity = 384;
        Blobs data = blobs(n, 3);
        Path shared = dir.resolve("rowstore");
        Path taskZeros = dir.resolve("rowstore-task-0");
        List<Frame> frames = frames();
        List<Integer> needed = new CopyOnWriteArrayList<>();
        int[] deletedBelowBlock = {0};
        try (RowStores stores = new RowStores(shared, BLOCK_ROWS, capacity, b -> true);
             RowStores copies = new RowStores(taskZeros, BLOCK_ROWS, capacity, b -> true)) {
            store(stores, data.matrix(), 0, 120);
            store(copies, data.matrix(), 0, 120);
            runUntilClustered(tasks, n, capacity, 120, task -> task == 0 ? taskZeros : shared, frames, () -> {
                try {
                    awaitFrame(frames, f -> f.clusters() > 0, "with clusters");
                    for (int from = 120; from < n; from += 40) {
                        store(copies, data.matrix(), from, from + 40); // first: task 0 reads them as soon as others see them
                        store(stores, data.matrix(), from, from + 40);
                        Thread.sleep(30);
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }, live -> {
                int from = live.rowsNeededFrom();
                needed.add(from);
                live.releaseOthersRowsBelow(from);
                for (; (deletedBelowBlock[0] + 1) * BLOCK_ROWS <= from; deletedBelowBlock[0]++) {
                    if (LiveMapSettings.ownerOfBlock(deletedBelowBlock[0], tasks) != 0) {
                        for (String suffix : new String[] {RowStoreLayout.MARKERS, RowStoreLayout.VALUES}) {
                            try {
                                Files.deleteIfExists(taskZeros.resolve(RowStoreLayout.fileBase(deletedBelowBlock[0])
                                        + suffix));
                            } catch (java.io.IOException e) {
                                throw new java.io.UncheckedIOException(e);
                            }
                        }
                    }
                }
            });
            for (int k = 1; k < needed.size(); k++) {
                assertTrue(needed.get(k) >= needed.get(k - 1), "round " + k + ": " + needed.get(k - 1) + " -> "
                        + needed.get(k));
            }
            assertTrue(deletedBelowBlock[0] * BLOCK_ROWS >= 240, "task 0's copies of the other task's blocks below "
                    + deletedBelowBlock[0] * BLOCK_ROWS + " deleted, of " + n);
            assertEquals(n, needed.get(needed.size() - 1), "the last run covers every point");
            Frame last = frames.get(frames.size() - 1);
            assertEquals(n, last.n());
            assertEquals(1.0, Ari.adjustedRandIndex(singleProcessLabels(shared, capacity, n), last.labels()),
                    1e-12, "the labels are the single-process engine's over all " + n + " points");
        }
    }

    /**
     * Across hosts task 0's copy of another host's row can come after the row is stored where it belongs (a lost link
     * delays it until Storm replays the row): the map grows past it meanwhile, and task 0 labels the points from its
     * frozen state up to the first row it lacks, never reading a row it does not have (the rounds stopped so in
     * TwoHostFaultsIT). Those points wait without a label, the frames say the map has not settled, and once the copies
     * come the points are labelled and a settled frame follows, with the single-process engine's labels.
     */
    @Test
    void taskZerosLateCopiesOfOtherTasksRowsWaitForTheirLabels() throws Exception {
        int tasks = 2;
        int n = 320;
        int first = 192;
        int capacity = 384;
        Blobs data = blobs(n, 3);
        Path shared = dir.resolve("rowstore");
        Path taskZeros = dir.resolve("rowstore-task-0");
        List<Frame> frames = frames();
        try (RowStores stores = new RowStores(shared, BLOCK_ROWS, capacity, b -> true);
             RowStores copies = new RowStores(taskZeros, BLOCK_ROWS, capacity, b -> true)) {
            store(stores, data.matrix(), 0, first);
            store(copies, data.matrix(), 0, first);
            runUntilClustered(tasks, n, capacity, first, task -> task == 0 ? taskZeros : shared, frames, () -> {
                try {
                    awaitFrame(frames, f -> f.n() == first && f.settled() && f.clusters() > 0, "settled, clustered");
                    // every late row is stored where it belongs; task 0 has its own blocks' rows, not its copies of
                    // the other task's
                    store(stores, data.matrix(), first, n);
                    storeBlocks(copies, data.matrix(), first, n,
                            block -> LiveMapSettings.ownerOfBlock(block, tasks) == 0);
                    awaitFrame(frames, f -> f.n() == n, "of all " + n + " points, before task 0's copies came");
                    Thread.sleep(200); // rounds go on without the copies
                    storeBlocks(copies, data.matrix(), first, n,
                            block -> LiveMapSettings.ownerOfBlock(block, tasks) != 0);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }, live -> { });
            // the first frame to hold them: no DA-PWC run over them has ended yet, only the frozen state labels them
            Frame waiting = frames.stream().filter(f -> f.n() == n).findFirst().orElseThrow();
            int firstLate = LiveMapSettings.ownerOfBlock(first / BLOCK_ROWS, tasks) != 0 ? first : first + BLOCK_ROWS;
            assertFalse(waiting.settled(), "frame " + waiting.frame() + " waits for rows to label its points");
            for (int i = firstLate; i < n; i++) {
                assertEquals(-1, waiting.labels()[i], "point " + i + " has no label before its row is on task 0");
            }
            for (int i = 0; i < firstLate; i++) {
                assertTrue(waiting.labels()[i] >= 0, "point " + i + " is labelled: its row is on task 0");
            }
            Frame last = frames.get(frames.size() - 1);
            assertEquals(n, last.n());
            assertTrue(last.settled());
            assertEquals(1.0, Ari.adjustedRandIndex(singleProcessLabels(shared, capacity, n), last.labels()),
                    1e-12, "the labels are the single-process engine's over all " + n + " points");
        }
    }
}
