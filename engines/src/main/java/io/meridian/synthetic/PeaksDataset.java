package io.meridian.synthetic;

import java.io.IOException;
import java.io.Writer;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Random;

/**
 * LC-MS-like vectors for DA-VS: points in 2-D (m/z, retention time) drawn from K Gaussian peaks whose m/z width is
 * proportional to m/z ({@code mzWidth * mz}) and whose retention-time width is fixed ({@code rtWidth}), plus a uniform
 * background over the box. The same seed gives the same points. Labels: 0 = background, 1..K = peak.
 *
 * <p>Peak centres are uniform in the box (at least 3 widths inside it), each at least {@code minSeparation} scaled
 * distances (in the wider peak's widths) from every other, so the truth is resolvable; points are written peak by
 * peak, then the background.
 */
public final class PeaksDataset {
    public static final String VECTORS_FILE = "vectors.tsv";
    public static final String LABELS_FILE = "labels.tsv";
    public static final String PEAKS_FILE = "peaks.tsv";
    public static final String DESCRIPTION_FILE = "dataset.json";
    public static final int BACKGROUND = 0;
    private static final int PLACEMENT_TRIES = 100_000;

    /** What to generate; {@link #defaults} gives the box and widths of the DA-VS original's LC-MS defaults. */
    public record Spec(int n, int peaks, double backgroundFraction, double mzLow, double mzHigh, double rtLow,
                       double rtHigh, double mzWidth, double rtWidth, double minSeparation, long seed) {
        public Spec {
            if (n < 2) {
                throw new IllegalArgumentException("--n must be at least 2 (was " + n + ")");
            }
            if (peaks < 1) {
                throw new IllegalArgumentException("--peaks must be at least 1 (was " + peaks + ")");
            }
            if (!(backgroundFraction >= 0 && backgroundFraction < 1)) {
                throw new IllegalArgumentException("--background must be in [0, 1) (was " + backgroundFraction + ")");
            }
            if (!(mzLow > 0 && mzHigh > mzLow) || !Double.isFinite(mzHigh)) {
                throw new IllegalArgumentException("--mz needs 0 < low < high (was " + mzLow + "," + mzHigh + ")");
            }
            if (!(rtHigh > rtLow) || !Double.isFinite(rtLow) || !Double.isFinite(rtHigh)) {
                throw new IllegalArgumentException("--rt needs low < high (was " + rtLow + "," + rtHigh + ")");
            }
            if (!(mzWidth > 0) || !(rtWidth > 0) || !Double.isFinite(mzWidth) || !Double.isFinite(rtWidth)) {
                throw new IllegalArgumentException("--mz-width and --rt-width must be > 0 (was " + mzWidth + ", "
                        + rtWidth + ")");
            }
            if (!(minSeparation >= 0) || !Double.isFinite(minSeparation)) {
                throw new IllegalArgumentException("--separation must be >= 0 (was " + minSeparation + ")");
            }
            int background = (int) Math.round(n * backgroundFraction);
            if (n - background < peaks) {
                throw new IllegalArgumentException("--n " + n + " leaves " + (n - background) + " peak points for "
                        + peaks + " --peaks");
            }
        }

        public static Spec defaults(int n, long seed) {
            return new Spec(n, 20, 0.1, 400, 1200, 0, 300, 0.000598, 2.35, 10, seed);
        }

        public Spec withPeaks(int k, double background) {
            return new Spec(n, k, background, mzLow, mzHigh, rtLow, rtHigh, mzWidth, rtWidth, minSeparation, seed);
        }
    }

    private final Spec spec;
    private final double[] vectorsRowMajor;
    private final int[] labels;
    private final double[] peakCentersRowMajor;
    private final int[] peakSizes;

    private PeaksDataset(Spec spec, double[] vectorsRowMajor, int[] labels, double[] peakCentersRowMajor,
                         int[] peakSizes) {
        this.spec = spec;
        this.vectorsRowMajor = vectorsRowMajor;
        this.labels = labels;
        this.peakCentersRowMajor = peakCentersRowMajor;
        this.peakSizes = peakSizes;
    }

    /** Generates {@code spec}; refuses peaks that cannot be placed apart in the box. */
    public static PeaksDataset generate(Spec spec) {
        Random random = new Random(spec.seed());
        int k = spec.peaks();
        double[] centers = new double[2 * k];
        for (int p = 0; p < k; p++) {
            int tries = 0;
            while (true) {
                if (++tries > PLACEMENT_TRIES) {
                    throw new IllegalArgumentException(String.format(Locale.ROOT, "--peaks %d cannot be placed %s"
                            + " widths apart in the box (placed %d): fewer peaks, a smaller --separation or a"
                            + " larger box", k, spec.minSeparation(), p));
                }
                double mz = uniform(random, spec.mzLow() * (1 + 3 * spec.mzWidth()),
                        spec.mzHigh() * (1 - 3 * spec.mzWidth()));
                double rt = uniform(random, spec.rtLow() + 3 * spec.rtWidth(), spec.rtHigh() - 3 * spec.rtWidth());
                if (apart(spec, centers, p, mz, rt)) {
                    centers[2 * p] = mz;
                    centers[2 * p + 1] = rt;
                    break;
                }
            }
        }
        int n = spec.n();
        int background = (int) Math.round(n * spec.backgroundFraction());
        int inPeaks = n - background;
        double[] x = new double[2 * n];
        int[] labels = new int[n];
        int[] sizes = new int[k];
        int a = 0;
        for (int p = 0; p < k; p++) {
            sizes[p] = inPeaks / k + (p < inPeaks % k ? 1 : 0);
            double mz = centers[2 * p];
            double rt = centers[2 * p + 1];
            for (int q = 0; q < sizes[p]; q++, a++) {
                x[2 * a] = mz + spec.mzWidth() * mz * random.nextGaussian();
                x[2 * a + 1] = rt + spec.rtWidth() * random.nextGaussian();
                labels[a] = p + 1;
            }
        }
        for (; a < n; a++) {
            x[2 * a] = uniform(random, spec.mzLow(), spec.mzHigh());
            x[2 * a + 1] = uniform(random, spec.rtLow(), spec.rtHigh());
            labels[a] = BACKGROUND;
        }
        return new PeaksDataset(spec, x, labels, centers, sizes);
    }

