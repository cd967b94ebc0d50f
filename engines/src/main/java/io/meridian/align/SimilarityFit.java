package io.meridian.align;

import io.meridian.engine.BadInputException;
import io.meridian.engine.BadInputException.Input;

/**
 * Lays a 3-D map y over a reference map x of the same points: the similarity transform {@code y -> s R y + t} (R a
 * rotation, or a rotation with a reflection; s > 0) that minimises {@code sum_i w_i |s R y_i + t - x_i|^2}, in closed
 * form (Umeyama 1991, weighted): with the weighted centroids mx, my, the cross-covariance
 * {@code M = sum_i w_i (x_i - mx)(y_i - my)^T / W = U D V^T} and {@code S = diag(1, 1, +-1)},
 * {@code R = U S V^T}, {@code s = tr(D S) / (sum_i w_i |y_i - my|^2 / W)} and {@code t = mx - s R my}. S's last sign
 * is -1 only when det(U) det(V) < 0 and R must stay a proper rotation: the best proper rotation then gives up the
 * smallest singular value. With reflections allowed, S = I and R is a reflection exactly when that fits better.
 *
 * <p>This is the rotation mode of SPIDAL's MDSasChisq (Fox's Manxcat, {@code RotateManxcatMDS}), which reaches the
 * same minimum iteratively: Levenberg-Marquardt over translation, three Euler angles and a scale, from several starts,
 * every other start inverted (its "cosmic scaling" diag(-1, -1, -1)) so that both the proper and the improper
 * component are tried. Its chi-square term for point i is {@code (Scale Cosmic R y_i + t - x_i)} times
 * {@code sqrt(1/N) / FirstScale} (FirstScale: the RMS distance of the reference points from their mean); with
 * {@code RotationOption = 1} the term is further multiplied by {@code FirstScale / max(MinimumDistance, |x_i|)}, |x_i|
 * the reference point's length as given (not centred), so it minimises the squared relative errors
 * {@code sum_i |s R y_i + t - x_i|^2 / max(MinimumDistance, |x_i|)^2 / N}: {@link AlignOptions#relativeErrors()} is
 * that weighting (Meridian's chi-square leaves out the constant 1/N and the FirstScale factors, which move no minimum).
 * The closed form needs no starts and cannot stop in a local minimum; {@code SimilarityFitTest} checks it against a
 * Levenberg-Marquardt fit.
 */
public final class SimilarityFit {
    private static final int DIM = 3;

    private SimilarityFit() {
    }

