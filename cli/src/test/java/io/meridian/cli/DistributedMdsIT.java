package io.meridian.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.meridian.matrix.DistanceSource;
import io.meridian.matrix.RowBlock;
import io.meridian.stream.row.DistanceRow;
import io.meridian.stream.row.RowFormat;
import io.meridian.stream.row.RowStores;
import io.meridian.synthetic.SyntheticDataset;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code meridian mds --procs P} under a real mpirun gives the single-process result: same temperature loops and
 * SMACOF iterations, same stress and points up to reduction order; two-level with two memory groups and flat.
 */
class DistributedMdsIT {
    private static final int N = 240;
    private static final int TRIANGLE_N = 400;

    @TempDir
    Path tmp;

    @Test
    void distributedRunsEqualTheSingleProcessRun() throws Exception {
        Path data = tmp.resolve("data");
        SyntheticDataset.blobs(N, 6, 4, 3.0, 11).write(data, ByteOrder.LITTLE_ENDIAN);
        String distances = data.resolve(SyntheticDataset.DISTANCES_FILE).toString();
        Path single = tmp.resolve("single");
        assertEquals(0, Main.run(new String[] {"mds", "--distances", distances, "--n", "" + N, "--out", single.toString(), "--seed", "5"}));

        Path twoLevel = tmp.resolve("two-level");
        String out2 = mds(distances, twoLevel, "--procs", "3", "--groups-per-node", "2");
        assertTrue(out2.contains("mds: 3 processes (two-level, 2 memory groups)"), out2);
        same(single, twoLevel, 1e-8);

        Path flat = tmp.resolve("flat");
        String outFlat = mds(distances, flat, "--procs", "2", "--flat-mpi");
        assertTrue(outFlat.contains("mds: 2 processes (flat Open MPI)"), outFlat);
        same(single, flat, 1e-8);
    }

    /**
     * Ranks over the lower triangle the row stores hold draw the square file's map: the pair sums run in another
     * order, so the points agree to rounding carried through the run (TriangleDaMdsTest measures 1.5e-8). N is
     * larger than the other test's: its allreduce of N x 3 + 1 doubles must outgrow the collectives' 1024 minimum.
     */
    @Test
    void ranksOverTheRowStoresEqualTheSquareFilesRun() throws Exception {
        Path data = tmp.resolve("data");
        SyntheticDataset.blobs(TRIANGLE_N, 6, 4, 3.0, 11).write(data, ByteOrder.LITTLE_ENDIAN);
        Path distances = data.resolve(SyntheticDataset.DISTANCES_FILE);
        Path stores = tmp.resolve("stores");
        RowBlock square = DistanceSource.matrixFile(distances, TRIANGLE_N, ByteOrder.LITTLE_ENDIAN).all();
        short[] full = new short[TRIANGLE_N];
        try (RowStores store = new RowStores(stores, 64, TRIANGLE_N, b -> true)) {
            for (int id = 0; id < TRIANGLE_N; id++) {
                square.copyRow(id, full);
                store.store(DistanceRow.decode(RowFormat.encodeInt16(id, full, 0, id, false), null));
            }
        }
        Path single = tmp.resolve("single");
        assertEquals(0, Main.run(new String[] {"mds", "--distances", distances.toString(), "--n", "" + TRIANGLE_N, "--out",
                single.toString(), "--seed", "5"}));
        Path ranks = tmp.resolve("triangle-ranks");
        String out = mds(List.of("--row-stores", stores.toString(), "--block-rows", "64"), TRIANGLE_N, ranks,
                "--procs", "2", "--groups-per-node", "2");
        assertTrue(out.contains("mds: 2 processes (two-level, 2 memory groups)"), out);
        same(single, ranks, TRIANGLE_N, 1e-6);
    }

    private String mds(String distances, Path out, String... extra) throws Exception {
        return mds(List.of("--distances", distances), N, out, extra);
    }

    private String mds(List<String> source, int n, Path out, String... extra) throws Exception {
        String cp = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx256m", "-cp", cp, Main.class.getName(), "mds"));
        cmd.addAll(source);
        cmd.addAll(List.of("--n", "" + n, "--out", out.toString(), "--seed", "5", "--collective-timeout-ms", "60000"));
        cmd.addAll(List.of(extra));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(tmp.resolve(out.getFileName() + ".log").toFile()).start();
        try {
            if (!p.waitFor(240, TimeUnit.SECONDS)) {
                throw new AssertionError("mds " + String.join(" ", extra) + " still running after 240 s");
            }
        } finally {
            p.descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly();
        }
        String log = Files.readString(tmp.resolve(out.getFileName() + ".log"));
        assertEquals(0, p.exitValue(), log);
        return log;
    }

    private static void same(Path expected, Path actual, double pointTolerance) throws Exception {
        same(expected, actual, N, pointTolerance);
    }

    private static void same(Path expected, Path actual, int n, double pointTolerance) throws Exception {
        String a = Files.readString(expected.resolve("summary.json"));
        String b = Files.readString(actual.resolve("summary.json"));
        assertEquals(number(a, "temperatureLoops"), number(b, "temperatureLoops"), b);
        assertEquals(number(a, "smacofIterations"), number(b, "smacofIterations"), b);
        double stressA = number(a, "normalizedStress");
        double stressB = number(b, "normalizedStress");
        assertEquals(stressA, stressB, 1e-9 * stressA, "stress of " + actual);
        List<String> pa = Files.readAllLines(expected.resolve("points.tsv"));
        List<String> pb = Files.readAllLines(actual.resolve("points.tsv"));
        assertEquals(n, pa.size());
        assertEquals(pa.size(), pb.size());
        double worst = 0;
        for (int i = 0; i < pa.size(); i++) {
            String[] x = pa.get(i).split("\t");
            String[] y = pb.get(i).split("\t");
            for (int k = 1; k < x.length; k++) {
                worst = Math.max(worst, Math.abs(Double.parseDouble(x[k]) - Double.parseDouble(y[k])));
            }
        }
        assertTrue(worst < pointTolerance, "points of " + actual + " differ by up to " + worst);
    }

    private static double number(String json, String key) {
        Matcher m = Pattern.compile("\"" + key + "\":([-0-9.eE+]+)").matcher(json);
        assertTrue(m.find(), key + " in " + json);
        return Double.parseDouble(m.group(1));
    }
}
