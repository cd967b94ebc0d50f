package io.meridian.matrix;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.meridian.config.UsageException;
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
        assertArrayEquals(new double[] {1, 0.5, 2}, Weighting.readPointWeights("--point-weights", file("1\n# c\n0.5\n\n2\n"), 3));
    }

    @Test
    void badPointWeightsNameTheFileAndLine() throws IOException {
        for (String bad : new String[] {"1\nNaN\n1\n", "1\n-2\n1\n", "1\nabc\n1\n", "1\n1\n", "1\n1\n1\n1\n"}) {
            Path f = file(bad);
            UsageException e = assertThrows(UsageException.class, () -> Weighting.readPointWeights("--point-weights", f, 3));
            assertTrue(e.getMessage().startsWith("--point-weights: " + f), e.getMessage());
        }
    }
}
