package io.meridian.pwc;

import io.meridian.engine.BadInputException;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.meridian.collective.SingleProcessSync;
import io.meridian.collective.ThreadedBlockSync;
import io.meridian.matrix.RowBlock;
import io.meridian.matrix.RowPartition;
import io.meridian.synthetic.SyntheticDataset;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** DA-PWC on small synthetic blobs (the engine helper's generator), one block and two blocks in two threads. */
class PwcEngineTest {
    private static final int N = 400;

    @TempDir
    static Path dir;
    static SyntheticDataset blobs;
    static Path matrix;

    @BeforeAll
    static void data() throws Exception {
        blobs = SyntheticDataset.blobs(N, 6, 4, 1.0, 11);
        matrix = dir.resolve("blobs.bin");
        blobs.writeMatrix(matrix, ByteOrder.LITTLE_ENDIAN);
    }

    static PwcResult runOneBlock(PwcSettings settings) {
        RowPartition partition = RowPartition.of(N, 1);
        RowBlock block = RowBlock.map(BadInputException.Input.DISTANCES, matrix, ByteOrder.LITTLE_ENDIAN, partition, 0);
        return new PwcEngine(block, partition, SingleProcessSync.INSTANCE, settings, null).run();
    }

    static int[] truth() {
        int[] t = new int[N];
        for (int i = 0; i < N; i++) {
            t[i] = blobs.label(i);
        }
        return t;
    }

    @Test
    void separatedBlobsGiveTheirClustersExactlyAndStopBelowMaxClusters() {
        PwcResult r = runOneBlock(PwcSettings.builder().maxClusters(8).build());
        assertEquals(4, r.clusters(), "sizes " + Arrays.toString(r.sizes()));
        assertEquals(1.0, Ari.adjustedRandIndex(truth(), r.labels()), 1e-12);
        assertEquals(N, Arrays.stream(r.sizes()).sum());
        assertTrue(r.emIterations() > 10 && r.splits() == 3, "EM " + r.emIterations() + " splits " + r.splits());
        assertTrue(r.finalTemperature() < r.initialTemperature());
        int[] labels = r.labels();
        int[] centers = r.centers();
        for (int l = 0; l < r.clusters(); l++) {
            assertEquals(l, labels[centers[l]], "the center of cluster " + l + " is one of its members");
            assertEquals(bruteForceCenter(labels, l), centers[l], "center of cluster " + l);
        }
    }

    @Test
    void dapwcsDuplicatedClusterSplitTestAlsoFindsTheseBlobs() {
        PwcResult r = runOneBlock(PwcSettings.builder().maxClusters(8).splitTest(PwcSettings.SplitTest.DUPLICATED).build());
        assertEquals(4, r.clusters(), "sizes " + Arrays.toString(r.sizes()));
        assertEquals(1.0, Ari.adjustedRandIndex(truth(), r.labels()), 1e-12);
        assertTrue(r.duplicateEmIterations() > 0, "EM runs with a duplicated cluster");
    }

    @Test
    void maxClustersBoundsTheSplits() {
        PwcResult one = runOneBlock(PwcSettings.builder().maxClusters(1).build());
        assertEquals(1, one.clusters());
        assertEquals(0, one.splits());
        PwcResult two = runOneBlock(PwcSettings.builder().maxClusters(2).build());
        assertEquals(2, two.clusters());
    }

    @Test
    void repeatableForAGivenSeed() {
        PwcSettings settings = PwcSettings.builder().maxClusters(6).seed(42L).build();
        PwcResult a = runOneBlock(settings);
        PwcResult b = runOneBlock(settings);
        assertArrayEquals(a.labels(), b.labels());
        assertEquals(a.emIterations(), b.emIterations());
        assertEquals(a.powerIterations(), b.powerIterations());
        assertEquals(a.finalTemperature(), b.finalTemperature(), 0.0);
        assertEquals(a.hamiltonian(), b.hamiltonian(), 0.0);
    }

    @Test
    void twoRowBlocksSynchronisedThroughBlockSyncAgreeWithOneBlock() throws Exception {
        twoBlocksAgreeWithOne(PwcSettings.builder().maxClusters(6).build());
    }

    @Test
    void dapwcModeInTwoRowBlocksAgreesWithOneBlock() throws Exception {
        // duplicated-cluster EM runs in the trial state, a replayed run and the state the test leaves, in every block
        PwcResult r = twoBlocksAgreeWithOne(PwcSettings.builder().dapwc().maxClusters(6).build());
        assertTrue(r.duplicateEmIterations() > 0, "split tests ran EM with a duplicated cluster");
    }

    private static PwcResult twoBlocksAgreeWithOne(PwcSettings settings) throws Exception {
        PwcResult single = runOneBlock(settings);
        int blocks = 2;
        RowPartition partition = RowPartition.of(N, blocks);
        ThreadedBlockSync.Group threaded = new ThreadedBlockSync.Group(blocks);
        ExecutorService pool = Executors.newFixedThreadPool(blocks);
        try {
            List<Future<PwcResult>> futures = new ArrayList<>();
            for (int b = 0; b < blocks; b++) {
                int block = b;
                futures.add(pool.submit(() -> new PwcEngine(
                        RowBlock.map(BadInputException.Input.DISTANCES, matrix, ByteOrder.LITTLE_ENDIAN, partition, block), partition,
                        threaded.member(block), settings, null).run()));
            }
            PwcResult first = futures.get(0).get(120, TimeUnit.SECONDS);
            PwcResult second = futures.get(1).get(120, TimeUnit.SECONDS);
            assertArrayEquals(first.labels(), second.labels(), "every block ends with the same global labels");
            assertArrayEquals(first.centers(), second.centers());
            assertArrayEquals(first.memberships(), second.memberships(), 0.0, "and the same frozen state");
            assertArrayEquals(first.softSizes(), second.softSizes(), 0.0);
            assertArrayEquals(first.epsilonOffsets(), second.epsilonOffsets(), 0.0);
            assertArrayEquals(single.memberships(), first.memberships(), 1e-6, "as one block");
            assertEquals(single.clusters(), first.clusters());
            assertEquals(1.0, Ari.adjustedRandIndex(single.labels(), first.labels()), 1e-12);
            assertEquals(single.emIterations(), first.emIterations(), 3, "same schedule up to rounding of sums");
            return first;
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void clustersUnderTheMinimumSizeAreRemovedAndTheirPointsReassigned() throws Exception {
        // three blobs of 100 points and a far group of 12: the group gets its own cluster, which is then too small
        java.util.Random random = new java.util.Random(5);
        int dim = 4;
        int n = 312;
        double[] coordinates = new double[n * dim];
        double[][] centres = {{0.2, 0.2, 0.2, 0.2}, {0.8, 0.2, 0.8, 0.2}, {0.2, 0.8, 0.2, 0.8}, {3, 3, 3, 3}};
        int[] group = new int[n];
        for (int i = 0; i < n; i++) {
            group[i] = i < 300 ? i % 3 : 3;
            for (int d = 0; d < dim; d++) {
                coordinates[i * dim + d] = centres[group[i]][d] + 0.03 * random.nextGaussian();
            }
        }
        Path file = dir.resolve("small-group.bin");
        SyntheticDataset.of(coordinates, dim).writeMatrix(file, ByteOrder.LITTLE_ENDIAN);
        RowPartition partition = RowPartition.of(n, 1);
        PwcResult r = new PwcEngine(RowBlock.map(BadInputException.Input.DISTANCES, file, ByteOrder.LITTLE_ENDIAN, partition, 0), partition,
                SingleProcessSync.INSTANCE, PwcSettings.builder().maxClusters(8).build(), null).run();
        assertEquals(1, r.removedClusters(), "sizes " + Arrays.toString(r.sizes()));
        assertEquals(3, r.clusters(), "sizes " + Arrays.toString(r.sizes()));
        int[] labels = r.labels();
        int[] firstThree = Arrays.copyOf(labels, 300);
        assertEquals(1.0, Ari.adjustedRandIndex(Arrays.copyOf(group, 300), firstThree), 1e-12);
        for (int i = 300; i < n; i++) {
            assertEquals(labels[300], labels[i], "the far group's points end in one cluster");
        }
    }

    private static int bruteForceCenter(int[] labels, int cluster) {
        RowBlock all = RowBlock.mapAll(BadInputException.Input.DISTANCES, matrix, N, ByteOrder.LITTLE_ENDIAN);
        int best = -1;
        double bestSum = Double.MAX_VALUE;
        for (int i = 0; i < N; i++) {
            if (labels[i] != cluster) {
                continue;
            }
            double sum = 0;
            for (int j = 0; j < N; j++) {
                if (labels[j] == cluster) {
                    sum += all.raw(i, j);
                }
            }
            if (sum < bestSum) {
                bestSum = sum;
                best = i;
            }
        }
        return best;
    }

    @org.junit.jupiter.api.Test
    void coolingFactorsThatNeverCoolAreRefused() {
        for (double f : new double[] {1, 1.5, 0, -0.5, Double.NaN}) {
            IllegalArgumentException e = org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
                    () -> PwcSettings.builder().initialCooling(f), "initialCooling " + f);
            org.junit.jupiter.api.Assertions.assertTrue(e.getMessage().contains("must be > 0 and < 1"), e.getMessage());
            org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
                    () -> PwcSettings.builder().fineCooling(f), "fineCooling " + f);
            org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
                    () -> PwcSettings.builder().freezeCooling(f), "freezeCooling " + f);
        }
    }
}
