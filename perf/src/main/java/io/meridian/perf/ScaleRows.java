package io.meridian.perf;

import io.meridian.stream.row.DistanceRow;
import io.meridian.stream.row.RowFormat;
import io.meridian.stream.row.RowStores;
import io.meridian.synthetic.SyntheticDataset;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The rows of {@code bench scale}'s data (blobs, 8-D, 10 centres, seed 1, as {@link ScaleBench} stores them), made
 * from the coordinates as they are stored: row i holds the 16-bit distances of point i to points 0..i-1, each
 * distance over an upper bound of the largest ({@link #scaleBound}), so no square file exists anywhere.
 */
public final class ScaleRows {
    public static final int BLOCK_ROWS = 256;
    public static final int CENTRES = 10;

    private final SyntheticDataset data;
    private final double inverseBound;

    public ScaleRows(int n) {
        this.data = SyntheticDataset.blobs(n, 8, CENTRES, 2, 1);
        this.inverseBound = 1 / scaleBound(data);
    }

    public int n() {
        return data.n();
    }

    /** Row {@code id} in the wire form the spout decodes ({@code scratch}: at least id values, overwritten). */
    public DistanceRow row(int id, short[] scratch) {
        return DistanceRow.decode(encodedRow(id, scratch), null);
    }

    /** Row {@code id} as a Kafka record's value ({@code scratch}: at least id values, overwritten). */
    public byte[] encodedRow(int id, short[] scratch) {
        for (int j = 0; j < id; j++) {
            scratch[j] = RowFormat.quantize((float) (data.distance(id, j) * inverseBound));
        }
        return RowFormat.encodeInt16(id, scratch, 0, id, false);
    }

    /** The blob each point was drawn from. */
    public int[] truth() {
        int[] labels = new int[data.n()];
        for (int i = 0; i < labels.length; i++) {
            labels[i] = data.label(i);
        }
        return labels;
    }

    /**
     * Stores rows {@code [from, to)} into the row stores in {@code stores}, {@code writers} threads each writing its
     * own blocks (block b by writer b mod writers, as the map tasks own them).
     */
    public void store(Path stores, int from, int to, int writers, String what) throws InterruptedException {
        long t0 = System.nanoTime();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Thread[] threads = new Thread[writers];
        for (int t = 0; t < writers; t++) {
            int writer = t;
            threads[t] = new Thread(() -> {
                try (RowStores out = new RowStores(stores, BLOCK_ROWS, data.n(), b -> b % writers == writer)) {
                    short[] scratch = new short[data.n()];
                    for (int i = from; i < to; i++) {
                        if (i / BLOCK_ROWS % writers != writer) {
                            continue;
                        }
                        out.store(row(i, scratch));
                        if (writer == 0 && i % 10_000 == 0 && i > from) {
                            System.out.printf(Locale.ROOT, "    %s: stored about %d rows, %.0f s%n", what, i - from,
                                    (System.nanoTime() - t0) / 1e9);
                        }
                    }
                    out.force();
                } catch (Throwable e) {
                    failure.compareAndSet(null, e);
                }
            }, "scale-rows-" + t);
            threads[t].start();
        }
        for (Thread t : threads) {
            t.join();
        }
        if (failure.get() != null) {
            throw new IllegalStateException(what + ": storing rows " + from + ".." + (to - 1) + " in " + stores
                    + " failed: " + failure.get(), failure.get());
        }
    }

    /**
     * A 3-D layout of points {@code 0 .. count-1} in the stored distances' units: the coordinates projected on their
     * three principal axes (the map a resumed live map starts from, where annealing 100K points afresh would take an
     * hour of this machine).
     */
    public double[] principalLayout(int count) {
        int dim = data.dim();
        double[] mean = new double[dim];
        for (int i = 0; i < count; i++) {
            for (int k = 0; k < dim; k++) {
                mean[k] += data.coordinate(i, k) / count;
            }
        }
        double[] cov = new double[dim * dim];
        for (int i = 0; i < count; i++) {
            for (int a = 0; a < dim; a++) {
                double da = data.coordinate(i, a) - mean[a];
                for (int b = 0; b < dim; b++) {
                    cov[a * dim + b] += da * (data.coordinate(i, b) - mean[b]) / count;
                }
            }
        }
        double[][] axes = new double[3][];
        for (int e = 0; e < 3; e++) {
            axes[e] = topEigenvector(cov, dim);
            double lambda = rayleigh(cov, axes[e], dim);
            for (int a = 0; a < dim; a++) {
                for (int b = 0; b < dim; b++) {
                    cov[a * dim + b] -= lambda * axes[e][a] * axes[e][b]; // deflation: the next axis is the next one
                }
            }
        }
        double[] layout = new double[3 * count];
        for (int i = 0; i < count; i++) {
            for (int e = 0; e < 3; e++) {
                double s = 0;
                for (int k = 0; k < dim; k++) {
                    s += (data.coordinate(i, k) - mean[k]) * axes[e][k];
                }
                layout[3 * i + e] = s * inverseBound;
            }
        }
        return layout;
    }

    private static double[] topEigenvector(double[] m, int dim) {
        double[] v = new double[dim];
        Arrays.fill(v, 1 / Math.sqrt(dim));
        double[] next = new double[dim];
        for (int it = 0; it < 500; it++) {
            double norm = 0;
            for (int a = 0; a < dim; a++) {
                double s = 0;
                for (int b = 0; b < dim; b++) {
                    s += m[a * dim + b] * v[b];
                }
                next[a] = s;
                norm += s * s;
            }
            norm = Math.sqrt(norm);
            if (norm == 0) {
                break;
            }
            for (int a = 0; a < dim; a++) {
                v[a] = next[a] / norm;
            }
        }
        return v;
    }

    private static double rayleigh(double[] m, double[] v, int dim) {
        double s = 0;
        for (int a = 0; a < dim; a++) {
            for (int b = 0; b < dim; b++) {
                s += v[a] * m[a * dim + b] * v[b];
            }
        }
        return s;
    }

    /**
     * An upper bound of the largest distance, from the coordinates' ranges (O(N), where the largest distance itself is
     * a pass over all pairs): the 16-bit values are distance / bound, so every value fits.
     */
    static double scaleBound(SyntheticDataset data) {
        double sum = 0;
        for (int k = 0; k < data.dim(); k++) {
            double lo = Double.MAX_VALUE;
            double hi = -Double.MAX_VALUE;
            for (int i = 0; i < data.n(); i++) {
                lo = Math.min(lo, data.coordinate(i, k));
                hi = Math.max(hi, data.coordinate(i, k));
            }
            sum += (hi - lo) * (hi - lo);
        }
        return Math.sqrt(sum);
    }
}
