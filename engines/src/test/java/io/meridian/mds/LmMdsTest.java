package io.meridian.mds;

import static io.meridian.mds.Fixtures.maxAbsDifference;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.meridian.collective.SingleProcessSync;
import io.meridian.collective.ThreadedBlockSync;
import io.meridian.matrix.DistanceSource;
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

class LmMdsTest {
    static final int N = 120;
    static Path helixFile;
    static Path blobsFile;

    @TempDir
    static Path dir;

    @BeforeAll
    static void data() {
        helixFile = Fixtures.write(dir, "helix.bin", SyntheticDataset.of(Fixtures.helix(N), 3));
        blobsFile = Fixtures.write(dir, "blobs.bin", SyntheticDataset.blobs(150, 8, 5, 1.0, 7));
    }

    static LmResult lm(Path file, int n, Weighting weighting, MdsOptions options, LmOptions lm) {
        return new LmMds(DistanceSource.matrixFile(file, n, ByteOrder.LITTLE_ENDIAN), weighting, options, lm,
                SingleProcessSync.INSTANCE).run();
    }

    /**
     * The helix's distances are exact but for their 16-bit rounding, half a step (1.5e-5 of the largest) at most, so
     * the true layout's stress is below (1.5e-5)^2 / (mean delta^2 ~ 0.1) ~ 2e-9; LM must get there from a random
     * start (bound 1e-8; it ends at 2.4e-10 in 11 iterations).
     */
    @Test
    void exactlyEmbeddableDataReachesStressZero() {
        LmResult r = lm(helixFile, N, Weighting.unit(), new MdsOptions().seed(3),
                LmOptions.defaults().withMaxIterations(400));
        assertTrue(r.normalizedStress() < 1e-8, "stress " + r.normalizedStress() + " after " + r.iterations());
    }

    @Test
    void fixedPointsStayBitForBitFixed() {
        boolean[] fixed = new boolean[150];
        double[] at = new double[150 * 3];
        for (int i = 0; i < 150; i += 15) {
            fixed[i] = true;
            at[i * 3] = 0.1 * i / 150.0;
            at[i * 3 + 1] = -0.0;
            at[i * 3 + 2] = Math.PI / 10 * (i % 2);
        }
        for (int norm : new int[] {0, 2, 3, 4}) {
            LmResult r = lm(blobsFile, 150, Weighting.unit(), new MdsOptions().seed(2).fixed(fixed, at),
                    LmOptions.defaults().withChisqNorm(norm).withMaxIterations(30));
            for (int i = 0; i < 150; i++) {
                for (int k = 0; fixed[i] && k < 3; k++) {
                    assertEquals(Double.doubleToRawLongBits(at[i * 3 + k]),
                            Double.doubleToRawLongBits(r.points()[i * 3 + k]), "norm " + norm + " point " + i);
                }
            }
            assertTrue(r.normalizedStress() < r.startStress(), "norm " + norm + ": " + r.normalizedStress());
        }
    }

    /** LM from DA-MDS's random start ends within 1.01x of DA-MDS's stress (annealed, from that start). */
    @Test
    void reachesDaMdsStressOnBlobs() {
        for (long seed = 1; seed <= 3; seed++) {
            MdsOptions options = new MdsOptions().seed(seed);
            double da = Fixtures.run(blobsFile, 150, options).normalizedStress;
            LmResult r = lm(blobsFile, 150, Weighting.unit(), options, LmOptions.defaults());
            assertTrue(r.normalizedStress() <= 1.01 * da, "seed " + seed + ": LM " + r.normalizedStress()
                    + " (" + r.iterations() + " iterations, " + r.stopReason() + ") vs DA-MDS " + da);
        }
    }

    @Test
    void pointWeightsAreFittedAsDaMdsFitsThem() {
        double[] s = new double[150];
        for (int i = 0; i < 150; i++) {
            s[i] = 0.5 + (i % 3);
        }
        Weighting points = Weighting.points(s);
        MdsOptions options = new MdsOptions().seed(5);
        double da = Fixtures.run(blobsFile, 150, points, options).normalizedStress;
        LmResult r = lm(blobsFile, 150, points, options, LmOptions.defaults());
        assertTrue(r.normalizedStress() <= 1.01 * da, "LM " + r.normalizedStress() + " vs DA-MDS " + da);
    }

