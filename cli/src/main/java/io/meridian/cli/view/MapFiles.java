package io.meridian.cli.view;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedReader;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.BitSet;

/**
 * Reads the files the viewer shows, strictly: {@code points.tsv} ({@code id<TAB>x<TAB>y<TAB>z}, or {@code id x y} for
 * a 2-D map, as {@code ./meridian mds} writes it; the live map's {@code SnapshotWriter} adds a fifth field, the
 * outlier flag 0 or 1), {@code clusters.tsv}
 * ({@code id<TAB>cluster}, as {@code ./meridian pwc} writes it; -1 = not clustered yet) and {@code summary.json}. Ids
 * may come in any order but must be {@code 0..N-1}, each once. Anything else is a {@link MapFileException} naming
 * the file and line, never a blank page.
 */
public final class MapFiles {
    public static final String POINTS_FILE = "points.tsv";
    public static final String CLUSTERS_FILE = "clusters.tsv";
    public static final String SUMMARY_FILE = "summary.json";
    static final ObjectMapper JSON = new ObjectMapper();

    private MapFiles() {
    }

    /**
     * A map's points as the viewer holds them: row-major N x 3 (z = 0 for a 2-D map) and the outlier flags (all false
     * in a file without them), by id.
     */
    public record Points(float[] xyzRowMajor, boolean[] outliers) {
        public int n() {
            return outliers.length;
        }
    }

    /** The points of {@code file}, row-major N x 3 (z = 0 for a 2-D map), by id, as the viewer holds them. */
    public static float[] readPoints(Path file) throws IOException {
        return readPointsAndOutliers(file).xyzRowMajor();
    }

    /** The points of {@code file} and their outlier flags (points.tsv's fifth field; false where it has none). */
    public static Points readPointsAndOutliers(Path file) throws IOException {
        Parsed p = read(file, true);
        double[] exact = p.xyz();
        float[] xyz = new float[exact.length];
        for (int k = 0; k < exact.length; k++) {
            xyz[k] = (float) exact[k];
        }
        return new Points(xyz, p.outliers());
    }

    /**
     * The points of {@code file} as written (the writers print doubles exactly), row-major N x 3 (z = 0 for a 2-D
     * map), by id: for computing with a map rather than showing it ({@code ./meridian align}).
     */
    public static double[] readCoordinates(Path file) throws IOException {
        return read(file, false).xyz();
    }

    private record Parsed(double[] xyz, boolean[] outliers) {
    }

    /**
     * Parses points.tsv; {@code asFloat}: a coordinate beyond the float range counts as not finite. A line of an id
     * and four fields is a 3-D point and its outlier flag, which must be 0 or 1.
     */
    private static Parsed read(Path file, boolean asFloat) throws IOException {
        int[] ids = new int[1024];
        double[] xyz = new double[3 * 1024];
        boolean[] flags = new boolean[1024];
        int n = 0;
        int columns = -1;
        try (BufferedReader in = open(file)) {
            String line;
            long lineNo = 0;
            while ((line = in.readLine()) != null) {
                lineNo++;
                line = withoutCarriageReturn(line);
                if (n == ids.length) {
                    ids = Arrays.copyOf(ids, 2 * n);
                    xyz = Arrays.copyOf(xyz, 6 * n);
                    flags = Arrays.copyOf(flags, 2 * n);
                }
                int end = field(line, 0, file, lineNo);
                ids[n] = id(line, 0, end, file, lineNo);
                int k = 0;
                int start = end + 1;
                while (start <= line.length()) {
                    end = line.indexOf('\t', start);
                    end = end < 0 ? line.length() : end;
                    if (k == 4) {
                        throw new MapFileException(file, lineNo, "more than 3 coordinates and an outlier flag after"
                                + " the id (a map of dimension 2 or 3 is shown; ./meridian mds --dim 3 writes one)");
                    }
                    if (k == 3) {
                        flags[n] = outlierFlag(line, start, end, file, lineNo);
                        k++;
                    } else {
                        xyz[3 * n + k++] = coordinate(line, start, end, file, lineNo, asFloat);
                    }
                    start = end + 1;
                }
                if (columns < 0) {
                    if (k < 2) {
                        throw new MapFileException(file, lineNo, "expected id<TAB>x<TAB>y<TAB>z, got "
                                + quote(line));
                    }
                    columns = k;
                } else if (k != columns) {
                    throw new MapFileException(file, lineNo, "expected an id and " + columns
                            + " fields as in line 1, got " + k + ": " + quote(line));
                }
                if (k == 2) {
                    xyz[3 * n + 2] = 0;
                }
                n++;
            }
        }
        if (n == 0) {
            throw new MapFileException(file, "holds no points");
        }
        double[] byId = new double[3 * n];
        boolean[] outliersById = new boolean[n];
        BitSet seen = new BitSet(n);
        for (int line = 0; line < n; line++) {
            int id = ids[line];
            if (id >= n) {
                throw new MapFileException(file, line + 1L, "id " + id + " outside 0.." + (n - 1) + " (the file holds "
                        + n + " points)");
            }
            if (seen.get(id)) {
                throw new MapFileException(file, line + 1L, "id " + id + " appears twice");
            }
            seen.set(id);
            System.arraycopy(xyz, 3 * line, byId, 3 * id, 3);
            outliersById[id] = flags[line];
        }
        return new Parsed(byId, outliersById);
    }

