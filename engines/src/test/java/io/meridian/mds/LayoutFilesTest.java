package io.meridian.mds;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.meridian.engine.BadInputException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A live map frame's points.tsv (id, x, y, z, outlier flag) serves as an initial layout and as fixed points. */
class LayoutFilesTest {
    @TempDir
    Path dir;

    @Test
    void aLiveFramesPointsReadWithoutTheirOutlierFlag() throws Exception {
        Path live = Files.writeString(dir.resolve("points.tsv"), "0\t1.0\t2.0\t3.0\t0\n1\t4.0\t5.0\t6.0\t1\n");
        assertArrayEquals(new double[] {1, 2, 3, 4, 5, 6}, LayoutFiles.readLayout(live, 2, 3));
        boolean[] fixed = new boolean[2];
        double[] coordinates = new double[6];
        LayoutFiles.readFixed(live, 2, 3, fixed, coordinates);
        assertArrayEquals(new boolean[] {true, true}, fixed);
        assertArrayEquals(new double[] {1, 2, 3, 4, 5, 6}, coordinates);
        Path batch = Files.writeString(dir.resolve("batch.tsv"), "0\t1.0\t2.0\t3.0\n1\t4.0\t5.0\t6.0\n");
        assertArrayEquals(new double[] {1, 2, 3, 4, 5, 6}, LayoutFiles.readLayout(batch, 2, 3));
        Path bad = Files.writeString(dir.resolve("bad.tsv"), "0\t1.0\t2.0\t3.0\t7\n");
        BadInputException e = assertThrows(BadInputException.class, () -> LayoutFiles.readLayout(bad, 1, 3));
        assertTrue(e.getMessage().contains("line 1 has 5 fields"), e.getMessage());
    }
}
