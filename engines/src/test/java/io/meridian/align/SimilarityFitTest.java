package io.meridian.align;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.meridian.engine.BadInputException;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The closed-form similarity fit: it recovers known transforms, its proper-rotation mode gives the best proper
 * rotation of a mirrored map, it agrees with an iterative (Levenberg-Marquardt) least-squares fit on noisy data, and it
 * refuses points that do not determine a transform.
 */
class SimilarityFitTest {
    private static final int DIM = 3;
    private static final double EXACT = 1e-9;

    /** A random rotation (Rodrigues, random axis and angle in (-pi, pi)), times diag(1, 1, -1) when reflecting. */
    private static double[] randomOrthogonal(Random random, boolean reflect) {
        double[] axis = {random.nextGaussian(), random.nextGaussian(), random.nextGaussian()};
        double angle = Math.PI * (2 * random.nextDouble() - 1);
        double[] r = rodrigues(axis, angle);
        if (reflect) {
            r[2] = -r[2];
            r[5] = -r[5];
            r[8] = -r[8];
        }
        return r;
    }

    private static double[] rodrigues(double[] axis, double angle) {
        double norm = Math.sqrt(axis[0] * axis[0] + axis[1] * axis[1] + axis[2] * axis[2]);
        if (norm == 0) {
            return new double[] {1, 0, 0, 0, 1, 0, 0, 0, 1};
        }
        double x = axis[0] / norm;
        double y = axis[1] / norm;
        double z = axis[2] / norm;
        double c = Math.cos(angle);
        double s = Math.sin(angle);
        double t = 1 - c;
        return new double[] {
            t * x * x + c, t * x * y - s * z, t * x * z + s * y,
            t * x * y + s * z, t * y * y + c, t * y * z - s * x,
            t * x * z - s * y, t * y * z + s * x, t * z * z + c,
        };
    }

    private static double[] randomMap(int n, Random random) {
        double[] x = new double[n * DIM];
        for (int i = 0; i < x.length; i++) {
            x[i] = 4 * random.nextDouble() - 2;
        }
        return x;
    }

    /** {@code y} such that {@code s R y + t = x}: y = R^T (x - t) / s. */
    private static double[] inverseImage(double[] x, double s, double[] r, double[] t) {
        double[] y = new double[x.length];
        for (int o = 0; o < x.length; o += DIM) {
            for (int b = 0; b < DIM; b++) {
                double sum = 0;
                for (int a = 0; a < DIM; a++) {
                    sum += r[a * DIM + b] * (x[o + a] - t[a]);
                }
                y[o + b] = sum / s;
            }
        }
        return y;
    }

    private static void assertTransform(double s, double[] r, double[] t, Similarity fit, double tolerance) {
        assertEquals(s, fit.scale(), tolerance, "scale");
        for (int k = 0; k < 9; k++) {
            assertEquals(r[k], fit.rotationRowMajor()[k], tolerance, "R[" + k / 3 + "][" + k % 3 + "]");
        }
        for (int a = 0; a < DIM; a++) {
            assertEquals(t[a], fit.translation()[a], tolerance, "t[" + a + "]");
        }
    }

    @ParameterizedTest
    @ValueSource(longs = {1, 2, 3, 4, 5, 6, 7, 8})
    void recoversAKnownRotationScaleAndShift(long seed) {
        Random random = new Random(seed);
        int n = 5 + random.nextInt(200);
        double[] x = randomMap(n, random);
        double[] r = randomOrthogonal(random, false);
        double s = Math.exp(2 * random.nextDouble() - 1);
        double[] t = {10 * random.nextGaussian(), 10 * random.nextGaussian(), 10 * random.nextGaussian()};
        double[] y = inverseImage(x, s, r, t);
        AlignOptions properOnly = new AlignOptions(false, true, false, 0);
        for (AlignOptions options : new AlignOptions[] {AlignOptions.DEFAULT, properOnly}) {
            Similarity fit = SimilarityFit.of(x, y, null, options);
            assertTransform(s, r, t, fit, EXACT);
            assertFalse(fit.reflection());
            assertEquals(3, fit.rank());
            assertEquals(n, fit.points());
            assertTrue(fit.rmsResidual() < EXACT, "rms " + fit.rmsResidual());
            double[] moved = fit.apply(y);
            for (int k = 0; k < x.length; k++) {
                assertEquals(x[k], moved[k], EXACT);
            }
        }
    }

