package io.meridian.pwc;

import io.meridian.matrix.RowBlock;

/**
 * Y = D X for the rows of one block: D is the block's 16-bit distance rows (raw integers, missing entries counted as 0),
 * X is N x k (row-major, stride k) over all points, Y is rows x k. The rows are copied once from the mapped file into
 * heap {@code short[]}s (2 bytes per entry, as on disk). One product streams every row once and accumulates all k
 * columns in that pass: four columns of two rows in eight registers, or for k = 1 four rows against one vector, so
 * each loaded X value is used several times. The result is in raw units (times
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
        // column-major copy of X: each column is then read with unit stride and no per-access range check
        double[] xt = columns;
        for (int b = 0, p = 0; b < n; b++) {
            for (int j = 0; j < k; j++, p++) {
                xt[j * n + b] = x[p];
            }
        }
        int count = rows.length;
        int i = 0;
        for (; i + 1 < count; i += 2) {
            short[] r0 = rows[i];
            short[] r1 = rows[i + 1];
            for (int j0 = 0; j0 < k; j0 += 4) {
                switch (Math.min(4, k - j0)) {
                    case 4 -> columns4(r0, r1, xt, j0 * n, y, i * k + j0, (i + 1) * k + j0);
                    case 3 -> columns3(r0, r1, xt, j0 * n, y, i * k + j0, (i + 1) * k + j0);
                    case 2 -> columns2(r0, r1, xt, j0 * n, y, i * k + j0, (i + 1) * k + j0);
                    default -> columns1(r0, r1, xt, j0 * n, y, i * k + j0, (i + 1) * k + j0);
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
            double x0 = xt[o + b];
            double x1 = xt[o + n + b];
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

    private void columns3(short[] r0, short[] r1, double[] xt, int o, double[] y, int out0, int out1) {
        double a0 = 0;
        double a1 = 0;
        double a2 = 0;
        double b0 = 0;
        double b1 = 0;
        double b2 = 0;
        for (int b = 0; b < n; b++) {
            double d0 = r0[b];
            double d1 = r1[b];
            double x0 = xt[o + b];
            double x1 = xt[o + n + b];
            double x2 = xt[o + 2 * n + b];
            a0 += d0 * x0;
            a1 += d0 * x1;
            a2 += d0 * x2;
            b0 += d1 * x0;
            b1 += d1 * x1;
            b2 += d1 * x2;
        }
        y[out0] = a0;
        y[out0 + 1] = a1;
        y[out0 + 2] = a2;
        y[out1] = b0;
        y[out1 + 1] = b1;
        y[out1 + 2] = b2;
    }

    private void columns4(short[] r0, short[] r1, double[] xt, int o, double[] y, int out0, int out1) {
        double a0 = 0;
        double a1 = 0;
        double a2 = 0;
        double a3 = 0;
        double b0 = 0;
        double b1 = 0;
        double b2 = 0;
        double b3 = 0;
        for (int b = 0; b < n; b++) {
            double d0 = r0[b];
            double d1 = r1[b];
            double x0 = xt[o + b];
            double x1 = xt[o + n + b];
            double x2 = xt[o + 2 * n + b];
            double x3 = xt[o + 3 * n + b];
            a0 += d0 * x0;
            a1 += d0 * x1;
            a2 += d0 * x2;
            a3 += d0 * x3;
            b0 += d1 * x0;
            b1 += d1 * x1;
            b2 += d1 * x2;
            b3 += d1 * x3;
        }
        y[out0] = a0;
        y[out0 + 1] = a1;
        y[out0 + 2] = a2;
        y[out0 + 3] = a3;
        y[out1] = b0;
        y[out1 + 1] = b1;
        y[out1 + 2] = b2;
        y[out1 + 3] = b3;
    }
}
