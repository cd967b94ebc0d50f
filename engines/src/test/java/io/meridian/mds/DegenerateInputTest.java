package io.meridian.mds;

import static io.meridian.mds.Fixtures.run;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.meridian.collective.ThreadedBlockSync;
import io.meridian.engine.BadInputException;
import io.meridian.engine.BadInputException.Input;
import io.meridian.matrix.ShortMatrixFormat;
import io.meridian.matrix.Weighting;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.IntBinaryOperator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Input DA-MDS cannot map sensibly is refused with a reason; input it can is mapped right. */
class DegenerateInputTest {
    @TempDir
    Path dir;

    /**
     * Points i on a line, at i steps of {@link #step}: raw 16-bit entries of their distances (exact: whole steps), or
     * -1 where {@code linked} says no.
     */
    private Path line(String name, int n, IntBinaryOperator linked) {
        return Fixtures.writeSymmetric(dir, name, n, (i, j) -> i == j ? 0
                : linked.applyAsInt(i, j) == 0 ? -1 : (ShortMatrixFormat.SCALE / n) * (j - i));
    }

    /** The distance between neighbours on {@link #line}. */
    private static double step(int n) {
        return (ShortMatrixFormat.SCALE / n) * ShortMatrixFormat.INV_SCALE;
    }

    private static BadInputException refused(Path file, int n, Weighting weighting, MdsOptions options) {
        return assertThrows(BadInputException.class, () -> run(file, n, weighting, options));
    }

    @Test
    void aMatrixWithOnlyItsDiagonalIsRefused() {
        Path file = line("diagonal.bin", 12, (i, j) -> 0);
        BadInputException e = refused(file, 12, Weighting.unit(), new MdsOptions());
        assertEquals(Input.DISTANCES, e.input());
        assertEquals(file, e.file());
        assertTrue(e.getMessage().startsWith("no two points have a distance of non-zero weight between them"),
                e.getMessage());
        // so is one whose every weight off the diagonal is zero
        Path full = line("full.bin", 12, (i, j) -> 1);
        Path zeroWeights = Fixtures.writeSymmetric(dir, "zero-weights.bin", 12, (i, j) -> i == j ? 1 : 0);
        BadInputException w = refused(full, 12, Weighting.matrix(zeroWeights, ByteOrder.LITTLE_ENDIAN),
                new MdsOptions());
        assertEquals(Input.WEIGHTS, w.input());
    }

    @Test
    void distancesThatSplitThePointsIntoGroupsAreRefusedNamingTheGroups() {
        // 0..9 linked among themselves, 10..14 among themselves, 15 linked to nobody
        Path file = line("groups.bin", 16, (i, j) -> (i < 10 && j < 10) || (i >= 10 && i < 15 && j >= 10 && j < 15)
                ? 1 : 0);
        BadInputException e = refused(file, 16, Weighting.unit(), new MdsOptions());
        assertEquals(Input.DISTANCES, e.input());
        assertTrue(e.getMessage().contains("split the 16 points into 3 groups"), e.getMessage());
        assertTrue(e.getMessage().contains("sizes 10, 5, 1 (first points 0, 10, 15)"), e.getMessage());
        assertFalse(e.getMessage().contains("\n"));
        // the same with the annealing off and with SPIDAL's update, whose V + I hid it (all groups at the origin)
        refused(file, 16, Weighting.unit(), new MdsOptions().annealing(false));
        refused(file, 16, Weighting.unit(), new MdsOptions().update(MdsOptions.Update.SPIDAL));
    }

    @Test
    void aPointWeightOfZeroCutsThatPointOff() {
        Path full = line("line.bin", 10, (i, j) -> 1);
        double[] weights = {1, 1, 1, 0, 1, 1, 1, 1, 1, 1};
        BadInputException e = refused(full, 10, Weighting.points(weights), new MdsOptions());
        assertEquals(Input.POINT_WEIGHTS, e.input());
        assertTrue(e.getMessage().contains("sizes 9, 1 (first points 0, 3)"), e.getMessage());
    }

    @Test
    void withFixedPointsEachGroupNeedsOne() {
        int n = 16;
        Path file = line("two-groups.bin", n, (i, j) -> (i < 8) == (j < 8) ? 1 : 0);
        boolean[] fixed = new boolean[n];
        double[] at = new double[n * 3];
        fixed[0] = true;
        fixed[1] = true;
        double step = step(n);
        at[3] = step;
        BadInputException e = refused(file, n, Weighting.unit(), new MdsOptions().fixed(fixed, at));
        assertTrue(e.getMessage().startsWith("1 groups of points have no distance of non-zero weight to a fixed point:"
                + " sizes 8 (first points 8)"), e.getMessage());
        // one fixed point in each group: the groups are placed by them, each group's distances are met
        fixed[8] = true;
        fixed[9] = true;
        at[8 * 3 + 1] = 5;
        at[9 * 3] = step;
        at[9 * 3 + 1] = 5;
        MdsResult r = run(file, n, Weighting.unit(), new MdsOptions().fixed(fixed, at).threshold(1e-12));
        for (int i = 0; i < n; i++) {
            for (int j = i + 1; j < n; j++) {
                if ((i < 8) == (j < 8)) {
                    assertEquals((j - i) * step, r.distance(i, j), 1e-6, "pair " + i + ", " + j);
                }
            }
        }
    }

