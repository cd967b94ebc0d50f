package io.meridian.align;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The original MDSasChisq's rotation mode ({@code RotateManxcatMDS}, Levenberg-Marquardt over a translation, three
 * angles and a scale from two starts, the second inverted) run on pairs of 1000-point maps (test resources
 * {@code reference-runs/mdsaschisq/}, see its README): {@link SimilarityFit} must give the transform and chi-square
 * it found wherever it converged, and a lower chi-square where it stopped in a local minimum.
 *
 * <p>The reference map x is the original's MDS map of blobs1000; the maps y are rebuilt here from the README's
 * recipe and checked by md5 against the files the original read, except the DA-MDS map, which is stored.
 */
class MdsasChisqRotationReferenceTest {
    static final String RESOURCES = "/reference-runs/mdsaschisq/";
    private static final int DIM = 3;

    /**
     * The original writes its parameters with 5 significant digits ({@code %.4E}): half a unit of the last is at most
     * 5e-5 of the value. Angles of at most pi then carry an error of 1.6e-4, and R, a product of three plane
     * rotations, up to about three times that; the translation and the scale are compared relative to their size.
     * (Measured: R within 3.2e-5, s and t within 2.1e-5 relative.) Its chi-square is printed in full: the original
     * stops once the predicted change is below its limit, so it ends above the closed form's minimum by a
     * second-order amount (measured: 3e-9 relative at most; on the noise-free pair 4e-11 against 1e-26).
     */
    private static final double PRINTED = 5e-5;
    private static final double ROTATION = 5e-4;
    private static final double CHISQ = 1e-7;

    /** One row of rotation-runs.tsv: the original's best loop, chi-square, parameters and cosmic inversion. */
    record Run(String pair, int rotationOption, int bestLoop, double chisq, double[] translation, double[] angles,
               double scale, double[] cosmic, double[] loopChisq) {
        @Override
        public String toString() {
            return pair + " RotationOption " + rotationOption;
        }

        /** The original's total matrix without the scale: Cosmic R(theta2) R(theta1) R(theta0), as it composes it. */
        double[] rotation() {
            double[] r = {cosmic[0], 0, 0, 0, cosmic[1], 0, 0, 0, cosmic[2]};
            for (int sub = 2; sub >= 0; sub--) {
                r = multiply(r, planeRotation(sub, angles[sub]));
            }
            return r;
        }
    }