    @ParameterizedTest
    @ValueSource(longs = {11, 12, 13, 14, 15})
    void recoversAKnownReflectionScaleAndShiftWithRandomWeights(long seed) {
        Random random = new Random(seed);
        int n = 4 + random.nextInt(100);
        double[] x = randomMap(n, random);
        double[] r = randomOrthogonal(random, true);
        double s = Math.exp(2 * random.nextDouble() - 1);
        double[] t = {random.nextGaussian(), random.nextGaussian(), random.nextGaussian()};
        double[] y = inverseImage(x, s, r, t);
        double[] w = new double[n];
        for (int i = 0; i < n; i++) {
            w[i] = random.nextDouble() < 0.2 && i >= 4 ? 0 : Math.exp(3 * random.nextGaussian());
        }
        Similarity fit = SimilarityFit.of(x, y, w, AlignOptions.DEFAULT);
        assertTransform(s, r, t, fit, EXACT);
        assertTrue(fit.reflection());
        assertEquals(-1, Svd3.determinant(fit.rotationRowMajor()), 1e-12);
        Similarity relative = SimilarityFit.of(x, y, w, new AlignOptions(true, true, true, 0));
        assertTransform(s, r, t, relative, EXACT);
    }

    @Test
    void withoutScaleARigidMotionIsRecoveredAndScaleStaysOne() {
        Random random = new Random(21);
        double[] x = randomMap(50, random);
        double[] r = randomOrthogonal(random, false);
        double[] t = {1, -2, 3};
        double[] y = inverseImage(x, 1, r, t);
        Similarity fit = SimilarityFit.of(x, y, null, new AlignOptions(false, false, false, 0));
        assertTransform(1, r, t, fit, EXACT);
        Similarity scaled = SimilarityFit.of(x, inverseImage(x, 2, r, t), null,
                new AlignOptions(false, false, false, 0));
        assertEquals(1.0, scaled.scale());
        assertTrue(scaled.rmsResidual() > 0.1, "a map at half size does not fit without scale");
    }

    @Test
    void rotationOnlyOnAMirroredMapGivesTheBestProperRotationAndALargerResidual() {
        Random random = new Random(31);
        double[] x = randomMap(60, random);
        // an elongated map: with about equal spreads along its axes the best proper rotation of a mirror image is
        // nearly degenerate (it gives up the smallest of three about equal singular values), and two fits that agree
        // in chi-square to 1e-12 differ in R by 3e-8
        for (int i = 0; i < 60; i++) {
            x[3 * i] *= 3;
            x[3 * i + 2] *= 0.3;
        }
        double[] r = randomOrthogonal(random, true);
        double[] y = inverseImage(x, 1.5, r, new double[] {0.5, 0.25, -1});
        Similarity free = SimilarityFit.of(x, y, null, AlignOptions.DEFAULT);
        AlignOptions properOnly = new AlignOptions(false, true, false, 0);
        Similarity proper = SimilarityFit.of(x, y, null, properOnly);
        assertTrue(free.reflection());
        assertFalse(proper.reflection());
        assertEquals(1, Svd3.determinant(proper.rotationRowMajor()), 1e-12);
        assertTrue(free.rmsResidual() < EXACT);
        assertTrue(proper.rmsResidual() > 0.1, "rms " + proper.rmsResidual());
        // the best proper rotation: Levenberg-Marquardt over the proper rotations from several starts finds nothing
        // better, and its best agrees with the closed form
        Lm best = null;
        for (int start = 0; start < 6; start++) {
            Lm lm = Lm.fit(x, y, ones(60), true, randomOrthogonal(random, false));
            if (best == null || lm.chiSquare < best.chiSquare) {
                best = lm;
            }
        }
        assertEquals(proper.chiSquare(), best.chiSquare, 1e-9 * proper.chiSquare());
        assertTransform(best.scale, best.r, best.t, proper, 1e-8);
    }

