package io.meridian.align;

import java.util.Arrays;

/**
 * The singular value decomposition of a 3 x 3 matrix, {@code A = U diag(s) V^T}, by one-sided Jacobi (Hestenes):
 * pairs of A's columns are rotated until they are orthogonal, {@code A V = U diag(s)}. Accurate to the last bits even
 * for small singular values; a 3 x 3 converges in a handful of sweeps. The same method as
 * {@code io.meridian.live.RigidAlignment}'s, which runs {@link #decompose} on arrays of its own every frame.
 *
 * <p>The singular values come in decreasing order. Columns of U for a singular value at or below
 * {@link #RANK_TOLERANCE} of the largest are not determined by A: with rank 2 the third is completed as
 * {@code u0 x u1}; with rank 1 or 0 the missing ones are any orthonormal completion. V is always orthogonal.
 *
 * @param uRowMajor       U, row-major 3 x 3, orthogonal
 * @param singular        s0 >= s1 >= s2 >= 0
 * @param vRowMajor       V, row-major 3 x 3, orthogonal
 * @param rank            how many singular values are above {@link #RANK_TOLERANCE} of the largest
 */
public record Svd3(double[] uRowMajor, double[] singular, double[] vRowMajor, int rank) {
    public static final int DIM = 3;
    /** Singular values at or below this fraction of the largest count as zero. */
    public static final double RANK_TOLERANCE = 1e-12;
    /** Two columns count as orthogonal when their cosine is below this. */
    private static final double ORTHOGONAL = 1e-15;
    /** Jacobi converges quadratically; this only bounds a pathological input. */
    private static final int MAX_SWEEPS = 64;

    /** The decomposition of {@code aRowMajor} (row-major 3 x 3, not changed). */
    public static Svd3 of(double[] aRowMajor) {
        if (aRowMajor.length != 9) {
            throw new IllegalArgumentException("a 3 x 3 matrix has 9 values, got " + aRowMajor.length);
        }
        for (double value : aRowMajor) {
            if (!Double.isFinite(value)) {
                throw new IllegalArgumentException("the matrix holds a non-finite value: " + value);
            }
        }
        double[] b = aRowMajor.clone();
        double[] v = new double[9];
        double[] s = new double[DIM];
        int rank = decompose(b, v, s);
        double[] u = new double[9];
        for (int c = 0; c < rank; c++) {
            double inv = 1.0 / s[c];
            for (int r = 0; r < DIM; r++) {
                u[r * DIM + c] = b[r * DIM + c] * inv;
            }
        }
        complete(u, rank);
        return new Svd3(u, s, v, rank);
    }

    /**
     * The decomposition's core, allocating nothing (the live map's {@code RigidAlignment} runs it every frame): rotates
     * pairs of {@code columns}' columns until they are orthogonal, {@code A V = U diag(s)}, sorts the singular values
     * in decreasing order (permuting the columns alike) and returns the rank.
     *
     * @param columns  A on entry, row-major 3 x 3; U diag(s) on return
     * @param v        V on return, row-major 3 x 3
     * @param singular s on return
     */
    public static int decompose(double[] columns, double[] v, double[] singular) {
        final double[] b = columns;
        Arrays.fill(v, 0.0);
        v[0] = 1;
        v[4] = 1;
        v[8] = 1;
        for (int sweep = 0; sweep < MAX_SWEEPS; sweep++) {
            boolean rotated = rotateColumns(b, v, 0, 1);
            rotated |= rotateColumns(b, v, 0, 2);
            rotated |= rotateColumns(b, v, 1, 2);
            if (!rotated) {
                break;
            }
        }
        for (int c = 0; c < DIM; c++) {
            singular[c] = Math.sqrt(b[c] * b[c] + b[3 + c] * b[3 + c] + b[6 + c] * b[6 + c]);
        }
        for (int c = 0; c < DIM - 1; c++) {
            int largest = c;
            for (int d = c + 1; d < DIM; d++) {
                if (singular[d] > singular[largest]) {
                    largest = d;
                }
            }
            if (largest != c) {
                swapColumns(b, c, largest);
                swapColumns(v, c, largest);
                double t = singular[c];
                singular[c] = singular[largest];
                singular[largest] = t;
            }
        }
        double floor = RANK_TOLERANCE * singular[0];
        int rank = 0;
        for (int c = 0; c < DIM; c++) {
            if (singular[c] > floor && singular[c] > 0) {
                rank++;
            }
        }
        return rank;
    }

    /** The determinant of a row-major 3 x 3 matrix. */
    public static double determinant(double[] m) {
        return m[0] * (m[4] * m[8] - m[5] * m[7]) - m[1] * (m[3] * m[8] - m[5] * m[6])
                + m[2] * (m[3] * m[7] - m[4] * m[6]);
    }

    /** Completes columns {@code rank..2} of {@code u} (columns 0..rank-1 orthonormal) to an orthogonal matrix. */
    private static void complete(double[] u, int rank) {
        if (rank == 0) {
            u[0] = 1;
        }
        if (rank <= 1) {
            // a unit vector orthogonal to column 0: cross it with the axis it is least aligned with
            double x = u[0];
            double y = u[3];
            double z = u[6];
            double[] e = Math.abs(x) <= Math.abs(y) && Math.abs(x) <= Math.abs(z) ? new double[] {1, 0, 0}
                    : Math.abs(y) <= Math.abs(z) ? new double[] {0, 1, 0} : new double[] {0, 0, 1};
            double c0 = y * e[2] - z * e[1];
            double c1 = z * e[0] - x * e[2];
            double c2 = x * e[1] - y * e[0];
            double norm = Math.sqrt(c0 * c0 + c1 * c1 + c2 * c2);
            u[1] = c0 / norm;
            u[4] = c1 / norm;
            u[7] = c2 / norm;
        }
        if (rank <= 2) {
            u[2] = u[3] * u[7] - u[6] * u[4];
            u[5] = u[6] * u[1] - u[0] * u[7];
            u[8] = u[0] * u[4] - u[3] * u[1];
        }
    }

    /** One Jacobi rotation of columns i and j of {@code b} (and of {@code v}); false when already orthogonal. */
    private static boolean rotateColumns(double[] b, double[] v, int i, int j) {
        double alpha = 0;
        double beta = 0;
        double gamma = 0;
        for (int r = 0; r < DIM; r++) {
            double bi = b[r * DIM + i];
            double bj = b[r * DIM + j];
            alpha += bi * bi;
            beta += bj * bj;
            gamma += bi * bj;
        }
        if (gamma == 0 || Math.abs(gamma) <= ORTHOGONAL * Math.sqrt(alpha * beta)) {
            return false;
        }
        double zeta = (beta - alpha) / (2 * gamma);
        double t = (zeta >= 0 ? 1.0 : -1.0) / (Math.abs(zeta) + Math.hypot(1.0, zeta));
        double cos = 1.0 / Math.hypot(1.0, t);
        double sin = cos * t;
        rotate(b, i, j, cos, sin);
        rotate(v, i, j, cos, sin);
        return true;
    }

    private static void rotate(double[] m, int i, int j, double cos, double sin) {
        for (int r = 0; r < DIM; r++) {
            double mi = m[r * DIM + i];
            double mj = m[r * DIM + j];
            m[r * DIM + i] = cos * mi - sin * mj;
            m[r * DIM + j] = sin * mi + cos * mj;
        }
    }

    private static void swapColumns(double[] m, int i, int j) {
        for (int r = 0; r < DIM; r++) {
            double t = m[r * DIM + i];
            m[r * DIM + i] = m[r * DIM + j];
            m[r * DIM + j] = t;
        }
    }

}
