package io.meridian.synthetic;

import io.meridian.matrix.ShortMatrixWriter;
import io.meridian.matrix.TriangleWriter;
import java.io.IOException;
import java.io.Writer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Random;

/**
 * A synthetic data set, deterministic by seed: N points in D dimensions, either Gaussian blobs (C centres drawn
 * uniformly in the box [-10, 10)^D as scikit-learn's make_blobs does, so its std values mean the same here; each point a
 * centre plus N(0, std^2) noise per coordinate, labels = centre) or uniform random points in the unit cube (label 0). {@link #write} stores the SPIDAL 16-bit matrix of their Euclidean
 * distances divided by the largest one, the labels, the coordinates and a JSON description.
 */
public final class SyntheticDataset {
    public static final String DISTANCES_FILE = "distances.bin";
    /** The lower triangle of the same matrix ({@link io.meridian.matrix.TriangleFile}), {@link Layout#TRIANGLE}. */
    public static final String TRIANGLE_FILE = "distances.tri";
    public static final String LABELS_FILE = "labels.tsv";
    public static final String COORDINATES_FILE = "coordinates.tsv";
    public static final String DESCRIPTION_FILE = "dataset.json";
    public static final double CENTER_BOX_LOW = -10;
    public static final double CENTER_BOX_HIGH = 10;

    private final String kind;
    private final int n;
    private final int dim;
    private final int centers;
    private final double std;
    private final long seed;
    private final double[] coordinates;
    private final int[] labels;

    private SyntheticDataset(String kind, int n, int dim, int centers, double std, long seed, double[] coordinates, int[] labels) {
        this.kind = kind;
        this.n = n;
        this.dim = dim;
        this.centers = centers;
        this.std = std;
        this.seed = seed;
        this.coordinates = coordinates;
        this.labels = labels;
    }

    public static SyntheticDataset uniform(int n, int dim, long seed) {
        Random random = new Random(seed);
        double[] x = new double[n * dim];
        for (int i = 0; i < x.length; i++) {
            x[i] = random.nextDouble();
        }
        return new SyntheticDataset("uniform", n, dim, 1, 0, seed, x, new int[n]);
    }

    public static SyntheticDataset blobs(int n, int dim, int centers, double std, long seed) {
        Random random = new Random(seed);
        double[] c = new double[centers * dim];
        for (int i = 0; i < c.length; i++) {
            c[i] = CENTER_BOX_LOW + (CENTER_BOX_HIGH - CENTER_BOX_LOW) * random.nextDouble();
        }
        double[] x = new double[n * dim];
        int[] labels = new int[n];
        for (int i = 0; i < n; i++) {
            int label = i % centers;
            labels[i] = label;
            for (int k = 0; k < dim; k++) {
                x[i * dim + k] = c[label * dim + k] + std * random.nextGaussian();
            }
        }
        return new SyntheticDataset("blobs", n, dim, centers, std, seed, x, labels);
    }

    /** Points given by the caller (row-major n x dim), e.g. a known configuration in tests. */
    public static SyntheticDataset of(double[] coordinates, int dim) {
        int n = coordinates.length / dim;
        return new SyntheticDataset("given", n, dim, 1, 0, 0, coordinates.clone(), new int[n]);
    }

    public int n() {
        return n;
    }

    public int dim() {
        return dim;
    }

    public int label(int i) {
        return labels[i];
    }

    public double coordinate(int i, int k) {
        return coordinates[i * dim + k];
    }

    public double distance(int i, int j) {
        double s = 0;
        for (int k = 0; k < dim; k++) {
            double d = coordinates[i * dim + k] - coordinates[j * dim + k];
            s += d * d;
        }
        return Math.sqrt(s);
    }

    /** How the distances are written: the full N x N matrix, or its lower triangle (half the bytes). */
    public enum Layout {
        /** SPIDAL's N x N matrix, {@link #DISTANCES_FILE} */
        SQUARE,
        /** rows 1 .. N-1 of i values each, little-endian, {@link #TRIANGLE_FILE}: what mds/pwc --triangle read */
        TRIANGLE;

        /** The file name of the distances in this layout. */
        public String fileName() {
            return this == SQUARE ? DISTANCES_FILE : TRIANGLE_FILE;
        }

        /** The distances written in this layout: N x N, or N (N - 1) / 2. */
        public long values(int n) {
            return this == SQUARE ? (long) n * n : (long) n * (n - 1) / 2;
        }
    }

    /** The two passes over all pairs that writing the matrix takes. */
    public enum Pass {
        /** the largest distance, which scales the 16-bit values: the upper triangle */
        SCALE,
        /** the matrix itself, row by row */
        MATRIX
    }

    /**
     * How far writing the matrix has got, told once per row: {@code done} of {@code total} distances of {@code pass}
     * computed (a row of the scale pass holds fewer and fewer of them). Nothing is allocated per call.
     */
    @FunctionalInterface
    public interface Progress {
        Progress NONE = (pass, done, total) -> { };

