package io.meridian.synthetic;

import io.meridian.matrix.LowerRows;
import io.meridian.matrix.ShortMatrixFormat;
import java.util.SplittableRandom;

/**
 * The lower-triangle rows of N uniform random points in the 4-D unit cube (distances divided by the cube's diagonal
 * half, sqrt 4 = 2, so they fall in [0, 1]), computed from the points when asked for: no N x N file is written, and
 * the heap holds the 4 N coordinates (32 MB at N = 1,000,000). The values are those of the square matrix the file
 * source wrote before ({@code FileRowSpout.writeRandomMatrix}), entry for entry: the same draws, the same arithmetic.
 */
public final class GeneratedRows implements LowerRows {
    public static final int DIM = 4;
    private static final double SCALE = 1 / Math.sqrt(DIM);

    private final int n;
    private final double[] coordinates;

    private GeneratedRows(int n, double[] coordinates) {
        this.n = n;
        this.coordinates = coordinates;
    }

    /** N points drawn by {@link SplittableRandom} from {@code seed}, point after point, coordinate after coordinate. */
    public static GeneratedRows uniform(int n, long seed) {
        if (n < 1) {
            throw new IllegalArgumentException("n must be positive, got " + n);
        }
        SplittableRandom random = new SplittableRandom(seed);
        double[] x = new double[n * DIM];
        for (int i = 0; i < x.length; i++) {
            x[i] = random.nextDouble();
        }
        return new GeneratedRows(n, x);
    }

    public int n() {
        return n;
    }

    /** The distance of points {@code i} and {@code j} as a value in [0, 1], before the 16-bit encoding. */
    public double value(int i, int j) {
        double s = 0;
        for (int k = 0; k < DIM; k++) {
            double d = coordinates[i * DIM + k] - coordinates[j * DIM + k];
            s += d * d;
        }
        return Math.sqrt(s) * SCALE;
    }

    @Override
    public void copy(int id, int from, int to, short[] dst) {
        for (int j = from; j < to; j++) {
            dst[j - from] = ShortMatrixFormat.encode(value(id, j));
        }
    }

    @Override
    public short get(int id, int column) {
        return ShortMatrixFormat.encode(value(id, column));
    }
}
