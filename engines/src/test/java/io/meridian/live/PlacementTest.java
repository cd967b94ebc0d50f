package io.meridian.live;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.management.ThreadMXBean;
import io.meridian.matrix.ShortMatrixFormat;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * MI-MDS placement of one point. Exact cases use integer vectors of integer length (e.g. (2, 3, 6), length 7) scaled
 * by {@link #UNIT}, so that every distance from the new point is a whole number of 16-bit steps and the row carries
 * it without rounding.
 */
class PlacementTest {
    private static final int DIM = 3;
    /** Raw 16-bit steps per integer unit of length: distances up to 13 units stay below 32767. */
    private static final int STEPS_PER_UNIT = 1000;
    private static final double UNIT = STEPS_PER_UNIT * ShortMatrixFormat.INV_SCALE;

    /** Integer vectors in [-9, 9]^3 whose length is a whole number from 3 to 13, in a shuffled, repeatable order. */
    private static List<int[]> integerLengthVectors(long seed) {
        List<int[]> vectors = new ArrayList<>();
        for (int a = -9; a <= 9; a++) {
            for (int b = -9; b <= 9; b++) {
                for (int c = -9; c <= 9; c++) {
                    int squared = a * a + b * b + c * c;
                    int length = (int) Math.round(Math.sqrt(squared));
                    if (length * length == squared && length >= 3 && length <= 13) {
                        vectors.add(new int[] {a, b, c});
                    }
                }
            }
        }
        Collections.shuffle(vectors, new Random(seed));
        return vectors;
    }

    private static int length(int[] v) {
        return (int) Math.round(Math.sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]));
    }

    /** Mapped points at (centre + v) * UNIT for the first {@code count} vectors, written from row {@code from}. */
    private static void pointsAround(int[] centre, List<int[]> vectors, int count, double[] positions, int from,
                                     short[] row) {
        for (int j = 0; j < count; j++) {
            int[] v = vectors.get(j);
            for (int c = 0; c < DIM; c++) {
                positions[(from + j) * DIM + c] = (centre[c] + v[c]) * UNIT;
            }
            row[from + j] = (short) (length(v) * STEPS_PER_UNIT);
        }
    }

    private static double[] scaled(int[] integerPoint) {
        double[] p = new double[DIM];
        for (int c = 0; c < DIM; c++) {
            p[c] = integerPoint[c] * UNIT;
        }
        return p;
    }

    private static double distance(double[] a, int aOffset, double[] b, int bOffset) {
        double s = 0;
        for (int c = 0; c < DIM; c++) {
            double d = a[aOffset + c] - b[bOffset + c];
            s += d * d;
        }
        return Math.sqrt(s);
    }

    /** The normalized local stress of {@code x}, computed here independently of the class. */
    private static double localStress(double[] positions, int n, short[] row, double[] weights, double[] x) {
        double residual = 0;
        double norm = 0;
        for (int j = 0; j < n; j++) {
            double w = weights == null ? 1 : weights[j];
            if (row[j] < 0) {
                continue;
            }
            double delta = ShortMatrixFormat.decode(row[j]);
            double r = distance(positions, j * DIM, x, 0) - delta;
            residual += w * r * r;
            norm += w * delta * delta;
        }
        return residual / norm;
    }

    @ParameterizedTest(name = "start at the mean of the {0} nearest")
    @ValueSource(ints = {1, 2, 5, 1000})
    void recoversAPointOfAnExactlyEmbeddableConfigurationFromItsTrueDistances(int nearest) {
        List<int[]> vectors = integerLengthVectors(7);
        int n = 60;
        int[] truth = {2, -1, 3};
        double[] positions = new double[(n + 1) * DIM];
        short[] row = new short[n];
        pointsAround(truth, vectors, n - 1, positions, 0, row);
        // a second mapped point on top of point 0, and every seventh distance missing: neither may disturb the result
        System.arraycopy(positions, 0, positions, (n - 1) * DIM, DIM);
        row[n - 1] = row[0];
        for (int j = 3; j < n; j += 7) {
            row[j] = ShortMatrixFormat.MISSING;
        }
        Placement placement = new Placement(DIM, new Placement.Options(nearest, 1e-6, 1000));

        placement.place(positions, n, row, null, positions, n * DIM);

        double[] expected = scaled(truth);
        for (int c = 0; c < DIM; c++) {
            assertEquals(expected[c], positions[n * DIM + c], 1e-9, "coordinate " + c + " after "
                    + placement.steps() + " steps");
        }
        assertTrue(placement.stress() < 1e-18, "stress " + placement.stress());
        assertTrue(placement.steps() > 0 && placement.steps() < 1000, placement.steps() + " steps");
    }

    @ParameterizedTest(name = "{0} mapped points")
    @ValueSource(ints = {1, 7, 61, 1000})
    void theVectorPassPlacesWhereTheScalarPassDoes(int n) {
        assertTrue(Placement.VECTOR_AVAILABLE, "the tests run with the Vector API, as the workers do");
        Random random = new Random(n);
        double[] positions = new double[(n + 2) * DIM];
        short[] row = new short[n];
        double[] weights = new double[n];
        for (int j = 0; j < n; j++) {
            for (int c = 0; c < DIM; c++) {
                positions[j * DIM + c] = random.nextDouble();
            }
            row[j] = (short) (1000 + random.nextInt(20000)); // not embeddable: the steps have work to do
            weights[j] = j % 5 == 0 ? 0 : 0.5 + random.nextDouble();
            if (j % 9 == 4) {
                row[j] = ShortMatrixFormat.MISSING;
            }
        }
        weights[0] = 1;
        row[0] = 5000;
        if (n > 1) {
            System.arraycopy(positions, 0, positions, DIM, DIM); // two mapped points on one spot
        }
        for (double[] w : new double[][] {null, weights}) {
            Placement scalar = new Placement(DIM, Placement.Options.DEFAULT, false);
            Placement vector = new Placement(DIM, Placement.Options.DEFAULT, true);
            scalar.place(positions, n, row, w, positions, n * DIM);
            vector.place(positions, n, row, w, positions, (n + 1) * DIM);
            for (int c = 0; c < DIM; c++) {
                assertEquals(positions[n * DIM + c], positions[(n + 1) * DIM + c], 1e-12,
                        "coordinate " + c + (w == null ? ", unit weights" : ", weights"));
            }
            assertEquals(scalar.steps(), vector.steps(), "steps");
            assertEquals(scalar.stress(), vector.stress(), 1e-12 * Math.max(1, scalar.stress()), "stress");
        }
    }

    @Test
    void zeroWeightsLeavePointsOutAndHeavierWeightsPullTowardsTheirPoints() {
        // two groups of 20 points whose distances are exact for two different positions of the new point
        List<int[]> vectors = integerLengthVectors(11);
        int half = 20;
        int n = 2 * half;
        int[] a = {0, 0, 0};
        int[] b = {4, -3, 2};
        double[] positions = new double[n * DIM];
        short[] row = new short[n];
        pointsAround(a, vectors, half, positions, 0, row);
        pointsAround(b, vectors.subList(half, 2 * half), half, positions, half, row);
        Placement placement = new Placement(DIM);

        double[] onlyA = place(placement, positions, n, row, groupWeights(half, 1, 0));
        short[] rowWithoutB = row.clone();
        for (int j = half; j < n; j++) {
            rowWithoutB[j] = ShortMatrixFormat.MISSING;
        }
        assertArrayEquals(place(placement, positions, n, rowWithoutB, null), onlyA, 0.0,
                "weight 0 is the same as a missing distance");
        assertArrayEquals(scaled(a), onlyA, 1e-9);
        assertArrayEquals(scaled(b), place(placement, positions, n, row, groupWeights(half, 0, 1)), 1e-9);

        double[] unit = place(placement, positions, n, row, null);
        double unitStress = placement.stress();
        assertTrue(placement.steps() > 0, "conflicting distances need steps");
        assertEquals(localStress(positions, n, row, null, unit), unitStress, 1e-12 * unitStress,
                "the reported stress is that of the returned position");
        assertArrayEquals(unit, place(placement, positions, n, row, groupWeights(half, 2.5, 2.5)), 1e-12,
                "only the ratio of the weights matters");
        double[] heavyA = place(placement, positions, n, row, groupWeights(half, 4, 1));
        double[] atA = scaled(a);
        assertTrue(distance(heavyA, 0, atA, 0) < distance(unit, 0, atA, 0) / 2,
                "weights 4:1 pull the point towards group A: " + distance(heavyA, 0, atA, 0) + " vs "
                        + distance(unit, 0, atA, 0) + " with unit weights");
        double[] weights = groupWeights(half, 4, 1);
        assertEquals(localStress(positions, n, row, weights, heavyA), placement.stress(), 1e-12);
    }

    @Test
    void theStepsNeverRaiseTheStressOfTheStartPosition() {
        Random random = new Random(3);
        int n = 300;
        double[] positions = randomPositions(n, random);
        short[] row = noisyRow(positions, n, new double[] {0.2, 0.25, 0.3}, 0.1, random);
        Placement start = new Placement(DIM, new Placement.Options(2, 1e-6, 0));
        Placement full = new Placement(DIM);
        double[] atStart = place(start, positions, n, row, null);
        double[] placed = place(full, positions, n, row, null);

        assertEquals(0, start.steps());
        assertEquals(localStress(positions, n, row, null, atStart), start.stress(), 1e-12);
        assertTrue(full.stress() < start.stress(), full.stress() + " after " + full.steps() + " steps, "
                + start.stress() + " at the start");
        assertEquals(localStress(positions, n, row, null, placed), full.stress(), 1e-12);
        Placement oneMore = new Placement(DIM, new Placement.Options(2, 1e-6, full.steps() + 1));
        place(oneMore, positions, n, row, null);
        assertTrue(oneMore.stress() <= full.stress(), "a further step does not raise the stress either");
    }

    @Test
    void anEmptyMapPlacesThePointAtTheOrigin() {
        Placement placement = new Placement(DIM);
        double[] out = {7, 7, 7, 7, 7};

        placement.place(new double[0], 0, new short[0], null, out, 2);

        assertArrayEquals(new double[] {7, 7, 0, 0, 0}, out, 0.0);
        assertEquals(0, placement.steps());
        assertEquals(0, placement.stress(), 0.0);
    }

    @Test
    void oneMappedPointPlacesThePointAtItsDistanceAlongTheFirstAxis() {
        double[] positions = {0.1, 0.2, 0.3};
        short[] row = {3000};
        double delta = ShortMatrixFormat.decode(row[0]);
        Placement placement = new Placement(DIM);

        double[] placed = place(placement, positions, 1, row, null);

        assertArrayEquals(new double[] {0.1 + delta, 0.2, 0.3}, placed, 1e-15);
        assertEquals(delta, distance(positions, 0, placed, 0), 1e-15);
        assertTrue(placement.stress() < 1e-24, "stress " + placement.stress());
    }

    @Test
    void coincidentMappedPointsPlaceThePointAtTheirWeightedMeanDistance() {
        int n = 10;
        double[] positions = new double[n * DIM];
        short[] row = new short[n];
        double[] weights = new double[n];
        double weighted = 0;
        double total = 0;
        for (int j = 0; j < n; j++) {
            positions[j * DIM] = -0.25;
            positions[j * DIM + 1] = 0.5;
            positions[j * DIM + 2] = 0.125;
            row[j] = (short) (1000 + 100 * j);
            weights[j] = 1 + j % 3;
            weighted += weights[j] * ShortMatrixFormat.decode(row[j]);
            total += weights[j];
        }
        Placement placement = new Placement(DIM);

        double[] placed = place(placement, positions, n, row, weights);

        for (double v : placed) {
            assertFalse(Double.isNaN(v));
        }
        assertEquals(weighted / total, distance(positions, 0, placed, 0), 1e-12,
                "sum w (r - delta)^2 is least at r = sum w delta / sum w");
        assertEquals(localStress(positions, n, row, weights, placed), placement.stress(), 1e-12);
    }

    @Test
    void aRowWithoutAUsableDistanceIsRefused() {
        double[] positions = {0, 0, 0, 1, 1, 1};
        Placement placement = new Placement(DIM);
        double[] out = new double[DIM];
        short[] missing = {ShortMatrixFormat.MISSING, -5};
        assertThrows(IllegalArgumentException.class, () -> placement.place(positions, 2, missing, null, out, 0));
        short[] known = {100, 200};
        double[] zero = {0, 0};
        assertThrows(IllegalArgumentException.class, () -> placement.place(positions, 2, known, zero, out, 0));
    }

    @Test
    void badArgumentsAreRefused() {
        double[] positions = {0, 0, 0, 1, 1, 1};
        short[] row = {100, 200};
        double[] out = new double[DIM];
        Placement placement = new Placement(DIM);
        assertThrows(IllegalArgumentException.class, () -> placement.place(positions, 3, row, null, out, 0));
        assertThrows(IllegalArgumentException.class, () -> placement.place(positions, 2, new short[1], null, out, 0));
        assertThrows(IllegalArgumentException.class, () -> placement.place(positions, 2, row, new double[1], out, 0));
        assertThrows(IllegalArgumentException.class, () -> placement.place(positions, 2, row, null, out, 1));
        assertThrows(IllegalArgumentException.class,
                () -> placement.place(positions, 2, row, new double[] {1, -1}, out, 0));
        assertThrows(IllegalArgumentException.class,
                () -> placement.place(positions, 2, row, new double[] {1, Double.NaN}, out, 0));
        assertThrows(IllegalArgumentException.class, () -> new Placement(0));
        assertThrows(IllegalArgumentException.class, () -> new Placement.Options(0, 1e-6, 10));
        assertThrows(IllegalArgumentException.class, () -> new Placement.Options(2, Double.NaN, 10));
        assertThrows(IllegalArgumentException.class, () -> new Placement.Options(2, 1e-6, -1));
    }

    @Test
    void placingAPointAllocatesNothing() {
        ThreadMXBean threads = (ThreadMXBean) ManagementFactory.getThreadMXBean();
        Random random = new Random(5);
        int n = 500;
        double[] positions = randomPositions(n, random);
        double[] weights = new double[n];
        for (int j = 0; j < n; j++) {
            weights[j] = 0.5 + random.nextDouble();
        }
        short[] row = noisyRow(positions, n, new double[] {0.15, 0.3, 0.1}, 0.05, random);
        Placement placement = new Placement(DIM);
        double[] out = new double[DIM];
        for (int i = 0; i < 3000; i++) {
            placement.place(positions, n, row, (i & 1) == 0 ? null : weights, out, 0);
        }
        long id = Thread.currentThread().getId();
        long before = threads.getThreadAllocatedBytes(id);
        int calls = 1000;
        for (int i = 0; i < calls; i++) {
            placement.place(positions, n, row, (i & 1) == 0 ? null : weights, out, 0);
        }
        long perCall = (threads.getThreadAllocatedBytes(id) - before) / calls;
        // the smallest object is 16 bytes, so anything allocated per call shows
        assertTrue(perCall < 16, perCall + " bytes per placement");
        assertTrue(placement.steps() > 0);
    }

    private static double[] place(Placement placement, double[] positions, int n, short[] row, double[] weights) {
        double[] out = new double[DIM];
        placement.place(positions, n, row, weights, out, 0);
        return out;
    }

    private static double[] groupWeights(int half, double first, double second) {
        double[] w = new double[2 * half];
        for (int j = 0; j < 2 * half; j++) {
            w[j] = j < half ? first : second;
        }
        return w;
    }

    /** Points in [0, 0.5)^3: their distances stay below 1, the largest 16-bit value. */
    static double[] randomPositions(int n, Random random) {
        double[] positions = new double[n * DIM];
        for (int i = 0; i < positions.length; i++) {
            positions[i] = 0.5 * random.nextDouble();
        }
        return positions;
    }

    /** Distances from {@code x} to the points, each off by up to {@code noise} relatively, 16-bit encoded. */
    static short[] noisyRow(double[] positions, int n, double[] x, double noise, Random random) {
        short[] row = new short[n];
        for (int j = 0; j < n; j++) {
            double d = distance(positions, j * DIM, x, 0);
            row[j] = ShortMatrixFormat.encode(d * (1 + noise * (2 * random.nextDouble() - 1)));
        }
        return row;
    }
}
