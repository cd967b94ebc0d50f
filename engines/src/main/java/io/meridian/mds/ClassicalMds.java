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
    static final int MAX_ITERATIONS = 200;
    /** Relative change of the leading Ritz values' sum that ends the iteration (plenty for a starting layout). */
    static final double TOLERANCE = 1e-6;

    private ClassicalMds() {
    }

    /** Iterations the last run took (for tests and reports). */
    static volatile int iterations;

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
            // Rayleigh-Ritz: H = Q^T B Q, its eigenvectors V; the next block is orth(Y V), its columns in the order
            // of the Ritz values, so the leading dim columns converge at the rate of the gap after the block
            double[] h = new double[cols * cols];
            for (int a = 0; a < cols; a++) {
                for (int c = a; c < cols; c++) {
                    double s = 0;
                    for (int i = 0; i < n; i++) {
                        s += qs[a * n + i] * ys[c * n + i];
                    }
                    h[a * cols + c] = s;
                    h[c * cols + a] = s;
                }
            }
            double[] v = new double[cols * cols];
            jacobi(h, v, cols);
            Integer[] byValue = new Integer[cols];
            for (int k = 0; k < cols; k++) {
                byValue[k] = k;
            }
            java.util.Arrays.sort(byValue, (a, c) -> Double.compare(h[c * cols + c], h[a * cols + a]));
            java.util.Arrays.fill(qs, 0);
            for (int k = 0; k < cols; k++) {
                int e = byValue[k];
                lambda[k] = h[e * cols + e];
                for (int m = 0; m < cols; m++) {
                    double f = v[m * cols + e];
                    if (f != 0) {
                        for (int i = 0; i < n; i++) {
                            qs[k * n + i] += f * ys[m * n + i];
                        }
                    }
                }
            }
            orthonormalise(qs, cols, n);
            // the sum of the leading dim Ritz values (all of them when N is below 2 dim + 2): robust when eigenvalues
            // are (nearly) equal
            double trace = 0;
            double previousTrace = 0;
            for (int k = 0; k < Math.min(dim, cols); k++) {
                trace += lambda[k];
                previousTrace += previous[k];
            }
            double change = Math.abs(trace - previousTrace);
            System.arraycopy(lambda, 0, previous, 0, cols);
            iterations = it + 1;
            if (it > 0 && change <= TOLERANCE * Math.max(Math.abs(trace), 1e-300)) {
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

    /**
     * Cyclic Jacobi on the symmetric m x m matrix {@code h} (overwritten: its diagonal ends as the eigenvalues);
     * {@code v} receives the eigenvectors as columns.
     */
    static void jacobi(double[] h, double[] v, int m) {
        java.util.Arrays.fill(v, 0);
        for (int k = 0; k < m; k++) {
            v[k * m + k] = 1;
        }
        for (int sweep = 0; sweep < 100; sweep++) {
            double off = 0;
            double diag = 0;
            for (int p = 0; p < m; p++) {
                diag += h[p * m + p] * h[p * m + p];
                for (int q = p + 1; q < m; q++) {
                    off += h[p * m + q] * h[p * m + q];
                }
            }
            if (off <= 1e-30 * Math.max(diag, 1e-300)) {
                return;
            }
            for (int p = 0; p < m; p++) {
                for (int q = p + 1; q < m; q++) {
                    double apq = h[p * m + q];
                    if (apq == 0) {
                        continue;
                    }
                    double theta = (h[q * m + q] - h[p * m + p]) / (2 * apq);
                    double t = Math.signum(theta) / (Math.abs(theta) + Math.sqrt(theta * theta + 1));
                    if (theta == 0) {
                        t = 1;
                    }
                    double c = 1 / Math.sqrt(t * t + 1);
                    double s = t * c;
                    for (int k = 0; k < m; k++) {
                        double hkp = h[k * m + p];
                        double hkq = h[k * m + q];
                        h[k * m + p] = c * hkp - s * hkq;
                        h[k * m + q] = s * hkp + c * hkq;
                    }
                    for (int k = 0; k < m; k++) {
                        double hpk = h[p * m + k];
                        double hqk = h[q * m + k];
                        h[p * m + k] = c * hpk - s * hqk;
                        h[q * m + k] = s * hpk + c * hqk;
                    }
                    for (int k = 0; k < m; k++) {
                        double vkp = v[k * m + p];
                        double vkq = v[k * m + q];
                        v[k * m + p] = c * vkp - s * vkq;
                        v[k * m + q] = s * vkp + c * vkq;
                    }
                }
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
