package io.meridian.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.meridian.cli.MdsCommandTest.Outcome;
import io.meridian.matrix.ShortMatrixFormat;
import io.meridian.matrix.ShortMatrixWriter;
import io.meridian.synthetic.SyntheticDataset;
import java.io.IOException;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.IntBinaryOperator;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code mds} and {@code gen} on bad and degenerate input, one row per case, through {@link Main#run} as the launcher
 * runs them. A refusal exits 2 with one line, {@code meridian <command>: }, that names the option or file and the
 * problem, prints no stack trace and leaves nothing behind (no output directory, no region of /dev/shm mapped by this
 * JVM); degenerate input that has an answer exits 0 with the right one.
 */
class InputTableTest {
    static final int N = 30;

    @TempDir
    static Path dir;
    static Path blobs;
    static Path blobsBigEndian;
    static Path diagonalOnly;
    static Path twoGroups;
    static Path zeros;
    static Path onePoint;
    static Path twoPoints;
    static Path rightTriangle;
    static Path tetrahedronAndACopy;
    static Path together;
    static Path aZeroPointWeight;
    static Path zeroWeightsOffTheDiagonal;
    static Path fixedInOneGroup;

    @BeforeAll
    static void files() throws IOException {
        SyntheticDataset data = SyntheticDataset.blobs(N, 5, 3, 1.0, 4);
        blobs = dir.resolve("blobs.bin");
        data.writeMatrix(blobs, ByteOrder.LITTLE_ENDIAN);
        blobsBigEndian = dir.resolve("blobs-be.bin");
        data.writeMatrix(blobsBigEndian, ByteOrder.BIG_ENDIAN);
        diagonalOnly = matrix("diagonal.bin", 12, (i, j) -> i == j ? 0 : -1);
        // points 0..9 and 10..15, no distance between the two sets
        twoGroups = matrix("two-groups.bin", 16, (i, j) -> (i < 10) == (j < 10) ? 1000 * Math.abs(i - j) : -1);
        zeros = matrix("zeros.bin", 8, (i, j) -> 0);
        onePoint = matrix("one.bin", 1, (i, j) -> 0);
        twoPoints = matrix("two.bin", 2, (i, j) -> i == j ? 0 : ShortMatrixFormat.SCALE);
        int[][] triangle = {{0, 0}, {18000, 0}, {0, 24000}};
        rightTriangle = matrix("triangle.bin", 3, (i, j) -> (int) Math.round(Math.hypot(
                triangle[i][0] - triangle[j][0], triangle[i][1] - triangle[j][1])));
        tetrahedronAndACopy = matrix("tetrahedron.bin", 5, (i, j) -> i % 4 == j % 4 ? 0 : ShortMatrixFormat.SCALE);
        together = dir.resolve("together.tsv");
        Files.writeString(together, "0.5\t0.5\t0.5\n".repeat(N));
        aZeroPointWeight = dir.resolve("zero-weight.txt");
        Files.writeString(aZeroPointWeight, "1\n".repeat(7) + "0\n" + "1\n".repeat(N - 8));
        zeroWeightsOffTheDiagonal = matrix("zero-weights.bin", N, (i, j) -> i == j ? ShortMatrixFormat.SCALE : 0);
        fixedInOneGroup = dir.resolve("fixed.tsv");
        Files.writeString(fixedInOneGroup, "0\t0\t0\t0\n");
    }

    static Path matrix(String name, int n, IntBinaryOperator entry) throws IOException {
        Path file = dir.resolve(name);
        try (ShortMatrixWriter w = new ShortMatrixWriter(file, n, ByteOrder.LITTLE_ENDIAN)) {
            short[] row = new short[n];
            for (int i = 0; i < n; i++) {
                for (int j = 0; j < n; j++) {
                    row[j] = (short) entry.applyAsInt(i, j);
                }
                w.writeRow(row);
            }
        }
        return file;
    }

    /** What a case checks in the output directory of a run that succeeded. */
    interface Result {
        void check(Path out) throws Exception;
    }

    /** One row: arguments (with OUT for the case's own output directory), then a refusal or a result. */
    record Case(String name, String[] args, String message, Result result) {
        static Case refused(String name, String message, String... args) {
            return new Case(name, args, message, null);
        }

        static Case answers(String name, Result result, String... args) {
            return new Case(name, args, null, result);
        }
    }

    static final String OUT = "OUT";

    @TestFactory
    Stream<DynamicTest> mds() {
        String b = blobs.toString();
        String n = "" + N;
        List<Case> cases = List.of(
                Case.refused("N missing", "option --n is required", "mds", "--distances", b, "--out", OUT),
                Case.refused("N zero", "--n must be", "mds", "--distances", b, "--n", "0", "--out", OUT),
                Case.refused("N not a number", "--n must be an integer, got 'thirty'", "mds", "--distances", b,
                        "--n", "thirty", "--out", OUT),
                Case.refused("N's value left out", "option --n needs a value, got option --out", "mds",
                        "--distances", b, "--n", "--out", OUT),
                Case.refused("no such matrix", "--distances: file " + dir.resolve("nowhere.bin") + " does not exist",
                        "mds", "--distances", dir.resolve("nowhere.bin").toString(), "--n", n, "--out", OUT),
                Case.refused("matrix is a directory", "--distances: " + dir + " is not a regular file", "mds",
                        "--distances", dir.toString(), "--n", n, "--out", OUT),
                Case.refused("matrix of another N", "--distances: file " + b, "mds", "--distances", b, "--n", "29",
                        "--out", OUT),
                Case.refused("matrix in the other byte order", "--big-endian", "mds", "--distances",
                        blobsBigEndian.toString(), "--n", n, "--out", OUT),
                Case.refused("dim zero", "--dim must be an integer from 1 to 100, got 0", "mds", "--distances", b,
                        "--n", n, "--dim", "0", "--out", OUT),
                Case.refused("alpha 1 (the temperature never falls)", "--alpha must be > 0.0 and < 1.0, got '1'",
                        "mds", "--distances", b, "--n", n, "--alpha", "1", "--out", OUT),
                Case.refused("unknown option", "unknown option --bogus for 'mds'", "mds", "--distances", b, "--n", n,
                        "--bogus", "1", "--out", OUT),
                Case.refused("a flag given a value", "option --spidal-update takes no value", "mds", "--distances", b,
                        "--n", n, "--spidal-update=yes", "--out", OUT),
                Case.refused("out cannot be created", "--out: cannot create directory /proc/meridian-no/out", "mds",
                        "--distances", b, "--n", n, "--out", "/proc/meridian-no/out"),
                Case.refused("only the diagonal", "--distances: no two points have a distance of non-zero weight"
                        + " between them (all 12 x 11 entries off the diagonal are missing or weighted 0)", "mds",
                        "--distances", diagonalOnly.toString(), "--n", "12", "--out", OUT),
                Case.refused("two groups with no distance between them", "--distances: the distances of non-zero"
                        + " weight split the 16 points into 2 groups with none between two groups: sizes 10, 6 (first"
                        + " points 0, 10)", "mds", "--distances", twoGroups.toString(), "--n", "16", "--out", OUT),
                Case.refused("two groups, with SPIDAL's update too", "split the 16 points into 2 groups", "mds",
                        "--distances", twoGroups.toString(), "--n", "16", "--spidal-update", "--out", OUT),
                Case.refused("two groups, a fixed point in one", "--distances: 1 groups of points have no distance of"
                        + " non-zero weight to a fixed point: sizes 6 (first points 10)", "mds", "--distances",
                        twoGroups.toString(), "--n", "16", "--fixed", fixedInOneGroup.toString(), "--out", OUT),
                Case.refused("a point weighted 0", "--point-weights: the distances of non-zero weight split the 30"
                        + " points into 2 groups with none between two groups: sizes 29, 1 (first points 0, 7)", "mds",
                        "--distances", b, "--n", n, "--point-weights", aZeroPointWeight.toString(), "--out", OUT),
                Case.refused("every weight off the diagonal 0", "--weights: no two points have a distance of"
                        + " non-zero weight", "mds", "--distances", b, "--n", n, "--weights",
                        zeroWeightsOffTheDiagonal.toString(), "--out", OUT),
                Case.refused("an initial layout with every point in one place", "--init: all 30 points of the initial"
                        + " layout are at (0.5, 0.5, 0.5): SMACOF cannot move points that all coincide", "mds",
                        "--distances", b, "--n", n, "--init", together.toString(), "--out", OUT),

                Case.answers("one point: at the origin", out -> {
                    assertEquals(List.of("0\t0.0\t0.0\t0.0"), Files.readAllLines(out.resolve("points.tsv")));
                }, "mds", "--distances", onePoint.toString(), "--n", "1", "--out", OUT),
                Case.answers("two points 1.0 apart, in 3-D", out -> {
                    assertEquals(1.0, distance(points(out), 0, 1), 1e-9);
                }, "mds", "--distances", twoPoints.toString(), "--n", "2", "--out", OUT),
                Case.answers("two points, from the classical layout", out -> {
                    assertEquals(1.0, distance(points(out), 0, 1), 1e-9);
                }, "mds", "--distances", twoPoints.toString(), "--n", "2", "--init", "classical", "--out", OUT),
                Case.answers("two points with SPIDAL's update: shrunk to 2/3", out -> {
                    assertEquals(2.0 / 3, distance(points(out), 0, 1), 1e-6);
                }, "mds", "--distances", twoPoints.toString(), "--n", "2", "--spidal-update", "--threshold", "1e-12",
                        "--out", OUT),
                Case.answers("a right triangle: every side met", out -> {
                    double[][] p = points(out);
                    assertEquals(18000 * ShortMatrixFormat.INV_SCALE, distance(p, 0, 1), 1e-6);
                    assertEquals(24000 * ShortMatrixFormat.INV_SCALE, distance(p, 0, 2), 1e-6);
                    assertEquals(30000 * ShortMatrixFormat.INV_SCALE, distance(p, 1, 2), 1e-6);
                }, "mds", "--distances", rightTriangle.toString(), "--n", "3", "--threshold", "1e-15", "--out", OUT),
                Case.answers("a tetrahedron and a copy of a vertex: the copy on it", out -> {
                    double[][] p = points(out);
                    assertEquals(0, distance(p, 0, 4), 1e-6);
                    for (int i = 0; i < 4; i++) {
                        for (int j = i + 1; j < 5; j++) {
                            if (j != 4 || i != 0) {
                                assertEquals(1.0, distance(p, i, j), 1e-6, i + "-" + j);
                            }
                        }
                    }
                }, "mds", "--distances", tetrahedronAndACopy.toString(), "--n", "5", "--threshold", "1e-15",
                        "--out", OUT),
                Case.answers("every distance zero: every point in one place", out -> {
                    double[][] p = points(out);
                    for (int i = 1; i < p.length; i++) {
                        assertEquals(0, distance(p, 0, i), 0.0);
                    }
                    assertTrue(Files.readString(out.resolve("summary.json")).contains("\"normalizedStress\":0.0"));
                }, "mds", "--distances", zeros.toString(), "--n", "8", "--out", OUT));
        return run(cases);
    }

    @TestFactory
    Stream<DynamicTest> gen() {
        List<Case> cases = List.of(
                Case.refused("kind missing", "option --kind is required", "gen", "--n", "10", "--out", OUT),
                Case.refused("unknown kind", "--kind must be one of blobs|uniform|peaks, got 'spiral'", "gen", "--kind",
                        "spiral", "--n", "10", "--out", OUT),
                Case.refused("one point", "--n must be an integer from 2 to 100000, got 1", "gen", "--kind", "blobs",
                        "--n", "1", "--out", OUT),
                Case.refused("N too large", "--n must be an integer from 2 to 100000, got 100001", "gen", "--kind",
                        "uniform", "--n", "100001", "--out", OUT),
                Case.refused("N not a number", "--n must be an integer, got 'ten'", "gen", "--kind", "blobs", "--n",
                        "ten", "--out", OUT),
                Case.refused("dim zero", "--dim must be an integer from 1 to 10000, got 0", "gen", "--kind", "uniform",
                        "--n", "10", "--dim", "0", "--out", OUT),
                Case.refused("more centers than points", "--centers must be an integer from 1 to 10, got 11", "gen",
                        "--kind", "blobs", "--n", "10", "--centers", "11", "--out", OUT),
                Case.refused("negative spread", "--std must be >= 0.0", "gen", "--kind", "blobs", "--n", "10", "--std",
                        "-1", "--out", OUT),
                Case.refused("spread not a number", "--std must be >= 0.0 and <= 1000000.0, got 'NaN'", "gen",
                        "--kind", "blobs", "--n", "10", "--std", "NaN", "--out", OUT),
                Case.refused("seed not an integer", "--seed must be an integer, got 'x'", "gen", "--kind", "blobs",
                        "--n", "10", "--seed", "x", "--out", OUT),
                Case.refused("an extra argument", "unexpected argument 'extra' for 'gen'", "gen", "--kind", "blobs",
                        "--n", "10", "--out", OUT, "extra"),
                Case.refused("out is a file", "--out: " + blobs + " exists and is not a directory", "gen", "--kind",
                        "blobs", "--n", "10", "--out", blobs.toString()),
                Case.refused("out cannot be created", "--out: cannot create directory /proc/meridian-no/out", "gen",
                        "--kind", "blobs", "--n", "10", "--out", "/proc/meridian-no/out"),

                Case.answers("one center, no spread: every distance zero, and mds puts every point in one place",
                        out -> {
                            Path m = out.resolve("distances.bin");
                            byte[] bytes = Files.readAllBytes(m);
                            assertEquals(2 * 6 * 6, bytes.length);
                            for (byte v : bytes) {
                                assertEquals(0, v);
                            }
                            Path map = out.resolve("map");
                            Outcome r = MdsCommandTest.main("mds", "--distances", m.toString(), "--n", "6", "--out",
                                    map.toString());
                            assertEquals(0, r.status(), r.err());
                            double[][] p = points(map);
                            for (int i = 1; i < 6; i++) {
                                assertEquals(0, distance(p, 0, i), 0.0);
                            }
                        }, "gen", "--kind", "blobs", "--n", "6", "--dim", "3", "--centers", "1", "--std", "0",
                        "--out", OUT),
                Case.answers("two points", out -> {
                    assertEquals(8, Files.size(out.resolve("distances.bin")));
                }, "gen", "--kind", "uniform", "--n", "2", "--out", OUT));
        return run(cases);
    }

    private static Stream<DynamicTest> run(List<Case> cases) {
        List<DynamicTest> tests = new ArrayList<>();
        for (int c = 0; c < cases.size(); c++) {
            Case k = cases.get(c);
            Path out = dir.resolve(k.args[0] + "-" + c);
            tests.add(DynamicTest.dynamicTest(k.args[0] + ": " + k.name, () -> check(k, out)));
        }
        return tests.stream();
    }

    private static void check(Case k, Path out) throws Exception {
        String[] args = k.args.clone();
        for (int i = 0; i < args.length; i++) {
            args[i] = OUT.equals(args[i]) ? out.toString() : args[i];
        }
        List<String> mappedBefore = shmMappings();
        Outcome r = MdsCommandTest.main(args);
        String command = args[0];
        String err = r.err().strip();
        if (k.result != null) {
            assertEquals(0, r.status(), err);
            assertFalse(err.contains("Exception") || err.contains("\tat "), err);
            k.result.check(out);
            return;
        }
        assertEquals(2, r.status(), err);
        // one line; a usage error then has the usage line
        List<String> lines = err.lines().toList();
        assertTrue(lines.size() == 1 || lines.size() == 2 && lines.get(1).startsWith("usage: ./meridian " + command + " "),
                "one line expected (then the usage line for a usage error): " + err);
        err = lines.get(0);
        assertTrue(err.startsWith("meridian " + command + ": "), err);
        assertTrue(err.contains(k.message), "'" + k.message + "' expected in: " + err);
        assertFalse(r.err().contains("Exception") || r.err().contains("\tat "), r.err());
        assertTrue(r.out().isEmpty(), r.out());
        assertFalse(Files.exists(out), "left behind: " + out);
        assertEquals(mappedBefore, shmMappings(), "regions of /dev/shm left mapped");
    }

    /** The files under /dev/shm this JVM has mapped (a region an engine opened and did not close stays mapped). */
    private static List<String> shmMappings() throws IOException {
        List<String> mapped = new ArrayList<>();
        for (String line : Files.readAllLines(Path.of("/proc/self/maps"))) {
            int at = line.indexOf("/dev/shm/");
            if (at >= 0 && !line.endsWith("(deleted)")) {
                mapped.add(line.substring(at));
            }
        }
        return mapped;
    }

    static double[][] points(Path out) throws IOException {
        List<String> lines = Files.readAllLines(out.resolve("points.tsv"));
        double[][] p = new double[lines.size()][];
        for (int i = 0; i < p.length; i++) {
            String[] f = lines.get(i).split("\t");
            assertEquals(i, Integer.parseInt(f[0]));
            p[i] = new double[f.length - 1];
            for (int k = 1; k < f.length; k++) {
                p[i][k - 1] = Double.parseDouble(f[k]);
            }
        }
        return p;
    }

    static double distance(double[][] p, int i, int j) {
        double s = 0;
        for (int k = 0; k < p[i].length; k++) {
            double t = p[i][k] - p[j][k];
            s += t * t;
        }
        return Math.sqrt(s);
    }
}