    /** Noisy data: the closed form and the iterative fit reach the same transform and chi-square. */
    @ParameterizedTest
    @ValueSource(strings = {"unit", "weighted", "relative", "unit-noscale", "proper"})
    void agreesWithAnIterativeLeastSquaresFitOnNoisyData(String kind) {
        Random random = new Random(kind.hashCode());
        int n = 300;
        double[] x = randomMap(n, random);
        boolean reflect = !kind.equals("proper");
        double[] r = randomOrthogonal(random, reflect);
        boolean scale = !kind.equals("unit-noscale");
        double[] y = inverseImage(x, scale ? 0.7 : 1, r, new double[] {3, 2, 1});
        for (int k = 0; k < y.length; k++) {
            y[k] += 0.05 * random.nextGaussian();
        }
        double[] w = kind.equals("weighted") ? new double[n] : null;
        if (w != null) {
            for (int i = 0; i < n; i++) {
                w[i] = 0.1 + random.nextDouble();
            }
        }
        AlignOptions options = new AlignOptions(!kind.equals("proper"), scale, kind.equals("relative"), 0.01);
        Similarity closed = SimilarityFit.of(x, y, w, options);
        double[] used = SimilarityFit.weights(x, w, options);
        // iterate from the identity in each component that is allowed (a reflection start stays a reflection)
        Lm lm = Lm.fit(x, y, used, scale, new double[] {1, 0, 0, 0, 1, 0, 0, 0, 1});
        if (options.allowReflection()) {
            Lm mirrored = Lm.fit(x, y, used, scale, new double[] {1, 0, 0, 0, 1, 0, 0, 0, -1});
            lm = mirrored.chiSquare < lm.chiSquare ? mirrored : lm;
        }
        assertTrue(lm.chiSquare > 0);
        assertEquals(lm.chiSquare, closed.chiSquare(), 1e-10 * lm.chiSquare, "chi-square");
        assertTransform(lm.scale, lm.r, lm.t, closed, 1e-9);
        assertEquals(reflect, closed.reflection());
        double direct = 0;
        double squares = 0;
        double[] moved = closed.apply(y);
        for (int i = 0; i < n; i++) {
            double e = 0;
            for (int a = 0; a < DIM; a++) {
                double d = moved[3 * i + a] - x[3 * i + a];
                e += d * d;
            }
            assertEquals(Math.sqrt(e), closed.residualsById()[i], 1e-12);
            double len2 = x[3 * i] * x[3 * i] + x[3 * i + 1] * x[3 * i + 1] + x[3 * i + 2] * x[3 * i + 2];
            double weight = (w == null ? 1 : w[i]) / (kind.equals("relative") ? Math.max(0.01 * 0.01, len2) : 1);
            direct += weight * e;
            squares += e;
        }
        assertEquals(direct, closed.chiSquare(), 1e-12 * direct, "chi-square = sum of w_i |r_i|^2");
        assertEquals(Math.sqrt(squares / n), closed.rmsResidual(), 1e-12);
    }

    @Test
    void planarPointsGiveAProperRotation() {
        Random random = new Random(41);
        int n = 30;
        double[] x = randomMap(n, random);
        for (int i = 0; i < n; i++) {
            x[3 * i + 2] = 0;
        }
        double[] r = randomOrthogonal(random, false);
        double[] y = inverseImage(x, 2, r, new double[] {1, 1, 1});
        Similarity fit = SimilarityFit.of(x, y, null, AlignOptions.DEFAULT);
        assertEquals(2, fit.rank());
        assertFalse(fit.reflection());
        assertTrue(fit.rmsResidual() < EXACT);
        assertEquals(2, fit.scale(), EXACT);
    }

