package io.meridian.cli;

import io.meridian.config.CommandLine;
import io.meridian.config.UsageException;
import io.meridian.shm.OwnerOnlyFiles;
import io.meridian.synthetic.PeaksDataset;
import io.meridian.synthetic.SyntheticDataset;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.function.LongSupplier;

/**
 * {@code meridian gen}: writes a synthetic data set (16-bit distance matrix, square or its lower triangle, labels,
 * coordinates, description), or LC-MS-like peaks for {@code ./meridian davs} (vectors, true labels, peaks).
 */
final class GenCommand implements Command {
    static final int MAX_N = 100_000;
    static final List<String> RESULTS = List.of(SyntheticDataset.DISTANCES_FILE, SyntheticDataset.TRIANGLE_FILE,
            SyntheticDataset.LABELS_FILE, SyntheticDataset.COORDINATES_FILE, SyntheticDataset.DESCRIPTION_FILE);
    static final List<String> PEAKS_RESULTS = List.of(PeaksDataset.VECTORS_FILE, PeaksDataset.LABELS_FILE,
            PeaksDataset.PEAKS_FILE, PeaksDataset.DESCRIPTION_FILE);
    private static final long PROGRESS_NANOS = 1_000_000_000L;
    /** 2 N^2 bytes from N = 7072 on: seconds of work and more. */
    static final long SPACE_CHECK_BYTES = 100_000_000L;

    @Override
    public String usage() {
        return "gen --kind blobs|uniform --n N --dim D --out DIR [--centers C] [--std S] [--seed S]"
                + " [--layout square|triangle] [--big-endian] [--force]\n"
                + "  --layout square (default): DIR/distances.bin, the N x N matrix (SPIDAL's format, 2 N^2 bytes)\n"
                + "  --layout triangle: DIR/distances.tri, its lower triangle (N (N - 1) bytes, little-endian), which\n"
                + "    mds --triangle and pwc --triangle read in place; --big-endian is refused with it\n"
                + "  --force: write over the data set DIR already holds (without it, such a DIR is refused)\n"
                + "gen --kind peaks --n N --out DIR [--peaks K] [--background F] [--seed S] [--mz-width W]"
                + " [--rt-width W] [--separation S] [--force]\n"
                + "  LC-MS-like vectors for ./meridian davs: (m/z, retention time) points from K (default 20)\n"
                + "  Gaussian peaks, m/z width W * m/z (default 0.000598) and RT width W (default 2.35), centres in\n"
                + "  [400, 1200] x [0, 300] at least S (default 10) widths apart, plus a fraction F (default 0.1)\n"
                + "  of uniform background. Writes DIR/vectors.tsv (id<TAB>mz<TAB>rt), labels.tsv (id<TAB>label,\n"
                + "  0 = background, 1..K = peak), peaks.tsv (label, mz, rt, sigma_mz, sigma_rt, points) and\n"
                + "  dataset.json (with the matching davs options)";
    }

    @Override
    public int run(String[] args) throws Exception {
        CommandLine cl = CommandLine.parse("gen", args,
                Set.of("kind", "n", "dim", "centers", "std", "seed", "out", "layout", "peaks", "background",
                        "mz-width", "rt-width", "separation"), Set.of("big-endian", "force"));
        cl.requireNoPositional();
        String kind = cl.requiredString("kind");
        kind = cl.choice("kind", kind, "blobs", "uniform", "peaks");
        if ("peaks".equals(kind)) {
            return peaks(cl);
        }
        for (String peaksOnly : List.of("peaks", "background", "mz-width", "rt-width", "separation")) {
            if (cl.has(peaksOnly)) {
                throw new UsageException("--" + peaksOnly + " is an option of --kind peaks");
            }
        }
        int n = cl.requiredInt("n", 2, MAX_N);
        int dim = cl.intValue("dim", 8, 1, 10_000);
        int centers = cl.intValue("centers", 4, 1, n);
        double std = cl.doubleValue("std", 1.0, 0, 1e6, false);
        long seed = cl.longValue("seed", 1, Long.MIN_VALUE, Long.MAX_VALUE);
        SyntheticDataset.Layout layout = SyntheticDataset.Layout.valueOf(
                cl.choice("layout", "square", "square", "triangle").toUpperCase(Locale.ROOT));
        if (layout == SyntheticDataset.Layout.TRIANGLE && cl.flag("big-endian")) {
            throw new UsageException("--big-endian is not supported with --layout triangle (the triangle is"
                    + " little-endian, as the row stores write it)");
        }
        Path wanted = Path.of(cl.requiredString("out")).toAbsolutePath();
        boolean existed = Files.exists(wanted);
        requireSpace(wanted, 2 * layout.values(n), layout);
        Path out = cl.resultDirectory("out", RESULTS);
        ByteOrder order = cl.flag("big-endian") ? ByteOrder.BIG_ENDIAN : ByteOrder.LITTLE_ENDIAN;
        SyntheticDataset data = "blobs".equals(kind)
                ? SyntheticDataset.blobs(n, dim, centers, std, seed)
                : SyntheticDataset.uniform(n, dim, seed);
        try {
            data.write(out, order, layout, new StderrProgress(System.err, System::nanoTime, PROGRESS_NANOS, n,
                    layout.values(n)));
        } catch (IOException | RuntimeException e) {
            // a half-written matrix is not a data set: what this run made goes
            for (String file : RESULTS) {
                Files.deleteIfExists(out.resolve(file));
            }
            if (!existed) {
                OwnerOnlyFiles.deleteEmptyUpTo(out, out.getParent() == null ? out : out.getParent());
            }
            throw e;
        }
        System.out.println("wrote " + kind + " data set, N = " + n + ", D = " + dim + ": "
                + out.resolve(layout.fileName()) + " (+ " + SyntheticDataset.LABELS_FILE + ", "
                + SyntheticDataset.COORDINATES_FILE + ", " + SyntheticDataset.DESCRIPTION_FILE + ")");
        return 0;
    }

