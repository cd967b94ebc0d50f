package io.meridian.align;

/**
 * A fitted similarity transform {@code y -> s R y + t} of 3-D points and how well it lays the map over the reference.
 *
 * @param scale             s > 0 (1 when the scale was not fitted)
 * @param rotationRowMajor  R, row-major 3 x 3, orthogonal; det R = -1 when {@link #reflection()}
 * @param translation       t, 3 values
 * @param reflection        whether R includes a reflection
 * @param rank              the rank of the weighted cross-covariance (3 in general; 2 when the points lie in a plane,
 *                          and then a reflection through that plane is not determined by the data and R is proper)
 * @param points            the points that took part (positive weight)
 * @param residualsById     |s R y_i + t - x_i| of every point, by id (points of weight 0 too)
 * @param rmsResidual       the root mean square of the residuals of the points that took part (unweighted)
 * @param chiSquare         the minimised objective, {@code sum_i w_i |s R y_i + t - x_i|^2}, with the weights the fit
 *                          used (given weights, times 1/|x_i|^2 for relative errors)
 */
public record Similarity(double scale, double[] rotationRowMajor, double[] translation, boolean reflection, int rank,
                         int points, double[] residualsById, double rmsResidual, double chiSquare) {
    public static final int DIM = 3;

    /** R[row][col]. */
    public double rotation(int row, int col) {
        return rotationRowMajor[row * DIM + col];
    }

    /** {@code s R y + t} of every row of {@code rowMajor} (N x 3), as a new array. */
    public double[] apply(double[] rowMajor) {
        double[] out = new double[rowMajor.length];
        apply(rowMajor, out);
        return out;
    }

    /** Writes {@code s R y + t} of every row of {@code rowMajor} into {@code out} (may be the same array). */
    public void apply(double[] rowMajor, double[] out) {
        if (rowMajor.length % DIM != 0 || out.length < rowMajor.length) {
            throw new IllegalArgumentException("expected rows of 3 values, got " + rowMajor.length + " values into "
                    + out.length);
        }
        double[] r = rotationRowMajor;
        for (int o = 0; o < rowMajor.length; o += DIM) {
            double y0 = rowMajor[o];
            double y1 = rowMajor[o + 1];
            double y2 = rowMajor[o + 2];
            out[o] = scale * (r[0] * y0 + r[1] * y1 + r[2] * y2) + translation[0];
            out[o + 1] = scale * (r[3] * y0 + r[4] * y1 + r[5] * y2) + translation[1];
            out[o + 2] = scale * (r[6] * y0 + r[7] * y1 + r[8] * y2) + translation[2];
        }
    }
}
