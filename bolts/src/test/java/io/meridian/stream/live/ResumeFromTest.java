package io.meridian.stream.live;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.meridian.live.Frame;
import io.meridian.live.LiveMapSettings;
import io.meridian.live.Snapshot;
import io.meridian.live.SnapshotWriter;
import io.meridian.stream.row.DistanceRow;
import io.meridian.stream.row.RowFormat;
import io.meridian.stream.row.RowStores;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code map.resumeFrom}: a new submission resumes from another's frame only if every point's row is stored. */
class ResumeFromTest {
    private static final int BLOCK_ROWS = 16;
    private static final int CAPACITY = 64;
    private static final LiveMapSettings SETTINGS = new LiveMapSettings(CAPACITY, BLOCK_ROWS, 2, 8, 5, 1e-4, 2, 1,
            0.95, 0.5, 3, 1);

    @TempDir
    Path dir;

    @Test
    void aPreviousSubmissionsFrameIsTakenWhenEveryRowOfItIsStored() throws Exception {
        Path rows = dir.resolve("rows");
        store(rows, 0, 40);
        Path previous = dir.resolve("snapshots");
        double[] points = randomPoints(40, new Random(3));
        new SnapshotWriter(previous, "topology-1-1700000000-map").onFrame(frame(7, points));

        Snapshot s = LiveMapBolt.predecessor(previous, rows, SETTINGS, true);
        assertNotNull(s);
        assertEquals(40, s.n());
        assertEquals(7, s.summary().frame());
        assertEquals("topology-1-1700000000-map", s.summary().job());
        assertArrayEquals(points, s.points()); // written exactly: the new map starts where the old one stood
        // the submission's own loader does not take another job's frame
        assertNull(Snapshot.load(previous, "topology-2-1700000500-map"));
    }

    @Test
    void aFrameWithAPointWhoseRowIsNotStoredIsNotResumed() throws Exception {
        Path rows = dir.resolve("rows");
        store(rows, 0, 40);
        Path previous = dir.resolve("snapshots");
        new SnapshotWriter(previous, "old").onFrame(frame(3, randomPoints(50, new Random(4))));
        assertEquals(40, LiveMapBolt.firstRowMissing(50, rows, SETTINGS, true));
        assertNull(LiveMapBolt.predecessor(previous, rows, SETTINGS, true));
        // a directory without a frame, and a frame larger than the map's capacity
        assertNull(LiveMapBolt.predecessor(Files.createDirectories(dir.resolve("empty")), rows, SETTINGS, true));
        LiveMapSettings small = new LiveMapSettings(32, BLOCK_ROWS, 2, 8, 5, 1e-4, 2, 1, 0.95, 0.5, 3, 1);
        assertNull(LiveMapBolt.predecessor(previous, rows, small, true));
    }

    @Test
    void acrossHostsOnlyTheBlocksOnThisHostAreLookedAt() throws Exception {
        Path rows = dir.resolve("rows");
        store(rows, 0, 16);   // block 0
        store(rows, 32, 41);  // block 2, rows 41 .. 47 missing; blocks 1 and 3 are another host's
        assertEquals(16, LiveMapBolt.firstRowMissing(41, rows, SETTINGS, true));
        assertEquals(-1, LiveMapBolt.firstRowMissing(41, rows, SETTINGS, false));
        assertEquals(41, LiveMapBolt.firstRowMissing(48, rows, SETTINGS, false));
        assertEquals(-1, LiveMapBolt.firstRowMissing(0, rows, SETTINGS, true));
    }

    private static void store(Path rows, int from, int to) {
        try (RowStores stores = new RowStores(rows, BLOCK_ROWS, CAPACITY, b -> true)) {
            for (int id = from; id < to; id++) {
                short[] values = new short[id];
                for (int j = 0; j < id; j++) {
                    values[j] = (short) (1 + (id * 31 + j) % 1000);
                }
                String[] why = new String[1];
                DistanceRow row = DistanceRow.decode(RowFormat.encodeInt16(id, values, 0, id, false), why);
                assertNotNull(row, why[0]);
                stores.store(row);
            }
        }
    }

    private static double[] randomPoints(int n, Random random) {
        double[] p = new double[3 * n];
        for (int k = 0; k < p.length; k++) {
            p[k] = random.nextGaussian() / 3;
        }
        return p;
    }

    private static Frame frame(long number, double[] points) {
        int n = points.length / 3;
        return new Frame(number, n, points, new int[n], new boolean[n], 0.05, 0, 1, 0, 0, 0, 20, false, 1, 1, 0, 0, 0,
                n, 1_700_000_000_000L,
                true);
    }
}
