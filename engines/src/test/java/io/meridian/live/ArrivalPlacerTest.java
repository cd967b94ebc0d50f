package io.meridian.live;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.meridian.davs.FrozenSponge;
import io.meridian.matrix.ShortMatrixFormat;
import io.meridian.stream.row.DistanceRow;
import io.meridian.stream.row.RowFormat;
import io.meridian.stream.row.RowStoreReader;
import io.meridian.stream.row.RowStores;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.function.IntToLongFunction;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Points shown on arrival: placed against the last frame, with lower ids still missing, each once. */
class ArrivalPlacerTest {
    private static final int BLOCK_ROWS = 16;
    private static final int CAPACITY = 64;
    private static final int MAPPED = 40;

    @TempDir
    Path dir;

    /** Two well-separated groups of points in 3-D: ids alternate between them. */
    private static double[] configuration() {
        Random random = new Random(7);
        double[] p = new double[3 * CAPACITY];
        for (int i = 0; i < CAPACITY; i++) {
            double shift = i % 2 == 0 ? 0.0 : 0.45;
            for (int k = 0; k < 3; k++) {
                p[3 * i + k] = shift + 0.1 * random.nextDouble();
            }
        }
        return p;
    }

    private static void store(RowStores stores, double[] p, int id) {
        short[] raw = new short[id];
        for (int j = 0; j < id; j++) {
            double dx = p[3 * id] - p[3 * j];
            double dy = p[3 * id + 1] - p[3 * j + 1];
            double dz = p[3 * id + 2] - p[3 * j + 2];
            raw[j] = (short) Math.round(Math.sqrt(dx * dx + dy * dy + dz * dz) * ShortMatrixFormat.SCALE);
        }
        stores.store(DistanceRow.decode(RowFormat.encodeInt16(id, raw, 0, id, false), null));
    }

    private static Frame frame(long number, int n, double[] p, int[] labels) {
        return new Frame(number, n, Arrays.copyOf(p, 3 * n), Arrays.copyOf(labels, n), new boolean[n], 0.01, 0, 2, 0,
                0, 0, 1, false, 0.01, 0.01, 0, 0, 0, n, 0, false);
    }

    /** The two groups as a frozen clustering of the mapped points: group of id = id % 2. */
    private static FrozenClusters twoGroups(int n) {
        double[] m = new double[2 * n];
        for (int i = 0; i < n; i++) {
            m[2 * i + i % 2] = 1;
        }
        return FrozenClusters.of(m, n, 2, new double[] {n / 2.0, n / 2.0}, new double[] {0, 0}, 0.01);
    }

    /**
     * Every call until one places nothing, merged: a call may stop early on its time budget (the vector pass is slow
     * until C2 has compiled it). Each part must be placed against {@code frame}.
     */
    private static Arrivals placeAll(ArrivalPlacer placer, Frame frame, FrozenClusters clusters, int upTo,
                                     IntToLongFunction storedAt, long notBefore) {
        return placeAll(placer, frame, clusters, null, upTo, storedAt, notBefore);
    }

    private static Arrivals placeAll(ArrivalPlacer placer, Frame frame, FrozenClusters clusters, FrozenSponge outliers,
                                     int upTo, IntToLongFunction storedAt, long notBefore) {
        List<Arrivals> parts = new ArrayList<>();
        for (Arrivals a = placer.place(frame, clusters, outliers, upTo, storedAt, notBefore); a != null;
             a = placer.place(frame, clusters, outliers, upTo, storedAt, notBefore)) {
            assertEquals(frame.frame(), a.frame(), "placed against the frame it was given");
            assertTrue(a.count() >= 1 && a.count() <= ArrivalPlacer.MAX_PER_CALL, a.count() + " points in one call");
            parts.add(a);
        }
        if (parts.isEmpty()) {
            return null;
        }
        int count = parts.stream().mapToInt(Arrivals::count).sum();
        int[] ids = new int[count];
        double[] points = new double[3 * count];
        int[] labels = new int[count];
        boolean[] flags = new boolean[count];
        int k = 0;
        for (Arrivals a : parts) {
            System.arraycopy(a.ids(), 0, ids, k, a.count());
            System.arraycopy(a.points(), 0, points, 3 * k, 3 * a.count());
            System.arraycopy(a.labels(), 0, labels, k, a.count());
            System.arraycopy(a.outlierFlags(), 0, flags, k, a.count());
            k += a.count();
        }
        return new Arrivals(frame.frame(), count, ids, points, labels, flags, parts.get(0).placedAtMillis());
    }

