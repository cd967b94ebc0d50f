package io.meridian.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.meridian.synthetic.SyntheticDataset;
import io.meridian.synthetic.SyntheticDataset.Pass;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code gen} of a large N says how far it is: the data set tells each row, the command prints once a second. */
class GenProgressTest {
    @TempDir
    Path dir;

    @Test
    void writingTellsEveryRowOfBothPassesUpToTheirTotals() throws Exception {
        int n = 50;
        List<long[]> updates = new ArrayList<>();
        SyntheticDataset.uniform(n, 3, 1).write(dir, ByteOrder.LITTLE_ENDIAN,
                (pass, done, total) -> updates.add(new long[] {pass.ordinal(), done, total}));
        assertEquals(2 * n, updates.size(), "one update per row and pass");
        long scaleTotal = (long) n * (n - 1) / 2;
        long previous = 0;
        for (int i = 0; i < n; i++) {
            long[] u = updates.get(i);
            assertEquals(Pass.SCALE.ordinal(), u[0]);
            assertEquals(scaleTotal, u[2]);
            assertTrue(u[1] >= previous, "monotone");
            previous = u[1];
        }
        assertEquals(scaleTotal, previous, "the scale pass ends at its total");
        for (int i = 0; i < n; i++) {
            long[] u = updates.get(n + i);
            assertEquals(Pass.MATRIX.ordinal(), u[0]);
            assertEquals((long) (i + 1) * n, u[1]);
            assertEquals((long) n * n, u[2]);
        }
    }

    @Test
    void theCommandPrintsAtMostOneLinePerIntervalWithTheShareDoneAndTheTimeLeft() {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        long[] now = {0};
        int n = 1000;
        long second = 1_000_000_000L;
        GenCommand.StderrProgress p = new GenCommand.StderrProgress(new PrintStream(bytes, true, StandardCharsets.UTF_8),
                () -> now[0], second, n);
        long scaleTotal = (long) n * (n - 1) / 2;
        long all = scaleTotal + (long) n * n;
        p.update(Pass.SCALE, scaleTotal / 10, scaleTotal); // before the first second: silent
        now[0] = 2 * second;
        p.update(Pass.SCALE, scaleTotal / 2, scaleTotal);
        now[0] = 2 * second + second / 2;
        p.update(Pass.SCALE, scaleTotal, scaleTotal); // within the interval: silent
        now[0] = 6 * second;
        p.update(Pass.MATRIX, (long) n * n / 2, (long) n * n);
        List<String> lines = bytes.toString(StandardCharsets.UTF_8).lines().toList();
        assertEquals(2, lines.size(), lines.toString());
        double first = 100.0 * (scaleTotal / 2) / all;
        assertEquals(String.format(Locale.ROOT,
                "meridian gen: %.0f %% (finding the largest distance), 2.0 s, about %.0f s left", first,
                2.0 * (1 - first / 100) / (first / 100)), lines.get(0));
        assertTrue(lines.get(1).startsWith("meridian gen: 67 % (writing the matrix), 6.0 s, about 3 s left"),
                lines.get(1));
    }
}