    /** A tenth of the helix's distances missing (-1): they have no term, and the rest still fit to stress ~0. */
    @Test
    void missingDistancesHaveNoTerm() {
        double[] h = Fixtures.helix(N);
        double max = 0;
        for (int i = 0; i < N; i++) {
            for (int j = 0; j < N; j++) {
                max = Math.max(max, distance(h, i, j));
            }
        }
        double scale = max;
        Path file = Fixtures.writeSymmetric(dir, "helix-missing.bin", N, (i, j) -> i != j && (i * 7 + j * 3) % 10 == 0
                ? -1 : (int) Math.round(distance(h, i, j) / scale * Short.MAX_VALUE));
        LmResult r = lm(file, N, Weighting.unit(), new MdsOptions().seed(3), LmOptions.defaults());
        assertTrue(r.normalizedStress() < 1e-8, "stress " + r.normalizedStress() + " after " + r.iterations());
        double da = Fixtures.run(file, N, new MdsOptions().seed(3)).normalizedStress;
        assertTrue(r.normalizedStress() <= 1.01 * da + 1e-9, "LM " + r.normalizedStress() + " vs DA-MDS " + da);
    }

    private static double distance(double[] x, int i, int j) {
        double s = 0;
        for (int k = 0; k < 3; k++) {
            double t = x[i * 3 + k] - x[j * 3 + k];
            s += t * t;
        }
        return Math.sqrt(s);
    }

    @Test
    void twoRanksSharingABlockSyncMatchOne() throws Exception {
        MdsOptions options = new MdsOptions().seed(4);
        LmOptions lmOptions = LmOptions.defaults().withMaxIterations(25);
        LmResult single = lm(blobsFile, 150, Weighting.unit(), options, lmOptions);
        int p = 2;
        ThreadedBlockSync.Group group = new ThreadedBlockSync.Group(p);
        ExecutorService pool = Executors.newFixedThreadPool(p);
        try {
            List<Future<LmResult>> results = new ArrayList<>();
            for (int b = 0; b < p; b++) {
                ThreadedBlockSync sync = group.member(b);
                results.add(pool.submit(() -> new LmMds(DistanceSource.matrixFile(blobsFile, 150,
                        ByteOrder.LITTLE_ENDIAN), Weighting.unit(), new MdsOptions().seed(4), lmOptions, sync).run()));
            }
            for (Future<LmResult> f : results) {
                LmResult r = f.get();
                assertEquals(single.iterations(), r.iterations());
                assertTrue(maxAbsDifference(single.points(), r.points()) < 1e-6,
                        "" + maxAbsDifference(single.points(), r.points()));
                assertEquals(single.normalizedStress(), r.normalizedStress(), 1e-9);
            }
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void badOptionsAreRefused() {
        LmOptions d = LmOptions.defaults();
        assertThrows(IllegalArgumentException.class, () -> d.withChisqNorm(5));
        assertThrows(IllegalArgumentException.class, () -> d.withMaxIterations(0));
        assertThrows(IllegalArgumentException.class, () -> new LmOptions(3, 10, 0, 0.001, 10, 1e-5, 0, 6));
        assertThrows(IllegalArgumentException.class, () -> new LmOptions(3, 10, 0.01, 0.001, 10, 1e-5, -1, 6));
        IllegalArgumentException sammon = assertThrows(IllegalArgumentException.class,
                () -> lm(blobsFile, 150, Weighting.unit().withSammon(true), new MdsOptions(), d));
        assertTrue(sammon.getMessage().contains("chisq-norm 2"));
    }

    /** Set-up allocates (the engine, DA-MDS's start); the iterations do not: 40 iterations cost what 10 do. */
    @Test
    void iterationsAllocateNothing() {
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long id = Thread.currentThread().getId();
        long[] bytes = new long[2];
        int[] iterations = {10, 40};
        for (int round = 0; round < 3; round++) {
            for (int k = 0; k < 2; k++) {
                LmOptions options = new LmOptions(3, iterations[k], 0.01, 0.001, 200, 1e-5, 0, 1000);
                LmMds engine = new LmMds(DistanceSource.matrixFile(blobsFile, 150, ByteOrder.LITTLE_ENDIAN),
                        Weighting.unit(), new MdsOptions().seed(6), options, SingleProcessSync.INSTANCE);
                long before = threads.getThreadAllocatedBytes(id);
                LmResult r = engine.run();
                bytes[k] = threads.getThreadAllocatedBytes(id) - before;
                assertEquals(iterations[k], r.iterations());
            }
        }
        long perIteration = (bytes[1] - bytes[0]) / 30;
        assertTrue(perIteration < 64, perIteration + " bytes per iteration");
    }
}
