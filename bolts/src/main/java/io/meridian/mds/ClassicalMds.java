package io.meridian.mds;

import io.meridian.matrix.RowPartition;
import java.util.Random;

/**
 * Classical (Torgerson) MDS as an initial layout: the top-dim eigenvectors of B = -1/2 J A J (A = squared distances,
 * J = centring) by block subspace iteration with a few extra vectors. Each iteration is one pass over the engine's
 * row blocks (A Q for the local rows) and one allgatherv; A is never formed as doubles. Missing distances count as
 * the mean squared distance. Assumes the leading eigenvalues are positive (true for near-Euclidean data).
 */
final class ClassicalMds {
    static final int MAX_ITERATIONS = 300;
    static final double TOLERANCE = 1e-9;

    private ClassicalMds() {
    }

    static void run(DaMds engine, double missingSquare) {
        int n = engine.n();
        int dim = engine.dim();
        int cols = Math.min(RowKernel.classicalColumns(dim), n);
        RowPartition processes = RowPartition.of(n, engine.sync().blocks());
        int[] counts = processes.counts(cols);
        int[] displs = processes.displacements(cols);
        double[] qs = new double[cols * n];
        double[] yLocal = new double[Math.max(1, engine.localRows() * cols)];
        double[] yRows = new double[n * cols];
        double[] lambda = new double[cols];
        double[] previous = new double[cols];
        Random random = new Random(engine.seed() * 31 + 7);
        for (int i = 0; i < qs.length; i++) {
            qs[i] = random.nextDouble() - 0.5;
        }
        orthonormalise(qs, cols, n);
        for (int it = 0; it < MAX_ITERATIONS; it++) {
            centre(qs, cols, n);
            for (RowKernel kernel : engine.kernels()) {
                kernel.squaredDistanceProduct(qs, cols, missingSquare, yLocal, engine.localStart());
            }
            engine.sync().allgatherv(yLocal, yRows, counts, displs);
            double[] ys = new double[cols * n];
            for (int i = 0; i < n; i++) {
                for (int k = 0; k < cols; k++) {
                    ys[k * n + i] = -0.5 * yRows[i * cols + k];
                }
            }
            centre(ys, cols, n);
            for (int k = 0; k < cols; k++) {
                double s = 0;
                for (int i = 0; i < n; i++) {
                    s += qs[k * n + i] * ys[k * n + i];
                }
                lambda[k] = s;
            }
            System.arraycopy(ys, 0, qs, 0, qs.length);
            orthonormalise(qs, cols, n);
            double change = 0;
            for (int k = 0; k < dim; k++) {
                change = Math.max(change, Math.abs(lambda[k] - previous[k]));
            }
            System.arraycopy(lambda, 0, previous, 0, cols);
            if (it > 0 && change <= TOLERANCE * Math.max(Math.abs(lambda[0]), 1e-300)) {
                break;
            }
        }
        // the largest dim Ritz values, in order
        Integer[] order = new Integer[cols];
        for (int k = 0; k < cols; k++) {
            order[k] = k;
        }
        java.util.Arrays.sort(order, (a, b) -> Double.compare(lambda[b], lambda[a]));
        double[] x = engine.rowsArray();
        for (int k = 0; k < dim; k++) {
            int c = k < cols ? order[k] : -1;
            double scale = c < 0 ? 0 : Math.sqrt(Math.max(lambda[c], 0));
            for (int i = 0; i < n; i++) {
                x[i * dim + k] = c < 0 ? 0 : qs[c * n + i] * scale;
            }
        }
    }

    private static void centre(double[] qs, int cols, int n) {
        for (int k = 0; k < cols; k++) {
            double mean = 0;
            for (int i = 0; i < n; i++) {
                mean += qs[k * n + i];
            }
            mean /= n;
            for (int i = 0; i < n; i++) {
                qs[k * n + i] -= mean;
            }
        }
    }

    /** Modified Gram-Schmidt on the columns; a column that vanishes is replaced by zeros. */
    private static void orthonormalise(double[] qs, int cols, int n) {
        for (int k = 0; k < cols; k++) {
            int ok = k * n;
            for (int m = 0; m < k; m++) {
                int om = m * n;
                double dot = 0;
                for (int i = 0; i < n; i++) {
                    dot += qs[ok + i] * qs[om + i];
                }
                for (int i = 0; i < n; i++) {
                    qs[ok + i] -= dot * qs[om + i];
                }
            }
            double norm = 0;
            for (int i = 0; i < n; i++) {
                norm += qs[ok + i] * qs[ok + i];
            }
            norm = Math.sqrt(norm);
            double inv = norm > 1e-300 ? 1 / norm : 0;
            for (int i = 0; i < n; i++) {
                qs[ok + i] *= inv;
            }
        }
    }
}
