package io.meridian.pwc;

import io.meridian.collective.BlockSync;
import io.meridian.collective.SingleProcessSync;
import io.meridian.engine.BadInputException;
import io.meridian.engine.BadInputException.Input;
import io.meridian.matrix.DistanceSource;
import io.meridian.matrix.LowerRows;
import io.meridian.matrix.RowBlock;
import io.meridian.matrix.RowPartition;
import io.meridian.matrix.TriangleSource;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.stream.IntStream;

/**
 * A batch DA-PWC run from distances to files, in one process or in a group of them: {@code clusters.tsv}
 * ({@code point<TAB>cluster}), {@code centers.tsv} ({@code cluster<TAB>center point<TAB>size<TAB>mean distance of the
 * center to the members}) and {@code summary.json} in an output directory.
 */
public final class PwcJob {
    public static final String CLUSTERS_FILE = "clusters.tsv";
    public static final String CENTERS_FILE = "centers.tsv";
    public static final String SUMMARY_FILE = "summary.json";

    private PwcJob() {
    }

    /** Clusters all points of {@code distances} and writes the results to {@code outDir}. */
    public static PwcResult run(DistanceSource distances, PwcSettings settings, PwcProgress progress, Path outDir) {
        return run(distances.all(), settings, progress, outDir);
    }

    /**
     * Clusters a whole matrix already mapped as one block and writes the results to {@code outDir}. Distances that
     * are all equal have one cluster, which is what the run gives them ({@link #oneDistance}); distances that are all
     * zero or missing are refused.
     */
    public static PwcResult run(RowBlock whole, PwcSettings settings, PwcProgress progress, Path outDir) {
        RowPartition partition = RowPartition.of(whole.n(), 1);
        PwcSettings used = oneDistance(whole) ? oneCluster(settings) : settings;
        PwcResult result = new PwcEngine(whole, partition, SingleProcessSync.INSTANCE, used, progress).run();
        write(outDir, result, whole.n(), settings);
        return result;
    }

    /**
     * Clusters points {@code 0 .. N-1} of a square matrix in {@code sync}'s participants, each reading only its
     * contiguous block of full rows in the run ({@link RowPartition}), as SPIDAL's dapwc splits them; block 0 writes
     * the results to {@code outDir}. Every participant returns the same result.
     */
    public static PwcResult run(DistanceSource distances, PwcSettings settings, BlockSync sync, PwcProgress progress,
                                Path outDir) {
        int n = distances.n();
        RowPartition partition = RowPartition.of(n, sync.blocks());
        int me = sync.block();
        PwcSettings used = oneDistance(distances.all()) ? oneCluster(settings) : settings;
        RowBlock mine = distances.rows(partition.start(me), partition.end(me));
        PwcResult result = new PwcEngine(mine, partition, sync, used, progress).run();
        if (me == 0) {
            write(outDir, result, n, settings);
        }
        return result;
    }

    /**
     * Clusters points {@code 0 .. N-1} of the lower triangle {@code triangle} holds (the row stores or a triangle
     * file), read in place with no square copy, in {@code sync}'s participants: each owns a contiguous block of rows
     * holding about the same number of pairs ({@link RowPartition#triangleStarts}), visits each of their pairs once
     * and credits both rows ({@link TriangleKernel}). The labels are the square matrix's (the sums run in another
     * order). Block 0 writes the results to {@code outDir}; every participant returns the same result.
     */
    public static PwcResult run(TriangleSource triangle, PwcSettings settings, BlockSync sync, PwcProgress progress,
                                Path outDir) {
        int n = triangle.n();
        int[] starts = RowPartition.triangleStarts(n, sync.blocks());
        int[][] owned = new int[sync.blocks()][];
        for (int b = 0; b < owned.length; b++) {
            owned[b] = IntStream.range(starts[b], starts[b + 1]).toArray();
        }
        PwcSettings used = oneDistance(triangle.rows(), n, triangle.origin()) ? oneCluster(settings) : settings;
        PwcResult result = PwcEngine.overLowerRows(triangle.rows(), n, owned, sync, used, progress).run();
        if (sync.block() == 0) {
            write(outDir, result, n, settings);
        }
        return result;
    }

    /** How many doubles the largest collective of a run over N points and up to {@code maxClusters} carries. */
    public static int collectiveCapacity(int n, int maxClusters) {
        return TriangleKernel.reduceCapacity(n, maxClusters);
    }

