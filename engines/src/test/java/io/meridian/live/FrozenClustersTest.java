package io.meridian.live;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.management.ThreadMXBean;
import io.meridian.collective.SingleProcessSync;
import io.meridian.matrix.DistanceSource;
import io.meridian.matrix.RowBlock;
import io.meridian.matrix.RowPartition;
import io.meridian.matrix.ShortMatrixFormat;
import io.meridian.matrix.ShortMatrixWriter;
import io.meridian.pwc.Ari;
import io.meridian.pwc.PwcEngine;
import io.meridian.pwc.PwcResult;
import io.meridian.pwc.PwcSettings;
import io.meridian.synthetic.SyntheticDataset;
import java.lang.management.ManagementFactory;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.Arrays;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * DA-PWC clusters the first N points of four Gaussian blobs; the last HELD_OUT points (five of each blob, as the
 * generator deals points round-robin) are clustered afterwards from the frozen state.
 */
class FrozenClustersTest {
    private static final int N = 400;
    private static final int HELD_OUT = 20;
    private static final int BLOBS = 4;
    private static final ByteOrder ORDER = ByteOrder.LITTLE_ENDIAN;

    @TempDir
    static Path dir;
    static SyntheticDataset blobs;
    /** All N + HELD_OUT points. */
    static RowBlock all;
    /** The first N points only: what DA-PWC saw. */
    static RowBlock mapped;
    static PwcResult result;

    @BeforeAll
    static void clusterTheFirstPoints() throws Exception {
        blobs = SyntheticDataset.blobs(N + HELD_OUT, 6, BLOBS, 1.0, 11);
        Path allFile = dir.resolve("all.bin");
        blobs.writeMatrix(allFile, ORDER);
        all = DistanceSource.matrixFile(allFile, N + HELD_OUT, ORDER).all();
        // the top-left N x N block, in the same 16-bit units as the held-out rows
        Path mappedFile = dir.resolve("mapped.bin");
        short[] row = new short[N];
        try (ShortMatrixWriter writer = new ShortMatrixWriter(mappedFile, N, ORDER)) {
            for (int i = 0; i < N; i++) {
                all.copyRow(i, 0, N, row, 0);
                writer.writeRow(row);
            }
        }
        mapped = DistanceSource.matrixFile(mappedFile, N, ORDER).all();
        RowPartition partition = RowPartition.of(N, 1);
        result = new PwcEngine(mapped, partition, SingleProcessSync.INSTANCE,
                PwcSettings.builder().maxClusters(8).build(), null).run();
    }

    private static short[] heldOutRow(int point) {
        short[] row = new short[N];
        all.copyRow(point, 0, N, row, 0);
        return row;
    }

    @Test
    void heldOutPointsGetTheClusterOfTheirBlob() {
        int[] truth = new int[N + HELD_OUT];
        for (int i = 0; i < truth.length; i++) {
            truth[i] = blobs.label(i);
        }
        assertEquals(BLOBS, result.clusters(), "sizes " + Arrays.toString(result.sizes()));
        assertEquals(1.0, Ari.adjustedRandIndex(Arrays.copyOf(truth, N), result.labels()), 1e-12,
                "DA-PWC found the blobs (this test's premise)");
        FrozenClusters frozen = FrozenClusters.of(result);
        int[] labels = Arrays.copyOf(result.labels(), N + HELD_OUT);
        double[] membership = new double[BLOBS];
        for (int point = N; point < N + HELD_OUT; point++) {
            labels[point] = frozen.assign(heldOutRow(point), membership);
            assertEquals(1.0, Arrays.stream(membership).sum(), 1e-12);
            for (int k = 0; k < BLOBS; k++) {
                assertTrue(membership[k] <= membership[labels[point]], "the label has the largest membership");
            }
        }
        assertEquals(1.0, Ari.adjustedRandIndex(truth, labels), 1e-12,
                "held-out labels " + Arrays.toString(Arrays.copyOfRange(labels, N, N + HELD_OUT)) + ", blobs "
                        + Arrays.toString(Arrays.copyOfRange(truth, N, N + HELD_OUT)));
    }

    @Test
    void aPointEqualToAMappedPointGetsThatPointsCluster() {
        // a new point at the position of mapped point i has i's distance row (0 to i itself)
        FrozenClusters frozen = FrozenClusters.of(result);
        short[] row = new short[N];
        for (int i = 0; i < N; i++) {
            mapped.copyRow(i, row);
            assertEquals(result.label(i), frozen.assign(row, null), "point " + i);
        }
    }

