package io.meridian.perf;

import io.meridian.collective.SingleProcessSync;
import io.meridian.config.CommandLine;
import io.meridian.live.Placement;
import io.meridian.matrix.DistanceSource;
import io.meridian.matrix.RowBlock;
import io.meridian.matrix.Weighting;
import io.meridian.mds.DaMds;
import io.meridian.mds.MdsOptions;
import io.meridian.mds.MdsResult;
import io.meridian.shm.OwnerOnlyFiles;
import io.meridian.synthetic.SyntheticDataset;
import java.lang.management.ManagementFactory;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Locale;
import java.util.Set;

/**
 * {@code ./meridian bench placement}: placing one new point ({@link Placement}, over its whole row) into a map of
 * N - P points, the scalar pass (the map's rounds) against the vector pass (the arrival placement, {@code
 * ArrivalPlacer}), alternating repetitions so that both see the same load. The map is batch DA-MDS of blobs (8-D,
 * 5 centres, std 2, as {@code bench stream}); the P points are its last ids. Reports ms per point of each, the Guttman
 * steps, the largest coordinate difference between the two passes and the bytes a placement allocates.
 */
public final class PlacementBench implements Benchmark {
    @Override
    public String description() {
        return "placing a new point into an N-point map: scalar vs vector pass, ms per point [--n 4000]"
                + " [--points 200] [--rounds 9]";
    }

    @Override
    public void run(String[] args) throws Exception {
        CommandLine cl = CommandLine.parse("bench placement", args, Set.of("n", "points", "rounds"), Set.of());
        cl.requireNoPositional();
        int n = cl.intValue("n", 4000, 100, 32_000);
        int points = cl.intValue("points", 200, 1, n / 2);
        int rounds = cl.intValue("rounds", 9, 3, 1000);
        int mapped = n - points;
        Path dir = Files.createTempDirectory("meridian-bench-placement");
        try {
            SyntheticDataset.blobs(n, 8, 5, 2.0, 1).write(dir, ByteOrder.LITTLE_ENDIAN);
            Path matrix = dir.resolve(SyntheticDataset.DISTANCES_FILE);
            System.out.printf(Locale.ROOT, "bench placement: N = %d blobs 8-D, %d points placed into the first %d;"
                    + " batch DA-MDS for the map ...; load average %.2f%n", n, points, mapped,
                    ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
            MdsResult map = new DaMds(DistanceSource.matrixFile(matrix, n, ByteOrder.LITTLE_ENDIAN), Weighting.unit(),
                    new MdsOptions().seed(1), SingleProcessSync.INSTANCE).run();
            RowBlock all = DistanceSource.matrixFile(matrix, n, ByteOrder.LITTLE_ENDIAN).all();
            short[][] rows = new short[points][n];
            for (int k = 0; k < points; k++) {
                all.copyRow(mapped + k, rows[k]);
            }
            Placement scalar = new Placement(3, Placement.Options.DEFAULT, false);
            Placement vector = new Placement(3, Placement.Options.DEFAULT, true);
            double[] scalarOut = new double[3 * points];
            double[] vectorOut = new double[3 * points];
            long[] steps = new long[1];
            for (int w = 0; w < 3; w++) { // warm-up: C2 compiles both passes
                placeAll(scalar, map.points, mapped, rows, scalarOut, steps);
                placeAll(vector, map.points, mapped, rows, vectorOut, steps);
            }
            double[] scalarMs = new double[rounds];
            double[] vectorMs = new double[rounds];
            com.sun.management.ThreadMXBean mx = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
            long allocated = 0;
            long scalarSteps = 0;
            for (int r = 0; r < rounds; r++) {
                steps[0] = 0;
                long t0 = System.nanoTime();
                placeAll(scalar, map.points, mapped, rows, scalarOut, steps);
                long t1 = System.nanoTime();
                scalarSteps = steps[0];
                long a0 = mx.getCurrentThreadAllocatedBytes();
                placeAll(vector, map.points, mapped, rows, vectorOut, steps);
                allocated += mx.getCurrentThreadAllocatedBytes() - a0;
                long t2 = System.nanoTime();
                scalarMs[r] = (t1 - t0) / 1e6 / points;
                vectorMs[r] = (t2 - t1) / 1e6 / points;
            }
            double maxDiff = 0;
            for (int k = 0; k < 3 * points; k++) {
                maxDiff = Math.max(maxDiff, Math.abs(scalarOut[k] - vectorOut[k]));
            }
            double s = median(scalarMs);
            double v = median(vectorMs);
            System.out.printf(Locale.ROOT, "  scalar pass: median %.3f ms a point (%.1f steps a point)%n", s,
                    (double) scalarSteps / points);
            System.out.printf(Locale.ROOT, "  vector pass: median %.3f ms a point (Vector API %s), %.0f bytes allocated"
                    + " per point%n", v, Placement.VECTOR_AVAILABLE ? "in use" : "NOT available: scalar", (double) allocated
                    / rounds / points);
            System.out.printf(Locale.ROOT, "  scalar / vector: %.2fx; largest coordinate difference %.3g%n", s / v, maxDiff);
            new Figures("placement").put("n", n).put("points", points).put("mapped", mapped)
                    .put("scalar_ms_per_point", s).put("vector_ms_per_point", v).put("speedup", s / v)
                    .put("steps_per_point", (double) scalarSteps / points).put("max_coordinate_difference", maxDiff)
                    .put("vector_available", Placement.VECTOR_AVAILABLE)
                    .put("vector_bytes_per_point", (double) allocated / rounds / points).print();
        } finally {
            OwnerOnlyFiles.deleteTree(dir);
        }
    }

    private static void placeAll(Placement placement, double[] map, int mapped, short[][] rows, double[] out,
                                 long[] steps) {
        for (int k = 0; k < rows.length; k++) {
            placement.place(map, mapped, rows[k], null, out, 3 * k);
            steps[0] += placement.steps();
        }
    }

    private static double median(double[] values) {
        double[] s = values.clone();
        Arrays.sort(s);
        return s[s.length / 2];
    }
}
