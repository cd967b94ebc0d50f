package io.meridian.live;

import jdk.incubator.vector.DoubleVector;
import jdk.incubator.vector.VectorMask;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * {@link Placement}'s pass for dim = 3 over explicit vectors (the incubator Vector API), on the mapped points laid out
 * by coordinate ({@code xs, ys, zs}) and the row's targets and weights as doubles (weight 0 for a missing entry): C2
 * does not vectorise the scalar pass, whose square root and division per entry bound it at about 5.5 ns an entry.
 * The same terms as the scalar pass; only the order of the sums differs (one partial sum per lane, the lanes then
 * added in lane order: {@code reduceLanes} leaves its order to the implementation, so the interpreter's and C2's
 * could differ and a result would depend on when the JIT compiled the pass). Only loaded when the JVM runs with
 * {@code --add-modules jdk.incubator.vector} ({@link Placement#VECTOR_AVAILABLE}).
 */
final class PlacementVectors {
    private static final VectorSpecies<Double> D = DoubleVector.SPECIES_PREFERRED;

    private PlacementVectors() {
    }

    /** The doubles of one vector: {@link #pass3}'s {@code lanes} holds five times this many. */
    static int lanes() {
        return D.length();
    }

    /**
     * Sums over the n mapped points at {@code (x, y, z)}: {@code out = {sum w r^2, sum f, sum f px, sum f py, sum f pz,
     * points not on x}} with {@code r = d - delta}, {@code f = w delta / d} where {@code d >= COINCIDENT};
     * {@code lanes} (5 x {@link #lanes()}) is scratch for the partial sums.
     */
    static void pass3(double x, double y, double z, double[] xs, double[] ys, double[] zs, double[] delta,
                      double[] weight, int n, double[] lanes, double[] out) {
        DoubleVector vx = DoubleVector.broadcast(D, x);
        DoubleVector vy = DoubleVector.broadcast(D, y);
        DoubleVector vz = DoubleVector.broadcast(D, z);
        DoubleVector residual = DoubleVector.zero(D);
        DoubleVector fTotal = DoubleVector.zero(D);
        DoubleVector sx = DoubleVector.zero(D);
        DoubleVector sy = DoubleVector.zero(D);
        DoubleVector sz = DoubleVector.zero(D);
        long far = 0;
        int bound = D.loopBound(n);
        int j = 0;
        for (; j < bound; j += D.length()) {
            DoubleVector px = DoubleVector.fromArray(D, xs, j);
            DoubleVector py = DoubleVector.fromArray(D, ys, j);
            DoubleVector pz = DoubleVector.fromArray(D, zs, j);
            DoubleVector w = DoubleVector.fromArray(D, weight, j);
            DoubleVector t = DoubleVector.fromArray(D, delta, j);
            DoubleVector dx = vx.sub(px);
            DoubleVector dy = vy.sub(py);
            DoubleVector dz = vz.sub(pz);
            DoubleVector d = dx.mul(dx).add(dy.mul(dy)).add(dz.mul(dz)).lanewise(VectorOperators.SQRT);
            DoubleVector r = d.sub(t);
            residual = residual.add(w.mul(r).mul(r));
            VectorMask<Double> on = d.compare(VectorOperators.GE, Placement.COINCIDENT)
                    .and(w.compare(VectorOperators.GT, 0.0));
            // lanes off the mask divide by d < COINCIDENT (maybe 0): blended to 0 before they are summed
            DoubleVector f = w.mul(t).div(d).blend(0.0, on.not());
            fTotal = fTotal.add(f);
            sx = sx.add(f.mul(px));
            sy = sy.add(f.mul(py));
            sz = sz.add(f.mul(pz));
            far += on.trueCount();
        }
        int width = D.length();
        residual.intoArray(lanes, 0);
        fTotal.intoArray(lanes, width);
        sx.intoArray(lanes, 2 * width);
        sy.intoArray(lanes, 3 * width);
        sz.intoArray(lanes, 4 * width);
        double res = inLaneOrder(lanes, 0, width);
        double ft = inLaneOrder(lanes, width, width);
        double ax = inLaneOrder(lanes, 2 * width, width);
        double ay = inLaneOrder(lanes, 3 * width, width);
        double az = inLaneOrder(lanes, 4 * width, width);
        for (; j < n; j++) {
            double w = weight[j];
            double ex = x - xs[j];
            double ey = y - ys[j];
            double ez = z - zs[j];
            double d = Math.sqrt(ex * ex + ey * ey + ez * ez);
            double r = d - delta[j];
            res += w * r * r;
            if (d >= Placement.COINCIDENT && w > 0) {
                double f = w * delta[j] / d;
                ft += f;
                ax += f * xs[j];
                ay += f * ys[j];
                az += f * zs[j];
                far++;
            }
        }
        out[0] = res;
        out[1] = ft;
        out[2] = ax;
        out[3] = ay;
        out[4] = az;
        out[5] = far;
    }

    private static double inLaneOrder(double[] lanes, int from, int width) {
        double sum = 0;
        for (int k = from; k < from + width; k++) {
            sum += lanes[k];
        }
        return sum;
    }
}
