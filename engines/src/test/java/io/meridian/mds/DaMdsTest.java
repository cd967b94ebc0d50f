package io.meridian.mds;

import static io.meridian.mds.Fixtures.maxAbsDifference;
import static io.meridian.mds.Fixtures.run;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.meridian.collective.SingleProcessSync;
import io.meridian.collective.ThreadedBlockSync;
import io.meridian.matrix.ShortMatrixFormat;
import io.meridian.matrix.Weighting;
import io.meridian.synthetic.SyntheticDataset;
import java.lang.management.ManagementFactory;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DaMdsTest {
    static final int N = 120;

    @TempDir
    static Path dir;
    static SyntheticDataset helix;
    static double helixScale;
    static Path helixFile;
    static SyntheticDataset blobs;
    static Path blobsFile;
    static SyntheticDataset uniform;
    static Path uniformFile;

    @BeforeAll
    static void data() {
        helix = SyntheticDataset.of(Fixtures.helix(N), 3);
        helixScale = helix.maxDistance();
        helixFile = Fixtures.write(dir, "helix.bin", helix);
        blobs = SyntheticDataset.blobs(150, 8, 5, 1.0, 7);
        blobsFile = Fixtures.write(dir, "blobs.bin", blobs);
        uniform = SyntheticDataset.uniform(150, 8, 7);
        uniformFile = Fixtures.write(dir, "uniform.bin", uniform);
    }

    @Test
    void recoversAKnown3dConfiguration() {
        MdsResult r = run(helixFile, N, new MdsOptions().seed(3).threshold(1e-12));
        // what is left is the 16-bit rounding of the distances (half a step, 1.5e-5, at most)
        assertTrue(r.normalizedStress < 1e-9, "stress " + r.normalizedStress);
        double error = Fixtures.distanceError(r, helix, 1, helixScale);
        assertTrue(error < 1e-4, "largest distance error " + error);
        assertTrue(r.closedForm);
        assertTrue(r.temperatureLoops > 10 && r.smacofIterations >= r.temperatureLoops);
    }

    /**
     * SPIDAL's update B(X)X / (N + 1) converges to the Guttman solution shrunk by N / (N + 1); with weights (V + I) by
     * about sum w / (sum w + 1) per row. The default (the Guttman transform) recovers the configuration either way.
     */
    @Test
    void spidalsUpdateShrinksTheLayoutAndTheDefaultDoesNot() {
        MdsOptions spidal = new MdsOptions().seed(3).threshold(1e-12).update(MdsOptions.Update.SPIDAL);
        MdsResult r = run(helixFile, N, spidal);
        assertTrue(r.closedForm);
        double shrunk = Fixtures.distanceError(r, helix, 1, helixScale);
        double scaledBack = Fixtures.distanceError(r, helix, (N + 1.0) / N, helixScale);
        assertTrue(shrunk > 0.5 / (N + 1), "largest distance error " + shrunk);
        assertTrue(scaledBack < 1e-4, "scaled by (N + 1) / N, largest error " + scaledBack);

        Weighting sammon = Weighting.unit().withSammon(true);
        double spidalSammon = Fixtures.distanceError(run(helixFile, N, sammon, spidal), helix, 1, helixScale);
        MdsResult guttman = run(helixFile, N, sammon, new MdsOptions().seed(3).threshold(1e-12));
        assertFalse(guttman.closedForm);
        double guttmanSammon = Fixtures.distanceError(guttman, helix, 1, helixScale);
        assertTrue(guttmanSammon < 1e-3, "Guttman, Sammon weights: largest distance error " + guttmanSammon);
        assertTrue(spidalSammon > 3 * guttmanSammon, "SPIDAL's " + spidalSammon + " vs " + guttmanSammon);
    }

    @Test
    void annealingEndsNoWorseThanPlainSmacofAndBetterWhereSmacofSticks() {
        Object[][] sets = {{helixFile, N}, {blobsFile, 150}, {uniformFile, 150}};
        double bestGain = 0;
        for (Object[] set : sets) {
            for (long seed = 1; seed <= 3; seed++) {
                Path file = (Path) set[0];
                int n = (Integer) set[1];
                double smacof = run(file, n, new MdsOptions().seed(seed).annealing(false)).normalizedStress;
                double da = run(file, n, new MdsOptions().seed(seed)).normalizedStress;
                assertTrue(da <= smacof + 1e-12, file.getFileName() + " seed " + seed + ": DA " + da + " > SMACOF " + smacof);
                bestGain = Math.max(bestGain, smacof - da);
            }
        }
        // blobs in 8-D from seed 3: plain SMACOF stops in a local minimum (0.0058 against 0.0032)
        double stuck = run(blobsFile, 150, new MdsOptions().seed(3).annealing(false)).normalizedStress;
        double annealed = run(blobsFile, 150, new MdsOptions().seed(3)).normalizedStress;
        assertTrue(annealed < 0.8 * stuck, "DA " + annealed + " vs stuck SMACOF " + stuck);
        assertTrue(bestGain > 1e-3);
    }

    @Test
    void kRowBlocksInOneProcessEqualOneBlock() {
        // a few iterations: equal to rounding
        MdsResult shortOne = run(uniformFile, 150, new MdsOptions().seed(2).maxTemperatureLoops(2).maxIterationsPerTemperature(3));
        MdsResult shortFour = run(uniformFile, 150, new MdsOptions().seed(2).maxTemperatureLoops(2).maxIterationsPerTemperature(3).localBlocks(4));
        assertTrue(maxAbsDifference(shortOne.points, shortFour.points) < 1e-12, "" + maxAbsDifference(shortOne.points, shortFour.points));
        MdsResult one = run(uniformFile, 150, new MdsOptions().seed(2));
        MdsResult four = run(uniformFile, 150, new MdsOptions().seed(2).localBlocks(4));
        assertEquals(one.smacofIterations, four.smacofIterations);
        assertEquals(one.temperatureLoops, four.temperatureLoops);
        // a whole run: the same schedule and result, up to the rounding of the sums, amplified over ~300 iterations
        assertTrue(maxAbsDifference(one.points, four.points) < 1e-4, "" + maxAbsDifference(one.points, four.points));
        assertEquals(one.normalizedStress, four.normalizedStress, 1e-9);

        Weighting sammon = Weighting.unit().withSammon(true);
        MdsResult w1 = run(blobsFile, 150, sammon, new MdsOptions().seed(2).maxTemperatureLoops(20));
        MdsResult w3 = run(blobsFile, 150, sammon, new MdsOptions().seed(2).maxTemperatureLoops(20).localBlocks(3));
        assertEquals(w1.smacofIterations, w3.smacofIterations);
        assertEquals(w1.cgIterations, w3.cgIterations);
        assertTrue(maxAbsDifference(w1.points, w3.points) < 1e-4, "" + maxAbsDifference(w1.points, w3.points));
    }

    @Test
    void blocksOwnedBySeparateEnginesThatOnlyTalkThroughBlockSyncMatchOneProcess() throws Exception {
        for (Weighting weighting : new Weighting[] {Weighting.unit(), Weighting.unit().withSammon(true)}) {
            MdsOptions options = new MdsOptions().seed(4).maxTemperatureLoops(25);
            MdsResult single = run(blobsFile, 150, weighting, options);
            int p = 3;
            ThreadedBlockSync.Group group = new ThreadedBlockSync.Group(p);
            ExecutorService pool = Executors.newFixedThreadPool(p);
            try {
                List<Future<MdsResult>> results = new ArrayList<>();
                for (int b = 0; b < p; b++) {
                    ThreadedBlockSync sync = group.member(b);
                    results.add(pool.submit(() -> new DaMds(blobsFile, 150, ByteOrder.LITTLE_ENDIAN, weighting,
                            new MdsOptions().seed(4).maxTemperatureLoops(25), sync).run()));
                }
                for (Future<MdsResult> f : results) {
                    MdsResult r = f.get();
                    assertEquals(single.smacofIterations, r.smacofIterations);
                    assertEquals(single.cgIterations, r.cgIterations);
                    assertTrue(maxAbsDifference(single.points, r.points) < 1e-4, "" + maxAbsDifference(single.points, r.points));
                    assertEquals(single.normalizedStress, r.normalizedStress, 1e-9);
                }
            } finally {
                pool.shutdownNow();
            }
        }
    }

    @Test
    void weightsOfOneGiveTheUnitResultThroughConjugateGradients() {
        MdsOptions options = new MdsOptions().seed(5).maxTemperatureLoops(15);
        MdsResult unit = run(uniformFile, 150, options);
        double[] ones = new double[150];
        java.util.Arrays.fill(ones, 1);
        MdsResult points = run(uniformFile, 150, Weighting.points(ones), options);
        assertFalse(points.closedForm);
        assertTrue(points.cgIterations >= 2 * points.smacofIterations);
        assertEquals(unit.smacofIterations, points.smacofIterations);
        assertTrue(maxAbsDifference(unit.points, points.points) < 1e-6, "" + maxAbsDifference(unit.points, points.points));

        Path allOnes = Fixtures.writeSymmetric(dir, "ones.bin", 150, (i, j) -> ShortMatrixFormat.SCALE);
        MdsResult matrix = run(uniformFile, 150, Weighting.matrix(allOnes, ByteOrder.LITTLE_ENDIAN), options);
        assertTrue(maxAbsDifference(unit.points, matrix.points) < 1e-6);
    }

    @Test
    void hugePointWeightsGiveTheLayoutOfTheirRatios() {
        MdsOptions options = new MdsOptions().seed(5).maxTemperatureLoops(15);
        double[] ones = new double[150];
        double[] huge = new double[150];
        for (int i = 0; i < 150; i++) {
            ones[i] = 1 + i % 3;
            huge[i] = 1e300 * (1 + i % 3); // squared, as a pair weight, they overflowed to NaN
        }
        MdsResult small = run(uniformFile, 150, Weighting.points(ones), options);
        MdsResult large = run(uniformFile, 150, Weighting.points(huge), options);
        assertTrue(Double.isFinite(large.normalizedStress), "stress " + large.normalizedStress);
        assertEquals(small.normalizedStress, large.normalizedStress, 1e-12);
        assertTrue(maxAbsDifference(small.points, large.points) < 1e-9, "" + maxAbsDifference(small.points, large.points));
    }

    @Test
    void aLayoutThatIsNotFiniteIsRefusedAndNothingIsWritten() throws Exception {
        MdsResult good = run(uniformFile, 150, new MdsOptions().seed(5).maxTemperatureLoops(3));
        MdsJob.requireFinite(good, dir.resolve("out"));
        good.points[3 * 7 + 1] = Double.NaN;
        NonFiniteResultException e = org.junit.jupiter.api.Assertions.assertThrows(NonFiniteResultException.class,
                () -> MdsJob.requireFinite(good, dir.resolve("out")));
        assertTrue(e.getMessage().contains("point 7 has coordinate 1 = NaN"), e.getMessage());
        assertTrue(e.getMessage().contains("nothing was written"), e.getMessage());
    }

    @Test
    void scheduleFactorsThatWouldNeverEndAreRefused() {
        for (double alpha : new double[] {0, 1, 1.5, Double.NaN}) {
            org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
                    () -> new MdsOptions().alpha(alpha), "alpha " + alpha);
        }
        for (double f : new double[] {0, -1, Double.NaN, Double.POSITIVE_INFINITY}) {
            org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
                    () -> new MdsOptions().tminFactor(f), "tminFactor " + f);
        }
        // the smallest factor accepted still ends: the temperature leaves the normal range, then goes to zero
        MdsResult tiny = run(uniformFile, 150, new MdsOptions().seed(5).tminFactor(Double.MIN_VALUE));
        assertTrue(Double.isFinite(tiny.normalizedStress));
        assertTrue(tiny.temperatureLoops < 20_000, "loops " + tiny.temperatureLoops);
    }

    @Test
    void aZeroWeightActsLikeAMissingDistance() {
        int n = N;
        java.util.function.IntBinaryOperator dropped = (i, j) -> i != j && (i * 7 + j * 3) % 10 == 0 ? 1 : 0;
        Path weights = Fixtures.writeSymmetric(dir, "w-drop.bin", n, (i, j) -> dropped.applyAsInt(i, j) == 1 ? 0 : ShortMatrixFormat.SCALE);
        Path holes = Fixtures.writeSymmetric(dir, "helix-holes.bin", n, (i, j) ->
                dropped.applyAsInt(i, j) == 1 ? -1 : ShortMatrixFormat.encode(helix.distance(i, j) / helixScale));
        MdsOptions options = new MdsOptions().seed(2).maxTemperatureLoops(30);
        MdsResult byWeight = run(helixFile, n, Weighting.matrix(weights, ByteOrder.LITTLE_ENDIAN), options);
        MdsResult byMissing = run(holes, n, options);
        assertTrue(byMissing.missingDistances > n);
        assertTrue(maxAbsDifference(byWeight.points, byMissing.points) < 1e-9);
    }

    @Test
    void missingDistancesAreSkippedAndTheConfigurationIsStillRecovered() {
        Path holes = Fixtures.writeSymmetric(dir, "helix-holes2.bin", N, (i, j) ->
                i != j && (i * 13 + j * 5) % 9 == 0 ? -1 : ShortMatrixFormat.encode(helix.distance(i, j) / helixScale));
        MdsResult r = run(holes, N, new MdsOptions().seed(3));
        assertFalse(r.closedForm);
        assertTrue(r.missingDistances > 1000, "" + r.missingDistances);
        assertTrue(r.normalizedStress < 1e-3, "stress " + r.normalizedStress);
        // the skipped pairs come out right too: the known configuration is recovered
        double error = Fixtures.distanceError(r, helix, 1, helixScale);
        assertTrue(error < 0.005, "largest distance error " + error);
    }

    @Test
    void sammonWeightingStillRecoversAnExactConfiguration() {
        MdsResult unit = run(helixFile, N, new MdsOptions().seed(3));
        MdsResult sammon = run(helixFile, N, Weighting.unit().withSammon(true), new MdsOptions().seed(3));
        assertTrue(sammon.normalizedStress < 1e-3, "stress " + sammon.normalizedStress);
        assertTrue(maxAbsDifference(unit.points, sammon.points) > 1e-6);
    }

    @Test
    void fixedPointsAreHeldAndTheRestFitsAroundThem() {
        boolean[] fixed = new boolean[N];
        double[] given = new double[N * 3];
        for (int i = 0; i < N; i += 6) {
            fixed[i] = true;
            for (int k = 0; k < 3; k++) {
                given[i * 3 + k] = helix.coordinate(i, k) / helixScale;
            }
        }
        MdsResult r = run(helixFile, N, new MdsOptions().seed(3).threshold(1e-9).fixed(fixed, given));
        double worst = 0;
        for (int i = 0; i < N; i++) {
            for (int k = 0; k < 3; k++) {
                double truth = helix.coordinate(i, k) / helixScale;
                if (fixed[i]) {
                    assertEquals(given[i * 3 + k], r.coordinate(i, k), 0.0);
                } else {
                    worst = Math.max(worst, Math.abs(r.coordinate(i, k) - truth));
                }
            }
        }
        // anchored, the free points land at their true positions (no rotation left to choose)
        assertTrue(worst < 0.005, "largest error of a free point " + worst);
    }

    @Test
    void classicalInitialLayoutIsAlreadyTheAnswerForEuclideanData() {
        DaMds engine = new DaMds(helixFile, N, ByteOrder.LITTLE_ENDIAN, Weighting.unit(),
                new MdsOptions().classicalInit(), SingleProcessSync.INSTANCE);
        engine.prepare();
        double stressOfClassical = engine.finalStress()[0];
        assertTrue(stressOfClassical < 1e-7, "stress of the classical layout " + stressOfClassical);
        assertTrue(ClassicalMds.iterations < 30, "subspace iterations: " + ClassicalMds.iterations);

        DaMds random = new DaMds(helixFile, N, ByteOrder.LITTLE_ENDIAN, Weighting.unit(), new MdsOptions().seed(1),
                SingleProcessSync.INSTANCE);
        random.prepare();
        assertTrue(random.finalStress()[0] > 1000 * stressOfClassical);
    }

    @Test
    void aGivenInitialLayoutIsUsed() {
        double[] truth = new double[N * 3];
        for (int i = 0; i < truth.length; i++) {
            truth[i] = Fixtures.helix(N)[i] / helixScale;
        }
        DaMds engine = new DaMds(helixFile, N, ByteOrder.LITTLE_ENDIAN, Weighting.unit(), new MdsOptions().initial(truth),
                SingleProcessSync.INSTANCE);
        engine.prepare();
        assertTrue(engine.finalStress()[0] < 1e-8, "" + engine.finalStress()[0]);
    }

    @Test
    void repeatableBySeed() {
        MdsOptions a = new MdsOptions().seed(11).maxTemperatureLoops(10);
        assertArrayEquals(run(blobsFile, 150, a).points, run(blobsFile, 150, new MdsOptions().seed(11).maxTemperatureLoops(10)).points);
        assertTrue(maxAbsDifference(run(blobsFile, 150, a).points,
                run(blobsFile, 150, new MdsOptions().seed(12).maxTemperatureLoops(10)).points) > 1e-3);
    }

    @Test
    void bigEndianFilesGiveTheSameResult() throws Exception {
        Path big = dir.resolve("blobs-be.bin");
        blobs.writeMatrix(big, ByteOrder.BIG_ENDIAN);
        MdsOptions options = new MdsOptions().seed(1).maxTemperatureLoops(8);
        MdsResult little = run(blobsFile, 150, options);
        MdsResult bigResult = new DaMds(big, 150, ByteOrder.BIG_ENDIAN, Weighting.unit(), options, SingleProcessSync.INSTANCE).run();
        assertArrayEquals(little.points, bigResult.points);
    }

    @Test
    void anIterationAllocatesNothingInSteadyState() {
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        // steady state includes the JIT: until C2 has compiled the vector pass, its warm-up allocates (a slow compile
        // on a loaded machine must not fail this test; RowKernelTest checks that the compile happens)
        RowKernel.warmUpVectors(120_000);
        for (Weighting weighting : new Weighting[] {Weighting.unit(), Weighting.unit().withSammon(true)}) {
            DaMds engine = new DaMds(blobsFile, 150, ByteOrder.LITTLE_ENDIAN, weighting, new MdsOptions().localBlocks(2),
                    SingleProcessSync.INSTANCE);
            engine.prepare();
            for (int i = 0; i < 200; i++) {
                engine.iterate(0.05);
            }
            long id = Thread.currentThread().getId();
            long before = threads.getThreadAllocatedBytes(id);
            for (int i = 0; i < 100; i++) {
                engine.iterate(0.05);
            }
            long perIteration = (threads.getThreadAllocatedBytes(id) - before) / 100;
            assertTrue(perIteration < 64, weighting.kind() + ": " + perIteration + " bytes per iteration");
        }
    }
}
