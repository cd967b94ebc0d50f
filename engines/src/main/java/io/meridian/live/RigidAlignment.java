package io.meridian.live;

import io.meridian.align.Svd3;
import java.util.Arrays;

/**
 * Lays a new frame of a 3-D live map over the previous one, so that what a viewer sees move is real motion: the
 * orthogonal Procrustes fit of the points both frames share (rotation or reflection, and translation; no scaling),
 * applied to every point of the new frame. Part of the movement after a refinement is rigid (the Guttman update
 * re-centres the map); aligning each frame to the previous one cut the first round's drift from 1.2 % to 0.4 % of the
 * map's radius on the measured data set.
 *
 * <p>The fit minimises {@code sum_i |R q_i + t - p_i|^2} over orthogonal R (det +1 or -1) and t, for the previous
 * positions p_i and the new q_i of the {@code common} shared points, which are the first rows of both frames. With
 * centroids p0, q0 and the cross-covariance {@code H = sum_i (q_i - q0)(p_i - p0)^T = U S V^T}, {@code R = V U^T} and
 * {@code t = p0 - R q0}. The SVD is a one-sided Jacobi (Hestenes) on H's columns, accurate to the last bits even for
 * small singular values. Degenerate frames: a singular value below {@value #RANK_TOLERANCE} of the largest counts as 0;
 * with rank 2 (the shared points lie in a plane) the reflection through that plane is not determined by the data, so
 * R is taken as a rotation; with rank 1 or 0 (fewer than 3 points, collinear or coincident points) R is the identity
 * and only the translation is fitted; with no shared point nothing moves.
 *
 * <p>The fit also measures the drift: the RMS distance between the aligned new and the previous positions of the shared
 * points, divided by the previous frame's radius (RMS distance of its shared points from their centroid); 0 when
 * nothing moved, infinite when the previous points coincide and the new ones do not.
 *
 * <p>One instance serves one thread; {@link #fit}, {@link #apply} and {@link #align} allocate nothing. The getters
 * describe the last fit.
 */
public final class RigidAlignment {
    public static final int DIM = 3;
    /** Singular values at or below this fraction of the largest count as zero. */
    public static final double RANK_TOLERANCE = Svd3.RANK_TOLERANCE;

    /** R, row-major 3 x 3. */
    private final double[] rotation = new double[9];
    private final double[] translation = new double[DIM];
    private final double[] previousCentroid = new double[DIM];
    private final double[] currentCentroid = new double[DIM];
    /** H, then H V: its columns are U S. Row-major 3 x 3. */
    private final double[] columns = new double[9];
    /** V, row-major 3 x 3. */
    private final double[] v = new double[9];
    /** U, row-major 3 x 3. */
    private final double[] u = new double[9];
    private final double[] singular = new double[DIM];
    private int rank;
    private double rmsMovement;
    private double radius;
    private double drift;

    public RigidAlignment() {
        identity(rotation);
    }

    /**
     * Fits R and t to the first {@code common} rows of both frames and applies them to rows 0..n-1 of
     * {@code currentRowMajor}, in place.
     *
     * @param previousRowMajor the previous frame, row-major, at least {@code common} rows of 3
     * @param currentRowMajor  the new frame, row-major, n rows of 3; rows 0..common-1 are the shared points
     */
    public void align(double[] previousRowMajor, double[] currentRowMajor, int common, int n) {
        if (n < common) {
            throw new IllegalArgumentException("the new frame has " + n + " points, fewer than the " + common
                    + " shared ones");
        }
        checkRows("the new frame", currentRowMajor, n);
        fit(previousRowMajor, currentRowMajor, common);
        apply(currentRowMajor, n);
    }

    /** Fits R, t and the drift to the first {@code common} rows of both frames; changes neither. */
    public void fit(double[] previousRowMajor, double[] currentRowMajor, int common) {
        if (common < 0) {
            throw new IllegalArgumentException("the number of shared points must be >= 0, got " + common);
        }
        checkRows("the previous frame", previousRowMajor, common);
        checkRows("the new frame", currentRowMajor, common);
        centroid(previousRowMajor, common, previousCentroid);
        centroid(currentRowMajor, common, currentCentroid);
        crossCovariance(previousRowMajor, currentRowMajor, common);
        decompose();
        chooseRotation();
        for (int r = 0; r < DIM; r++) {
            translation[r] = previousCentroid[r] - (rotation[3 * r] * currentCentroid[0]
                    + rotation[3 * r + 1] * currentCentroid[1] + rotation[3 * r + 2] * currentCentroid[2]);
        }
        measureDrift(previousRowMajor, currentRowMajor, common);
    }

    /** Replaces rows 0..n-1 of {@code frameRowMajor} by {@code R q + t}, with the last fit's R and t. */
    public void apply(double[] frameRowMajor, int n) {
        if (n < 0) {
            throw new IllegalArgumentException("n must be >= 0, got " + n);
        }
        checkRows("the frame", frameRowMajor, n);
        final double[] r = rotation;
        for (int i = 0, o = 0; i < n; i++, o += DIM) {
            double q0 = frameRowMajor[o];
            double q1 = frameRowMajor[o + 1];
            double q2 = frameRowMajor[o + 2];
            frameRowMajor[o] = r[0] * q0 + r[1] * q1 + r[2] * q2 + translation[0];
            frameRowMajor[o + 1] = r[3] * q0 + r[4] * q1 + r[5] * q2 + translation[1];
            frameRowMajor[o + 2] = r[6] * q0 + r[7] * q1 + r[8] * q2 + translation[2];
        }
    }

