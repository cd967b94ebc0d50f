package io.meridian.live;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.management.ThreadMXBean;
import java.lang.management.ManagementFactory;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Procrustes alignment of a new 3-D frame to the previous one: recovery, drift, optimality, degenerate frames. */
class RigidAlignmentTest {
    private static final int DIM = 3;

    /** Rodrigues' rotation by {@code angle} about {@code axis}, row-major, times diag(1, 1, -1) when reflecting. */
    private static double[] orthogonal(double[] axis, double angle, boolean reflect) {
        double norm = Math.sqrt(axis[0] * axis[0] + axis[1] * axis[1] + axis[2] * axis[2]);
        double x = axis[0] / norm;
        double y = axis[1] / norm;
        double z = axis[2] / norm;
        double c = Math.cos(angle);
        double s = Math.sin(angle);
        double t = 1 - c;
        double[] r = {
            t * x * x + c, t * x * y - s * z, t * x * z + s * y,
            t * x * y + s * z, t * y * y + c, t * y * z - s * x,
            t * x * z - s * y, t * y * z + s * x, t * z * z + c,
        };
        if (reflect) {
            r[2] = -r[2];
            r[5] = -r[5];
            r[8] = -r[8];
        }
        return r;
    }

    /** Rows of {@code x} moved to {@code scale * R x + t}. */
    private static double[] transformed(double[] x, int rows, double[] r, double scale, double[] t) {
        double[] y = new double[rows * DIM];
        for (int i = 0; i < rows; i++) {
            for (int a = 0; a < DIM; a++) {
                double s = 0;
                for (int b = 0; b < DIM; b++) {
                    s += r[a * DIM + b] * x[i * DIM + b];
                }
                y[i * DIM + a] = scale * s + t[a];
            }
        }
        return y;
    }

    private static double[] randomFrame(int rows, Random random) {
        double[] x = new double[rows * DIM];
        for (int i = 0; i < x.length; i++) {
            x[i] = 2 * random.nextDouble() - 1;
        }
        return x;
    }

    private static void assertNoNaN(double[] values, RigidAlignment alignment) {
        for (double v : values) {
            assertFalse(Double.isNaN(v), "NaN in the aligned frame");
        }
        for (int r = 0; r < DIM; r++) {
            assertFalse(Double.isNaN(alignment.translation(r)));
            for (int c = 0; c < DIM; c++) {
                assertFalse(Double.isNaN(alignment.rotation(r, c)));
            }
        }
        assertFalse(Double.isNaN(alignment.drift()));
    }

    private static void assertIdentityRotation(RigidAlignment alignment) {
        for (int r = 0; r < DIM; r++) {
            for (int c = 0; c < DIM; c++) {
                assertEquals(r == c ? 1.0 : 0.0, alignment.rotation(r, c), 0.0);
            }
        }
    }

    @ParameterizedTest(name = "reflected: {0}")
    @ValueSource(booleans = {false, true})
    void aRotatedShiftedFrameIsMappedBackExactlyNewPointsIncluded(boolean reflect) {
        Random random = new Random(reflect ? 2 : 1);
        int common = 30;
        int n = 45;
        double[] truth = randomFrame(n, random);
        double[] r0 = orthogonal(new double[] {0.3, -1, 0.5}, 2.1, reflect);
        double[] current = transformed(truth, n, r0, 1.0, new double[] {5, -2, 0.75});
        double[] previous = Arrays.copyOf(truth, common * DIM);
        RigidAlignment alignment = new RigidAlignment();

        alignment.align(previous, current, common, n);

        assertArrayEquals(truth, current, 1e-9, "shared and new points are back where the previous frame had them");
        assertEquals(reflect, alignment.isReflection());
        assertEquals(3, alignment.rank());
        for (int r = 0; r < DIM; r++) {
            for (int c = 0; c < DIM; c++) {
                assertEquals(r0[c * DIM + r], alignment.rotation(r, c), 1e-12, "R is the inverse, R0^T");
            }
        }
        assertEquals(0, alignment.drift(), 1e-12);
        assertEquals(0, alignment.rmsMovement(), 1e-12);
    }