    @Test
    void blocksThatOnlyTalkThroughBlockSyncAgreeOnTheGroups() throws Exception {
        // a chain (each point linked to the next only) crosses the three blocks: linked, and mapped on a line
        int n = 30;
        Path chain = line("chain.bin", n, (i, j) -> j == i + 1 ? 1 : 0);
        Path broken = line("broken.bin", n, (i, j) -> j == i + 1 && i != 16 ? 1 : 0);
        List<Object> chainResults = inBlocks(chain, n, 3);
        for (Object r : chainResults) {
            assertTrue(r instanceof MdsResult, "a chain is linked: " + r);
        }
        List<Object> brokenResults = inBlocks(broken, n, 3);
        for (Object r : brokenResults) {
            assertTrue(r instanceof BadInputException e && e.getMessage().contains("sizes 17, 13 (first points 0, 17)"),
                    "every block refuses a broken chain: " + r);
        }
    }

    @Test
    void anInitialLayoutWithEveryPointInOnePlaceIsRefused() {
        int n = 10;
        Path file = line("line10.bin", n, (i, j) -> 1);
        double[] together = new double[n * 3];
        java.util.Arrays.fill(together, 0.5);
        BadInputException e = refused(file, n, Weighting.unit(), new MdsOptions().initial(together));
        assertEquals(Input.INITIAL_LAYOUT, e.input());
        assertTrue(e.getMessage().startsWith("all 10 points of the initial layout are at (0.5, 0.5, 0.5):"),
                e.getMessage());
        // the weighted path too (it would stay there as well)
        refused(file, n, Weighting.unit().withSammon(true), new MdsOptions().initial(together));
        // a fixed point elsewhere moves the others: accepted, and the line comes out right
        boolean[] fixed = new boolean[n];
        fixed[0] = true;
        double[] at = new double[n * 3];
        MdsResult r = run(file, n, Weighting.unit(), new MdsOptions().initial(together).fixed(fixed, at)
                .threshold(1e-12));
        for (int i = 1; i < n; i++) {
            assertEquals(i * step(n), r.distance(0, i), 1e-6, "point " + i);
        }
    }

    @Test
    void distancesThatAreAllZeroPutEveryPointInOnePlace() {
        int n = 8;
        Path zeros = Fixtures.writeSymmetric(dir, "zeros.bin", n, (i, j) -> 0);
        double[] together = new double[n * 3];
        java.util.Arrays.fill(together, 0.25);
        for (MdsOptions options : new MdsOptions[] {new MdsOptions(), new MdsOptions().classicalInit(),
                new MdsOptions().initial(together)}) {
            for (Weighting weighting : new Weighting[] {Weighting.unit(), Weighting.points(new double[] {1, 2, 1, 1,
                    1, 1, 1, 3})}) {
                MdsResult r = run(zeros, n, weighting, options);
                assertEquals(0, r.normalizedStress, 0.0);
                for (int i = 1; i < n; i++) {
                    assertEquals(0, r.distance(0, i), 1e-12, options.update() + " " + weighting.kind());
                }
            }
        }
    }

    /** Runs DA-MDS in {@code p} blocks on threads: each block's result, or what it threw. */
    private static List<Object> inBlocks(Path file, int n, int p) throws InterruptedException {
        ThreadedBlockSync.Group group = new ThreadedBlockSync.Group(p);
        ExecutorService pool = Executors.newFixedThreadPool(p);
        List<Object> outcomes = new ArrayList<>();
        try {
            List<Future<MdsResult>> results = new ArrayList<>();
            for (int b = 0; b < p; b++) {
                ThreadedBlockSync sync = group.member(b);
                results.add(pool.submit(() -> new DaMds(file, n, ByteOrder.LITTLE_ENDIAN, Weighting.unit(),
                        new MdsOptions().maxTemperatureLoops(3), sync).run()));
            }
            for (Future<MdsResult> f : results) {
                try {
                    outcomes.add(f.get());
                } catch (ExecutionException e) {
                    outcomes.add(e.getCause());
                }
            }
        } finally {
            pool.shutdownNow();
        }
        return outcomes;
    }
}
