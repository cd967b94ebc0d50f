package io.meridian.mds;

import io.meridian.engine.BadInputException;
import io.meridian.engine.BadInputException.Input;
import io.meridian.matrix.DataLines;
import java.nio.file.Path;
import java.util.Arrays;

/** Reading coordinate files: initial layouts and fixed points. Errors name the file and line. */
public final class LayoutFiles {
    private LayoutFiles() {
    }

    /**
     * An initial layout: N lines of dim tab- or space-separated numbers, or of an id and dim numbers (as in
     * {@code points.tsv}), or of an id, dim numbers and the live map's outlier flag (0 or 1, ignored: a live frame's
     * points.tsv). Blank lines and lines starting with '#' are skipped. Returns row-major N x dim.
     */
    public static double[] readLayout(Path file, int n, int dim) {
        Input what = Input.INITIAL_LAYOUT;
        double[] x = new double[n * dim];
        int[] count = {0};
        DataLines.read(what, file, (lineNo, t) -> {
            String[] f = withoutOutlierFlag(DataLines.fields(t), dim);
            if (f.length != dim && f.length != dim + 1) {
                throw new BadInputException(what, file, file + "" + " line " + lineNo + " has " + f.length
                        + " fields, expected " + dim + " coordinates (optionally after an id)");
            }
            if (count[0] >= n) {
                throw new BadInputException(what, file, file + "" + " has more than N = " + n + " points (line " + lineNo + ")");
            }
            int first = f.length - dim;
            for (int k = 0; k < dim; k++) {
                x[count[0] * dim + k] = DataLines.number(what, file, lineNo, f[first + k]);
            }
            count[0]++;
        });
        if (count[0] != n) {
            throw new BadInputException(what, file, file + "" + " has " + count[0] + " points, expected N = " + n);
        }
        return x;
    }

    /**
     * Fixed points: lines {@code id<TAB>x<TAB>y<TAB>z...} (dim coordinates; a live frame's outlier flag after them is
     * ignored), ids in [0, N), each at most once.
     */
    public static void readFixed(Path file, int n, int dim, boolean[] fixed, double[] coordinates) {
        Input what = Input.FIXED_POINTS;
        DataLines.read(what, file, (lineNo, t) -> {
            String[] f = withoutOutlierFlag(DataLines.fields(t), dim);
            if (f.length != dim + 1) {
                throw new BadInputException(what, file, file + "" + " line " + lineNo + " has " + f.length
                        + " fields, expected an id and " + dim + " coordinates");
            }
            int id;
            try {
                id = Integer.parseInt(f[0]);
            } catch (NumberFormatException e) {
                throw new BadInputException(what, file, file + "" + " line " + lineNo + ": id is not an integer: '" + f[0] + "'");
            }
            if (id < 0 || id >= n) {
                throw new BadInputException(what, file, file + "" + " line " + lineNo + ": id " + id + " is outside 0.." + (n - 1));
            }
            if (fixed[id]) {
                throw new BadInputException(what, file, file + "" + " line " + lineNo + ": point " + id + " is given twice");
            }
            fixed[id] = true;
            for (int k = 0; k < dim; k++) {
                coordinates[id * dim + k] = DataLines.number(what, file, lineNo, f[1 + k]);
            }
        });
    }

    /**
     * The fields of a line of a live map frame's points.tsv (id, dim coordinates, outlier flag 0 or 1) without the
     * flag; any other line as it is.
     */
    private static String[] withoutOutlierFlag(String[] f, int dim) {
        boolean flagged = f.length == dim + 2 && (f[dim + 1].equals("0") || f[dim + 1].equals("1"));
        return flagged ? Arrays.copyOf(f, dim + 1) : f;
    }
}