    @Test
    void theExportedStateIsTheEnginesOwnEStep() {
        // C and A recomputed from the exported M and the distances match the engine's, and its Hamiltonian
        FrozenClusters fromRun = FrozenClusters.of(result);
        FrozenClusters recomputed = FrozenClusters.fromMemberships(mapped, result.memberships(), result.clusters(),
                result.finalTemperature());
        double hamiltonian = 0;
        for (int k = 0; k < result.clusters(); k++) {
            double c = fromRun.softSize(k);
            double a = fromRun.epsilonOffset(k);
            assertEquals(c, recomputed.softSize(k), 1e-9 * c, "C of cluster " + k);
            assertEquals(a, recomputed.epsilonOffset(k), 1e-9 * Math.abs(a), "A of cluster " + k);
            hamiltonian += -2 * a * c;
        }
        assertEquals(result.hamiltonian(), hamiltonian, 1e-9 * Math.abs(hamiltonian), "H = -2 sum_k A_k C_k");
        double[] one = new double[result.clusters()];
        double[] other = new double[result.clusters()];
        for (int point = N; point < N + HELD_OUT; point++) {
            short[] row = heldOutRow(point);
            assertEquals(fromRun.assign(row, one), recomputed.assign(row, other));
            for (int k = 0; k < one.length; k++) {
                assertEquals(one[k], other[k], 1e-9);
            }
        }
    }

    @Test
    void membershipsAreTheSoftmaxOfMinusEpsOverTAtAnyTemperature() {
        // three mapped points, two clusters; the expected values are computed here from the formula
        double[] m = {1, 0, 0, 1, 0.5, 0.5};
        double[] c = {1.5, 1.5};
        double[] a = {-0.1, -0.2};
        short[] row = {ShortMatrixFormat.encode(0.2), ShortMatrixFormat.encode(0.7), ShortMatrixFormat.MISSING};
        double[] eps = new double[2];
        for (int k = 0; k < 2; k++) {
            for (int j = 0; j < 3; j++) {
                double d = row[j] < 0 ? 0 : ShortMatrixFormat.decode(row[j]);
                eps[k] += d * m[j * 2 + k] / c[k];
            }
            eps[k] += a[k];
        }
        int expectedLabel = eps[0] <= eps[1] ? 0 : 1;
        double[] membership = new double[2];
        for (double t : new double[] {1e-300, 1e-3, 0.05, 1.0, 1e300}) {
            FrozenClusters frozen = FrozenClusters.of(m, 3, 2, c, a, t);

            assertEquals(expectedLabel, frozen.assign(row, membership), "T = " + t);

            double e0 = Math.exp(-eps[0] / t);
            double e1 = Math.exp(-eps[1] / t);
            for (double v : membership) {
                assertFalse(Double.isNaN(v), "T = " + t);
            }
            if (e0 + e1 > 0 && Double.isFinite(e0) && Double.isFinite(e1)) {
                assertEquals(e0 / (e0 + e1), membership[0], 1e-12, "T = " + t);
            }
            assertEquals(1.0, membership[0] + membership[1], 1e-15);
        }
        FrozenClusters cold = FrozenClusters.of(m, 3, 2, c, a, 1e-300);
        cold.assign(row, membership);
        assertEquals(1.0, membership[expectedLabel], 0.0, "frozen hard at T -> 0");
        FrozenClusters hot = FrozenClusters.of(m, 3, 2, c, a, 1e300);
        hot.assign(row, membership);
        assertEquals(0.5, membership[0], 1e-15, "uniform at T -> infinity");
    }

    @Test
    void badStatesAndRowsAreRefused() {
        double[] m = {1, 0, 0, 1};
        double[] c = {1, 1};
        double[] a = {0, 0};
        assertThrows(IllegalArgumentException.class, () -> FrozenClusters.of(m, 2, 2, c, a, 0));
        assertThrows(IllegalArgumentException.class, () -> FrozenClusters.of(m, 2, 2, c, a, Double.NaN));
        assertThrows(IllegalArgumentException.class, () -> FrozenClusters.of(m, 2, 2, new double[] {1, 0}, a, 1));
        assertThrows(IllegalArgumentException.class,
                () -> FrozenClusters.of(m, 2, 2, c, new double[] {0, Double.NaN}, 1));
        assertThrows(IllegalArgumentException.class, () -> FrozenClusters.of(m, 3, 2, c, a, 1));
        assertThrows(IllegalArgumentException.class, () -> FrozenClusters.of(m, 2, 2, new double[] {1}, a, 1));
        FrozenClusters frozen = FrozenClusters.of(m, 2, 2, c, a, 1);
        assertThrows(IllegalArgumentException.class, () -> frozen.assign(new short[1], null));
        assertThrows(IllegalArgumentException.class, () -> frozen.assign(new short[2], new double[1]));
    }

    @Test
    void clusteringAPointAllocatesNothing() {
        ThreadMXBean threads = (ThreadMXBean) ManagementFactory.getThreadMXBean();
        FrozenClusters frozen = FrozenClusters.of(result);
        short[] row = heldOutRow(N);
        double[] membership = new double[frozen.clusters()];
        int sink = 0;
        for (int i = 0; i < 20_000; i++) {
            sink += frozen.assign(row, membership);
        }
        long id = Thread.currentThread().getId();
        long before = threads.getThreadAllocatedBytes(id);
        int calls = 1000;
        for (int i = 0; i < calls; i++) {
            sink += frozen.assign(row, (i & 1) == 0 ? membership : null);
        }
        long perCall = (threads.getThreadAllocatedBytes(id) - before) / calls;
        assertTrue(perCall < 16, perCall + " bytes per point");
        assertTrue(sink >= 0);
    }
}
