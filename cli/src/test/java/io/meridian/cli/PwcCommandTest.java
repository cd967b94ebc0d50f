package io.meridian.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.meridian.cli.MdsCommandTest.Outcome;
import io.meridian.pwc.Ari;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code ./meridian pwc} through {@link Main#run}, on small blobs written by {@code gen}. */
class PwcCommandTest {
    static final int N = 400;

    @TempDir
    static Path dir;
    static Path data;
    static Path matrix;

    @BeforeAll
    static void generate() {
        data = dir.resolve("data");
        Outcome gen = MdsCommandTest.main("gen", "--kind", "blobs", "--n", "" + N, "--dim", "6", "--centers", "4",
                "--std", "1", "--seed", "11", "--out", data.toString());
        assertEquals(0, gen.status(), gen.err());
        matrix = data.resolve("distances.bin");
    }

    static int[] column(Path tsv, int col, int rows) throws Exception {
        List<String> lines = Files.readAllLines(tsv);
        assertEquals(rows, lines.size(), tsv + " lines");
        int[] values = new int[rows];
        for (int i = 0; i < rows; i++) {
            String[] f = lines.get(i).split("\t");
            if (col == 1) {
                assertEquals(i, Integer.parseInt(f[0]), "point index in line " + i);
            }
            values[i] = Integer.parseInt(f[col]);
        }
        return values;
    }

    static double ari(Path out, Path labels, int n) throws Exception {
        return Ari.adjustedRandIndex(column(labels, 1, n), column(out.resolve("clusters.tsv"), 1, n));
    }

    @Test
    void clustersBlobsAndWritesClustersCentersAndSummary() throws Exception {
        Path out = dir.resolve("out");
        Outcome r = MdsCommandTest.main("pwc", "--distances", matrix.toString(), "--n", "" + N, "--out", out.toString(),
                "--max-clusters", "6");
        assertEquals(0, r.status(), r.err());
        assertTrue(r.err().contains("meridian pwc:"), "progress/settings on stderr");
        assertEquals(1.0, ari(out, data.resolve("labels.tsv"), N), 1e-12);

        int[] labels = column(out.resolve("clusters.tsv"), 1, N);
        List<String> centers = Files.readAllLines(out.resolve("centers.tsv"));
        assertEquals(4, centers.size());
        int total = 0;
        for (int l = 0; l < 4; l++) {
            String[] f = centers.get(l).split("\t");
            assertEquals(l, Integer.parseInt(f[0]));
            int center = Integer.parseInt(f[1]);
            assertEquals(l, labels[center], "center " + center + " belongs to cluster " + l);
            total += Integer.parseInt(f[2]);
            assertTrue(Double.parseDouble(f[3]) > 0);
        }
        assertEquals(N, total);

        String summary = Files.readString(out.resolve("summary.json"));
        assertEquals(4, intField(summary, "clusters"));
        assertEquals(N, intField(summary, "points"));
        assertTrue(intField(summary, "em_iterations") > 10);
        assertTrue(summary.contains("\"sizes\": [100, 100, 100, 100]"), summary);
        assertTrue(summary.matches("(?s).*\"final_temperature\": [0-9.e-]+,.*"), summary);
        assertTrue(summary.matches("(?s).*\"seconds\": [0-9.e-]+,.*"), summary);
    }

    @Test
    void dapwcModeFindsTheBlobsAndSaysSoInTheSummary() throws Exception {
        Path out = dir.resolve("dapwc");
        Outcome r = MdsCommandTest.main("pwc", "--distances", matrix.toString(), "--n", "" + N, "--out", out.toString(),
                "--max-clusters", "4", "--dapwc");
        assertEquals(0, r.status(), r.err());
        assertTrue(r.err().contains("split-test=duplicated split-start=after-test"), r.err());
        assertEquals(1.0, ari(out, data.resolve("labels.tsv"), N), 1e-12);
        String summary = Files.readString(out.resolve("summary.json"));
        assertTrue(intField(summary, "duplicate_em_iterations") > 0, summary);
        assertTrue(summary.contains("split-start=after-test"), summary);
    }

    @Test
    void sameSeedSameFilesAndBigEndianInputReadsTheSame() throws Exception {
        Path a = dir.resolve("seed-a");
        Path b = dir.resolve("seed-b");
        for (Path out : List.of(a, b)) {
            Outcome r = MdsCommandTest.main("pwc", "--distances", matrix.toString(), "--n", "" + N, "--out",
                    out.toString(), "--seed", "77", "--quiet");
            assertEquals(0, r.status(), r.err());
            assertEquals("", r.err(), "--quiet prints nothing on stderr");
        }
        assertEquals(Files.readString(a.resolve("clusters.tsv")), Files.readString(b.resolve("clusters.tsv")));
        assertEquals(Files.readString(a.resolve("centers.tsv")), Files.readString(b.resolve("centers.tsv")));

        Path bigData = dir.resolve("big");
        Outcome gen = MdsCommandTest.main("gen", "--kind", "blobs", "--n", "" + N, "--dim", "6", "--centers", "4",
                "--std", "1", "--seed", "11", "--big-endian", "--out", bigData.toString());
        assertEquals(0, gen.status(), gen.err());
        Path c = dir.resolve("seed-big");
        Outcome r = MdsCommandTest.main("pwc", "--distances", bigData.resolve("distances.bin").toString(), "--n", "" + N,
                "--out", c.toString(), "--seed", "77", "--quiet", "--big-endian");
        assertEquals(0, r.status(), r.err());
        assertEquals(Files.readString(a.resolve("clusters.tsv")), Files.readString(c.resolve("clusters.tsv")));
        assertFalse(ByteOrder.nativeOrder() == null);
    }

    @Test
    void badInputIsOneLineAndExitStatusTwo() throws Exception {
        Path out = dir.resolve("bad");
        Path notADir = Files.writeString(dir.resolve("file.txt"), "x");
        String m = matrix.toString();
        String[][] cases = {
                {"pwc", "--n", "" + N, "--out", out.toString()},
                {"pwc", "--distances", dir.resolve("nope.bin").toString(), "--n", "" + N, "--out", out.toString()},
                {"pwc", "--distances", m, "--n", "" + (N + 1), "--out", out.toString()},
                {"pwc", "--distances", m, "--n", "abc", "--out", out.toString()},
                {"pwc", "--distances", m, "--n", "1", "--out", out.toString()},
                {"pwc", "--distances", m, "--n", "" + N, "--out", out.toString(), "--max-clusters", "0"},
                {"pwc", "--distances", m, "--n", "" + N, "--out", out.toString(), "--max-clusters", "-3"},
                {"pwc", "--distances", m, "--n", "" + N, "--out", out.toString(), "--max-clusters", "" + (N + 1)},
                {"pwc", "--distances", m, "--n", "" + N, "--out", out.toString(), "--initial-cooling", "1.5"},
                // at 1 the temperature never falls: the run never ended
                {"pwc", "--distances", m, "--n", "" + N, "--out", out.toString(), "--initial-cooling", "1"},
                {"pwc", "--distances", m, "--n", "" + N, "--out", out.toString(), "--freeze-cooling", "1"},
                {"pwc", "--distances", m, "--n", "" + N, "--out", out.toString(), "--seed", "x"},
                {"pwc", "--distances", m, "--n", "" + N, "--out", out.toString(), "--clusters", "3"},
                {"pwc", "--distances", m, "--n", "" + N, "--out", notADir.toString()},
                {"pwc", "--distances", dir.toString(), "--n", "" + N, "--out", out.toString()},
                {"pwc", "--distances", m, "--n", "" + N, "--out", out.toString(), "extra"},
                {"pwc", "--distances", m, "--n", "" + N, "--out", out.toString(), "--dapwc", "--seed", "1"},
                {"pwc", "--distances", m, "--n", "" + N, "--out", out.toString(), "--dapwc", "--split-test", "halved"},
                {"pwc", "--distances", m, "--n", "" + N, "--out", out.toString(), "--negative-dominant", "first"},
        };
        String[] expected = {"--distances", "does not exist", "2*N*N", "--n", "--n", "--max-clusters", "--max-clusters",
                "--max-clusters", "--initial-cooling", "--initial-cooling must be > 0.0 and < 1.0",
                "--freeze-cooling must be > 0.0 and < 1.0", "--seed", "--clusters", "not a directory", "not a regular file",
                "extra", "--seed cannot be given with --dapwc", "--split-test cannot be given with --dapwc",
                "--negative-dominant must be one of split-last|skip|split-first"};
        for (int i = 0; i < cases.length; i++) {
            Outcome r = MdsCommandTest.main(cases[i]);
            assertEquals(2, r.status(), "case " + i + ": " + String.join(" ", cases[i]) + " -> " + r.err());
            String err = MdsCommandTest.firstLine(r.err());
            List<String> lines = r.err().strip().lines().toList();
            assertTrue(lines.size() == 1 || lines.size() == 2 && lines.get(1).startsWith("usage: ./meridian pwc "),
                    "one line, then the usage line, for case " + i + ": " + r.err());
            assertTrue(err.startsWith("meridian pwc: "), err);
            assertTrue(err.contains(expected[i]), "case " + i + " says what is wrong: " + err);
        }
        assertFalse(Files.exists(out.resolve("clusters.tsv")));
    }

    static int intField(String json, String name) {
        Matcher m = Pattern.compile("\"" + name + "\": (\\d+)").matcher(json);
        assertTrue(m.find(), name + " in " + json);
        return Integer.parseInt(m.group(1));
    }
}