    static Stream<Run> converged() {
        return runs().stream().filter(r -> !r.pair().equals("hard"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("converged")
    void closedFormGivesTheOriginalsTransformAndChiSquare(Run run) {
        double[][] pair = pair(run.pair());
        double[] x = pair[0];
        double[] y = pair[1];
        int n = x.length / DIM;
        double firstScale = rmsSpread(x);
        // the original's MinimumDistance -0.001 means 0.001 x FirstScale
        AlignOptions options = new AlignOptions(true, true, run.rotationOption() == 1, 0.001 * firstScale);
        Similarity fit = SimilarityFit.of(x, y, null, options);

        assertEquals(run.cosmic()[0] < 0, fit.reflection(), run + ": a reflection exactly when the best loop was inverted");
        assertEquals(run.scale(), fit.scale(), PRINTED * run.scale(), run + ": scale");
        double[] r = run.rotation();
        for (int k = 0; k < 9; k++) {
            assertEquals(r[k], fit.rotationRowMajor()[k], ROTATION, run + ": R[" + k / 3 + "][" + k % 3 + "]");
        }
        for (int a = 0; a < DIM; a++) {
            assertEquals(run.translation()[a], fit.translation()[a], PRINTED * Math.abs(run.translation()[a]) + 1e-9,
                    run + ": t[" + a + "]");
        }
        double ours = originalsChisq(fit.chiSquare(), n, firstScale, run.rotationOption());
        // the closed form is the minimum: never above the original, and within its convergence of it
        assertTrue(ours <= run.chisq() * (1 + 1e-12) + 1e-15, run + ": " + ours + " vs the original's " + run.chisq());
        assertEquals(run.chisq(), ours, CHISQ * run.chisq() + 1e-10, run + ": chi-square in the original's units");
    }

    /**
     * The noise-free pair: the closed form recovers the known s, R, t to 1e-9 (the original gets to chi-square 4e-11,
     * its parameters to their 5 printed digits).
     */
    @Test
    void recoversTheKnownTransformTo1e9() {
        double[][] pair = pair("exact");
        Similarity fit = SimilarityFit.of(pair[0], pair[1], null, AlignOptions.DEFAULT);
        Known known = Known.read();
        assertEquals(known.scale, fit.scale(), 1e-9);
        for (int k = 0; k < 9; k++) {
            assertEquals(known.rotation[k], fit.rotationRowMajor()[k], 1e-9, "R[" + k / 3 + "][" + k % 3 + "]");
        }
        for (int a = 0; a < DIM; a++) {
            assertEquals(known.translation[a], fit.translation()[a], 1e-9, "t[" + a + "]");
        }
        assertTrue(fit.rmsResidual() < 1e-9, "rms residual " + fit.rmsResidual());
    }

    /**
     * A mirror in the z plane, noisy: the original's two deterministic starts (angles 0, proper and inverted) both stop
     * in local minima (chi-square 63.1 and 214, against about 0.03 for the truth): its proper start cannot express a
     * reflection, and the inverted one needs a turn of about pi. The closed form has no starts: it finds the reflection
     * and recovers the known transform to the noise.
     */
    @Test
    void whereTheOriginalStopsInALocalMinimumTheClosedFormFindsTheKnownTransform() {
        Run run = runs().stream().filter(r -> r.pair().equals("hard")).findFirst().orElseThrow();
        double[][] pair = pair("hard");
        double[] x = pair[0];
        int n = x.length / DIM;
        Similarity fit = SimilarityFit.of(x, pair[1], null, AlignOptions.DEFAULT);
        double ours = originalsChisq(fit.chiSquare(), n, rmsSpread(x), 0);
        assertTrue(ours < 1e-3 * run.chisq(), "ours " + ours + " vs the original's " + run.chisq());
        assertTrue(fit.reflection());
        Known known = Known.read();
        assertEquals(known.scale, fit.scale(), 1e-3);
        for (int k = 0; k < 9; k++) {
            assertEquals(known.hardRotation[k], fit.rotationRowMajor()[k], 2e-3, "R[" + k / 3 + "][" + k % 3 + "]");
        }
    }

    /**
     * The original's chi-square from Meridian's: each term of the original is multiplied by sqrt(1/N) x 10 /
     * FirstScale (RotationOption 0), or by sqrt(1/N) x 10 / max(MinimumDistance, |x_i|) (RotationOption 1), where
     * Meridian's weights are 1 and 1 / max(...)^2.
     */
    static double originalsChisq(double meridian, int n, double firstScale, int rotationOption) {
        double m = 10;
        return rotationOption == 1 ? meridian * m * m / n : meridian * m * m / (n * firstScale * firstScale);
    }

    /** The original's FirstScale: the RMS distance of the points from their mean. */
    static double rmsSpread(double[] x) {
        int n = x.length / DIM;
        double[] mean = new double[DIM];
        for (int i = 0; i < n; i++) {
            for (int a = 0; a < DIM; a++) {
                mean[a] += x[i * DIM + a] / n;
            }
        }
        double s = 0;
        for (int i = 0; i < n; i++) {
            for (int a = 0; a < DIM; a++) {
                double d = x[i * DIM + a] - mean[a];
                s += d * d;
            }
        }
        return Math.sqrt(s / n);
    }

    /** The reference map and the map of {@code pair}, as the original read them. */
    static double[][] pair(String name) {
        Known known = Known.read();
        double[] x = points("blobs1000-chisqnorm3-manxcat-points.txt");
        assertEquals(known.md5("reference"), md5(originalFormat(x)), "the reference map is the file the original read");
        if (name.equals("mds")) {
            double[] y = points("blobs1000-damds-seed2-points.tsv");
            assertEquals(known.md5(name), md5(originalFormat(y)), "the DA-MDS map is the file the original read");
            return new double[][] {x, y};
        }
        double[] rotation = name.equals("hard") ? known.hardRotation : known.rotation;
        int n = x.length / DIM;
        double[] y = new double[x.length];
        // y = R^T (x - t) / s, summed in the order the recipe sums
        for (int p = 0; p < n; p++) {
            for (int j = 0; j < DIM; j++) {
                double v = 0;
                for (int i = 0; i < DIM; i++) {
                    v += rotation[i * DIM + j] * (x[p * DIM + i] - known.translation[i]);
                }
                y[p * DIM + j] = v / known.scale;
            }
        }
        if (!name.equals("exact")) {
            Random noise = new Random(5);
            for (int k = 0; k < y.length; k++) {
                y[k] += known.noise * noise.nextGaussian();
            }
        }
        assertEquals(known.md5(name), md5(originalFormat(y)), name + ": the rebuilt map is the file the original read");
        return new double[][] {x, y};
    }

    /** The map as the original read it: {@code id x y z 0}, 17 significant digits. */
    static String originalFormat(double[] y) {
        StringBuilder b = new StringBuilder();
        for (int p = 0; p < y.length / DIM; p++) {
            b.append(p).append('\t').append(String.format(Locale.ROOT, "%.17g\t%.17g\t%.17g",
                    y[p * DIM], y[p * DIM + 1], y[p * DIM + 2])).append("\t0\n");
        }
        return b.toString();
    }

    /** known-transform.tsv: x = s R y + t, R = -Q ("hard": Q diag(1, 1, -1)), the noise, the maps' md5s. */
    record Known(double scale, double[] rotation, double[] hardRotation, double[] translation, double noise,
                 List<String> md5Lines) {
        static Known read() {
            List<String> lines = MdsasChisqRotationReferenceTest.lines("known-transform.tsv");
            return new Known(values(lines, "scale")[0], values(lines, "rotation"), values(lines, "hard-rotation"),
                    values(lines, "translation"), values(lines, "noise")[0], lines);
        }

        String md5(String pair) {
            for (String line : md5Lines) {
                String[] f = line.split("\t");
                if (f[0].equals("md5") && f[1].equals(pair)) {
                    return f[2];
                }
            }
            throw new AssertionError("no md5 for " + pair + " in known-transform.tsv");
        }

        private static double[] values(List<String> lines, String key) {
            for (String line : lines) {
                String[] f = line.split("\t");
                if (f[0].equals(key)) {
                    double[] v = new double[f.length - 1];
                    for (int k = 1; k < f.length; k++) {
                        v[k - 1] = Double.parseDouble(f[k]);
                    }
                    return v;
                }
            }
            throw new AssertionError("no " + key + " in known-transform.tsv");
        }
    }

    static List<Run> runs() {
        List<Run> runs = new ArrayList<>();
        for (String line : lines("rotation-runs.tsv")) {
            if (line.startsWith("#")) {
                continue;
            }
            String[] f = line.split("\t");
            double[] v = new double[f.length];
            for (int k = 3; k <= 15; k++) {
                v[k] = Double.parseDouble(f[k]);
            }
            runs.add(new Run(f[0], Integer.parseInt(f[1]), Integer.parseInt(f[2]), v[3],
                    new double[] {v[4], v[5], v[6]}, new double[] {v[7], v[8], v[9]}, v[10],
                    new double[] {v[11], v[12], v[13]}, new double[] {v[14], v[15]}));
        }
        return runs;
    }

    /** Points files: {@code id x y z [group]}, ids 0..N-1 in order; N x 3 row-major. */
    static double[] points(String resource) {
        List<String> lines = lines(resource);
        double[] x = new double[lines.size() * DIM];
        int n = 0;
        for (String line : lines) {
            String[] f = line.trim().split("\\s+");
            assertEquals(n, Integer.parseInt(f[0]), resource + ": ids in order");
            for (int a = 0; a < DIM; a++) {
                x[n * DIM + a] = Double.parseDouble(f[a + 1]);
            }
            n++;
        }
        return x;
    }

    /** SetRotationMatrix: identity on {@code axis}, (cos, sin; -sin, cos) on the other two in increasing order. */
    static double[] planeRotation(int axis, double theta) {
        int a1 = Math.min((axis + 1) % DIM, (axis + 2) % DIM);
        int a2 = Math.max((axis + 1) % DIM, (axis + 2) % DIM);
        double[] m = new double[9];
        m[axis * DIM + axis] = 1;
        m[a1 * DIM + a1] = Math.cos(theta);
        m[a2 * DIM + a2] = Math.cos(theta);
        m[a1 * DIM + a2] = Math.sin(theta);
        m[a2 * DIM + a1] = -Math.sin(theta);
        return m;
    }

    static double[] multiply(double[] a, double[] b) {
        double[] c = new double[9];
        for (int i = 0; i < DIM; i++) {
            for (int j = 0; j < DIM; j++) {
                for (int k = 0; k < DIM; k++) {
                    c[i * DIM + j] += a[i * DIM + k] * b[k * DIM + j];
                }
            }
        }
        return c;
    }

    static List<String> lines(String name) {
        try (InputStream in = MdsasChisqRotationReferenceTest.class.getResourceAsStream(RESOURCES + name)) {
            assertNotNull(in, "test resource " + RESOURCES + name);
            return new String(in.readAllBytes(), StandardCharsets.UTF_8).lines().filter(l -> !l.isBlank()).toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static String md5(String text) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("MD5")
                    .digest(text.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
