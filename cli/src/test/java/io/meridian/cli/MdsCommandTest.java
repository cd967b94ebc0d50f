package io.meridian.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.meridian.matrix.DistanceSource;
import io.meridian.matrix.RowBlock;
import io.meridian.stream.row.DistanceRow;
import io.meridian.stream.row.RowFormat;
import io.meridian.stream.row.RowStoreLayout;
import io.meridian.stream.row.RowStores;
import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The gen, mds and demo commands through {@link Main#run}, as the launcher runs them. */
class MdsCommandTest {
    static final int N = 60;

    @TempDir
    static Path dir;
    static Path data;
    static Path matrix;

    record Outcome(int status, String out, String err) {
    }

    static Outcome main(String... args) {
        PrintStream oldOut = System.out;
        PrintStream oldErr = System.err;
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        try {
            System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
            System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
            int status = Main.run(args);
            return new Outcome(status, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
        } finally {
            System.setOut(oldOut);
            System.setErr(oldErr);
        }
    }

    @BeforeAll
    static void generate() {
        data = dir.resolve("data");
        Outcome gen = main("gen", "--kind", "blobs", "--n", "" + N, "--dim", "5", "--centers", "3", "--seed", "4",
                "--out", data.toString());
        assertEquals(0, gen.status, gen.err);
        matrix = data.resolve("distances.bin");
    }

    @Test
    void genWritesTheMatrixLabelsCoordinatesAndADescriptionDeterministically() throws Exception {
        assertEquals(2L * N * N, Files.size(matrix));
        assertEquals(N, Files.readAllLines(data.resolve("labels.tsv")).size());
        List<String> coords = Files.readAllLines(data.resolve("coordinates.tsv"));
        assertEquals(N, coords.size());
        assertEquals(6, coords.get(0).split("\t").length);
        String json = Files.readString(data.resolve("dataset.json"));
        for (String field : new String[] {"\"n\":60", "\"dim\":5", "\"endianness\":\"little\"", "\"scale\":", "\"kind\":\"blobs\"", "\"seed\":4"}) {
            assertTrue(json.contains(field), field + " in " + json);
        }
        Path again = dir.resolve("again");
        assertEquals(0, main("gen", "--kind", "blobs", "--n", "" + N, "--dim", "5", "--centers", "3", "--seed", "4",
                "--out", again.toString()).status);
        assertTrue(java.util.Arrays.equals(Files.readAllBytes(matrix), Files.readAllBytes(again.resolve("distances.bin"))));
        Path other = dir.resolve("other");
        assertEquals(0, main("gen", "--kind", "uniform", "--n", "" + N, "--dim", "5", "--seed", "5", "--out", other.toString()).status);
        assertFalse(java.util.Arrays.equals(Files.readAllBytes(matrix), Files.readAllBytes(other.resolve("distances.bin"))));
    }

    @Test
    void mdsWritesPointsAndASummaryWithEveryField() throws Exception {
        Path out = dir.resolve("map");
        Outcome r = main("mds", "--distances", matrix.toString(), "--n", "" + N, "--out", out.toString(), "--seed", "2");
        assertEquals(0, r.status, r.err);
        List<String> lines = Files.readAllLines(out.resolve("points.tsv"));
        assertEquals(N, lines.size());
        for (int i = 0; i < N; i++) {
            String[] f = lines.get(i).split("\t");
            assertEquals(4, f.length);
            assertEquals(i, Integer.parseInt(f[0]));
            for (int k = 1; k < 4; k++) {
                assertTrue(Double.isFinite(Double.parseDouble(f[k])));
            }
        }
        String json = Files.readString(out.resolve("summary.json"));
        for (String field : new String[] {"n", "dim", "normalizedStress", "spidalStress", "temperatureLoops",
                "smacofIterations", "cgIterations", "seconds", "msPerIteration", "peakHeapBytes"}) {
            assertTrue(json.contains("\"" + field + "\":"), field + " in " + json);
        }
        assertTrue(json.contains("\"n\":60"));
        assertTrue(r.out.contains("normalized stress"));

        // an initial layout from a points file, the classical init, weights and fixed points all run
        Path pw = dir.resolve("pw.txt");
        Files.writeString(pw, "1\n".repeat(N));
        Path fixed = dir.resolve("fixed.tsv");
        Files.writeString(fixed, "0\t0\t0\t0\n5\t0.1\t0.2\t0.3\n");
        for (String[] extra : new String[][] {{"--init", out.resolve("points.tsv").toString()}, {"--init", "classical"},
                {"--point-weights", pw.toString(), "--sammon"}, {"--fixed", fixed.toString()}}) {
            Path o = dir.resolve("map" + extra.length + extra[0].hashCode());
            // both --init runs write to one directory: the second overwrites the first's map, so it says --force
            String[] args = concat(new String[] {"mds", "--distances", matrix.toString(), "--n", "" + N, "--out", o.toString(),
                    "--max-temp-loops", "5", "--force"}, extra);
            Outcome run = main(args);
            assertEquals(0, run.status, String.join(" ", extra) + ": " + run.err);
            assertTrue(Files.exists(o.resolve("summary.json")));
        }
        List<String> held = Files.readAllLines(dir.resolve("map" + 2 + "--fixed".hashCode()).resolve("points.tsv"));
        assertEquals("5\t0.1\t0.2\t0.3", held.get(5));
    }

    @Test
    void demoGeneratesMapsAndSaysWhereTheOutputWent() throws Exception {
        Path out = dir.resolve("demo");
        Outcome r = main("demo", "--n", "120", "--out", out.toString());
        assertEquals(0, r.status, r.err);
        assertTrue(r.out.contains("(0 entries differ from the generated matrix)"), r.out);
        assertEquals(120, Files.readAllLines(out.resolve("mds").resolve("points.tsv")).size());
        assertEquals(120, Files.readAllLines(out.resolve("pwc").resolve("clusters.tsv")).size());
        assertTrue(r.out.contains(out.resolve("mds").resolve("points.tsv").toString()));
        assertTrue(r.out.contains(out.resolve("pwc").resolve("clusters.tsv").toString()));
        assertTrue(r.out.contains("normalized stress"));
        assertTrue(r.out.contains("adjusted Rand index"));
        List<String> rejected = Files.readAllLines(out.resolve("stream").resolve("rejected.tsv"));
        assertTrue(rejected.size() >= 12, "the demo's bad rows are dead-lettered: " + rejected);

        // the view commands it prints open what it made
        List<String> views = r.out.lines().filter(l -> l.startsWith("  ./meridian view ")).toList();
        assertEquals(2, views.size(), r.out);
        for (String line : views) {
            String[] words = line.trim().split("\\s+");
            int dirs = words[3].startsWith("/") ? 2 : 1; // MAP [CLUSTERS], then the description
            String[] args = new String[dirs + 2];
            System.arraycopy(words, 2, args, 0, dirs);
            args[dirs] = "--port";
            args[dirs + 1] = "0";
            try (ViewCommand.Viewer viewer = ViewCommand.open(args, ViewCommandTest.quiet(), ViewCommandTest.quiet())) {
                ViewCommandTest.Decoded f = ViewCommandTest.Decoded.of(
                        ViewCommandTest.get(viewer.server().uri().resolve("api/frame")).body());
                assertEquals(120, f.meta().get("n").asInt(), line);
                assertTrue(f.meta().get("clusterCount").asInt() >= 1, line);
            }
        }
    }

    private static String[] concat(String[] a, String[] b) {
        String[] r = java.util.Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, r, a.length, b.length);
        return r;
    }

    /** Streams the lower triangle of the generated matrix into row stores of 16 rows a block, in shuffled order. */
    static Path rowStores(String name, int rows) {
        Path stores = dir.resolve(name);
        RowBlock square = DistanceSource.matrixFile(matrix, N, ByteOrder.LITTLE_ENDIAN).all();
        short[] full = new short[N];
        try (RowStores store = new RowStores(stores, 16, N, b -> true)) {
            for (int k = 0; k < N; k++) {
                int id = (k * 7) % N; // 7 is coprime with 60: every id once
                if (id < rows) {
                    square.copyRow(id, full);
                    store.store(DistanceRow.decode(RowFormat.encodeInt16(id, full, 0, id, false), null));
                }
            }
        }
        return stores;
    }

    @Test
    void mdsOnTheRowStoresOrTheirTriangleFileDrawsTheSquareFilesMap() throws Exception {
        Path stores = rowStores("stores", N);
        Path fromSquare = dir.resolve("map-square");
        Outcome square = main("mds", "--distances", matrix.toString(), "--n", "" + N, "--out", fromSquare.toString(),
                "--seed", "3", "--max-temp-loops", "30");
        assertEquals(0, square.status, square.err);
        List<String> expected = Files.readAllLines(fromSquare.resolve("points.tsv"));
        Path triangle = dir.resolve("triangle.bin");
        try (OutputStream concatenated = Files.newOutputStream(triangle)) {
            for (int b = 0; b * 16 < N; b++) {
                Path block = stores.resolve(RowStoreLayout.fileBase(b) + RowStoreLayout.VALUES);
                concatenated.write(Files.readAllBytes(block));
            }
        }
        String[][] sources = {{"--row-stores", stores.toString(), "--block-rows", "16"},
            {"--triangle", triangle.toString()}};
        for (String[] source : sources) {
            Path out = dir.resolve("map" + source[0]);
            Outcome r = main(concat(concat(new String[] {"mds"}, source), new String[] {"--n", "" + N, "--out",
                    out.toString(), "--seed", "3", "--max-temp-loops", "30"}));
            assertEquals(0, r.status, r.err);
            List<String> lines = Files.readAllLines(out.resolve("points.tsv"));
            assertEquals(N, lines.size());
            double largest = 0;
            for (int i = 0; i < N; i++) {
                String[] a = expected.get(i).split("\t");
                String[] b = lines.get(i).split("\t");
                assertEquals(a[0], b[0]);
                for (int k = 1; k < a.length; k++) {
                    largest = Math.max(largest, Math.abs(Double.parseDouble(a[k]) - Double.parseDouble(b[k])));
                }
            }
            // to rounding: the pair sums run in another order (TriangleDaMdsTest measures how far that carries)
            assertTrue(largest < 1e-6, source[0] + ": points differ by " + largest);
        }
        Path cut = dir.resolve("cut.tri");
        Files.write(cut, Arrays.copyOf(Files.readAllBytes(triangle), 1000));
        rejects("--triangle: " + cut + " has 1000 bytes, not the lower triangle of N = " + N, "--triangle",
                cut.toString(), "--n", "" + N, "--out", out());
        rejects("--sammon is not supported with --triangle", "--triangle", triangle.toString(), "--n", "" + N,
                "--sammon", "--out", out());
        assertTrue(main("mds", "--help").out.contains("--row-stores DIR --block-rows R"));
    }

    @Test
    void rowStoresThatCannotBeMappedAreRefusedInOneLine() throws Exception {
        Path partial = rowStores("partial-stores", N - 2);
        rejects("--row-stores: the row stores in " + partial + " do not hold every row of points 0.." + (N - 1)
                + ": missing [" + (N - 2) + ", " + (N - 1) + "]", "--row-stores", partial.toString(), "--block-rows",
                "16", "--n", "" + N, "--out", out());
        assertFalse(Files.exists(Path.of(out())), "a refused run makes no --out");
        rejects("hold blocks of 16 rows (block-000000.rows), not of 32", "--row-stores", partial.toString(), "--block-rows", "32", "--n", "20", "--out",
                out());
        rejects("does not exist", "--row-stores", dir.resolve("nowhere").toString(), "--block-rows", "16", "--n", "20",
                "--out", out());
        rejects("--sammon is not supported with --row-stores", "--row-stores", partial.toString(), "--block-rows", "16",
                "--n", "20", "--sammon", "--out", out());
        rejects("--init classical is not supported with --row-stores", "--row-stores", partial.toString(),
                "--block-rows", "16", "--n", "20", "--init", "classical", "--out", out());
        rejects("give one of --distances FILE (a square matrix), --row-stores DIR", "--row-stores", partial.toString(),
                "--distances", matrix.toString(),
                "--block-rows", "16", "--n", "20", "--out", out());
        rejects("--block-rows", "--row-stores", partial.toString(), "--n", "20", "--out", out());
    }

    // ------------------------------------------------------------------------------------------------ bad input

    @Test
    void solverLmWritesTheSameFilesWithItsFiguresAndKeepsFixedPoints() throws Exception {
        Path out = dir.resolve("lm-map");
        Path fixed = dir.resolve("lm-fixed.tsv");
        Files.writeString(fixed, "0\t0\t0\t0\n5\t0.1\t0.2\t0.3\n");
        Outcome r = main("mds", "--solver", "lm", "--distances", matrix.toString(), "--n", "" + N, "--out",
                out.toString(), "--seed", "2", "--chisq-norm", "3", "--fixed", fixed.toString());
        assertEquals(0, r.status, r.err);
        List<String> lines = Files.readAllLines(out.resolve("points.tsv"));
        assertEquals(N, lines.size());
        assertEquals("5\t0.1\t0.2\t0.3", lines.get(5));
        assertEquals("0\t0.0\t0.0\t0.0", lines.get(0));
        String json = Files.readString(out.resolve("summary.json"));
        for (String field : new String[] {"\"solver\":\"lm\"", "\"normalizedStress\":", "\"chisq\":",
                "\"iterations\":", "\"secondsToFinalStress\":"}) {
            assertTrue(json.contains(field), field + " in " + json);
        }
        assertTrue(r.out.contains("solver lm") && r.out.contains("normalized stress"), r.out);
        assertTrue(main("mds", "--help").out.contains("--solver smacof|lm"));
    }

    @Test
    void optionsOfTheOtherSolverAreRefusedByName() {
        String[] base = {"--distances", matrix.toString(), "--n", "" + N, "--out", out()};
        rejects("--chisq-norm is an option of --solver lm", concat(base, new String[] {"--chisq-norm", "2"}));
        rejects("--alpha is an option of DA-MDS (smacof), not of --solver lm",
                concat(base, new String[] {"--solver", "lm", "--alpha", "0.9"}));
        rejects("use --chisq-norm 2", concat(base, new String[] {"--solver", "lm", "--sammon"}));
        rejects("--solver must be smacof or lm, got sgd", concat(base, new String[] {"--solver", "sgd"}));
        rejects("--chisq-norm must be", concat(base, new String[] {"--solver", "lm", "--chisq-norm", "5"}));
        rejects("--q-range must be > 0.0 and < 1.0", concat(base, new String[] {"--solver", "lm", "--q-range", "1"}));
    }

    /**
     * Runs mds with these arguments and checks: status 2, one line naming {@code expected}, then (for a usage error)
     * the usage line, no stack trace.
     */
    private static void rejects(String expected, String... args) {
        Outcome r = main(concat(new String[] {"mds"}, args));
        assertEquals(2, r.status, r.err);
        String err = firstLine(r.err);
        List<String> lines = r.err.strip().lines().toList();
        assertTrue(lines.size() == 1 || lines.size() == 2 && lines.get(1).startsWith("usage: ./meridian mds --distances"),
                "one line, then the usage line, expected: " + r.err);
        assertTrue(err.startsWith("meridian mds: "), err);
        assertTrue(err.contains(expected), "'" + expected + "' expected in: " + err);
        assertFalse(r.err.contains("Exception") || r.err.contains("\tat "), r.err);
        assertTrue(r.out.isEmpty(), r.out);
    }

    /** The message of a refusal: its first line (a usage error's second line is the usage). */
    static String firstLine(String err) {
        return err.strip().lines().findFirst().orElse("");
    }

    private String out() {
        return dir.resolve("bad-out").toString();
    }

    @Test
    void aFileOfTheWrongSizeNamesTheFileAndBothSizes() {
        rejects(matrix.toString(), "--distances", matrix.toString(), "--n", "" + (N - 1), "--out", out());
        rejects("2*N*N", "--distances", matrix.toString(), "--n", "" + (N + 1), "--out", out());
    }

    @Test
    void nMissingNotPositiveOrNotANumber() {
        rejects("--n is required", "--distances", matrix.toString(), "--out", out());
        rejects("--n must be", "--distances", matrix.toString(), "--n", "0", "--out", out());
        rejects("--n must be", "--distances", matrix.toString(), "--n", "-4", "--out", out());
        rejects("--n must be an integer, got 'sixty'", "--distances", matrix.toString(), "--n", "sixty", "--out", out());
    }

    @Test
    void missingOrUnreadableFiles() throws Exception {
        Path nowhere = dir.resolve("nowhere.bin");
        rejects("--distances: file " + nowhere + " does not exist", "--distances", nowhere.toString(), "--n", "" + N, "--out", out());
        rejects("is not a regular file", "--distances", dir.toString(), "--n", "" + N, "--out", out());
        rejects("--weights: file", "--distances", matrix.toString(), "--n", "" + N, "--out", out(), "--weights", nowhere.toString());
        rejects("--init: file", "--distances", matrix.toString(), "--n", "" + N, "--out", out(), "--init", nowhere.toString());
        rejects("--fixed: file", "--distances", matrix.toString(), "--n", "" + N, "--out", out(), "--fixed", nowhere.toString());
        Path locked = dir.resolve("locked.bin");
        Files.copy(matrix, locked);
        if (locked.toFile().setReadable(false, false) && !Files.isReadable(locked)) {
            rejects("not readable", "--distances", locked.toString(), "--n", "" + N, "--out", out());
        }
        Path shortWeights = dir.resolve("short-weights.bin");
        Files.write(shortWeights, new byte[10]);
        rejects("--weights: file " + shortWeights, "--distances", matrix.toString(), "--n", "" + N, "--out", out(),
                "--weights", shortWeights.toString());
    }

    @Test
    void nanOrNegativeWeights() throws Exception {
        Path nan = dir.resolve("nan.txt");
        Files.writeString(nan, "1\n".repeat(N - 1) + "NaN\n");
        rejects("--point-weights: " + nan + " line " + N + ": weight is not finite", "--distances", matrix.toString(),
                "--n", "" + N, "--out", out(), "--point-weights", nan.toString());
        Path negative = dir.resolve("negative.txt");
        Files.writeString(negative, "1\n-0.5\n" + "1\n".repeat(N - 2));
        rejects("--point-weights: " + negative + " line 2: weight is negative", "--distances", matrix.toString(),
                "--n", "" + N, "--out", out(), "--point-weights", negative.toString());
    }

    @Test
    void anInitialLayoutOfTheWrongShape() throws Exception {
        Path twoD = dir.resolve("two-d.tsv");
        Files.writeString(twoD, "0.1\t0.2\n".repeat(N));
        rejects("--init: " + twoD + " line 1 has 2 fields", "--distances", matrix.toString(), "--n", "" + N,
                "--out", out(), "--init", twoD.toString());
        Path tooFew = dir.resolve("too-few.tsv");
        Files.writeString(tooFew, "0.1\t0.2\t0.3\n".repeat(N - 3));
        rejects("--init: " + tooFew + " has " + (N - 3) + " points, expected N = " + N, "--distances", matrix.toString(),
                "--n", "" + N, "--out", out(), "--init", tooFew.toString());
        Path text = dir.resolve("text.tsv");
        Files.writeString(text, "a\tb\tc\n".repeat(N));
        rejects("not a number: 'a'", "--distances", matrix.toString(), "--n", "" + N, "--out", out(), "--init", text.toString());
    }

    @Test
    void unknownOptionsAndNonNumericValues() {
        rejects("unknown option --bogus", "--distances", matrix.toString(), "--n", "" + N, "--out", out(), "--bogus", "1");
        rejects("--alpha must be a number, got 'fast'", "--distances", matrix.toString(), "--n", "" + N, "--out", out(), "--alpha", "fast");
        rejects("--alpha must be > 0.0 and < 1.0, got '1'", "--distances", matrix.toString(), "--n", "" + N, "--out",
                out(), "--alpha", "1");
        // at 0 the temperature never reached its minimum: the run hung with a subnormal temperature
        rejects("--tmin-factor must be > 0.0", "--distances", matrix.toString(), "--n", "" + N, "--out", out(),
                "--tmin-factor", "0");
        // more processes than rows: each owns a block; it used to fail with a trace and leave a region in /dev/shm
        rejects("--procs must be at most N = " + N, "--distances", matrix.toString(), "--n", "" + N, "--out", out(),
                "--procs", "" + (N + 1));
        rejects("--out: cannot create directory /proc/meridian-no/out: no such file or directory", "--distances",
                matrix.toString(), "--n", "" + N, "--out", "/proc/meridian-no/out");
        Outcome genOut = main("gen", "--kind", "blobs", "--n", "10", "--out", "/proc/meridian-no/out");
        assertEquals(2, genOut.status, genOut.err);
        assertEquals("meridian gen: --out: cannot create directory /proc/meridian-no/out: no such file or directory",
                firstLine(genOut.err));
        rejects("--seed must be an integer", "--distances", matrix.toString(), "--n", "" + N, "--out", out(), "--seed", "x1");
        rejects("--cg-iterations must be", "--distances", matrix.toString(), "--n", "" + N, "--out", out(), "--cg-iterations", "0");
        rejects("at most one of --weights and --point-weights", "--distances", matrix.toString(), "--n", "" + N,
                "--out", out(), "--weights", matrix.toString(), "--point-weights", matrix.toString());
        Outcome gen = main("gen", "--kind", "spiral", "--n", "10", "--out", out());
        assertEquals(2, gen.status);
        assertEquals("meridian gen: --kind must be one of blobs|uniform|peaks, got 'spiral'", firstLine(gen.err));
    }
}
