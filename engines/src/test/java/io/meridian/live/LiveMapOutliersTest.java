package io.meridian.live;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.meridian.collective.ThreadedBlockSync;
import io.meridian.matrix.DistanceSource;
import io.meridian.matrix.RowBlock;
import io.meridian.stream.row.DistanceRow;
import io.meridian.stream.row.RowFormat;
import io.meridian.stream.row.RowStoreReader;
import io.meridian.stream.row.RowStores;
import io.meridian.synthetic.SyntheticDataset;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The live map's outlier flags (issue 34, "In the live map"): DA-VS with a sponge on the map's 3-D coordinates after
 * each DA-PWC run, a point placed afterwards flagged from its frozen state. Two tasks in threads, distributed
 * DA-PWC, row stores in a temp dir.
 */
class LiveMapOutliersTest {
    private static final int BLOCK_ROWS = 32;
    private static final int MAX_CLUSTERS = 4;
    private static final int DIM = 8;
    /** The most blob points flagged: a false-positive rate of 1 %. */
    private static final double MOST_FALSE_POSITIVES = 0.01;

    @TempDir
    Path dir;

    /** {@code blobPoints} points of 3 blobs in 8-D (std 1.5, centres in [-10, 10]^8), then one point 60 away. */
    private RowBlock blobsAndAFarPoint(int blobPoints) throws Exception {
        SyntheticDataset blobs = SyntheticDataset.blobs(blobPoints, DIM, 3, 1.5, 5);
        double[] x = new double[(blobPoints + 1) * DIM];
        for (int i = 0; i < blobPoints; i++) {
            for (int k = 0; k < DIM; k++) {
                x[i * DIM + k] = blobs.coordinate(i, k);
            }
        }
        x[blobPoints * DIM] = 60; // the centres lie in [-10, 10]^8: at least 50 from every blob's centre
        SyntheticDataset all = SyntheticDataset.of(x, DIM);
        all.write(dir.resolve("gen"), ByteOrder.LITTLE_ENDIAN);
        return DistanceSource.matrixFile(dir.resolve("gen").resolve(SyntheticDataset.DISTANCES_FILE), blobPoints + 1,
                ByteOrder.LITTLE_ENDIAN).all();
    }

    private static void store(RowStores stores, RowBlock m, int from, int to) {
        short[] full = new short[m.n()];
        for (int id = from; id < to; id++) {
            m.copyRow(id, full);
            stores.store(DistanceRow.decode(RowFormat.encodeInt16(id, full, 0, id, false), null));
        }
    }