    @Test
    void driftOfAUniformlyScaledFrameIsTheScaleChange() {
        // q = s R0 p + t0: the best rigid fit undoes R0 and t0 and leaves each point moved by |s - 1| |p - p0|, so the
        // RMS movement is |s - 1| times the radius
        Random random = new Random(9);
        int common = 50;
        double[] previous = randomFrame(common, random);
        for (double scale : new double[] {1.03, 0.9, 1.0}) {
            double[] current = transformed(previous, common, orthogonal(new double[] {1, 1, 0}, 0.7, false), scale,
                    new double[] {-1, 2, 3});
            RigidAlignment alignment = new RigidAlignment();

            alignment.align(previous, current, common, common);

            assertEquals(Math.abs(scale - 1), alignment.drift(), 1e-12, "scale " + scale);
            assertEquals(alignment.rmsMovement() / alignment.radius(), alignment.drift(), 1e-15);
            assertEquals(rmsDistanceFromCentroid(previous, common), alignment.radius(), 1e-12);
        }
    }

    @Test
    void noOtherOrthogonalTransformFitsANoisyFrameBetter() {
        Random random = new Random(4);
        int common = 40;
        double[] previous = randomFrame(common, random);
        double[] current = transformed(previous, common, orthogonal(new double[] {0, 1, 2}, -1.2, true), 1.0,
                new double[] {0.5, 0.5, 0.5});
        for (int i = 0; i < current.length; i++) {
            current[i] += 0.05 * random.nextGaussian();
        }
        RigidAlignment alignment = new RigidAlignment();
        alignment.fit(previous, current, common);
        double[] r = new double[9];
        alignment.rotation(r);
        double[] t = {alignment.translation(0), alignment.translation(1), alignment.translation(2)};
        double best = squaredResidual(previous, current, common, r, t);
        assertEquals(alignment.rmsMovement(), Math.sqrt(best / common), 1e-12);
        assertTrue(alignment.drift() > 0);

        for (int trial = 0; trial < 200; trial++) {
            double[] nudge = orthogonal(new double[] {random.nextGaussian(), random.nextGaussian(),
                random.nextGaussian()}, 1e-3 * random.nextGaussian(), false);
            double[] other = multiply(nudge, r);
            double[] shifted = {t[0] + 1e-3 * random.nextGaussian(), t[1] + 1e-3 * random.nextGaussian(),
                t[2] + 1e-3 * random.nextGaussian()};
            assertTrue(squaredResidual(previous, current, common, other, shifted) >= best,
                    "a nearby rotation and translation fits worse");
        }
        double[] flipped = multiply(orthogonal(new double[] {0, 0, 1}, 0, true), r);
        assertTrue(squaredResidual(previous, current, common, flipped, t) > best, "the other handedness fits worse");
    }

    @Test
    void aPlanarFrameIsAlignedByARotation() {
        // in-plane shared points determine R only up to the reflection through their plane; the rotation is kept, so
        // new points off the plane come back too
        Random random = new Random(6);
        int common = 20;
        int n = 25;
        double[] truth = randomFrame(n, random);
        for (int i = 0; i < common; i++) {
            truth[i * DIM + 2] = 0.25;
        }
        double[] r0 = orthogonal(new double[] {1, -2, 0.5}, 0.9, false);
        double[] current = transformed(truth, n, r0, 1.0, new double[] {0, 1, -1});
        RigidAlignment alignment = new RigidAlignment();

        alignment.align(Arrays.copyOf(truth, common * DIM), current, common, n);

        assertEquals(2, alignment.rank());
        assertFalse(alignment.isReflection());
        assertArrayEquals(truth, current, 1e-9);
    }

    @Test
    void noSharedPointLeavesTheFrameAsItIs() {
        double[] current = randomFrame(4, new Random(1));
        double[] before = current.clone();
        RigidAlignment alignment = new RigidAlignment();

        alignment.align(new double[0], current, 0, 4);

        assertArrayEquals(before, current, 0.0);
        assertEquals(0, alignment.drift(), 0.0);
        assertEquals(0, alignment.rank());
        assertNoNaN(current, alignment);
    }

    @Test
    void oneOrTwoSharedPointsOrCollinearOnesFitATranslationOnly() {
        Random random = new Random(8);
        for (int common : new int[] {1, 2, 5}) {
            double[] previous = randomFrame(common, random);
            double[] current = randomFrame(common + 3, random);
            if (common == 5) {
                // five points on one line in both frames
                for (int i = 0; i < common; i++) {
                    for (int a = 0; a < DIM; a++) {
                        previous[i * DIM + a] = 0.1 * a + i * (a + 1);
                        current[i * DIM + a] = -0.3 + i * (2 - a);
                    }
                }
            }
            double[] before = current.clone();
            RigidAlignment alignment = new RigidAlignment();

            alignment.align(previous, current, common, common + 3);

            assertNoNaN(current, alignment);
            assertTrue(alignment.rank() <= 1, "rank " + alignment.rank());
            assertIdentityRotation(alignment);
            double[] shift = new double[DIM];
            for (int a = 0; a < DIM; a++) {
                shift[a] = mean(previous, common, a) - mean(before, common, a);
                assertEquals(mean(previous, common, a), mean(current, common, a), 1e-12, "centroids coincide");
            }
            for (int i = 0; i < common + 3; i++) {
                for (int a = 0; a < DIM; a++) {
                    assertEquals(before[i * DIM + a] + shift[a], current[i * DIM + a], 1e-12);
                }
            }
            if (common == 1) {
                assertEquals(0, alignment.drift(), 0.0);
            }
        }
    }

