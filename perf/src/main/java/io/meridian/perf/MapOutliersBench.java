package io.meridian.perf;

import io.meridian.config.CommandLine;
import io.meridian.live.MapOutliers;
import io.meridian.live.OutlierSettings;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.Locale;
import java.util.Random;
import java.util.Set;

/**
 * {@code ./meridian bench map-outliers}: the live map's outlier detection ({@link MapOutliers}: DA-VS with a sponge on
 * the map's 3-D coordinates, as task 0 runs it after each DA-PWC run) on made-up map coordinates: K Gaussian blobs in
 * 3-D (std 1, centres uniform in [-10, 10]^3, labelled by their blob as DA-PWC would) and a fraction of background
 * points uniform in [-30, 30]^3 (labelled with the nearest blob). Reports the run's wall time, its EM iterations and
 * clusters, the blob points flagged (false positives) and the background points flagged among those more than 6 std
 * from every centre (recall), for each sponge factor asked for.
 */
public final class MapOutliersBench implements Benchmark {
    private static final double FAR = 6.0;

    @Override
    public String description() {
        return "the live map's outlier flags (DA-VS on its 3-D points): ms per run, false positives, recall"
                + " [--n 10000] [--clusters 10] [--background 0.005] [--sponge-factors 3,4]";
    }

    @Override
    public void run(String[] args) throws Exception {
        CommandLine cl = CommandLine.parse("bench map-outliers", args,
                Set.of("n", "clusters", "background", "sponge-factors"), Set.of());
        cl.requireNoPositional();
        int n = cl.intValue("n", 10_000, 100, 1_000_000);
        int k = cl.intValue("clusters", 10, 1, 100);
        double background = cl.doubleValue("background", 0.005, 0, 0.5, false);
        String[] factors = cl.string("sponge-factors", "3,4").split(",");
        Random random = new Random(1);
        double[] centres = new double[3 * k];
        for (int q = 0; q < centres.length; q++) {
            centres[q] = -10 + 20 * random.nextDouble();
        }
        double[] xyz = new double[3 * n];
        int[] labels = new int[n];
        boolean[] isBackground = new boolean[n];
        boolean[] far = new boolean[n];
        int farCount = 0;
        for (int i = 0; i < n; i++) {
            isBackground[i] = random.nextDouble() < background;
            int c = i % k;
            for (int d = 0; d < 3; d++) {
                xyz[3 * i + d] = isBackground[i] ? -30 + 60 * random.nextDouble()
                        : centres[3 * c + d] + random.nextGaussian();
            }
            double nearest = Double.POSITIVE_INFINITY;
            for (int q = 0; q < k; q++) {
                double s = 0;
                for (int d = 0; d < 3; d++) {
                    double diff = xyz[3 * i + d] - centres[3 * q + d];
                    s += diff * diff;
                }
                if (s < nearest) {
                    nearest = s;
                    c = q;
                }
            }
            labels[i] = c;
            far[i] = isBackground[i] && nearest > FAR * FAR;
            farCount += far[i] ? 1 : 0;
        }
        System.out.printf(Locale.ROOT, "bench map-outliers: N = %d 3-D points, %d blobs (std 1), %d background (%d more"
                + " than %.0f std from every centre); load average %.2f%n", n, k, count(isBackground), farCount, FAR,
                ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
        for (String f : factors) {
            double factor = Double.parseDouble(f.trim());
            ThreadMXBean threads = ManagementFactory.getThreadMXBean();
            long cpu0 = threads.getCurrentThreadCpuTime();
            long t0 = System.nanoTime();
            MapOutliers.Detection d = MapOutliers.detect(xyz, labels, n, new OutlierSettings(true, factor),
                    MapOutliers.davsClusters(k));
            double seconds = (System.nanoTime() - t0) / 1e9;
            double cpuSeconds = (threads.getCurrentThreadCpuTime() - cpu0) / 1e9;
            int falsePositives = 0;
            int found = 0;
            for (int i = 0; i < n; i++) {
                falsePositives += !isBackground[i] && d.outlier(i) ? 1 : 0;
                found += far[i] && d.outlier(i) ? 1 : 0;
            }
            System.out.printf(Locale.ROOT, "  sponge factor %.1f: %.0f ms, CPU %.0f ms (%d EM iterations, %.3f ms of"
                    + " CPU each), width %.3f, %d clusters, %d flagged: blob points %d (%.4f %%), far background %d"
                    + " of %d (recall %.3f)%n", factor, seconds * 1e3, cpuSeconds * 1e3, d.result().emIterations(),
                    cpuSeconds * 1e3 / d.result().emIterations(),
                    d.width(), d.result().clusters(), d.outliers(), falsePositives,
                    100.0 * falsePositives / (n - count(isBackground)), found, farCount,
                    farCount == 0 ? 1.0 : found / (double) farCount);
            new Figures("map-outliers").put("n", n).put("clusters", k).put("sponge_factor", factor)
                    .put("ms", seconds * 1e3).put("cpu_ms", cpuSeconds * 1e3)
                    .put("em_iterations", d.result().emIterations())
                    .put("davs_clusters", d.result().clusters()).put("width", d.width())
                    .put("flagged", d.outliers()).put("false_positives", falsePositives)
                    .put("far_background", farCount).put("far_background_flagged", found).print();
        }
    }

    private static int count(boolean[] flags) {
        int c = 0;
        for (boolean b : flags) {
            c += b ? 1 : 0;
        }
        return c;
    }
}
