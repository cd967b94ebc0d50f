package io.meridian.mds;

import io.meridian.config.CommandLine;
import io.meridian.config.UsageException;
import java.io.BufferedReader;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/** Reading coordinate files: initial layouts and fixed points. Errors name the option, file and line. */
public final class LayoutFiles {
    private LayoutFiles() {
    }

    /**
     * An initial layout: N lines of dim tab- or space-separated numbers, or of an id and dim numbers (as in
     * {@code points.tsv}). Blank lines and lines starting with '#' are skipped. Returns row-major N x dim.
     */
    public static double[] readLayout(String what, Path file, int n, int dim) {
        CommandLine.checkReadableFile(what, file);
        double[] x = new double[n * dim];
        int count = 0;
        int lineNo = 0;
        try (BufferedReader in = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            String line;
            while ((line = in.readLine()) != null) {
                lineNo++;
                String t = line.trim();
                if (t.isEmpty() || t.startsWith("#")) {
                    continue;
                }
                String[] f = t.split("[\\t ,]+");
                if (f.length != dim && f.length != dim + 1) {
                    throw new UsageException(what + ": " + file + " line " + lineNo + " has " + f.length
                            + " fields, expected " + dim + " coordinates (optionally after an id)");
                }
                if (count >= n) {
                    throw new UsageException(what + ": " + file + " has more than N = " + n + " points (line " + lineNo + ")");
                }
                int first = f.length - dim;
                for (int k = 0; k < dim; k++) {
                    x[count * dim + k] = number(what, file, lineNo, f[first + k]);
                }
                count++;
            }
        } catch (IOException e) {
            throw new UsageException(what + ": cannot read " + file + ": " + e.getMessage(), e);
        }
        if (count != n) {
            throw new UsageException(what + ": " + file + " has " + count + " points, expected N = " + n);
        }
        return x;
    }

    /** Fixed points: lines {@code id<TAB>x<TAB>y<TAB>z...} (dim coordinates), ids in [0, N), each at most once. */
    public static void readFixed(String what, Path file, int n, int dim, boolean[] fixed, double[] coordinates) {
        CommandLine.checkReadableFile(what, file);
        int lineNo = 0;
        try (BufferedReader in = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            String line;
            while ((line = in.readLine()) != null) {
                lineNo++;
                String t = line.trim();
                if (t.isEmpty() || t.startsWith("#")) {
                    continue;
                }
                String[] f = t.split("[\\t ,]+");
                if (f.length != dim + 1) {
                    throw new UsageException(what + ": " + file + " line " + lineNo + " has " + f.length
                            + " fields, expected an id and " + dim + " coordinates");
                }
                int id;
                try {
                    id = Integer.parseInt(f[0]);
                } catch (NumberFormatException e) {
                    throw new UsageException(what + ": " + file + " line " + lineNo + ": id is not an integer: '" + f[0] + "'");
                }
                if (id < 0 || id >= n) {
                    throw new UsageException(what + ": " + file + " line " + lineNo + ": id " + id + " is outside 0.." + (n - 1));
                }
                if (fixed[id]) {
                    throw new UsageException(what + ": " + file + " line " + lineNo + ": point " + id + " is given twice");
                }
                fixed[id] = true;
                for (int k = 0; k < dim; k++) {
                    coordinates[id * dim + k] = number(what, file, lineNo, f[1 + k]);
                }
            }
        } catch (IOException e) {
            throw new UsageException(what + ": cannot read " + file + ": " + e.getMessage(), e);
        }
    }

    private static double number(String what, Path file, int lineNo, String s) {
        double v;
        try {
            v = Double.parseDouble(s);
        } catch (NumberFormatException e) {
            throw new UsageException(what + ": " + file + " line " + lineNo + ": not a number: '" + s + "'");
        }
        if (!Double.isFinite(v)) {
            throw new UsageException(what + ": " + file + " line " + lineNo + ": not a finite number: '" + s + "'");
        }
        return v;
    }
}