    /**
     * A point placed on arrival is flagged from the frozen DA-VS state at the place it was put: one far from both
     * groups is an outlier, one inside a group is not, and without a frozen state none is.
     */
    @Test
    void aPointPlacedOnArrivalGetsItsOutlierFlagFromTheFrozenState() throws Exception {
        double[] p = configuration();
        int far = 43;
        p[3 * far] = 0.75; // the groups fill [0, 0.1]^3 and [0.45, 0.55]^3: 0.61 away from the nearest, about 20 widths
        p[3 * far + 1] = 0.1;
        p[3 * far + 2] = 0.1;
        int[] labels = new int[CAPACITY];
        for (int i = 0; i < CAPACITY; i++) {
            labels[i] = i % 2;
        }
        MapOutliers.Detection d = MapOutliers.detect(p, labels, MAPPED, OutlierSettings.DEFAULT,
                MapOutliers.davsClusters(2));
        assertNotNull(d);
        assertEquals(0, d.outliers(), "the two groups hold no outlier");
        long[] storedAt = new long[CAPACITY];
        try (RowStores stores = new RowStores(dir, BLOCK_ROWS, CAPACITY, b -> true);
             ArrivalPlacer placer = new ArrivalPlacer(new RowStoreReader(dir, BLOCK_ROWS, CAPACITY))) {
            for (int id = 1; id < 46; id++) {
                store(stores, p, id);
            }
            storedAt[far] = 1000;
            storedAt[44] = 1000;
            storedAt[45] = 1000;
            Frame shown = frame(3, MAPPED, p, labels);
            Arrivals a = placeAll(placer, shown, null, d.frozen(), 45, id -> storedAt[id], 500);
            assertNotNull(a);
            assertArrayEquals(new int[] {far, 44}, a.ids());
            for (int k = 0; k < a.count(); k++) {
                assertEquals(d.frozen().inSponge(a.points(), 3 * k), a.outlierFlags()[k], "point " + a.ids()[k]
                        + ": the frozen state's flag at its place");
            }
            assertTrue(a.outlierFlags()[0], "the far point is an outlier on arrival");
            assertFalse(a.outlierFlags()[1], "a point of a group is not");
            a = placeAll(placer, shown, null, null, 46, id -> storedAt[id], 500);
            assertArrayEquals(new int[] {45}, a.ids());
            assertFalse(a.outlierFlags()[0], "no frozen state: no flag");
        }
    }

    @Test
    void placesAStoredRowWhoseLowerIdsAreMissingWhereItBelongsAndInItsCluster() throws Exception {
        double[] p = configuration();
        int[] labels = new int[CAPACITY];
        for (int i = 0; i < CAPACITY; i++) {
            labels[i] = i % 2;
        }
        long[] storedAt = new long[CAPACITY];
        try (RowStores stores = new RowStores(dir, BLOCK_ROWS, CAPACITY, b -> true);
             ArrivalPlacer placer = new ArrivalPlacer(new RowStoreReader(dir, BLOCK_ROWS, CAPACITY))) {
            for (int id = 1; id < MAPPED; id++) {
                store(stores, p, id);
            }
            Frame shown = frame(5, MAPPED, p, labels);
            // rows 40..42 still in ingestion; 43 and 44 stored
            store(stores, p, 43);
            store(stores, p, 44);
            storedAt[43] = 1000;
            storedAt[44] = 1001;
            Arrivals a = placeAll(placer, shown, twoGroups(MAPPED), 45, id -> storedAt[id], 500);
            assertNotNull(a);
            assertEquals(5, a.frame(), "placed against the frame it was given");
            assertArrayEquals(new int[] {43, 44}, a.ids());
            for (int k = 0; k < 2; k++) {
                int id = a.ids()[k];
                for (int c = 0; c < 3; c++) {
                    // the 16-bit distances are exact to 1.5e-5: the point comes back as close
                    assertEquals(p[3 * id + c], a.points()[3 * k + c], 2e-3, "coordinate " + c + " of point " + id);
                }
                assertEquals(id % 2, a.labels()[k], "the cluster of point " + id);
            }
            assertNull(placer.place(shown, null, 45, id -> storedAt[id], 500), "each id is placed once");

            // 41 arrives; 40 was stored too long ago (the rounds show it); 42 still missing
            store(stores, p, 40);
            store(stores, p, 41);
            storedAt[40] = 100;
            storedAt[41] = 1100;
            a = placeAll(placer, shown, null, 45, id -> storedAt[id], 500);
            assertNotNull(a);
            assertArrayEquals(new int[] {41}, a.ids());
            assertEquals(-1, a.labels()[0], "no clustering yet: no cluster");

            // a frame of the rounds now holds 0..42: 42, stored since, is theirs to show
            store(stores, p, 42);
            storedAt[42] = 1200;
            for (int id = 45; id < 48; id++) {
                store(stores, p, id);
                storedAt[id] = 1300;
            }
            Frame later = frame(6, 43, p, labels);
            a = placeAll(placer, later, null, 48, id -> storedAt[id], 500);
            assertNotNull(a);
            assertEquals(6, a.frame());
            assertArrayEquals(new int[] {45, 46, 47}, a.ids(), "only ids the frame does not hold, not shown before");
            assertEquals(6, placer.placed(), "43, 44, 41, 45, 46, 47");
        }
    }

    @Test
    void aBacklogIsPlacedAndARowOfAnotherHostIsLeftToTheRounds() throws Exception {
        double[] p = configuration();
        int[] labels = new int[CAPACITY];
        long[] storedAt = new long[CAPACITY];
        Arrays.fill(storedAt, 2000);
        try (RowStores stores = new RowStores(dir, BLOCK_ROWS, CAPACITY, b -> true);
             ArrivalPlacer placer = new ArrivalPlacer(new RowStoreReader(dir, BLOCK_ROWS, CAPACITY))) {
            for (int id = 1; id < 48; id++) {
                store(stores, p, id);
            }
            // rows 48..63 are announced stored, by the row store of another host: not readable here
            Frame shown = frame(1, 2, p, labels);
            Arrivals all = placeAll(placer, shown, null, CAPACITY, id -> storedAt[id], 0);
            int total = all.count();
            assertEquals(46, total, "ids 2..47; 48..63 are not readable here");
        }
    }
}
