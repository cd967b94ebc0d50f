package io.meridian.live;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * The vector pass's sums are the same doubles however far the JIT has got: each lane's partial sum, then the lanes in
 * lane order, which plain Java arithmetic (strict since Java 17) reproduces exactly. So the live map's rounds may use
 * the pass and still give the same map whenever C2 compiles it.
 */
class PlacementVectorsTest {

    @Test
    void theSumsEqualLaneOrderedScalarSumsFromTheFirstCallToCompiledCode() {
        assumeTrue(Placement.VECTOR_AVAILABLE, "the JVM runs without jdk.incubator.vector");
        int width = PlacementVectors.lanes();
        SplittableRandom random = new SplittableRandom(7);
        int most = 1000;
        double[] xs = new double[most];
        double[] ys = new double[most];
        double[] zs = new double[most];
        double[] delta = new double[most];
        double[] weight = new double[most];
        double[] lanes = new double[5 * width];
        double[] out = new double[6];
        double[] expected = new double[6];
        // enough calls for C2 to compile the pass meanwhile (the first run interpreted, later ones compiled)
        for (int call = 0; call < 20_000; call++) {
            int n = most - call % (2 * width + 1); // every remainder of the lanes
            for (int j = 0; j < n; j++) {
                xs[j] = random.nextDouble();
                ys[j] = random.nextDouble();
                zs[j] = random.nextDouble();
                delta[j] = random.nextDouble();
                weight[j] = j % 17 == call % 17 ? 0 : 0.5 + random.nextDouble(); // some entries missing
            }
            xs[call % n] = 0.25; // a mapped point on x: off the f sums
            ys[call % n] = 0.5;
            zs[call % n] = 0.75;
            PlacementVectors.pass3(0.25, 0.5, 0.75, xs, ys, zs, delta, weight, n, lanes, out);
            laneOrdered(0.25, 0.5, 0.75, xs, ys, zs, delta, weight, n, width, expected);
            for (int k = 0; k < 6; k++) {
                assertEquals(Double.doubleToLongBits(expected[k]), Double.doubleToLongBits(out[k]),
                        "sum " + k + " of call " + call + " (n = " + n + "): " + expected[k] + " vs " + out[k]);
            }
        }
    }

    /** The pass written out in scalar Java: one partial sum per lane, the lanes added in order, then the tail. */
    private static void laneOrdered(double x, double y, double z, double[] xs, double[] ys, double[] zs, double[] delta,
                                    double[] weight, int n, int width, double[] out) {
        double[][] partial = new double[5][width];
        long far = 0;
        int bound = n - n % width;
        for (int j = 0; j < bound; j++) {
            int lane = j % width;
            double dx = x - xs[j];
            double dy = y - ys[j];
            double dz = z - zs[j];
            double d = Math.sqrt(dx * dx + dy * dy + dz * dz);
            double r = d - delta[j];
            partial[0][lane] += weight[j] * r * r;
            if (d >= Placement.COINCIDENT && weight[j] > 0) {
                double f = weight[j] * delta[j] / d;
                partial[1][lane] += f;
                partial[2][lane] += f * xs[j];
                partial[3][lane] += f * ys[j];
                partial[4][lane] += f * zs[j];
                far++;
            } else {
                partial[1][lane] += 0.0;
                partial[2][lane] += 0.0 * xs[j];
                partial[3][lane] += 0.0 * ys[j];
                partial[4][lane] += 0.0 * zs[j];
            }
        }
        double[] sums = new double[5];
        for (int k = 0; k < 5; k++) {
            for (int lane = 0; lane < width; lane++) {
                sums[k] += partial[k][lane];
            }
        }
        for (int j = bound; j < n; j++) {
            double ex = x - xs[j];
            double ey = y - ys[j];
            double ez = z - zs[j];
            double d = Math.sqrt(ex * ex + ey * ey + ez * ez);
            double r = d - delta[j];
            sums[0] += weight[j] * r * r;
            if (d >= Placement.COINCIDENT && weight[j] > 0) {
                double f = weight[j] * delta[j] / d;
                sums[1] += f;
                sums[2] += f * xs[j];
                sums[3] += f * ys[j];
                sums[4] += f * zs[j];
                far++;
            }
        }
        System.arraycopy(sums, 0, out, 0, 5);
        out[5] = far;
    }
}
