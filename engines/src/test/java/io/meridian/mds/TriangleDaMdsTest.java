package io.meridian.mds;

import static io.meridian.mds.Fixtures.maxAbsDifference;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.meridian.collective.BlockSync;
import io.meridian.collective.SingleProcessSync;
import io.meridian.collective.ThreadedBlockSync;
import io.meridian.engine.BadInputException;
import io.meridian.matrix.DistanceSource;
import io.meridian.matrix.LowerRows;
import io.meridian.matrix.RowBlock;
import io.meridian.matrix.RowPartition;
import io.meridian.matrix.ShortMatrixFormat;
import io.meridian.matrix.TriangleFile;
import io.meridian.matrix.Weighting;
import io.meridian.stream.row.BlockRowStore;
import io.meridian.stream.row.DistanceRow;
import io.meridian.stream.row.RowFormat;
import io.meridian.stream.row.RowStoreLayout;
import io.meridian.stream.row.RowStoreReader;
import io.meridian.stream.row.RowStores;
import io.meridian.synthetic.SyntheticDataset;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.Function;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * DA-MDS over the lower triangle as the row stores hold it gives the run over the square file of the same values:
 * the same iterations (the stopping tests see the same stresses) and points to rounding, in one task and two.
 */
class TriangleDaMdsTest {
    static final int N = 120;
    static final int BLOCK_ROWS = 32;

    @TempDir
    static Path dir;
    static Path squareFile;
    static Path stores;
    static Path holesFile;
    static Path holeStores;

    @BeforeAll
    static void data() {
        SyntheticDataset blobs = SyntheticDataset.blobs(N, 8, 4, 1.0, 7);
        squareFile = Fixtures.write(dir, "blobs.bin", blobs);
        stores = store(dir.resolve("stores"), squareFile);
        double scale = blobs.maxDistance();
        holesFile = Fixtures.writeSymmetric(dir, "holes.bin", N, (i, j) ->
                i != j && (i * 13 + j * 5) % 7 == 0 ? -1 : ShortMatrixFormat.encode(blobs.distance(i, j) / scale));
        holeStores = store(dir.resolve("hole-stores"), holesFile);
    }

    /** Streams the lower triangle of a square file into row stores, in a shuffled order, as the topology would. */
    static Path store(Path directory, Path square) {
        RowBlock matrix = DistanceSource.matrixFile(square, N, ByteOrder.LITTLE_ENDIAN).all();
        short[] full = new short[N];
        try (RowStores rows = new RowStores(directory, BLOCK_ROWS, N, b -> true)) {
            for (int k = 0; k < N; k++) {
                int id = (k * 7) % N; // 7 is coprime with 120: every id once
                matrix.copyRow(id, full);
                DistanceRow row = DistanceRow.decode(RowFormat.encodeInt16(id, full, 0, id, false), null);
                assertEquals(BlockRowStore.Outcome.STORED, row == null ? null : rows.store(row));
            }
        }
        return directory;
    }

    /** Runs {@code engine} in {@code tasks} threads, each a block of a {@link ThreadedBlockSync}; block 0's result. */
    static MdsResult inTasks(int tasks, Function<BlockSync, DaMds> engine) throws Exception {
        if (tasks == 1) {
            return engine.apply(SingleProcessSync.INSTANCE).run();
        }
        ThreadedBlockSync.Group group = new ThreadedBlockSync.Group(tasks);
        ExecutorService pool = Executors.newFixedThreadPool(tasks);
        try {
            List<Future<MdsResult>> results = new ArrayList<>();
            for (int b = 0; b < tasks; b++) {
                ThreadedBlockSync sync = group.member(b);
                results.add(pool.submit(() -> engine.apply(sync).run()));
            }
            MdsResult first = results.get(0).get();
            for (Future<MdsResult> f : results) {
                assertEquals(0, maxAbsDifference(first.points, f.get().points), "every task holds the same layout");
            }
            return first;
        } finally {
            pool.shutdownNow();
        }
    }

