package io.meridian.cli.view;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.meridian.align.AlignOptions;
import io.meridian.align.Similarity;
import io.meridian.align.SimilarityFit;
import io.meridian.engine.BadInputException;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Locale;
import java.util.stream.IntStream;

/**
 * Two maps of the same items laid over each other for {@code ./meridian view --compare A B}: B is moved onto A by the
 * least-squares similarity transform ({@link SimilarityFit}, {@link AlignOptions#DEFAULT}: rotation, reflection
 * allowed, scale), fitted over the ids both maps hold, unless B is already aligned to A (the fit would move no point
 * of B by more than {@link #ALIGNED} of A's RMS radius, as for {@code ./meridian align}'s output), when it is shown as
 * given. Both maps are read at full precision by the viewer's reader ({@link MapFiles#readCoordinates}).
 *
 * <p>Ids present in one map only are shown, not refused: every map holds ids {@code 0..N-1}, so they are the larger
 * map's last ids, which is what a live map's snapshot is next to a batch map of the same stream while rows are still
 * arriving (the live map appends each point as its row is stored). They take no part in the fit, get no segment and
 * are named in the legend and on stdout; B's are moved with the rest of B.
 *
 * @param referenceFile A's points.tsv
 * @param mapFile       B's points.tsv
 * @param reference     A, row-major N_A x 3
 * @param shown         B as drawn: moved onto A, or as given when already aligned; row-major N_B x 3
 * @param fit           the transform fitted over the shared ids; its residuals are the segments' lengths
 * @param shared        ids {@code 0..shared-1} are in both maps
 * @param moved         whether B was moved (false: already aligned to A, shown as given)
 */