    /** The cluster of each of the {@code n} points of {@code file}; every point must have one (-1: none yet). */
    public static int[] readClusters(Path file, int n, Path pointsFile) throws IOException {
        int[] labels = new int[n];
        BitSet seen = new BitSet(n);
        try (BufferedReader in = open(file)) {
            String line;
            long lineNo = 0;
            while ((line = in.readLine()) != null) {
                lineNo++;
                line = withoutCarriageReturn(line);
                int end = field(line, 0, file, lineNo);
                int id = id(line, 0, end, file, lineNo);
                if (end == line.length() || line.indexOf('\t', end + 1) >= 0) {
                    throw new MapFileException(file, lineNo, "expected id<TAB>cluster, got " + quote(line));
                }
                if (id >= n) {
                    throw new MapFileException(file, lineNo, "id " + id + " outside 0.." + (n - 1) + " (the "
                            + n + " points of " + pointsFile + "; clusters of another map?)");
                }
                if (seen.get(id)) {
                    throw new MapFileException(file, lineNo, "id " + id + " appears twice");
                }
                seen.set(id);
                int label;
                try {
                    label = Integer.parseInt(line.substring(end + 1));
                } catch (NumberFormatException e) {
                    label = -2;
                }
                if (label < -1) {
                    throw new MapFileException(file, lineNo, "cluster must be an integer >= -1, got "
                            + quote(line.substring(end + 1)));
                }
                labels[id] = label;
            }
        }
        if (seen.cardinality() != n) {
            throw new MapFileException(file, "holds clusters for " + seen.cardinality() + " points, " + pointsFile
                    + " holds " + n + " (first without one: id " + seen.nextClearBit(0) + ")");
        }
        return labels;
    }

    /** A {@code summary.json}: a JSON object. */
    public static ObjectNode readSummary(Path file) throws IOException {
        String text = Files.readString(file, StandardCharsets.UTF_8);
        JsonNode node;
        try {
            node = JSON.readTree(text);
        } catch (JacksonException e) {
            throw new MapFileException(file, "not JSON: " + e.getOriginalMessage());
        }
        if (!(node instanceof ObjectNode object)) {
            throw new MapFileException(file, "not a JSON object");
        }
        return object;
    }

    private static BufferedReader open(Path file) throws IOException {
        return Files.newBufferedReader(file, StandardCharsets.UTF_8);
    }

    /** A line of a file written on Windows, read as the same line written here. */
    private static String withoutCarriageReturn(String line) {
        return line.endsWith("\r") ? line.substring(0, line.length() - 1) : line;
    }

    /** The end of the first field (a tab must follow it). */
    private static int field(String line, int start, Path file, long lineNo) {
        int end = line.indexOf('\t', start);
        if (end < 0) {
            throw new MapFileException(file, lineNo, line.isEmpty() ? "empty line"
                    : "expected tab-separated fields, got " + quote(line));
        }
        return end;
    }

    private static int id(String line, int start, int end, Path file, long lineNo) {
        try {
            int id = Integer.parseInt(line, start, end, 10);
            if (id >= 0) {
                return id;
            }
        } catch (NumberFormatException e) {
            // below
        }
        throw new MapFileException(file, lineNo, "the id must be an integer >= 0, got "
                + quote(line.substring(start, end)));
    }

    private static double coordinate(String line, int start, int end, Path file, long lineNo, boolean asFloat) {
        String text = line.substring(start, end);
        double v;
        try {
            v = Double.parseDouble(text);
        } catch (NumberFormatException e) {
            throw new MapFileException(file, lineNo, "coordinate " + quote(text) + " is not a number");
        }
        if (!Double.isFinite(v) || asFloat && Math.abs(v) > Float.MAX_VALUE) {
            throw new MapFileException(file, lineNo, "coordinate " + quote(text) + " is not finite");
        }
        return v;
    }

    private static boolean outlierFlag(String line, int start, int end, Path file, long lineNo) {
        if (end == start + 1 && (line.charAt(start) == '0' || line.charAt(start) == '1')) {
            return line.charAt(start) == '1';
        }
        throw new MapFileException(file, lineNo, "the fifth field, the outlier flag, must be 0 or 1, got "
                + quote(line.substring(start, end)));
    }

    private static String quote(String s) {
        return "'" + (s.length() > 80 ? s.substring(0, 77) + "..." : s) + "'";
    }
}