    /**
     * Tolerances: the pair sums run in another order (each pair once, credited to both rows, and summed over the tasks
     * in the reduction), which changes each sum in its last bits, and an annealing run of some hundred iterations
     * carries such differences on. Measured on these data (layouts about 1 across): points apart by at most 1.5e-8
     * and stresses by 1.4e-10 of their value (two tasks of each; one task: 1e-13 and 2e-15); the bounds below leave
     * a margin of 60 over that, far below any difference of substance (the square file's own run in 1 and 3 blocks is
     * held to 1e-4 in DaMdsTest), and the iteration counts must agree exactly.
     */
    static void assertSameRun(MdsResult square, MdsResult triangle) {
        assertEquals(square.smacofIterations, triangle.smacofIterations, "iterations");
        assertEquals(square.temperatureLoops, triangle.temperatureLoops, "temperature loops");
        assertEquals(square.cgIterations, triangle.cgIterations, "CG steps");
        assertEquals(square.closedForm, triangle.closedForm);
        assertEquals(square.missingDistances, triangle.missingDistances);
        assertEquals(square.maxDistance, triangle.maxDistance);
        double points = maxAbsDifference(square.points, triangle.points);
        System.out.printf("triangle vs square: points %.3g, stress %.3g relative, SPIDAL's %.3g relative%n", points,
                Math.abs(square.normalizedStress - triangle.normalizedStress) / square.normalizedStress,
                Math.abs(square.spidalStress - triangle.spidalStress) / square.spidalStress);
        assertTrue(points < 1e-6, "points differ by " + points);
        assertEquals(square.normalizedStress, triangle.normalizedStress, 1e-8 * square.normalizedStress);
        assertEquals(square.spidalStress, triangle.spidalStress, 1e-8 * square.spidalStress);
    }

    static MdsResult overStores(Path directory, int tasks, MdsOptions options) throws Exception {
        try (RowStoreReader reader = new RowStoreReader(directory, BLOCK_ROWS, N)) {
            return inTasks(tasks, sync -> new DaMds(reader, N, directory, options, sync));
        }
    }

    static MdsResult overSquare(Path file, int tasks, MdsOptions options) throws Exception {
        return inTasks(tasks, sync -> new DaMds(file, N, ByteOrder.LITTLE_ENDIAN, Weighting.unit(), options, sync));
    }

    @Test
    void unitWeightsGiveTheSquareFilesRunInOneTaskAndTwo() throws Exception {
        MdsOptions options = new MdsOptions().seed(4);
        MdsResult square = overSquare(squareFile, 1, options);
        assertTrue(square.closedForm);
        for (int tasks = 1; tasks <= 2; tasks++) {
            assertSameRun(square, overStores(stores, tasks, options));
        }
        assertSameRun(overSquare(squareFile, 2, options), overStores(stores, 2, options));
    }

    @Test
    void missingDistancesGiveTheSquareFilesRunThroughConjugateGradients() throws Exception {
        MdsOptions options = new MdsOptions().seed(4).maxTemperatureLoops(30);
        MdsResult square = overSquare(holesFile, 1, options);
        assertFalse(square.closedForm);
        assertTrue(square.missingDistances > N, "" + square.missingDistances);
        for (int tasks = 1; tasks <= 2; tasks++) {
            assertSameRun(square, overStores(holeStores, tasks, options));
        }
    }

    @Test
    void spidalsUpdateAndFixedPointsCarryOver() throws Exception {
        MdsOptions spidal = new MdsOptions().seed(2).maxTemperatureLoops(20).update(MdsOptions.Update.SPIDAL);
        assertSameRun(overSquare(squareFile, 1, spidal), overStores(stores, 2, spidal));
        boolean[] fixed = new boolean[N];
        double[] at = new double[N * 3];
        for (int i = 0; i < N; i += 10) {
            fixed[i] = true;
            at[3 * i] = 0.01 * i;
            at[3 * i + 1] = 0.3;
        }
        MdsOptions pinned = new MdsOptions().seed(2).maxTemperatureLoops(20).fixed(fixed, at);
        MdsResult square = overSquare(squareFile, 1, pinned);
        assertFalse(square.closedForm);
        assertSameRun(square, overStores(stores, 2, pinned));
    }

    @Test
    void aDimensionOtherThanThreeRunsTheScalarPass() throws Exception {
        MdsOptions options = new MdsOptions().dim(2).seed(6).maxTemperatureLoops(20);
        assertSameRun(overSquare(squareFile, 1, options), overStores(stores, 2, options));
    }

    /** The row stores' value files concatenated in block order: the triangle of 4 x 32 = 128 points, N of them read. */
    static Path concatenatedBlocks(Path directory, String name) throws Exception {
        Path file = dir.resolve(name);
        try (OutputStream out = Files.newOutputStream(file)) {
            for (int b = 0; b * BLOCK_ROWS < N; b++) {
                out.write(Files.readAllBytes(directory.resolve(RowStoreLayout.fileBase(b) + RowStoreLayout.VALUES)));
            }
        }
        return file;
    }

