package io.meridian.matrix;

import io.meridian.engine.BadInputException;
import io.meridian.engine.BadInputException.Input;
import java.nio.ByteOrder;
import java.nio.file.Path;

/**
 * Which weight w_ij each pair gets, as SPIDAL offers them: all ones, a 16-bit matrix in the distance matrix's layout
 * (negative entry = weight 0), or one value per point with w_ij = s_i s_j; optionally Sammon weighting on top,
 * w_ij / max(delta_ij, 0.001 * mean(delta)). A pair with weight 0 or a missing distance is skipped everywhere.
 */
public final class Weighting {
    public enum Kind { UNIT, MATRIX, POINT }

    private final Kind kind;
    private final Path matrixFile;
    private final ByteOrder matrixOrder;
    private final double[] pointWeights;
    private final boolean sammon;

    private Weighting(Kind kind, Path matrixFile, ByteOrder matrixOrder, double[] pointWeights, boolean sammon) {
        this.kind = kind;
        this.matrixFile = matrixFile;
        this.matrixOrder = matrixOrder;
        this.pointWeights = pointWeights;
        this.sammon = sammon;
    }

    public static Weighting unit() {
        return new Weighting(Kind.UNIT, null, null, null, false);
    }

    public static Weighting matrix(Path file, ByteOrder order) {
        return new Weighting(Kind.MATRIX, file, order, null, false);
    }

    /**
     * Per-point weights, scaled so that the largest is 1: the layout depends on their ratios only, and weights of
     * 1e300 given as they are made every pair weight overflow and the layout NaN.
     */
    public static Weighting points(double[] perPoint) {
        double max = 0;
        for (double w : perPoint) {
            max = Math.max(max, w);
        }
        double[] scaled = perPoint.clone();
        if (max > 0) {
            for (int i = 0; i < scaled.length; i++) {
                scaled[i] /= max;
            }
        }
        return new Weighting(Kind.POINT, null, null, scaled, false);
    }

    public Weighting withSammon(boolean on) {
        return new Weighting(kind, matrixFile, matrixOrder, pointWeights, on);
    }

    public Kind kind() {
        return kind;
    }

    public boolean sammon() {
        return sammon;
    }

    /** True when every pair with a distance has weight 1 (unit weights, no Sammon). */
    public boolean isUnit() {
        return kind == Kind.UNIT && !sammon;
    }

    public Path matrixFile() {
        return matrixFile;
    }

    public ByteOrder matrixOrder() {
        return matrixOrder;
    }

    /** s_i of the per-point weights; only for {@link Kind#POINT}. */
    public double pointWeight(int i) {
        return pointWeights[i];
    }

    /** Maps the weight rows of a block; only for {@link Kind#MATRIX}. */
    public RowBlock mapBlock(int n, int rowStart, int rowEnd) {
        return RowBlock.map(Input.WEIGHTS, matrixFile, n, matrixOrder, rowStart, rowEnd);
    }

    /**
     * Reads per-point weights: a text file of N lines, one finite non-negative number each (blank lines and lines
     * starting with '#' are ignored).
     */
    public static double[] readPointWeights(Path file, int n) {
        double[] s = new double[n];
        int[] count = {0};
        DataLines.read(Input.POINT_WEIGHTS, file, (lineNo, t) -> {
            if (count[0] >= n) {
                throw new BadInputException(Input.POINT_WEIGHTS, file, file + "" + " has more than N = " + n + " weights (line " + lineNo + ")");
            }
            double v;
            try {
                v = Double.parseDouble(t);
            } catch (NumberFormatException e) {
                throw new BadInputException(Input.POINT_WEIGHTS, file, file + "" + " line " + lineNo + ": not a number: '" + t + "'");
            }
            if (!Double.isFinite(v)) {
                throw new BadInputException(Input.POINT_WEIGHTS, file, file + "" + " line " + lineNo + ": weight is not finite: '" + t + "'");
            }
            if (v < 0) {
                throw new BadInputException(Input.POINT_WEIGHTS, file, file + "" + " line " + lineNo + ": weight is negative: " + t);
            }
            s[count[0]++] = v;
        });
        if (count[0] != n) {
            throw new BadInputException(Input.POINT_WEIGHTS, file, file + "" + " has " + count[0] + " weights, expected N = " + n);
        }
        return s;
    }
}
