package io.meridian.pwc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import io.meridian.matrix.DistanceSource;
import io.meridian.matrix.RowBlock;
import io.meridian.synthetic.SyntheticDataset;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;

/**
 * The data sets of SPIDAL dapwc's reference runs (test resources {@code io/meridian/pwc/reference/}, see its README),
 * rebuilt from their recipes: the blob sets by Meridian's generator, the scikit-learn sets from the raw data scikit-learn
 * ships, standardized and turned into distances as scikit-learn and scipy do. Each matrix is checked by md5 against the
 * one dapwc was given, so a run here sees dapwc's input exactly.
 */
final class ReferenceData {
    static final String RESOURCES = "/io/meridian/pwc/reference/";

    /** One data set: its N x N 16-bit matrix (little-endian) in a file, and the true class of every point. */
    record DataSet(String name, int n, Path matrix, int[] truth) {
        RowBlock block() {
            return DistanceSource.matrixFile(matrix, n, ByteOrder.LITTLE_ENDIAN).all();
        }
    }

    /** One of dapwc's runs: the data set, MaxNcent, and dapwc's EM iterations (main loop, duplicated-cluster tests). */
    record Run(String dataset, int k, int emIterations, int splitTestEmIterations) {
        @Override
        public String toString() {
            return dataset + "-K" + k;
        }

        /** dapwc's labels for this run. */
        int[] dapwcLabels(int n) {
            return labels(resourceLines(dataset + "-K" + k + "-dapwc-clusters.tsv"), n);
        }
    }

    private ReferenceData() {
    }

    static List<Run> runs() {
        List<Run> runs = new ArrayList<>();
        for (String line : resourceLines("runs.tsv")) {
            if (line.startsWith("#")) {
                continue;
            }
            String[] f = line.split("\t");
            runs.add(new Run(f[0], Integer.parseInt(f[1]), Integer.parseInt(f[2]), Integer.parseInt(f[3])));
        }
        return runs;
    }

    /** Builds data set {@code name} into {@code dir} and checks its matrix against the md5 of dapwc's input. */
    static DataSet build(String name, Path dir) {
        String[] row = null;
        for (String line : resourceLines("datasets.tsv")) {
            if (line.startsWith(name + "\t")) {
                row = line.split("\t");
            }
        }
        assertNotNull(row, "data set " + name + " in datasets.tsv");
        int n = Integer.parseInt(row[1]);
        Path matrix = dir.resolve(name + ".bin");
        int[] truth;
        try {
            if (name.startsWith("blobs")) {
                // ./meridian gen --kind blobs --n 2000 --dim 8 --centers 10 --std S --seed 1
                SyntheticDataset blobs = SyntheticDataset.blobs(n, 8, 10, Double.parseDouble(name.substring(5)), 1);
                blobs.writeMatrix(matrix, ByteOrder.LITTLE_ENDIAN);
                truth = new int[n];
                for (int i = 0; i < n; i++) {
                    truth[i] = blobs.label(i);
                }
            } else {
                truth = scikitLearnRecipe(row[3], n, matrix);
            }
            assertEquals(row[2], md5(Files.readAllBytes(matrix)), name + ": the rebuilt matrix is dapwc's input");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return new DataSet(name, n, matrix, truth);
    }

    /**
     * The README's recipe on scikit-learn's raw data: StandardScaler (mean 0, population standard deviation 1 per
     * feature), cdist (Euclidean), divided by the largest distance, times 32767, numpy.rint (half to even), int16.
     * Writes the matrix and returns the classes (the last column).
     */
    static int[] scikitLearnRecipe(String csv, int n, Path matrix) throws IOException {
        List<String> lines = resourceLines(csv);
        String[] header = lines.get(0).split(",");
        assertEquals(n, Integer.parseInt(header[0]), csv + " samples");
        int features = Integer.parseInt(header[1]);
        double[][] x = new double[n][features];
        int[] classes = new int[n];
        for (int i = 0; i < n; i++) {
            String[] f = lines.get(i + 1).split(",");
            for (int j = 0; j < features; j++) {
                x[i][j] = Double.parseDouble(f[j]);
            }
            classes[i] = Integer.parseInt(f[features]);
        }
        for (int j = 0; j < features; j++) {
            double sum = 0;
            for (int i = 0; i < n; i++) {
                sum += x[i][j];
            }
            double mean = sum / n;
            double squares = 0;
            for (int i = 0; i < n; i++) {
                double d = x[i][j] - mean;
                squares += d * d;
            }
            double std = Math.sqrt(squares / n);
            for (int i = 0; i < n; i++) {
                x[i][j] = (x[i][j] - mean) / std;
            }
        }
        double[] distances = new double[n * n];
        double max = 0;
        for (int i = 0; i < n; i++) {
            for (int k = 0; k < n; k++) {
                double s = 0;
                for (int j = 0; j < features; j++) {
                    double d = x[i][j] - x[k][j];
                    s += d * d;
                }
                distances[i * n + k] = Math.sqrt(s);
                max = Math.max(max, distances[i * n + k]);
            }
        }
        ByteBuffer bytes = ByteBuffer.allocate(2 * n * n).order(ByteOrder.LITTLE_ENDIAN);
        for (double d : distances) {
            bytes.putShort((short) Math.rint(d / max * 32767));
        }
        Files.write(matrix, bytes.array());
        return classes;
    }

    static int[] labels(List<String> lines, int n) {
        assertEquals(n, lines.size(), "label lines");
        int[] labels = new int[n];
        for (String line : lines) {
            String[] f = line.split("\t");
            labels[Integer.parseInt(f[0])] = Integer.parseInt(f[1]);
        }
        return labels;
    }

    static List<String> resourceLines(String name) {
        try (InputStream in = ReferenceData.class.getResourceAsStream(RESOURCES + name)) {
            assertNotNull(in, "test resource " + RESOURCES + name);
            return new String(in.readAllBytes(), StandardCharsets.UTF_8).lines().toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static String md5(byte[] bytes) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("MD5").digest(bytes));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