    @Test
    void refusesPointsThatDoNotDetermineATransform() {
        Random random = new Random(51);
        double[] three = randomMap(3, random);
        BadInputException e = assertThrows(BadInputException.class,
                () -> SimilarityFit.of(three, three.clone(), null, AlignOptions.DEFAULT));
        assertEquals(BadInputException.Input.MAP, e.input());
        assertTrue(e.getMessage().contains("3 points") && e.getMessage().contains("at least 4"), e.getMessage());
        SimilarityFit.of(three, three.clone(), null, new AlignOptions(false, true, false, 0));
        double[] two = randomMap(2, random);
        e = assertThrows(BadInputException.class,
                () -> SimilarityFit.of(two, two.clone(), null, new AlignOptions(false, true, false, 0)));
        assertTrue(e.getMessage().contains("at least 3"), e.getMessage());
        double[] weights = {1, 1, 1, 0, 0};
        double[] five = randomMap(5, random);
        e = assertThrows(BadInputException.class, () -> SimilarityFit.of(five, five.clone(), weights,
                AlignOptions.DEFAULT));
        assertTrue(e.getMessage().contains("3 points of positive weight (of 5)"), e.getMessage());
        double[] line = new double[3 * 10];
        for (int i = 0; i < 10; i++) {
            line[3 * i] = i;
            line[3 * i + 1] = 2 * i;
            line[3 * i + 2] = -i;
        }
        e = assertThrows(BadInputException.class, () -> SimilarityFit.of(line, randomMap(10, random), null,
                AlignOptions.DEFAULT));
        assertTrue(e.getMessage().contains("collinear"), e.getMessage());
        double[] atOrigin = randomMap(6, random);
        atOrigin[6] = 0;
        atOrigin[7] = 0;
        atOrigin[8] = 0;
        e = assertThrows(BadInputException.class, () -> SimilarityFit.of(atOrigin, randomMap(6, random), null,
                new AlignOptions(true, true, true, 0)));
        assertEquals(BadInputException.Input.REFERENCE_MAP, e.input());
        assertTrue(e.getMessage().contains("id 2 is at the origin"), e.getMessage());
        SimilarityFit.of(atOrigin, randomMap(6, random), null, new AlignOptions(true, true, true, 0.1));
        assertThrows(IllegalArgumentException.class, () -> new AlignOptions(true, true, true, -1));
    }

    private static double[] ones(int n) {
        double[] w = new double[n];
        Arrays.fill(w, 1);
        return w;
    }

    /**
     * Levenberg-Marquardt over t (3), an incremental rotation R <- R exp([w]x) (3) and, optionally, s (1): the
     * iterative fit MDSasChisq runs, with a rotation parametrisation that has no gimbal lock. R stays in the component
     * of its start (det +1 or -1) and s stays positive. Its last steps are plain Gauss-Newton (lambda ~ 0), so the
     * result is the minimum to rounding.
     */
    static final class Lm {
        double scale = 1;
        double[] r;
        double[] t = new double[DIM];
        double chiSquare;

        static Lm fit(double[] x, double[] y, double[] w, boolean fitScale, double[] start) {
            Lm lm = new Lm();
            lm.r = start.clone();
            int p = fitScale ? 7 : 6;
            double lambda = 1e-3;
            lm.chiSquare = lm.objective(x, y, w, lm.scale, lm.r, lm.t);
            for (int iteration = 0; iteration < 500; iteration++) {
                double[] a = new double[p * p];
                double[] g = new double[p];
                lm.normalEquations(x, y, w, fitScale, a, g);
                boolean stepped = false;
                double[] delta = null;
                for (int attempt = 0; attempt < 30 && !stepped; attempt++) {
                    double[] damped = a.clone();
                    for (int k = 0; k < p; k++) {
                        damped[k * p + k] += lambda * a[k * p + k];
                    }
                    delta = solve(damped, negate(g), p);
                    double s = lm.scale + (fitScale ? delta[6] : 0);
                    double[] r = multiply(lm.r, rodrigues(new double[] {delta[3], delta[4], delta[5]},
                            Math.sqrt(delta[3] * delta[3] + delta[4] * delta[4] + delta[5] * delta[5])));
                    double[] t = {lm.t[0] + delta[0], lm.t[1] + delta[1], lm.t[2] + delta[2]};
                    double f = lm.objective(x, y, w, s, r, t);
                    // s > 0: with -s, a proper R would be a reflection (-R), as MDSasChisq's negative scale is
                    if (f <= lm.chiSquare && s > 0) {
                        lm.scale = s;
                        lm.r = r;
                        lm.t = t;
                        lm.chiSquare = f;
                        lambda = Math.max(lambda / 10, 1e-30);
                        stepped = true;
                    } else {
                        lambda *= 10;
                    }
                }
                double size = 0;
                for (double d : delta) {
                    size = Math.max(size, Math.abs(d));
                }
                if (!stepped || size < 1e-15) {
                    break;
                }
            }
            return lm;
        }