    /** {@link #oneDistance(LowerRows, int, Path)} of a whole square matrix (its lower triangle). */
    static boolean oneDistance(RowBlock whole) {
        return oneDistance(LowerRows.of(whole), whole.n(), whole.file());
    }

    /**
     * Whether every distance between two points is the same positive value (missing ones aside): then there is no
     * structure, and one cluster is the answer (DA-PWC split 40 such points into 8 clusters). Refuses a matrix with no
     * positive distance between two points, which DA-PWC cannot start on (its first temperature is twice the mean
     * distance). Stops at the first two different distances, so it costs nothing on data with structure.
     */
    static boolean oneDistance(LowerRows rows, int n, Path origin) {
        short[] row = new short[n];
        int first = -1;
        for (int i = 1; i < n; i++) {
            rows.copy(i, 0, i, row);
            for (int j = 0; j < i; j++) {
                int v = row[j];
                if (v < 0) {
                    continue;
                }
                if (first < 0) {
                    first = v;
                } else if (v != first) {
                    return false;
                }
            }
        }
        if (first <= 0) {
            throw new BadInputException(Input.DISTANCES, origin, "no two points have a positive distance between"
                    + " them (every entry off the diagonal is " + (first == 0 ? "0 or missing" : "missing")
                    + "): there is nothing to cluster");
        }
        return true;
    }

    /** {@code settings} with at most one cluster. */
    private static PwcSettings oneCluster(PwcSettings s) {
        return s.toBuilder().maxClusters(1).build();
    }

    public static void write(Path out, PwcResult result, int n, PwcSettings settings) {
        try {
            Files.createDirectories(out);
            try (BufferedWriter w = Files.newBufferedWriter(out.resolve(CLUSTERS_FILE), StandardCharsets.UTF_8)) {
                for (int i = 0; i < n; i++) {
                    w.write(i + "\t" + result.label(i) + "\n");
                }
            }
            int[] centers = result.centers();
            int[] sizes = result.sizes();
            double[] means = result.centerMeanDistances();
            try (BufferedWriter w = Files.newBufferedWriter(out.resolve(CENTERS_FILE), StandardCharsets.UTF_8)) {
                for (int l = 0; l < centers.length; l++) {
                    w.write(String.format(Locale.ROOT, "%d\t%d\t%d\t%.6f%n", l, centers[l], sizes[l], means[l]));
                }
            }
            Files.writeString(out.resolve(SUMMARY_FILE), summaryJson(result, n, settings), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(new IOException("cannot write results to " + out + ": " + e.getMessage(), e));
        }
    }

    public static String summaryJson(PwcResult r, int n, PwcSettings s) {
        StringBuilder j = new StringBuilder("{\n");
        j.append("  \"points\": ").append(n).append(",\n");
        j.append("  \"clusters\": ").append(r.clusters()).append(",\n");
        j.append("  \"sizes\": ").append(intArray(r.sizes())).append(",\n");
        j.append("  \"centers\": ").append(intArray(r.centers())).append(",\n");
        j.append("  \"final_temperature\": ").append(num(r.finalTemperature())).append(",\n");
        j.append("  \"initial_temperature\": ").append(num(r.initialTemperature())).append(",\n");
        j.append("  \"em_iterations\": ").append(r.emIterations()).append(",\n");
        j.append("  \"duplicate_em_iterations\": ").append(r.duplicateEmIterations()).append(",\n");
        j.append("  \"power_iterations\": ").append(r.powerIterations()).append(",\n");
        j.append("  \"splits\": ").append(r.splits()).append(",\n");
        j.append("  \"removed_clusters\": ").append(r.removedClusters()).append(",\n");
        j.append("  \"hamiltonian\": ").append(num(r.hamiltonian())).append(",\n");
        j.append("  \"seconds\": ").append(num(r.seconds())).append(",\n");
        j.append("  \"max_clusters\": ").append(s.maxClusters).append(",\n");
        j.append("  \"seed\": ").append(s.seed == null ? "null" : s.seed.toString()).append(",\n");
        j.append("  \"settings\": \"").append(s).append("\"\n");
        return j.append("}\n").toString();
    }

    private static String intArray(int[] values) {
        StringBuilder b = new StringBuilder("[");
        for (int i = 0; i < values.length; i++) {
            b.append(i == 0 ? "" : ", ").append(values[i]);
        }
        return b.append(']').toString();
    }

    private static String num(double v) {
        return Double.isFinite(v) ? String.format(Locale.ROOT, "%.6g", v) : "null";
    }
}