    @Test
    void aTriangleFileOfTheBlocksConcatenatedGivesTheSquareFilesRun() throws Exception {
        Path file = concatenatedBlocks(holeStores, "holes.tri");
        assertEquals(TriangleFile.bytes(128), Files.size(file));
        MdsOptions options = new MdsOptions().seed(4).maxTemperatureLoops(10);
        MdsResult square = overSquare(holesFile, 1, options);
        try (TriangleFile triangle = new TriangleFile(file, N)) {
            assertSameRun(square, inTasks(2, sync -> new DaMds(triangle, N, file, options, sync)));
            short[] none = new short[0];
            triangle.copy(0, 0, 0, none); // row 0 holds nothing: an empty copy, as from the row stores
            triangle.copy(N - 1, 5, 5, none);
        }
        Path cut = dir.resolve("cut.tri");
        Files.write(cut, Arrays.copyOf(Files.readAllBytes(file), (int) TriangleFile.bytes(N) - 2));
        BadInputException e = assertThrows(BadInputException.class, () -> new TriangleFile(cut, N));
        assertTrue(e.getMessage().contains(TriangleFile.bytes(N) - 2 + " bytes, not the lower triangle of N = " + N),
                e.getMessage());
        Path small = dir.resolve("small.tri");
        Files.write(small, Arrays.copyOf(Files.readAllBytes(file), (int) TriangleFile.bytes(N - 1)));
        assertThrows(BadInputException.class, () -> new TriangleFile(small, N), "a triangle of fewer points");
    }

    @Test
    void blocksHoldAboutTheSamePairs() {
        int[] starts = RowPartition.triangleStarts(1000, 4);
        for (int b = 0; b < 4; b++) {
            long pairs = triangle(starts[b + 1]) - triangle(starts[b]);
            assertEquals(triangle(1000) / 4.0, pairs, 0.01 * triangle(1000), "block " + b);
        }
        int[] tiny = RowPartition.triangleStarts(3, 3);
        assertEquals(List.of(0, 1, 2, 3), List.of(tiny[0], tiny[1], tiny[2], tiny[3]), "every block a row");
    }

    private static long triangle(int rows) {
        return (long) rows * (rows - 1) / 2;
    }

    @Test
    void optionsTheTriangleCannotRunAreRefusedByName() {
        LowerRows none = LowerRows.of(DistanceSource.matrixFile(squareFile, N, ByteOrder.LITTLE_ENDIAN).all());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new DaMds(none, N, null,
                new MdsOptions().classicalInit(), SingleProcessSync.INSTANCE));
        assertTrue(e.getMessage().contains("classical"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> new DaMds(none, N, null,
                new MdsOptions().localBlocks(2), SingleProcessSync.INSTANCE));
        assertTrue(e.getMessage().contains("localBlocks"), e.getMessage());
    }

    @Test
    void aMissingRowOrAnotherBlockSizeIsRefusedNamingTheStore() throws Exception {
        Path out = dir.resolve("out");
        BadInputException missing = assertThrows(BadInputException.class, () -> MdsJob.runOnRowStores(stores,
                BLOCK_ROWS, N + 1, new MdsOptions(), SingleProcessSync.INSTANCE, out));
        assertEquals(BadInputException.Input.ROW_STORE, missing.input());
        assertTrue(missing.getMessage().contains("missing [" + N + "]"), missing.getMessage());
        for (int blockRows : new int[] {BLOCK_ROWS / 2, BLOCK_ROWS * 2}) {
            BadInputException size = assertThrows(BadInputException.class, () -> MdsJob.runOnRowStores(stores,
                    blockRows, N, new MdsOptions(), SingleProcessSync.INSTANCE, out));
            assertTrue(size.getMessage().contains("blocks of " + BLOCK_ROWS + " rows (block-000000.rows), not of "
                    + blockRows), size.getMessage());
        }
        BadInputException nowhere = assertThrows(BadInputException.class, () -> MdsJob.runOnRowStores(
                dir.resolve("nowhere"), BLOCK_ROWS, N, new MdsOptions(), SingleProcessSync.INSTANCE, out));
        assertTrue(nowhere.getMessage().contains("does not exist"), nowhere.getMessage());
    }

    @Test
    void anIterationAllocatesNothingInSteadyState() {
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        RowKernel.warmUpVectors(120_000);
        try (RowStoreReader reader = new RowStoreReader(holeStores, BLOCK_ROWS, N)) {
            for (int dim : new int[] {3, 2}) {
                DaMds engine = new DaMds(reader, N, holeStores, new MdsOptions().dim(dim), SingleProcessSync.INSTANCE);
                engine.prepare();
                for (int i = 0; i < 200; i++) {
                    engine.iterate(0.05);
                }
                // steady state includes the JIT: earlier runs in this JVM (other call sites, threads) can leave the
                // vector pass deoptimised for a while on a loaded machine, and interpreted it allocates its vectors;
                // garbage of this engine's own would show in every window
                long id = Thread.currentThread().getId();
                long perIteration = Long.MAX_VALUE;
                for (int window = 0; window < 30 && perIteration >= 64; window++) {
                    long before = threads.getThreadAllocatedBytes(id);
                    for (int i = 0; i < 50; i++) {
                        engine.iterate(0.05);
                    }
                    perIteration = (threads.getThreadAllocatedBytes(id) - before) / 50;
                }
                assertTrue(perIteration < 64, "dim " + dim + ": " + perIteration + " bytes per iteration");
            }
        }
    }
}