    private static void awaitFrame(List<Frame> frames, Predicate<Frame> wanted, String what) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
        while (frames.stream().noneMatch(wanted)) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("no frame " + what + " within 90 s; frames: " + frames.size());
            }
            Thread.sleep(10);
        }
    }

    private static Frame first(List<Frame> frames, Predicate<Frame> wanted) {
        return frames.stream().filter(wanted).findFirst().orElseThrow();
    }

    private static int flagged(Frame f, int below) {
        int count = 0;
        for (int i = 0; i < below; i++) {
            count += f.outlierFlags()[i] ? 1 : 0;
        }
        return count;
    }

    /**
     * A live map with a late far-away point flags it as an outlier within one frame: the first frame that shows it
     * flags it (from the frozen DA-VS state of the run over the blobs), and so does the last frame, after DA-PWC and
     * DA-VS have run again over every point; at most 1 % of the blobs' points are ever flagged.
     */
    @Test
    void aLateFarAwayPointIsFlaggedAsAnOutlierWithinOneFrame() throws Exception {
        int blobPoints = 300;
        int n = blobPoints + 1;
        int capacity = 320;
        int tasks = 2;
        RowBlock m = blobsAndAFarPoint(blobPoints);
        Path rowStores = dir.resolve("rowstore");
        List<Frame> frames = new CopyOnWriteArrayList<>();
        Predicate<Frame> settledBlobs = f -> f.n() == blobPoints && f.settled() && f.clusters() > 0;
        Predicate<Frame> settledAll = f -> f.n() == n && f.settled() && f.clusters() > 0;
        try (RowStores stores = new RowStores(rowStores, BLOCK_ROWS, capacity, b -> true)) {
            store(stores, m, 0, blobPoints);
            run(tasks, capacity, blobPoints, rowStores, frames, settledAll, () -> {
                awaitFrame(frames, settledBlobs, "of the blobs, clustered and settled");
                store(stores, m, blobPoints, n);
            });
        }
        Frame blobsSettled = first(frames, settledBlobs);
        assertEquals(flagged(blobsSettled, blobPoints), blobsSettled.outliers(), "the count is the flags'");
        Frame arrival = first(frames, f -> f.n() == n);
        assertTrue(arrival.frame() > blobsSettled.frame());
        assertTrue(arrival.outlierFlags()[blobPoints], "frame " + arrival.frame() + ", the first to show the far point,"
                + " flags it");
        Frame last = frames.get(frames.size() - 1);
        assertTrue(settledAll.test(last));
        assertTrue(last.outlierFlags()[blobPoints], "DA-VS over every point puts the far point in its sponge");
        for (Frame f : frames) {
            if (f.outlierFlags().length > 0) {
                int wrong = flagged(f, Math.min(f.n(), blobPoints));
                assertTrue(wrong <= MOST_FALSE_POSITIVES * blobPoints, "frame " + f.frame() + " flags " + wrong
                        + " of the " + blobPoints + " blob points");
            }
        }
        assertEquals(flagged(last, n), last.outliers());
    }

    /** With {@code map.outliers: false} no DA-VS runs and no point is flagged, the far one neither. */
    @Test
    void outliersOffFlagsNothing() throws Exception {
        int blobPoints = 120;
        int n = blobPoints + 1;
        int capacity = 128;
        RowBlock m = blobsAndAFarPoint(blobPoints);
        Path rowStores = dir.resolve("rowstore");
        List<Frame> frames = new CopyOnWriteArrayList<>();
        try (RowStores stores = new RowStores(rowStores, BLOCK_ROWS, capacity, b -> true)) {
            store(stores, m, 0, n);
            runWith(1, capacity, n, rowStores, frames, f -> f.n() == n && f.settled() && f.clusters() > 0, () -> { },
                    OutlierSettings.OFF);
        }
        for (Frame f : frames) {
            assertEquals(0, f.outliers());
            assertFalse(f.outlierFlags().length > 0 && f.outlierFlags()[f.n() - 1]);
        }
    }

    private interface Feed {
        void run() throws Exception;
    }

    private void run(int tasks, int capacity, int initialPoints, Path rowStores, List<Frame> frames,
                     Predicate<Frame> last, Feed feed) throws Exception {
        runWith(tasks, capacity, initialPoints, rowStores, frames, last, feed, OutlierSettings.DEFAULT);
    }

    /** Runs the map's tasks in threads until task 0 publishes a frame that {@code last} accepts. */
    private void runWith(int tasks, int capacity, int initialPoints, Path rowStores, List<Frame> frames,
                         Predicate<Frame> last, Feed feed, OutlierSettings outliers) throws Exception {
        LiveMapSettings settings = new LiveMapSettings(capacity, BLOCK_ROWS, tasks, initialPoints, 20, 1e-4, 2.0, 0.25,
                0.95, 0.5, MAX_CLUSTERS, 1);
        ThreadedBlockSync.Group rounds = new ThreadedBlockSync.Group(tasks);
        ThreadedBlockSync.Group clustering = new ThreadedBlockSync.Group(tasks);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(150);
        AtomicBoolean done = new AtomicBoolean();
        CyclicBarrier roundDone = new CyclicBarrier(tasks, () -> done.set(System.nanoTime() > deadline
                || frames.stream().anyMatch(last)));
        ExecutorService pool = Executors.newFixedThreadPool(tasks);
        try {
            Future<?>[] runs = new Future<?>[tasks];
            for (int t = 0; t < tasks; t++) {
                int task = t;
                runs[t] = pool.submit(() -> {
                    try (LiveMap live = new LiveMap(settings, task, new RowStoreReader(rowStores, BLOCK_ROWS,
                            capacity), rounds.member(task), clustering.member(task), dir.resolve("work"),
                            task == 0 ? frames::add : null, outliers)) {
                        while (!done.get()) {
                            if (live.round() == null) {
                                Thread.sleep(2);
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
        assertTrue(System.nanoTime() <= deadline, "no last frame before the deadline; frames: " + frames.size()
                + (frames.isEmpty() ? "" : ", the last " + frames.get(frames.size() - 1)));
    }
}
