package io.meridian.matrix;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.meridian.engine.BadInputException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class WeightingTest {
    @TempDir
    Path dir;

    private Path file(String text) throws IOException {
        Path f = dir.resolve("w" + text.hashCode() + ".txt");
        Files.writeString(f, text);
        return f;
    }

    @Test
    void readsOneWeightPerPoint() throws IOException {
        assertArrayEquals(new double[] {1, 0.5, 2}, Weighting.readPointWeights(file("1\n# c\n0.5\n\n2\n"), 3));
    }

    @Test
    void badPointWeightsNameTheFileAndLine() throws IOException {
        for (String bad : new String[] {"1\nNaN\n1\n", "1\n-2\n1\n", "1\nabc\n1\n", "1\n1\n", "1\n1\n1\n1\n"}) {
            Path f = file(bad);
            BadInputException e = assertThrows(BadInputException.class, () -> Weighting.readPointWeights(f, 3));
            assertTrue(e.getMessage().startsWith(f.toString()), e.getMessage());
            assertEquals(BadInputException.Input.POINT_WEIGHTS, e.input());
        }
    }
}
