package io.meridian.mds;

import io.meridian.collective.SingleProcessSync;
import io.meridian.matrix.ShortMatrixWriter;
import io.meridian.matrix.Weighting;
import io.meridian.synthetic.SyntheticDataset;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteOrder;
import java.nio.file.Path;

/** Small data sets for the engine tests. */
final class Fixtures {
    private Fixtures() {
    }

    /** A known 3-D configuration: a helix with a spread, N points. Row-major. */
    static double[] helix(int n) {
        double[] x = new double[n * 3];
        for (int i = 0; i < n; i++) {
            double t = i * 0.25;
            x[i * 3] = Math.cos(t) * (1 + 0.2 * Math.sin(3 * t));
            x[i * 3 + 1] = Math.sin(t);
            x[i * 3 + 2] = 0.08 * t;
        }
        return x;
    }

    static Path write(Path dir, String name, SyntheticDataset data) {
        Path file = dir.resolve(name);
        try {
            data.writeMatrix(file, ByteOrder.LITTLE_ENDIAN);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return file;
    }

    /** Writes a symmetric 16-bit matrix whose entries are given by a function of (i, j), i <= j. */
    static Path writeSymmetric(Path dir, String name, int n, java.util.function.IntBinaryOperator entry) {
        Path file = dir.resolve(name);
        try (ShortMatrixWriter w = new ShortMatrixWriter(file, n, ByteOrder.LITTLE_ENDIAN)) {
            short[] row = new short[n];
            for (int i = 0; i < n; i++) {
                for (int j = 0; j < n; j++) {
                    row[j] = (short) entry.applyAsInt(Math.min(i, j), Math.max(i, j));
                }
                w.writeRow(row);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return file;
    }

    static MdsResult run(Path file, int n, Weighting weighting, MdsOptions options) {
        return new DaMds(file, n, ByteOrder.LITTLE_ENDIAN, weighting, options, SingleProcessSync.INSTANCE).run();
    }

    static MdsResult run(Path file, int n, MdsOptions options) {
        return run(file, n, Weighting.unit(), options);
    }

    static double maxAbsDifference(double[] a, double[] b) {
        double m = 0;
        for (int i = 0; i < a.length; i++) {
            m = Math.max(m, Math.abs(a[i] - b[i]));
        }
        return m;
    }

    /** Largest |d_ij(result) * factor - d_ij(truth) / scale| over all pairs. */
    static double distanceError(MdsResult result, SyntheticDataset truth, double factor, double scale) {
        double m = 0;
        for (int i = 0; i < result.n; i++) {
            for (int j = i + 1; j < result.n; j++) {
                m = Math.max(m, Math.abs(result.distance(i, j) * factor - truth.distance(i, j) / scale));
            }
        }
        return m;
    }
}