        private double objective(double[] x, double[] y, double[] w, double s, double[] r, double[] t) {
            double f = 0;
            for (int i = 0; i < w.length; i++) {
                for (int a = 0; a < DIM; a++) {
                    double e = s * (r[a * DIM] * y[3 * i] + r[a * DIM + 1] * y[3 * i + 1]
                            + r[a * DIM + 2] * y[3 * i + 2]) + t[a] - x[3 * i + a];
                    f += w[i] * e * e;
                }
            }
            return f;
        }

        /**
         * {@code a = sum_i w_i J_i^T J_i}, {@code g = sum_i w_i J_i^T e_i} for the residual
         * {@code e_i = s R y_i + t - x_i} and its Jacobian {@code J_i = [I, -s R [y_i]x, R y_i]}.
         */
        private void normalEquations(double[] x, double[] y, double[] w, boolean fitScale, double[] a, double[] g) {
            int p = fitScale ? 7 : 6;
            double[] j = new double[DIM * p];
            for (int i = 0; i < w.length; i++) {
                double y0 = y[3 * i];
                double y1 = y[3 * i + 1];
                double y2 = y[3 * i + 2];
                // [y]x, row-major
                double[] cross = {0, -y2, y1, y2, 0, -y0, -y1, y0, 0};
                for (int row = 0; row < DIM; row++) {
                    for (int c = 0; c < DIM; c++) {
                        j[row * p + c] = row == c ? 1 : 0;
                        double sum = 0;
                        for (int k = 0; k < DIM; k++) {
                            sum += r[row * DIM + k] * cross[k * DIM + c];
                        }
                        j[row * p + 3 + c] = -scale * sum;
                    }
                    double ry = r[row * DIM] * y0 + r[row * DIM + 1] * y1 + r[row * DIM + 2] * y2;
                    if (fitScale) {
                        j[row * p + 6] = ry;
                    }
                    double e = scale * ry + t[row] - x[3 * i + row];
                    for (int c = 0; c < p; c++) {
                        g[c] += w[i] * j[row * p + c] * e;
                        for (int d = 0; d < p; d++) {
                            a[c * p + d] += w[i] * j[row * p + c] * j[row * p + d];
                        }
                    }
                }
            }
        }

        private static double[] negate(double[] v) {
            double[] out = new double[v.length];
            for (int k = 0; k < v.length; k++) {
                out[k] = -v[k];
            }
            return out;
        }

        private static double[] multiply(double[] a, double[] b) {
            double[] c = new double[9];
            for (int i = 0; i < DIM; i++) {
                for (int k = 0; k < DIM; k++) {
                    for (int j = 0; j < DIM; j++) {
                        c[i * DIM + j] += a[i * DIM + k] * b[k * DIM + j];
                    }
                }
            }
            return c;
        }

        /** Gaussian elimination with partial pivoting on the p x p system {@code a z = b}. */
        private static double[] solve(double[] a, double[] b, int p) {
            double[] m = a.clone();
            double[] z = b.clone();
            for (int c = 0; c < p; c++) {
                int pivot = c;
                for (int r = c + 1; r < p; r++) {
                    if (Math.abs(m[r * p + c]) > Math.abs(m[pivot * p + c])) {
                        pivot = r;
                    }
                }
                for (int k = 0; k < p; k++) {
                    double tmp = m[c * p + k];
                    m[c * p + k] = m[pivot * p + k];
                    m[pivot * p + k] = tmp;
                }
                double tmp = z[c];
                z[c] = z[pivot];
                z[pivot] = tmp;
                for (int r = c + 1; r < p; r++) {
                    double f = m[r * p + c] / m[c * p + c];
                    for (int k = c; k < p; k++) {
                        m[r * p + k] -= f * m[c * p + k];
                    }
                    z[r] -= f * z[c];
                }
            }
            for (int c = p - 1; c >= 0; c--) {
                double sum = z[c];
                for (int k = c + 1; k < p; k++) {
                    sum -= m[c * p + k] * z[k];
                }
                z[c] = sum / m[c * p + c];
            }
            return z;
        }
    }
}
