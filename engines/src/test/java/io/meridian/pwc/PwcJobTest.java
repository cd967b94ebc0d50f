package io.meridian.pwc;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.meridian.engine.BadInputException;
import io.meridian.matrix.DistanceSource;
import io.meridian.matrix.RowBlock;
import io.meridian.matrix.ShortMatrixWriter;
import io.meridian.synthetic.SyntheticDataset;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.function.IntBinaryOperator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@link PwcJob} on degenerate matrices: no structure is one cluster, no distance at all is refused. */
class PwcJobTest {
    @TempDir
    Path dir;

    private RowBlock matrix(String name, int n, IntBinaryOperator entry) throws Exception {
        Path file = dir.resolve(name);
        try (ShortMatrixWriter w = new ShortMatrixWriter(file, n, ByteOrder.LITTLE_ENDIAN)) {
            short[] row = new short[n];
            for (int i = 0; i < n; i++) {
                for (int j = 0; j < n; j++) {
                    row[j] = (short) (i == j ? 0 : entry.applyAsInt(Math.min(i, j), Math.max(i, j)));
                }
                w.writeRow(row);
            }
        }
        return DistanceSource.matrixFile(file, n, ByteOrder.LITTLE_ENDIAN).all();
    }

    @Test
    void pointsWhoseDistancesAreAllEqualAreOneCluster() throws Exception {
        for (int n : new int[] {2, 5, 40}) {
            // DA-PWC split 40 such points into 8 clusters of 2 to 17
            RowBlock equal = matrix("equal-" + n + ".bin", n, (i, j) -> 20000);
            assertTrue(PwcJob.oneDistance(equal));
            PwcResult r = PwcJob.run(equal, PwcSettings.defaults(), PwcProgress.NONE, dir.resolve("out-" + n));
            assertEquals(1, r.clusters(), "N = " + n);
            assertArrayEquals(new int[n], r.labels());
        }
        // missing entries aside
        RowBlock holes = matrix("equal-holes.bin", 30, (i, j) -> (i + j) % 7 == 0 ? -1 : 12345);
        assertTrue(PwcJob.oneDistance(holes));
        assertEquals(1, PwcJob.run(holes, PwcSettings.defaults(), PwcProgress.NONE, dir.resolve("holes")).clusters());
    }

    @Test
    void aMatrixWithoutAPositiveDistanceIsRefused() throws Exception {
        RowBlock zeros = matrix("zeros.bin", 20, (i, j) -> 0);
        BadInputException e = assertThrows(BadInputException.class,
                () -> PwcJob.run(zeros, PwcSettings.defaults(), PwcProgress.NONE, dir.resolve("zeros")));
        assertEquals(BadInputException.Input.DISTANCES, e.input());
        assertEquals("no two points have a positive distance between them (every entry off the diagonal is 0 or"
                + " missing): there is nothing to cluster", e.getMessage());
        RowBlock missing = matrix("missing.bin", 20, (i, j) -> -1);
        assertTrue(assertThrows(BadInputException.class, () -> PwcJob.oneDistance(missing)).getMessage()
                .contains("every entry off the diagonal is missing"));
    }

    @Test
    void dataWithStructureIsLeftAlone() throws Exception {
        SyntheticDataset data = SyntheticDataset.blobs(60, 4, 3, 1.0, 2);
        Path file = dir.resolve("blobs.bin");
        data.writeMatrix(file, ByteOrder.LITTLE_ENDIAN);
        assertFalse(PwcJob.oneDistance(DistanceSource.matrixFile(file, 60, ByteOrder.LITTLE_ENDIAN).all()));
        // duplicates among otherwise equal distances: two values, not one
        assertFalse(PwcJob.oneDistance(matrix("twins.bin", 10, (i, j) -> i == 0 && j == 1 ? 0 : 20000)));
    }
}