public record MapComparison(Path referenceFile, Path mapFile, double[] reference, double[] shown, Similarity fit,
                            int shared, boolean moved) {
    /** B counts as aligned to A when the fit moves none of its points by more than this fraction of A's radius. */
    public static final double ALIGNED = 1e-9;
    /** The largest displacements the legend lists. */
    public static final int LARGEST = 5;
    /** Map labels of the compare page's frame: the legend's two entries. */
    public static final int REFERENCE_LABEL = 0;
    public static final int MAP_LABEL = 1;

    /**
     * Reads both maps and lays B over A.
     *
     * @throws MapFileException  for a file that is not a map
     * @throws BadInputException when the shared points do not determine the transform (fewer than 4, collinear or
     *                           coincident)
     */
    public static MapComparison of(Path referenceFile, Path mapFile) throws IOException {
        double[] x = MapFiles.readCoordinates(referenceFile);
        double[] y = MapFiles.readCoordinates(mapFile);
        int shared = Math.min(x.length, y.length) / 3;
        Similarity fit = SimilarityFit.of(Arrays.copyOf(x, 3 * shared), Arrays.copyOf(y, 3 * shared), null,
                AlignOptions.DEFAULT);
        double[] moved = fit.apply(y);
        double most = 0;
        for (int i = 0; i < y.length; i += 3) {
            most = Math.max(most, Math.sqrt(square(moved[i] - y[i]) + square(moved[i + 1] - y[i + 1])
                    + square(moved[i + 2] - y[i + 2])));
        }
        boolean aligned = most <= ALIGNED * rmsRadius(x, shared);
        return new MapComparison(referenceFile, mapFile, x, aligned ? y : moved, fit, shared, !aligned);
    }

    public int referenceN() {
        return reference.length / 3;
    }

    public int mapN() {
        return shown.length / 3;
    }

    /** The distance between each shared id's two positions as drawn, by id. */
    public double[] displacements() {
        double[] d = new double[shared];
        for (int i = 0, o = 0; i < shared; i++, o += 3) {
            d[i] = Math.sqrt(square(shown[o] - reference[o]) + square(shown[o + 1] - reference[o + 1])
                    + square(shown[o + 2] - reference[o + 2]));
        }
        return d;
    }

    /** The residual RMS over the shared ids, as drawn (the fit's, or B's distance from A when shown as given). */
    public double rmsResidual() {
        double sum = 0;
        for (double d : displacements()) {
            sum += d * d;
        }
        return Math.sqrt(sum / shared);
    }

    /** The ids of the {@code k} largest displacements, largest first (ties: the lower id first). */
    public int[] largest(int k) {
        double[] d = displacements();
        return IntStream.range(0, shared).boxed()
                .sorted((a, b) -> d[a] != d[b] ? Double.compare(d[b], d[a]) : Integer.compare(a, b))
                .limit(k).mapToInt(Integer::intValue).toArray();
    }

    /**
     * The page's frame: A's points (ids 0..N_A-1, label {@link #REFERENCE_LABEL}) followed by B's as drawn (label
     * {@link #MAP_LABEL}); the page draws a segment from point i to point N_A + i for i below {@code compare.shared}.
     * {@code meta.compare} holds the transform, the residual RMS and the largest displacements for the legend.
     */
    public MapFrame frame() {
        int na = referenceN();
        int nb = mapN();
        float[] xyz = new float[3 * (na + nb)];
        for (int k = 0; k < reference.length; k++) {
            xyz[k] = (float) reference[k];
        }
        for (int k = 0; k < shown.length; k++) {
            xyz[reference.length + k] = (float) shown[k];
        }
        int[] labels = new int[na + nb];
        Arrays.fill(labels, 0, na, REFERENCE_LABEL);
        Arrays.fill(labels, na, na + nb, MAP_LABEL);
        ObjectNode meta = MapFiles.JSON.createObjectNode();
        meta.put("mode", "compare");
        meta.put("points", referenceFile.toString());
        meta.putNull("clusters");
        meta.putNull("frame");
        meta.putNull("stress");
        meta.putNull("temperature");
        meta.put("clusterCount", 2);
        meta.putObject("summaries");
        meta.putArray("history");
        ObjectNode c = meta.putObject("compare");
        c.put("reference", referenceFile.toString());
        c.put("map", mapFile.toString());
        c.put("referenceN", na);
        c.put("mapN", nb);
        c.put("shared", shared);
        c.put("moved", moved);
        c.put("scale", fit.scale());
        c.put("reflection", fit.reflection());
        ArrayNode r = c.putArray("rotation");
        for (double v : fit.rotationRowMajor()) {
            r.add(v);
        }
        ArrayNode t = c.putArray("translation");
        for (double v : fit.translation()) {
            t.add(v);
        }
        c.put("rmsResidual", rmsResidual());
        double[] d = displacements();
        ArrayNode largest = c.putArray("largest");
        for (int id : largest(LARGEST)) {
            largest.addArray().add(id).add(d[id]);
        }
        c.put("note", note());
        return new MapFrame(meta, xyz, labels);
    }

    /** The one line {@code ./meridian view --compare} prints: how B was laid over A, and ids in one map only. */
    public String summaryLine() {
        String how = moved ? "B moved onto A by s R y + t" : "B already aligned to A (the fit moves it by less than "
                + ALIGNED + " of A's radius), shown as given";
        String notes = note();
        return String.format(Locale.ROOT, "%s: scale %.6g, %s, residual rms %.6g over %d shared ids%s", how,
                fit.scale(), fit.reflection() ? "reflection" : "rotation", rmsResidual(), shared,
                notes.isEmpty() ? "" : "; " + notes);
    }

    /** Ids present in one map only ("" when both hold the same ids). */
    public String note() {
        int na = referenceN();
        int nb = mapN();
        if (na == nb) {
            return "";
        }
        return String.format(Locale.ROOT, "%d ids only in %s (%s), drawn without a segment and not fitted",
                Math.abs(na - nb), na > nb ? "A" : "B", shared + 1 == Math.max(na, nb) ? "id " + shared
                        : "ids " + shared + ".." + (Math.max(na, nb) - 1));
    }

    /** The RMS distance of A's first {@code n} points from their mean. */
    private static double rmsRadius(double[] x, int n) {
        double[] mean = new double[3];
        for (int i = 0; i < 3 * n; i++) {
            mean[i % 3] += x[i] / n;
        }
        double sum = 0;
        for (int i = 0; i < 3 * n; i++) {
            sum += square(x[i] - mean[i % 3]);
        }
        return Math.sqrt(sum / n);
    }

    private static double square(double v) {
        return v * v;
    }
}