    private static boolean apart(Spec spec, double[] centers, int placed, double mz, double rt) {
        for (int q = 0; q < placed; q++) {
            double mzScale = spec.mzWidth() * Math.max(mz, centers[2 * q]);
            double dm = (mz - centers[2 * q]) / mzScale;
            double dr = (rt - centers[2 * q + 1]) / spec.rtWidth();
            if (dm * dm + dr * dr < spec.minSeparation() * spec.minSeparation()) {
                return false;
            }
        }
        return true;
    }

    private static double uniform(Random random, double low, double high) {
        return low + (high - low) * random.nextDouble();
    }

    public Spec spec() {
        return spec;
    }

    public int n() {
        return labels.length;
    }

    /** N x 2 (m/z, retention time). */
    public double[] vectorsRowMajor() {
        return vectorsRowMajor.clone();
    }

    /** Per point: 0 = background, 1..K = peak. */
    public int[] labels() {
        return labels.clone();
    }

    /** K x 2 peak centres, peak p + 1 in row p. */
    public double[] peakCentersRowMajor() {
        return peakCentersRowMajor.clone();
    }

    /** The DA-VS options whose width model matches this data. */
    public String davsOptions() {
        return "--sigma-method 2 --sigma " + BigDecimal.valueOf(spec.mzWidth()).toPlainString() + ","
                + BigDecimal.valueOf(spec.rtWidth()).toPlainString();
    }

    /**
     * Writes {@link #VECTORS_FILE} ({@code id<TAB>mz<TAB>rt}), {@link #LABELS_FILE} ({@code id<TAB>label}),
     * {@link #PEAKS_FILE} ({@code label<TAB>mz<TAB>rt<TAB>sigma_mz<TAB>sigma_rt<TAB>points}) and
     * {@link #DESCRIPTION_FILE}.
     */
    public void write(Path dir) throws IOException {
        Files.createDirectories(dir);
        try (Writer out = Files.newBufferedWriter(dir.resolve(VECTORS_FILE), StandardCharsets.UTF_8)) {
            for (int a = 0; a < n(); a++) {
                out.write(a + "\t" + vectorsRowMajor[2 * a] + "\t" + vectorsRowMajor[2 * a + 1] + "\n");
            }
        }
        try (Writer out = Files.newBufferedWriter(dir.resolve(LABELS_FILE), StandardCharsets.UTF_8)) {
            for (int a = 0; a < n(); a++) {
                out.write(a + "\t" + labels[a] + "\n");
            }
        }
        try (Writer out = Files.newBufferedWriter(dir.resolve(PEAKS_FILE), StandardCharsets.UTF_8)) {
            for (int p = 0; p < spec.peaks(); p++) {
                double mz = peakCentersRowMajor[2 * p];
                out.write((p + 1) + "\t" + mz + "\t" + peakCentersRowMajor[2 * p + 1] + "\t" + spec.mzWidth() * mz
                        + "\t" + spec.rtWidth() + "\t" + peakSizes[p] + "\n");
            }
        }
        String json = String.format(Locale.ROOT, "{\"kind\":\"peaks\",\"n\":%d,\"dim\":2,\"peaks\":%d,"
                        + "\"background\":%s,\"backgroundPoints\":%d,\"mz\":[%s,%s],\"rt\":[%s,%s],\"mzWidth\":%s,"
                        + "\"rtWidth\":%s,\"separation\":%s,\"seed\":%d,\"vectors\":\"%s\",\"labels\":\"%s\","
                        + "\"labelMeaning\":\"0 = background, 1..K = peak\",\"peaksFile\":\"%s\","
                        + "\"davsOptions\":\"%s\"}%n",
                n(), spec.peaks(), Double.toString(spec.backgroundFraction()),
                n() - sum(peakSizes), Double.toString(spec.mzLow()), Double.toString(spec.mzHigh()),
                Double.toString(spec.rtLow()), Double.toString(spec.rtHigh()), Double.toString(spec.mzWidth()),
                Double.toString(spec.rtWidth()), Double.toString(spec.minSeparation()), spec.seed(), VECTORS_FILE,
                LABELS_FILE, PEAKS_FILE, davsOptions());
        Files.writeString(dir.resolve(DESCRIPTION_FILE), json);
    }

    private static int sum(int[] values) {
        int total = 0;
        for (int v : values) {
            total += v;
        }
        return total;
    }
}