    @Test
    void coincidentPointsGiveAFiniteDriftOrAnInfiniteOneButNeverNaN() {
        double[] previous = {1, 2, 3, 1, 2, 3, 1, 2, 3};
        double[] sameSpot = {7, 7, 7, 7, 7, 7, 7, 7, 7};
        RigidAlignment alignment = new RigidAlignment();

        alignment.align(previous, sameSpot, 3, 3);

        assertArrayEquals(previous, sameSpot, 1e-15);
        assertEquals(0, alignment.rank());
        assertEquals(0, alignment.drift(), 0.0);
        assertNoNaN(sameSpot, alignment);

        double[] spread = {0, 0, 0, 1, 0, 0, 0, 1, 0};
        alignment.align(previous, spread, 3, 3);
        assertEquals(0, alignment.radius(), 0.0);
        assertTrue(alignment.rmsMovement() > 0);
        assertEquals(Double.POSITIVE_INFINITY, alignment.drift());
        assertNoNaN(spread, alignment);
    }

    @Test
    void badArgumentsAreRefused() {
        RigidAlignment alignment = new RigidAlignment();
        double[] frame = new double[6];
        assertThrows(IllegalArgumentException.class, () -> alignment.align(frame, frame.clone(), 2, 1));
        assertThrows(IllegalArgumentException.class, () -> alignment.align(frame, new double[9], 3, 3));
        assertThrows(IllegalArgumentException.class, () -> alignment.align(frame, new double[6], 2, 3));
        assertThrows(IllegalArgumentException.class, () -> alignment.fit(frame, frame, -1));
        assertThrows(IllegalArgumentException.class, () -> alignment.apply(null, 1));
    }

    @Test
    void aligningAFrameAllocatesNothing() {
        ThreadMXBean threads = (ThreadMXBean) ManagementFactory.getThreadMXBean();
        Random random = new Random(12);
        int common = 200;
        int n = 220;
        double[] previous = randomFrame(common, random);
        double[] frame = randomFrame(n, random);
        double[] r0 = orthogonal(new double[] {1, 2, 3}, 0.001, false);
        double[] t0 = {1e-4, 0, -1e-4};
        RigidAlignment alignment = new RigidAlignment();
        for (int i = 0; i < 20_000; i++) {
            alignment.align(previous, frame, common, n);
        }
        double[] moved = transformed(frame, n, r0, 1.0, t0);
        long id = Thread.currentThread().getId();
        long before = threads.getThreadAllocatedBytes(id);
        int calls = 1000;
        for (int i = 0; i < calls; i++) {
            System.arraycopy(moved, 0, frame, 0, moved.length);
            alignment.align(previous, frame, common, n);
        }
        long perCall = (threads.getThreadAllocatedBytes(id) - before) / calls;
        assertTrue(perCall < 16, perCall + " bytes per alignment");
    }

    private static double mean(double[] x, int rows, int axis) {
        double s = 0;
        for (int i = 0; i < rows; i++) {
            s += x[i * DIM + axis];
        }
        return s / rows;
    }

    private static double rmsDistanceFromCentroid(double[] x, int rows) {
        double s = 0;
        for (int i = 0; i < rows; i++) {
            for (int a = 0; a < DIM; a++) {
                double d = x[i * DIM + a] - mean(x, rows, a);
                s += d * d;
            }
        }
        return Math.sqrt(s / rows);
    }

    private static double squaredResidual(double[] previous, double[] current, int rows, double[] r, double[] t) {
        double[] aligned = transformed(current, rows, r, 1.0, t);
        double s = 0;
        for (int i = 0; i < rows * DIM; i++) {
            double d = aligned[i] - previous[i];
            s += d * d;
        }
        return s;
    }

    private static double[] multiply(double[] a, double[] b) {
        double[] c = new double[9];
        for (int r = 0; r < DIM; r++) {
            for (int k = 0; k < DIM; k++) {
                for (int col = 0; col < DIM; col++) {
                    c[r * DIM + col] += a[r * DIM + k] * b[k * DIM + col];
                }
            }
        }
        return c;
    }
}