    private static int peaks(CommandLine cl) throws IOException {
        for (String distancesOnly : List.of("dim", "centers", "std", "layout", "big-endian")) {
            if (cl.has(distancesOnly)) {
                throw new UsageException("--" + distancesOnly + " is not an option of --kind peaks (2-D vectors)");
            }
        }
        int n = cl.requiredInt("n", 2, MAX_N);
        long seed = cl.longValue("seed", 1, Long.MIN_VALUE, Long.MAX_VALUE);
        PeaksDataset.Spec d = PeaksDataset.Spec.defaults(n, seed);
        PeaksDataset.Spec spec;
        try {
            spec = new PeaksDataset.Spec(n, cl.intValue("peaks", d.peaks(), 1, n),
                    cl.doubleValue("background", d.backgroundFraction(), 0, 1, false), d.mzLow(), d.mzHigh(),
                    d.rtLow(), d.rtHigh(), cl.doubleValue("mz-width", d.mzWidth(), 0, 1, true),
                    cl.doubleValue("rt-width", d.rtWidth(), 0, 1e6, true),
                    cl.doubleValue("separation", d.minSeparation(), 0, 1e6, false), seed);
        } catch (IllegalArgumentException e) {
            throw new UsageException(e.getMessage());
        }
        PeaksDataset data;
        try {
            data = PeaksDataset.generate(spec);
        } catch (IllegalArgumentException e) {
            throw new UsageException(e.getMessage());
        }
        Path out = cl.resultDirectory("out", PEAKS_RESULTS);
        data.write(out);
        System.out.println("wrote peaks data set, N = " + n + ", K = " + spec.peaks() + ", background "
                + spec.backgroundFraction() + ": " + out.resolve(PeaksDataset.VECTORS_FILE) + " (+ "
                + PeaksDataset.LABELS_FILE + ", " + PeaksDataset.PEAKS_FILE + ", " + PeaksDataset.DESCRIPTION_FILE
                + "); cluster with ./meridian davs --vectors " + out.resolve(PeaksDataset.VECTORS_FILE) + " "
                + data.davsOptions());
        return 0;
    }

    /**
     * A large matrix that cannot fit is refused before minutes or hours of work end in a full disk (and before DIR is
     * made); below {@link #SPACE_CHECK_BYTES} the check is not worth its false alarms (a file system that reports no
     * usable space, /proc for one, refuses the directory itself anyway).
     */
    static void requireSpace(Path out, long bytes, SyntheticDataset.Layout layout) throws IOException {
        if (bytes < SPACE_CHECK_BYTES) {
            return;
        }
        Path existing = out;
        while (existing != null && !Files.exists(existing)) {
            existing = existing.getParent();
        }
        if (existing == null) {
            return; // outputDirectory says what is wrong with it
        }
        long usable = Files.getFileStore(existing).getUsableSpace();
        if (usable < bytes) {
            throw new UsageException(String.format(Locale.ROOT, "--out: %s has %.1f GB free, the matrix needs"
                    + " %s bytes = %.1f GB", out, usable / 1e9,
                    layout == SyntheticDataset.Layout.SQUARE ? "2*N*N" : "N*(N-1)", bytes / 1e9));
        }
    }

    /**
     * One line on stderr at most every {@code intervalNanos}, and only once a run has taken that long: the pass, how
     * far (of both passes' distances together) and about how long is left. A small N prints nothing.
     */
    static final class StderrProgress implements SyntheticDataset.Progress {
        private final PrintStream err;
        private final LongSupplier nanoClock;
        private final long intervalNanos;
        private final long scaleTotal;
        private final long allTotal;
        private final long start;
        private long last;

        StderrProgress(PrintStream err, LongSupplier nanoClock, long intervalNanos, int n) {
            this(err, nanoClock, intervalNanos, n, (long) n * n);
        }

        /** For a matrix pass of {@code matrixValues} distances (N x N, or the triangle's N (N - 1) / 2). */
        StderrProgress(PrintStream err, LongSupplier nanoClock, long intervalNanos, int n, long matrixValues) {
            this.err = err;
            this.nanoClock = nanoClock;
            this.intervalNanos = intervalNanos;
            this.scaleTotal = (long) n * (n - 1) / 2;
            this.allTotal = scaleTotal + matrixValues;
            this.start = nanoClock.getAsLong();
            this.last = start;
        }

        @Override
        public void update(SyntheticDataset.Pass pass, long done, long total) {
            long now = nanoClock.getAsLong();
            if (now - last < intervalNanos) {
                return;
            }
            last = now;
            double fraction = (pass == SyntheticDataset.Pass.SCALE ? done : scaleTotal + done) / (double) allTotal;
            double elapsed = (now - start) / 1e9;
            err.printf(Locale.ROOT, "meridian gen: %.0f %% (%s), %.1f s, about %.0f s left%n", 100 * fraction,
                    pass == SyntheticDataset.Pass.SCALE ? "finding the largest distance" : "writing the matrix",
                    elapsed, fraction > 0 ? elapsed * (1 - fraction) / fraction : 0.0);
        }
    }
}
