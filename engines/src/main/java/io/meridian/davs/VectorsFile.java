package io.meridian.davs;

import io.meridian.engine.BadInputException;
import io.meridian.engine.BadInputException.Input;
import java.io.BufferedReader;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;

/**
 * Reads the text files DA-VS takes: vectors, one point a line, {@code id<TAB>x_1<TAB>...<TAB>x_D} (what
 * {@code ./meridian gen --kind peaks} writes as vectors.tsv, the layout of the map's points.tsv with D values), ids
 * 0..N-1 in order; and labels, {@code id<TAB>label}, the same ids. Blank lines and lines starting with {@code #} are
 * skipped; a bad line is refused naming the file and line.
 */
public final class VectorsFile {
    private VectorsFile() {
    }

    /** N points of D values, row-major. */
    public record Vectors(double[] xRowMajor, int n, int d) {
    }

    public static Vectors read(Path file) throws IOException {
        BadInputException.checkReadable(Input.VECTORS, file);
        double[] x = new double[1024];
        int n = 0;
        int d = -1;
        try (BufferedReader in = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            String line;
            int lineNo = 0;
            while ((line = in.readLine()) != null) {
                lineNo++;
                if (line.isBlank() || line.startsWith("#")) {
                    continue;
                }
                String[] fields = line.strip().split("\\s+");
                if (d < 0) {
                    d = fields.length - 1;
                    if (d < 1) {
                        throw bad(Input.VECTORS, file, lineNo, "needs an id and at least one value, got '"
                                + line + "'");
                    }
                } else if (fields.length - 1 != d) {
                    throw bad(Input.VECTORS, file, lineNo, "has " + (fields.length - 1) + " values, the lines"
                            + " before have " + d);
                }
                checkId(Input.VECTORS, file, lineNo, fields[0], n);
                if ((long) (n + 1) * d > Integer.MAX_VALUE - 8) {
                    throw bad(Input.VECTORS, file, lineNo, "too many values for one array");
                }
                if ((n + 1) * d > x.length) {
                    x = Arrays.copyOf(x, (int) Math.min(Integer.MAX_VALUE - 8L, 2L * x.length + d));
                }
                for (int i = 0; i < d; i++) {
                    x[n * d + i] = number(file, lineNo, fields[i + 1], i + 1);
                }
                n++;
            }
        }
        if (n < 2) {
            throw new BadInputException(Input.VECTORS, file, file + " holds " + n + " points; DA-VS needs at least 2");
        }
        return new Vectors(Arrays.copyOf(x, n * d), n, d);
    }

    /** Labels of ids 0..n-1 ({@code id<TAB>label}), e.g. a generator's truth. */
    public static int[] readLabels(Path file, int n) throws IOException {
        BadInputException.checkReadable(Input.TRUE_LABELS, file);
        int[] labels = new int[n];
        int count = 0;
        try (BufferedReader in = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            String line;
            int lineNo = 0;
            while ((line = in.readLine()) != null) {
                lineNo++;
                if (line.isBlank() || line.startsWith("#")) {
                    continue;
                }
                String[] fields = line.strip().split("\\s+");
                if (fields.length != 2) {
                    throw bad(Input.TRUE_LABELS, file, lineNo, "needs id and label, got '" + line + "'");
                }
                if (count >= n) {
                    throw bad(Input.TRUE_LABELS, file, lineNo, "is beyond the " + n + " points of the vectors");
                }
                checkId(Input.TRUE_LABELS, file, lineNo, fields[0], count);
                try {
                    labels[count++] = Integer.parseInt(fields[1]);
                } catch (NumberFormatException e) {
                    throw bad(Input.TRUE_LABELS, file, lineNo, "label '" + fields[1] + "' is not an integer");
                }
            }
        }
        if (count != n) {
            throw new BadInputException(Input.TRUE_LABELS, file, file + " holds " + count + " labels for " + n
                    + " points");
        }
        return labels;
    }

    private static void checkId(Input input, Path file, int lineNo, String field, int expected) {
        long id;
        try {
            id = Long.parseLong(field);
        } catch (NumberFormatException e) {
            throw bad(input, file, lineNo, "id '" + field + "' is not an integer");
        }
        if (id != expected) {
            throw bad(input, file, lineNo, "has id " + id + ", expected " + expected + " (ids 0..N-1 in order)");
        }
    }

    private static double number(Path file, int lineNo, String field, int column) {
        double v;
        try {
            v = Double.parseDouble(field);
        } catch (NumberFormatException e) {
            throw bad(Input.VECTORS, file, lineNo, "value " + column + " '" + field + "' is not a number");
        }
        if (!Double.isFinite(v)) {
            throw bad(Input.VECTORS, file, lineNo, "value " + column + " '" + field + "' is not finite");
        }
        return v;
    }

    private static BadInputException bad(Input input, Path file, int lineNo, String problem) {
        return new BadInputException(input, file, file + " line " + lineNo + ": " + problem);
    }
}