        void update(Pass pass, long done, long total);
    }

    /** The largest pairwise distance: stored values are distance / maxDistance. */
    public double maxDistance() {
        return maxDistance(Progress.NONE);
    }

    private double maxDistance(Progress progress) {
        long total = (long) n * (n - 1) / 2;
        long done = 0;
        double max = 0;
        for (int i = 0; i < n; i++) {
            for (int j = i + 1; j < n; j++) {
                max = Math.max(max, distance(i, j));
            }
            done += n - 1 - i;
            progress.update(Pass.SCALE, done, total);
        }
        return max;
    }

    /** Writes the 16-bit matrix (little-endian unless {@code order} says otherwise) and returns the scale used. */
    public double writeMatrix(Path file, ByteOrder order) throws IOException {
        return writeMatrix(file, order, Progress.NONE);
    }

    /** {@link #writeMatrix(Path, ByteOrder)}, telling {@code progress} after each row of each pass. */
    public double writeMatrix(Path file, ByteOrder order, Progress progress) throws IOException {
        double scale = maxDistance(progress);
        double inv = scale > 0 ? 1 / scale : 0;
        double[] row = new double[n];
        long total = (long) n * n;
        try (ShortMatrixWriter w = new ShortMatrixWriter(file, n, order)) {
            for (int i = 0; i < n; i++) {
                for (int j = 0; j < n; j++) {
                    row[j] = i == j ? 0 : distance(i, j) * inv;
                }
                w.writeRow(row);
                progress.update(Pass.MATRIX, (long) (i + 1) * n, total);
            }
        }
        return scale;
    }

    /**
     * Writes the lower triangle of the 16-bit matrix ({@link io.meridian.matrix.TriangleFile}: row i its i values
     * d(i, j), j &lt; i, little-endian), the same values as {@link #writeMatrix}'s, and returns the scale used.
     */
    public double writeTriangle(Path file, Progress progress) throws IOException {
        double scale = maxDistance(progress);
        double inv = scale > 0 ? 1 / scale : 0;
        double[] row = new double[n];
        long total = Layout.TRIANGLE.values(n);
        try (TriangleWriter w = new TriangleWriter(file, n)) {
            for (int i = 0; i < n; i++) {
                for (int j = 0; j < i; j++) {
                    row[j] = distance(i, j) * inv;
                }
                w.writeRow(row);
                progress.update(Pass.MATRIX, (long) (i + 1) * i / 2, total);
            }
        }
        return scale;
    }

    /** Writes the data set into {@code dir} (created if needed). */
    public void write(Path dir, ByteOrder order) throws IOException {
        write(dir, order, Progress.NONE);
    }

    /** {@link #write(Path, ByteOrder)}, telling {@code progress} how far the matrix has got. */
    public void write(Path dir, ByteOrder order, Progress progress) throws IOException {
        write(dir, order, Layout.SQUARE, progress);
    }

    /**
     * Writes the data set into {@code dir} (created if needed), the distances in {@code layout} (a triangle is
     * little-endian whatever {@code order} says), telling {@code progress} how far the matrix has got.
     */
    public void write(Path dir, ByteOrder order, Layout layout, Progress progress) throws IOException {
        Files.createDirectories(dir);
        double scale = layout == Layout.SQUARE ? writeMatrix(dir.resolve(DISTANCES_FILE), order, progress)
                : writeTriangle(dir.resolve(TRIANGLE_FILE), progress);
        try (Writer out = Files.newBufferedWriter(dir.resolve(LABELS_FILE), StandardCharsets.UTF_8)) {
            for (int i = 0; i < n; i++) {
                out.write(i + "\t" + labels[i] + "\n");
            }
        }
        try (Writer out = Files.newBufferedWriter(dir.resolve(COORDINATES_FILE), StandardCharsets.UTF_8)) {
            StringBuilder line = new StringBuilder();
            for (int i = 0; i < n; i++) {
                line.setLength(0);
                line.append(i);
                for (int k = 0; k < dim; k++) {
                    line.append('\t').append(coordinates[i * dim + k]);
                }
                out.write(line.append('\n').toString());
            }
        }
        boolean big = layout == Layout.SQUARE && order == ByteOrder.BIG_ENDIAN;
        String json = String.format(Locale.ROOT,
                "{\"kind\":\"%s\",\"n\":%d,\"dim\":%d,\"centers\":%d,\"std\":%s,\"seed\":%d,\"endianness\":\"%s\","
                        + "\"scale\":%s,\"scaleMeaning\":\"distance = value / 32767 * scale\","
                        + "\"distances\":\"%s\",\"layout\":\"%s\",\"labels\":\"%s\",\"coordinates\":\"%s\"}%n",
                kind, n, dim, centers, Double.toString(std), seed, big ? "big" : "little", Double.toString(scale),
                layout.fileName(), layout.name().toLowerCase(Locale.ROOT), LABELS_FILE, COORDINATES_FILE);
        Files.writeString(dir.resolve(DESCRIPTION_FILE), json);
    }
}
