package io.meridian.live;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.meridian.collective.SingleProcessSync;
import io.meridian.collective.ThreadedBlockSync;
import io.meridian.matrix.DistanceSource;
import io.meridian.matrix.LowerRows;
import io.meridian.matrix.RowBlock;
import io.meridian.mds.TriangleSmacof;
import io.meridian.synthetic.SyntheticDataset;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A reveal between two layouts whose straight path is worse than both, as a re-anneal's at 32K was (issue 32): two
 * local minima of SMACOF for uniform 8-D data in 3-D (the bench's data), from two random starts, the one shown (A)
 * aligned rigidly to the new one (B) as a reveal's ends are. Two tasks in threads, each with its own rows of the
 * triangle.
 */
class RevealPathTest {
    private static final int N = 400;
    private static final int TASKS = 2;
    private static final int BLOCK_ROWS = 32;

    @TempDir
    Path dir;

    private RowBlock matrix;
    /** The two ends, row-major: converged SMACOF layouts from two random starts, A aligned to B. */
    private double[] a;
    private double[] b;

    @BeforeEach
    void layouts() throws Exception {
        SyntheticDataset.uniform(N, 8, 11).write(dir, ByteOrder.LITTLE_ENDIAN);
        matrix = DistanceSource.matrixFile(dir.resolve(SyntheticDataset.DISTANCES_FILE), N, ByteOrder.LITTLE_ENDIAN)
                .all();
        b = converged(7);
        a = converged(101);
        new RigidAlignment().align(b, a, N, N);
    }

    /** 300 SMACOF iterations from a random start. */
    private double[] converged(long seed) {
        TriangleSmacof one = single();
        Random random = new Random(seed);
        for (int i = 0; i < N; i++) {
            one.setPoint(i, random.nextDouble(), random.nextDouble(), random.nextDouble());
        }
        for (int it = 0; it < 300; it++) {
            one.iterate(N, 0);
        }
        double[] out = new double[3 * N];
        one.copyPoints(N, out);
        return out;
    }

    private TriangleSmacof single() {
        return new TriangleSmacof(N, LowerRows.of(matrix), SingleProcessSync.INSTANCE, ids(N, -1));
    }

    /** Rows of task {@code task} (every TASKS-th block of BLOCK_ROWS rows), or all rows for -1. */
    private static int[] ids(int n, int task) {
        return java.util.stream.IntStream.range(0, n)
                .filter(i -> task < 0 || (i / BLOCK_ROWS) % TASKS == task).toArray();
    }

    /** The stress of a layout, measured apart from any reveal. */
    private double stress(double[] layout) {
        TriangleSmacof s = single();
        s.setPoints(N, layout);
        return s.stress(N);
    }

    private static double[] between(double[] from, double[] to, double t) {
        double[] out = new double[from.length];
        for (int k = 0; k < out.length; k++) {
            out[k] = from[k] + t * (to[k] - from[k]);
        }
        return out;
    }

    /** One task's reveal: every frame it showed and the passes over its rows it took (counted at the rows). */
    private record Reveal(List<double[]> frames, List<Double> stresses, int passes, long passesCounted,
                          int guttmanSteps, double bound, boolean started) {
    }

    private Reveal[] reveal(int frames, long budget) throws Exception {
        ThreadedBlockSync.Group group = new ThreadedBlockSync.Group(TASKS);
        Reveal[] out = new Reveal[TASKS];
        ExecutorService pool = Executors.newFixedThreadPool(TASKS);
        try {
            List<Future<?>> runs = new ArrayList<>();
            for (int t = 0; t < TASKS; t++) {
                int task = t;
                runs.add(pool.submit(() -> {
                    int[] owned = ids(N, task);
                    int lastRow = owned[owned.length - 1];
                    AtomicInteger passes = new AtomicInteger();
                    LowerRows rows = LowerRows.of(matrix);
                    LowerRows counted = new LowerRows() {
                        @Override
                        public void copy(int id, int from, int to, short[] dst) {
                            if (id == lastRow && from == 0) {
                                passes.incrementAndGet(); // every pass reads the first tile of every owned row once
                            }
                            rows.copy(id, from, to, dst);
                        }

                        @Override
                        public short get(int id, int column) {
                            return rows.get(id, column);
                        }
                    };
                    TriangleSmacof smacof = new TriangleSmacof(N, counted, group.member(task), owned);
                    RevealPath path = new RevealPath();
                    double[] shown = a.clone();
                    double[] target = b.clone();
                    double[] scratch = new double[3 * N];
                    List<double[]> shownFrames = new ArrayList<>();
                    List<Double> stresses = new ArrayList<>();
                    boolean started = path.start(smacof, shown, target, N, frames, budget);
                    boolean last = !started;
                    while (!last) {
                        last = path.step(smacof, shown, target, scratch);
                        double[] frame = new double[3 * N];
                        smacof.copyPoints(N, frame);
                        assertArrayEquals(frame, shown, "the frame set is the one the reveal says it showed");
                        shownFrames.add(frame);
                        stresses.add(path.frameStress());
                    }
                    out[task] = new Reveal(shownFrames, stresses, passes.get(), path.passes(smacof),
                            path.guttmanSteps(), path.bound(), started);
                    return null;
                }));
            }
            for (Future<?> f : runs) {
                f.get(120, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        return out;
    }

    @Test
    void noFrameOfARevealIsWorseThanBothEndsAndItEndsAtTheNewLayout() throws Exception {
        double stressA = stress(a);
        double stressB = stress(b);
        double bound = Math.max(stressA, stressB);
        double straightWorst = 0;
        for (int k = 1; k < 40; k++) {
            straightWorst = Math.max(straightWorst, stress(between(a, b, k / 40.0)));
        }
        double midpoint = stress(between(a, b, 0.5));
        assertTrue(midpoint > bound, "the straight path's midpoint (" + midpoint + ") is worse than both ends ("
                + stressA + ", " + stressB + ")");

        int frames = 40;
        long budget = 120;
        Reveal[] tasks = reveal(frames, budget);
        Reveal r = tasks[0];
        assertTrue(r.started(), "a reveal within its budget starts");
        assertEquals(bound, r.bound(), 1e-12 * bound, "the reveal's bound is the larger stress of its ends");
        assertEquals(r.frames().size(), tasks[1].frames().size(), "both tasks show as many frames");
        for (int f = 0; f < r.frames().size(); f++) {
            assertArrayEquals(r.frames().get(f), tasks[1].frames().get(f), "frame " + f + " is the same on both tasks");
        }
        double worst = 0;
        for (int f = 0; f < r.frames().size(); f++) {
            double s = stress(r.frames().get(f));
            worst = Math.max(worst, s);
            assertEquals(s, r.stresses().get(f), 1e-12 * s, "frame " + f + "'s stress as the reveal measured it");
            assertTrue(s <= bound * (1 + 1e-12), "frame " + f + " of " + r.frames().size() + ": stress " + s
                    + " above both ends (" + stressA + ", " + stressB + ")");
        }
        assertArrayEquals(b, r.frames().get(r.frames().size() - 1), "the reveal ends at the new layout");
        assertTrue(r.frames().size() > 2, "shown over frames, not at once: " + r.frames().size());
        assertTrue(r.guttmanSteps() > 0, "the straight path had to be left");
        for (Reveal t : tasks) {
            assertTrue(t.passes() <= budget, t.passes() + " passes over the rows for a budget of " + budget);
            assertEquals(t.passes(), t.passesCounted(), "the passes the reveal counts are those its rows saw");
        }
        System.out.printf("reveal A -> B (N = %d): stress A %.5f, B %.5f; straight path worst %.5f (midpoint %.5f);"
                + " revealed: %d frames, worst %.5f, %d Guttman steps, %d passes of %d%n", N, stressA, stressB,
                straightWorst, midpoint, r.frames().size(), worst, r.guttmanSteps(), r.passes(), budget);
    }

    @Test
    void aSmallBudgetEndsTheRevealSoonerAndNeverExceedsIt() throws Exception {
        double bound = Math.max(stress(a), stress(b));
        for (long budget : new long[] {5, 12}) {
            Reveal r = reveal(40, budget)[0];
            assertTrue(r.started());
            assertTrue(r.passes() <= budget, r.passes() + " passes for a budget of " + budget);
            assertTrue(r.frames().size() <= budget, r.frames().size() + " frames for a budget of " + budget);
            assertArrayEquals(b, r.frames().get(r.frames().size() - 1), "the reveal ends at the new layout");
            for (double[] frame : r.frames()) {
                assertTrue(stress(frame) <= bound * (1 + 1e-12), "a frame above both ends at budget " + budget);
            }
        }
    }

    @Test
    void aChangeThatCostLessThanAMeasuredFrameIsShownAtOnce() throws Exception {
        Reveal r = reveal(40, 2)[0];
        assertFalse(r.started(), "two passes pay for the ends only");
        assertEquals(0, r.passes(), "and none is taken");
    }
}
