package io.meridian.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.meridian.cli.Cli.Case;
import io.meridian.cli.Cli.Outcome;
import io.meridian.davs.DavsEngine;
import io.meridian.davs.DavsResult;
import io.meridian.davs.DavsSettings;
import io.meridian.davs.VectorsFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code ./meridian gen --kind peaks} and {@code ./meridian davs} as a user meets them: davs finds the generated peaks
 * and puts the background in the sponge (checked against the generator's labels, through the files); gen is
 * deterministic from its seed; bad files and options are refused in one line naming the option, file and line.
 */
class DavsCommandTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;

    private Path gen(String name, String... more) {
        Path out = dir.resolve(name);
        String[] args = new String[7 + more.length];
        System.arraycopy(new String[] {"gen", "--kind", "peaks", "--n", "2000", "--out", out.toString()}, 0, args, 0,
                7);
        System.arraycopy(more, 0, args, 7, more.length);
        Outcome r = Cli.run(args);
        assertEquals(0, r.status(), r.err());
        return out;
    }

    @Test
    void davsFindsThePeaksAndPutsTheBackgroundInTheSponge() throws Exception {
        Path data = gen("peaks", "--peaks", "12", "--background", "0.15", "--seed", "4");
        Path out = dir.resolve("davs");
        Outcome r = Cli.run("davs", "--vectors", data.resolve("vectors.tsv").toString(), "--out", out.toString(),
                "--sigma-method", "2", "--sigma", "0.000598,2.35", "--truth", data.resolve("labels.tsv").toString());
        assertEquals(0, r.status(), r.err());
        System.out.print(r.out());
        JsonNode summary = JSON.readTree(out.resolve("summary.json").toFile());
        assertEquals(12, summary.get("clusters").asInt());
        assertTrue(summary.at("/truth/peakAri").asDouble() >= 0.95, summary.toString());
        assertTrue(summary.at("/truth/backgroundRecall").asDouble() >= 0.8, summary.toString());
        List<String> labels = Files.readAllLines(out.resolve("labels.tsv"));
        assertEquals(2000, labels.size());
        List<String> centers = Files.readAllLines(out.resolve("centers.tsv"));
        assertEquals(13, centers.size(), "header + one row a cluster");
        assertTrue(centers.get(0).startsWith("label\tcenter1\tcenter2\tsigma1\tsigma2\twidth1\twidth2\tweight"));
        int sponge = 0;
        for (String line : labels) {
            sponge += line.endsWith("\t0") ? 1 : 0;
        }
        assertEquals(summary.at("/sponge/points").asInt(), sponge);
    }

    /** --original is the engine's original schedule (DavsReferenceRunsTest checks that against the original). */
    @Test
    void davsOriginalRunsTheOriginalSchedule() throws Exception {
        Path data = gen("peaks", "--peaks", "12", "--background", "0.15", "--seed", "4");
        Path out = dir.resolve("davs");
        Outcome r = Cli.run("davs", "--vectors", data.resolve("vectors.tsv").toString(), "--out", out.toString(),
                "--original", "--truth", data.resolve("labels.tsv").toString());
        assertEquals(0, r.status(), r.err());
        System.out.print(r.out());
        VectorsFile.Vectors v = VectorsFile.read(data.resolve("vectors.tsv"));
        DavsResult expected = DavsEngine.run(v.xRowMajor(), v.n(), v.d(), DavsSettings.original());
        assertArrayEquals(expected.labels(), VectorsFile.readLabels(out.resolve("labels.tsv"), v.n()));
        JsonNode summary = JSON.readTree(out.resolve("summary.json").toFile());
        assertTrue(summary.at("/settings/originalSchedule").asBoolean(), summary.toString());
        assertEquals(12, summary.get("clusters").asInt());
        assertTrue(summary.at("/truth/backgroundRecall").asDouble() >= 0.9, summary.toString());
        Cli.check(Case.refused("original with sigma method 3", "--vectors", data.resolve("vectors.tsv").toString(),
                "--out", dir.resolve("o").toString(), "--original", "--sigma-method", "3",
                "--says", "--original", "--sigma-method 3"), Cli.run("davs", "--vectors",
                data.resolve("vectors.tsv").toString(), "--out", dir.resolve("o").toString(), "--original",
                "--sigma-method", "3"), "meridian davs", "usage: ./meridian davs");
    }

    @Test
    void genPeaksIsDeterministicFromItsSeed() throws Exception {
        Path a = gen("a", "--seed", "3");
        Path b = gen("b", "--seed", "3");
        Path c = gen("c", "--seed", "5");
        for (String file : List.of("vectors.tsv", "labels.tsv", "peaks.tsv")) {
            assertArrayEquals(Files.readAllBytes(a.resolve(file)), Files.readAllBytes(b.resolve(file)), file);
        }
        assertFalse(Files.readString(a.resolve("vectors.tsv")).equals(Files.readString(c.resolve("vectors.tsv"))));
        assertEquals(20, Files.readAllLines(a.resolve("peaks.tsv")).size());
        assertTrue(Files.readString(a.resolve("dataset.json")).contains("--sigma-method 2"));
    }

    @Test
    void badInputIsRefusedInOneLine() throws Exception {
        Path good = gen("good", "--peaks", "3").resolve("vectors.tsv");
        Path ragged = dir.resolve("ragged.tsv");
        Files.writeString(ragged, "0\t500\t10\n1\t501\t11\n2\t502\n", StandardCharsets.UTF_8);
        Path word = dir.resolve("word.tsv");
        Files.writeString(word, "0\t500\t10\n1\tabc\t11\n", StandardCharsets.UTF_8);
        Path ids = dir.resolve("ids.tsv");
        Files.writeString(ids, "0\t500\t10\n2\t501\t11\n", StandardCharsets.UTF_8);
        Path negative = dir.resolve("negative.tsv");
        Files.writeString(negative, "0\t500\t10\n1\t-3\t11\n", StandardCharsets.UTF_8);
        Path shortTruth = dir.resolve("truth.tsv");
        Files.writeString(shortTruth, "0\t1\n", StandardCharsets.UTF_8);
        String o = dir.resolve("o").toString();
        String g = good.toString();
        List<Case> cases = List.of(
                Case.badInput("missing file", "--vectors", dir.resolve("none.tsv").toString(), "--out", o,
                        "--says", "--vectors", "none.tsv", "does not exist"),
                Case.badInput("ragged line", "--vectors", ragged.toString(), "--out", o,
                        "--says", "--vectors", "ragged.tsv line 3", "has 1 values"),
                Case.badInput("not a number", "--vectors", word.toString(), "--out", o,
                        "--says", "--vectors", "word.tsv line 2", "'abc' is not a number"),
                Case.badInput("ids out of order", "--vectors", ids.toString(), "--out", o,
                        "--says", "--vectors", "ids.tsv line 2", "expected 1"),
                Case.badInput("m/z not positive", "--vectors", negative.toString(), "--out", o,
                        "--says", "--vectors", "negative.tsv", "point 1", "not > 0"),
                Case.badInput("short truth", "--vectors", g, "--out", o, "--truth", shortTruth.toString(),
                        "--says", "--truth", "1 labels for 2000 points"),
                Case.refused("no vectors", "--out", o, "--says", "--vectors", "required"),
                Case.refused("sponge factor", "--vectors", g, "--out", o, "--sponge-factor", "-1",
                        "--says", "--sponge-factor", ">= 0"),
                Case.refused("sigma method", "--vectors", g, "--out", o, "--sigma-method", "7",
                        "--says", "--sigma-method", "0, 1, 2 or 3"),
                Case.refused("sigma list", "--vectors", g, "--out", o, "--sigma", "0.001,x",
                        "--says", "--sigma", "numbers separated by commas"),
                Case.refused("cooling", "--vectors", g, "--out", o, "--cooling", "1.2", "--says", "--cooling",
                        "(0, 1)"));
        for (Case c : cases) {
            String[] argv = new String[c.args().size() + 1];
            argv[0] = "davs";
            for (int i = 0; i < c.args().size(); i++) {
                argv[i + 1] = c.args().get(i);
            }
            Cli.check(c, Cli.run(argv), "meridian davs", "usage: ./meridian davs");
        }
        assertFalse(Files.exists(dir.resolve("o")), "a refused run leaves nothing behind");
        Cli.check(Case.refused("peaks option elsewhere", "--says", "--peaks", "--kind peaks"),
                Cli.run("gen", "--kind", "blobs", "--n", "10", "--out", o, "--peaks", "3"), "meridian gen",
                "usage: ./meridian gen");
        Cli.check(Case.refused("too many peaks", "--says", "--peaks", "cannot be placed"),
                Cli.run("gen", "--kind", "peaks", "--n", "5000", "--out", o, "--peaks", "2000", "--background",
                        "0"), "meridian gen",
                "usage: ./meridian gen");
    }
}