    /** R[row][col] of the last fit. */
    public double rotation(int row, int col) {
        return rotation[row * DIM + col];
    }

    /** Copies R, row-major 3 x 3, into {@code out[0..9)}. */
    public void rotation(double[] out) {
        System.arraycopy(rotation, 0, out, 0, 9);
    }

    public double translation(int axis) {
        return translation[axis];
    }

    /** Whether the last fit's R is a reflection (det R = -1). */
    public boolean isReflection() {
        return Svd3.determinant(rotation) < 0;
    }

    /** How many singular values of H were above {@link #RANK_TOLERANCE}: 3 for a general frame. */
    public int rank() {
        return rank;
    }

    /** RMS distance between the aligned new and the previous positions of the shared points. */
    public double rmsMovement() {
        return rmsMovement;
    }

    /** RMS distance of the previous frame's shared points from their centroid. */
    public double radius() {
        return radius;
    }

    /** {@link #rmsMovement()} / {@link #radius()}: 0 when nothing moved, infinite for a zero radius otherwise. */
    public double drift() {
        return drift;
    }

    private static void checkRows(String what, double[] rowMajor, int rows) {
        if (rowMajor == null || rowMajor.length < (long) rows * DIM) {
            throw new IllegalArgumentException(what + " must hold " + rows + " x " + DIM + " values, got "
                    + (rowMajor == null ? "null" : rowMajor.length));
        }
    }

    private static void centroid(double[] rowMajor, int rows, double[] out) {
        double s0 = 0;
        double s1 = 0;
        double s2 = 0;
        for (int i = 0, o = 0; i < rows; i++, o += DIM) {
            s0 += rowMajor[o];
            s1 += rowMajor[o + 1];
            s2 += rowMajor[o + 2];
        }
        double inv = rows == 0 ? 0 : 1.0 / rows;
        out[0] = s0 * inv;
        out[1] = s1 * inv;
        out[2] = s2 * inv;
    }

    /** {@code columns = H = sum_i (q_i - q0)(p_i - p0)^T}. */
    private void crossCovariance(double[] previous, double[] current, int common) {
        final double[] h = columns;
        Arrays.fill(h, 0.0);
        for (int i = 0, o = 0; i < common; i++, o += DIM) {
            for (int r = 0; r < DIM; r++) {
                double q = current[o + r] - currentCentroid[r];
                for (int c = 0; c < DIM; c++) {
                    h[r * DIM + c] += q * (previous[o + c] - previousCentroid[c]);
                }
            }
        }
    }

    /** H V = U S by {@link Svd3#decompose}: the singular values in decreasing order, and the rank. */
    private void decompose() {
        rank = Svd3.decompose(columns, v, singular);
    }

    /** {@code R = V U^T} from the decomposition, completing U and V by cross products when the rank is 2. */
    private void chooseRotation() {
        if (rank < 2) {
            identity(rotation);
            return;
        }
        for (int c = 0; c < rank; c++) {
            double inv = 1.0 / singular[c];
            for (int r = 0; r < DIM; r++) {
                u[r * DIM + c] = columns[r * DIM + c] * inv;
            }
        }
        if (rank == 2) {
            // the third directions are free: right-handed U and V make R a rotation
            crossColumns(u);
            crossColumns(v);
        }
        for (int r = 0; r < DIM; r++) {
            for (int c = 0; c < DIM; c++) {
                rotation[r * DIM + c] = v[r * DIM] * u[c * DIM] + v[r * DIM + 1] * u[c * DIM + 1]
                        + v[r * DIM + 2] * u[c * DIM + 2];
            }
        }
    }

    /** Column 2 of {@code m} = column 0 x column 1. */
    private static void crossColumns(double[] m) {
        m[2] = m[3] * m[7] - m[6] * m[4];
        m[5] = m[6] * m[1] - m[0] * m[7];
        m[8] = m[0] * m[4] - m[3] * m[1];
    }

    private void measureDrift(double[] previous, double[] current, int common) {
        final double[] r = rotation;
        double moved = 0;
        double spread = 0;
        for (int i = 0, o = 0; i < common; i++, o += DIM) {
            double q0 = current[o];
            double q1 = current[o + 1];
            double q2 = current[o + 2];
            for (int a = 0; a < DIM; a++) {
                double aligned = r[3 * a] * q0 + r[3 * a + 1] * q1 + r[3 * a + 2] * q2 + translation[a];
                double p = previous[o + a];
                double e = aligned - p;
                double s = p - previousCentroid[a];
                moved += e * e;
                spread += s * s;
            }
        }
        rmsMovement = common == 0 ? 0 : Math.sqrt(moved / common);
        radius = common == 0 ? 0 : Math.sqrt(spread / common);
        if (rmsMovement == 0) {
            drift = 0;
        } else {
            drift = radius == 0 ? Double.POSITIVE_INFINITY : rmsMovement / radius;
        }
    }

    private static void identity(double[] m) {
        Arrays.fill(m, 0.0);
        m[0] = 1;
        m[4] = 1;
        m[8] = 1;
    }
}
