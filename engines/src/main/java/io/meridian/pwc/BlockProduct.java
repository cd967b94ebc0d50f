package io.meridian.pwc;

import io.meridian.matrix.RowBlock;

/**
 * Y = D X for the rows of one block: D is the block's 16-bit distance rows (raw integers, missing entries counted as 0),
 * X is N x k (row-major, stride k) over all points, Y is rows x k. The rows are copied once from the mapped file into
 * heap {@code short[]}s (2 bytes per entry, as on disk). One product streams every row once and accumulates all k
 * columns in that pass: two columns of two rows in four registers, or for k = 1 four rows against one vector, so
 * each loaded value is used twice or more. The result is in raw units (times
 * {@link io.meridian.matrix.ShortMatrixFormat#INV_SCALE}). Allocates nothing per call.
 */
final class BlockProduct {
    private final int n;
    private final short[][] rows;
    private final boolean hadMissing;
    private final double[] columns;

    BlockProduct(RowBlock block, int maxColumns) {
        this.n = block.n();
        this.columns = new double[n * Math.max(1, maxColumns)];
        this.rows = new short[block.rows()][n];
        boolean missing = false;
        for (int i = 0; i < rows.length; i++) {
            short[] r = rows[i];
            block.copyRow(block.rowStart() + i, r);
            for (int b = 0; b < n; b++) {
                if (r[b] < 0) {
                    r[b] = 0;
                    missing = true;
                }
            }
        }
        this.hadMissing = missing;
    }

    int rows() {
        return rows.length;
    }

    /** Whether the block had missing (negative) entries; they count as 0 in every product. */
    boolean hadMissing() {
        return hadMissing;
    }

    /** Raw entry of local row i, column j (missing: 0). */
    int raw(int i, int j) {
        return rows[i][j];
    }

    /** {@code y[i*k + j] = sum_b d(i, b) * x[b*k + j]} for every local row i and column j < k. */
    void multiply(double[] x, int k, double[] y) {
        if (k == 1) {
            multiplyVector(x, y);
            return;
        }
        // X repacked in groups of two columns (one for an odd last column), point-major inside a group: the kernel
        // reads it with a constant stride, so the JIT drops per-access range checks. Two rows by two columns (four
        // accumulators) measured fastest: wider tiles spill registers, and the short-to-double conversions dominate.
        double[] packed = columns;
        for (int j0 = 0; j0 < k; j0 += 2) {
            int w = Math.min(2, k - j0);
            int base = j0 * n;
            for (int b = 0, p = j0, q = base; b < n; b++, p += k, q += w) {
                for (int jj = 0; jj < w; jj++) {
                    packed[q + jj] = x[p + jj];
                }
            }
        }
        int count = rows.length;
        int i = 0;
        for (; i + 1 < count; i += 2) {
            short[] r0 = rows[i];
            short[] r1 = rows[i + 1];
            for (int j0 = 0; j0 < k; j0 += 2) {
                if (k - j0 >= 2) {
                    columns2(r0, r1, packed, j0 * n, y, i * k + j0, (i + 1) * k + j0);
                } else {
                    columns1(r0, r1, packed, j0 * n, y, i * k + j0, (i + 1) * k + j0);
                }
            }
        }
        if (i < count) {
            short[] r = rows[i];
            for (int j = 0; j < k; j++) {
                double s = 0;
                for (int b = 0, p = j; b < n; b++, p += k) {
                    s += r[b] * x[p];
                }
                y[i * k + j] = s;
            }
        }
    }

    private void multiplyVector(double[] x, double[] y) {
        int count = rows.length;
        int n = this.n;
        int i = 0;
        for (; i + 3 < count; i += 4) {
            short[] r0 = rows[i];
            short[] r1 = rows[i + 1];
            short[] r2 = rows[i + 2];
            short[] r3 = rows[i + 3];
            double s0 = 0;
            double s1 = 0;
            double s2 = 0;
            double s3 = 0;
            for (int b = 0; b < n; b++) {
                double xb = x[b];
                s0 += r0[b] * xb;
                s1 += r1[b] * xb;
                s2 += r2[b] * xb;
                s3 += r3[b] * xb;
            }
            y[i] = s0;
            y[i + 1] = s1;
            y[i + 2] = s2;
            y[i + 3] = s3;
        }
        for (; i < count; i++) {
            short[] r = rows[i];
            double s = 0;
            for (int b = 0; b < n; b++) {
                s += r[b] * x[b];
            }
            y[i] = s;
        }
    }

    private void columns1(short[] r0, short[] r1, double[] xt, int o, double[] y, int out0, int out1) {
        double a0 = 0;
        double b0 = 0;
        for (int b = 0; b < n; b++) {
            double x0 = xt[o + b];
            a0 += r0[b] * x0;
            b0 += r1[b] * x0;
        }
        y[out0] = a0;
        y[out1] = b0;
    }

    private void columns2(short[] r0, short[] r1, double[] xt, int o, double[] y, int out0, int out1) {
        double a0 = 0;
        double a1 = 0;
        double b0 = 0;
        double b1 = 0;
        for (int b = 0; b < n; b++) {
            double d0 = r0[b];
            double d1 = r1[b];
            int q = o + 2 * b;
            double x0 = xt[q];
            double x1 = xt[q + 1];
            a0 += d0 * x0;
            a1 += d0 * x1;
            b0 += d1 * x0;
            b1 += d1 * x1;
        }
        y[out0] = a0;
        y[out0 + 1] = a1;
        y[out1] = b0;
        y[out1 + 1] = b1;
    }


}
