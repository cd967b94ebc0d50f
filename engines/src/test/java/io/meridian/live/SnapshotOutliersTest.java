package io.meridian.live;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The outlier flags in a snapshot: points.tsv's fifth column, summary.json's count, read back by {@link Snapshot}. */
class SnapshotOutliersTest {
    @TempDir
    Path dir;

    private static Frame frame(long number, double[] xyz, boolean[] flags) {
        int n = flags.length;
        int count = 0;
        for (boolean f : flags) {
            count += f ? 1 : 0;
        }
        return new Frame(number, n, xyz, new int[n], flags, 0.02, 0, 1, count, 0, n, 5, false, 0.1, 0.1, 0, 0, 0, n,
                1_700_000_000_000L, true);
    }

    @Test
    void pointsTsvCarriesTheFlagLastAndTheSummaryTheirCount() throws Exception {
        double[] xyz = {0.5, 1, 2, -3, 4.25, 5, 6, 7, 8e-3};
        boolean[] flags = {false, true, false};
        new SnapshotWriter(dir, "job").onFrame(frame(7, xyz, flags));
        Path current = dir.resolve(SnapshotWriter.CURRENT);
        List<String> lines = Files.readAllLines(current.resolve(SnapshotWriter.POINTS_FILE), StandardCharsets.UTF_8);
        assertEquals(List.of("0\t0.5\t1.0\t2.0\t0", "1\t-3.0\t4.25\t5.0\t1", "2\t6.0\t7.0\t0.008\t0"), lines);
        String summary = Files.readString(current.resolve(SnapshotWriter.SUMMARY_FILE));
        assertEquals(1, summary.lines().filter(l -> l.equals("  \"outliers\": 1,")).count(), summary);
        assertEquals(1, SnapshotSummary.readCurrent(dir).outliers());

        Snapshot back = Snapshot.load(dir, "job");
        assertArrayEquals(xyz, back.points());
        assertArrayEquals(flags, back.outlierFlags());
    }

    @Test
    void aFrameWrittenBeforeTheFlagsReadsAsNoneFlagged() throws Exception {
        new SnapshotWriter(dir, "job").onFrame(frame(3, new double[] {1, 2, 3, 4, 5, 6}, new boolean[] {true, false}));
        Path frameDir = dir.resolve(SnapshotWriter.CURRENT).toRealPath();
        // as the writer wrote it before: four fields, no "outliers" in the summary
        Files.writeString(frameDir.resolve(SnapshotWriter.POINTS_FILE), "0\t1.0\t2.0\t3.0\n1\t4.0\t5.0\t6.0\n");
        Path summary = frameDir.resolve(SnapshotWriter.SUMMARY_FILE);
        Files.writeString(summary, Files.readString(summary).replace("  \"outliers\": 1,\n", ""));
        Snapshot back = Snapshot.load(dir, "job");
        assertArrayEquals(new double[] {1, 2, 3, 4, 5, 6}, back.points());
        assertArrayEquals(new boolean[] {false, false}, back.outlierFlags());
        assertEquals(0, back.summary().outliers());
    }
}