    /**
     * The transform laying {@code mapRowMajor} over {@code referenceRowMajor}: both N x 3 row-major, row i the same
     * point in both.
     *
     * @param pointWeights w_i >= 0 by point, or null for 1; points of weight 0 take no part (but are moved)
     * @throws BadInputException when the points do not determine the transform: too few of positive weight,
     *                           collinear or coincident, or (relative errors) a reference point at the origin
     */
    public static Similarity of(double[] referenceRowMajor, double[] mapRowMajor, double[] pointWeights,
                                AlignOptions options) {
        if (referenceRowMajor.length != mapRowMajor.length || referenceRowMajor.length % DIM != 0) {
            throw new IllegalArgumentException("the reference has " + referenceRowMajor.length + " values, the map "
                    + mapRowMajor.length + ": expected the same N x 3");
        }
        int n = referenceRowMajor.length / DIM;
        if (pointWeights != null && pointWeights.length != n) {
            throw new IllegalArgumentException(pointWeights.length + " weights for " + n + " points");
        }
        double[] x = referenceRowMajor;
        double[] y = mapRowMajor;
        double[] w = weights(x, pointWeights, options);
        int used = 0;
        double total = 0;
        for (double wi : w) {
            if (wi > 0) {
                used++;
                total += wi;
            }
        }
        if (used < options.minimumPoints()) {
            throw new BadInputException(Input.MAP, null, (pointWeights == null ? n + " points" : used
                    + " points of positive weight (of " + n + ")") + ": a fit " + (options.allowReflection()
                    ? "that may reflect needs at least 4 (3 for a rotation only)" : "by a rotation needs at least 3"));
        }
        double[] mx = centroid(x, w, total);
        double[] my = centroid(y, w, total);
        double[] m = new double[9];
        double spread = 0;
        for (int i = 0, o = 0; i < n; i++, o += DIM) {
            if (w[i] == 0) {
                continue;
            }
            for (int a = 0; a < DIM; a++) {
                double xa = w[i] * (x[o + a] - mx[a]);
                double ya = y[o + a] - my[a];
                spread += w[i] * ya * ya;
                for (int b = 0; b < DIM; b++) {
                    m[a * DIM + b] += xa * (y[o + b] - my[b]);
                }
            }
        }
        for (int k = 0; k < 9; k++) {
            m[k] /= total;
        }
        spread /= total;
        Svd3 svd = Svd3.of(m);
        if (svd.rank() < 2 || !(spread > 0)) {
            throw new BadInputException(Input.MAP, null, "the " + used + " points are collinear or coincide (in the"
                    + " map or in the reference): a turn about their line is not determined");
        }
        double det = Svd3.determinant(svd.uRowMajor()) * Svd3.determinant(svd.vRowMajor());
        double last;
        if (svd.rank() == 2) {
            // the points lie in a plane: reflecting through it changes no residual; take the proper rotation
            last = det < 0 ? -1 : 1;
        } else {
            last = det < 0 && !options.allowReflection() ? -1 : 1;
        }
        double[] u = svd.uRowMajor();
        double[] v = svd.vRowMajor();
        double[] r = new double[9];
        for (int a = 0; a < DIM; a++) {
            for (int b = 0; b < DIM; b++) {
                r[a * DIM + b] = u[a * DIM] * v[b * DIM] + u[a * DIM + 1] * v[b * DIM + 1]
                        + last * u[a * DIM + 2] * v[b * DIM + 2];
            }
        }
        double[] d = svd.singular();
        double scale = options.fitScale() ? (d[0] + d[1] + last * d[2]) / spread : 1.0;
        double[] t = new double[DIM];
        for (int a = 0; a < DIM; a++) {
            t[a] = mx[a] - scale * (r[a * DIM] * my[0] + r[a * DIM + 1] * my[1] + r[a * DIM + 2] * my[2]);
        }
        boolean reflection = Svd3.determinant(r) < 0;
        Similarity fitted = new Similarity(scale, r, t, reflection, svd.rank(), used, new double[n], 0, 0);
        double[] moved = fitted.apply(y);
        double[] residuals = fitted.residualsById();
        double squares = 0;
        double chiSquare = 0;
        for (int i = 0, o = 0; i < n; i++, o += DIM) {
            double e0 = moved[o] - x[o];
            double e1 = moved[o + 1] - x[o + 1];
            double e2 = moved[o + 2] - x[o + 2];
            double e = e0 * e0 + e1 * e1 + e2 * e2;
            residuals[i] = Math.sqrt(e);
            if (w[i] > 0) {
                squares += e;
                chiSquare += w[i] * e;
            }
        }
        return new Similarity(scale, r, t, reflection, svd.rank(), used, residuals, Math.sqrt(squares / used),
                chiSquare);
    }

    /**
     * The weight of each point's squared residual: the given weight (1 if none), divided by
     * {@code max(minimumDistance, |x_i|)^2} for relative errors.
     */
    public static double[] weights(double[] referenceRowMajor, double[] pointWeights, AlignOptions options) {
        int n = referenceRowMajor.length / DIM;
        double[] w = new double[n];
        for (int i = 0, o = 0; i < n; i++, o += DIM) {
            double wi = pointWeights == null ? 1.0 : pointWeights[i];
            if (!(wi >= 0) || Double.isInfinite(wi)) {
                throw new BadInputException(Input.POINT_WEIGHTS, null, "the weight of id " + i
                        + " must be finite and >= 0, got " + wi);
            }
            if (options.relativeErrors() && wi > 0) {
                double length = Math.sqrt(referenceRowMajor[o] * referenceRowMajor[o]
                        + referenceRowMajor[o + 1] * referenceRowMajor[o + 1]
                        + referenceRowMajor[o + 2] * referenceRowMajor[o + 2]);
                double floor = Math.max(options.minimumDistance(), length);
                if (floor == 0) {
                    throw new BadInputException(Input.REFERENCE_MAP, null, "id " + i + " is at the origin: its"
                            + " relative error is not defined (give a minimum distance)");
                }
                wi /= floor * floor;
            }
            w[i] = wi;
        }
        return w;
    }

    private static double[] centroid(double[] rowMajor, double[] w, double total) {
        double[] c = new double[DIM];
        for (int i = 0, o = 0; i < w.length; i++, o += DIM) {
            for (int a = 0; a < DIM; a++) {
                c[a] += w[i] * rowMajor[o + a];
            }
        }
        for (int a = 0; a < DIM; a++) {
            c[a] /= total;
        }
        return c;
    }
}
