package io.meridian.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.meridian.cli.Cli.Case;
import io.meridian.cli.Cli.Outcome;
import io.meridian.cli.view.MapFiles;
import io.meridian.live.SnapshotWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code ./meridian align} as a user meets it: a map moved by a known rotation or reflection, scale and shift comes
 * back onto its reference to 1e-9 through the files (points.tsv read and written at full precision), with the
 * transform and residuals written beside it; bad input is one line, exit 2, naming the option, the file and the line,
 * and leaves nothing behind.
 */
class AlignCommandTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final double EXACT = 1e-9;

    @TempDir
    Path dir;

    /** A random rotation by Rodrigues' formula, times diag(1, 1, -1) when reflecting; row-major. */
    static double[] orthogonal(Random random, boolean reflect) {
        double[] axis = {random.nextGaussian(), random.nextGaussian(), random.nextGaussian()};
        double norm = Math.sqrt(axis[0] * axis[0] + axis[1] * axis[1] + axis[2] * axis[2]);
        double x = axis[0] / norm;
        double y = axis[1] / norm;
        double z = axis[2] / norm;
        double angle = Math.PI * (2 * random.nextDouble() - 1);
        double c = Math.cos(angle);
        double s = Math.sin(angle);
        double t = 1 - c;
        double f = reflect ? -1 : 1;
        return new double[] {
            t * x * x + c, t * x * y - s * z, f * (t * x * z + s * y),
            t * x * y + s * z, t * y * y + c, f * (t * y * z - s * x),
            t * x * z - s * y, t * y * z + s * x, f * (t * z * z + c),
        };
    }

    /** The map y with s R y + t = x. */
    static double[] inverseImage(double[] x, double s, double[] r, double[] t) {
        double[] y = new double[x.length];
        for (int o = 0; o < x.length; o += 3) {
            for (int b = 0; b < 3; b++) {
                double sum = 0;
                for (int a = 0; a < 3; a++) {
                    sum += r[a * 3 + b] * (x[o + a] - t[a]);
                }
                y[o + b] = sum / s;
            }
        }
        return y;
    }

    static double[] randomMap(int n, Random random) {
        double[] x = new double[3 * n];
        for (int i = 0; i < x.length; i++) {
            x[i] = 10 * random.nextDouble() - 5;
        }
        return x;
    }

    /** Writes a points.tsv as {@code ./meridian mds} does (Double.toString), lines in a shuffled id order. */
    private Path writeMap(String name, double[] xyz, Random random) throws Exception {
        return writeMap(dir, name, xyz, random);
    }

    static Path writeMap(Path dir, String name, double[] xyz, Random random) throws Exception {
        int n = xyz.length / 3;
        Integer[] order = new Integer[n];
        for (int i = 0; i < n; i++) {
            order[i] = i;
        }
        Collections.shuffle(Arrays.asList(order), random);
        StringBuilder text = new StringBuilder();
        for (int i : order) {
            text.append(i).append('\t').append(xyz[3 * i]).append('\t').append(xyz[3 * i + 1]).append('\t')
                    .append(xyz[3 * i + 2]).append('\n');
        }
        Path d = dir.resolve(name);
        Files.createDirectories(d);
        Files.writeString(d.resolve("points.tsv"), text, StandardCharsets.UTF_8);
        return d;
    }

    @Test
    void recoversAKnownReflectionScaleAndShiftThroughTheFiles() throws Exception {
        Random random = new Random(7);
        double[] x = randomMap(500, random);
        double[] r = orthogonal(random, true);
        double s = 0.37;
        double[] t = {12.5, -3.25, 0.125};
        Path reference = writeMap("reference", x, random);
        Path map = writeMap("map", inverseImage(x, s, r, t), random);
        Path out = dir.resolve("aligned");
        Outcome o = Cli.run("align", "--reference", reference.toString(), "--map", map.toString(), "--out",
                out.toString());
        assertEquals(0, o.status(), o.err());
        assertEquals(1, o.out().strip().lines().count(), "one line: " + o.out());
        assertTrue(o.out().startsWith("align: 500 points, scale 0.37") && o.out().contains("reflection"), o.out());
        JsonNode transform = JSON.readTree(out.resolve("transform.json").toFile());
        assertEquals(s, transform.get("scale").asDouble(), EXACT);
        for (int a = 0; a < 3; a++) {
            assertEquals(t[a], transform.get("translation").get(a).asDouble(), EXACT);
            for (int b = 0; b < 3; b++) {
                assertEquals(r[3 * a + b], transform.get("rotation").get(a).get(b).asDouble(), EXACT);
            }
        }
        assertTrue(transform.get("reflection").asBoolean());
        assertTrue(transform.get("rmsResidual").asDouble() < EXACT);
        double[] moved = MapFiles.readCoordinates(out.resolve("points.tsv"));
        for (int k = 0; k < x.length; k++) {
            assertEquals(x[k], moved[k], EXACT);
        }
        List<String> residuals = Files.readAllLines(out.resolve("residuals.tsv"));
        assertEquals(500, residuals.size());
        for (int i = 0; i < 500; i++) {
            String[] f = residuals.get(i).split("\t");
            assertEquals(i, Integer.parseInt(f[0]));
            assertTrue(Double.parseDouble(f[1]) < EXACT, residuals.get(i));
        }

        // --rotation-only: the best proper rotation of a mirror image, a larger residual; an earlier run is kept
        // unless --force
        Outcome again = Cli.run("align", "--reference", reference.toString(), "--map", map.toString(), "--out",
                out.toString(), "--rotation-only");
        Cli.check(Case.refused("results", "--says", "--out", "already holds results", "--force"), again,
                "meridian align", "usage: ./meridian align");
        Outcome proper = Cli.run("align", "--reference", reference.toString(), "--map", map.toString(), "--out",
                out.toString(), "--rotation-only", "--force");
        assertEquals(0, proper.status(), proper.err());
        JsonNode properTransform = JSON.readTree(out.resolve("transform.json").toFile());
        assertFalse(properTransform.get("reflection").asBoolean());
        assertTrue(properTransform.get("rmsResidual").asDouble() > 1, properTransform.toString());
        assertTrue(properTransform.get("options").get("rotationOnly").asBoolean());
    }

    @Test
    void weightsAndRelativeErrorsRecoverAnExactTransformToo() throws Exception {
        Random random = new Random(8);
        double[] x = randomMap(40, random);
        double[] r = orthogonal(random, false);
        double[] t = {1, 2, 3};
        Path reference = writeMap("reference", x, random);
        Path map = writeMap("map", inverseImage(x, 2.5, r, t), random);
        StringBuilder weights = new StringBuilder();
        for (int i = 0; i < 40; i++) {
            weights.append(i % 5 == 0 ? 0 : random.nextDouble()).append('\n');
        }
        Path w = Files.writeString(dir.resolve("weights.txt"), weights);
        Path out = dir.resolve("out");
        Outcome o = Cli.run("align", "--reference", reference.toString(), "--map", map.toString(), "--out",
                out.toString(), "--weights", w.toString(), "--relative", "--min-distance", "0.5");
        assertEquals(0, o.status(), o.err());
        JsonNode transform = JSON.readTree(out.resolve("transform.json").toFile());
        assertEquals(32, transform.get("points").asInt(), "points of weight 0 take no part");
        assertEquals(2.5, transform.get("scale").asDouble(), EXACT);
        for (int k = 0; k < 9; k++) {
            assertEquals(r[k], transform.get("rotation").get(k / 3).get(k % 3).asDouble(), EXACT);
        }
        double[] moved = MapFiles.readCoordinates(out.resolve("points.tsv"));
        for (int k = 0; k < x.length; k++) {
            assertEquals(x[k], moved[k], EXACT, "every point moved, weight 0 too");
        }
    }

    @Test
    void aLiveMapSnapshotDirectoryIsItsCurrentFrame() throws Exception {
        Random random = new Random(10);
        double[] x = randomMap(60, random);
        double[] r = orthogonal(random, false);
        double[] t = {-4, 0.5, 2};
        Path reference = writeMap("batch", x, random);
        // frame 1: another map; frame 2, the current one: the batch map turned, shrunk and shifted
        Path snapshots = dir.resolve("snapshots");
        SnapshotWriter writer = new SnapshotWriter(snapshots, "align-test");
        writer.onFrame(ViewCommandTest.frame(1, randomMap(60, random), new int[60], 60));
        writer.onFrame(ViewCommandTest.frame(2, inverseImage(x, 0.8, r, t), new int[60], 0));
        Path out = dir.resolve("live-vs-batch");
        Outcome o = Cli.run("align", "--reference", reference.toString(), "--map", snapshots.toString(), "--out",
                out.toString());
        assertEquals(0, o.status(), o.err());
        assertTrue(o.out().startsWith("align: 60 points, scale 0.8"), o.out());
        JsonNode transform = JSON.readTree(out.resolve("transform.json").toFile());
        assertTrue(transform.get("map").asText().endsWith("frame-000000002/points.tsv"), transform.toString());
        assertEquals(0.8, transform.get("scale").asDouble(), EXACT);
        assertTrue(transform.get("rmsResidual").asDouble() < EXACT);
        double[] moved = MapFiles.readCoordinates(out.resolve("points.tsv"));
        for (int k = 0; k < x.length; k++) {
            assertEquals(x[k], moved[k], EXACT);
        }

        // a snapshot directory before its first frame, or a directory that is neither: one line
        Path early = Files.createDirectories(dir.resolve("early").resolve("frame-000000001")).getParent();
        Path other = Files.createDirectories(dir.resolve("other"));
        for (Case c : List.of(
                Case.badInput("no frame yet", "--reference", reference.toString(), "--map", early.toString(),
                        "--out", out.resolve("x").toString(), "--says", "--map", early.toString(), "no frame yet"),
                Case.badInput("no points.tsv", "--reference", other.toString(), "--map", snapshots.toString(),
                        "--out", out.resolve("x").toString(), "--says", "--reference", "holds no points.tsv"))) {
            String[] argv = new String[c.args().size() + 1];
            argv[0] = "align";
            for (int i = 0; i < c.args().size(); i++) {
                argv[i + 1] = c.args().get(i);
            }
            Cli.check(c, Cli.run(argv), "meridian align", "usage: ./meridian align");
        }
    }

    @Test
    void badInputIsOneLineNamingTheOptionFileAndLineAndLeavesNothingBehind() throws Exception {
        Random random = new Random(9);
        Path ten = writeMap("ten", randomMap(10, random), random);
        Path nine = writeMap("nine", randomMap(9, random), random);
        Path three = writeMap("three", randomMap(3, random), random);
        Path two = writeMap("two", randomMap(2, random), random);
        Path nan = dir.resolve("nan.tsv");
        Files.writeString(nan, "0\t1\t2\t3\n1\t4\t5\t6\n2\tNaN\t1\t1\n3\t0\t0\t1\n");
        Path out = dir.resolve("out");
        String a = ten.toString();
        String o = out.toString();
        List<Case> cases = List.of(
                Case.badInput("missing reference", "--reference", dir.resolve("none").toString(), "--map", a,
                        "--out", o, "--says", "--reference", "none", "does not exist"),
                Case.badInput("missing map", "--reference", a, "--map", dir.resolve("nothing.tsv").toString(),
                        "--out", o, "--says", "--map", "nothing.tsv", "does not exist"),
                Case.badInput("map lacks an id", "--reference", a, "--map", nine.toString(), "--out", o,
                        "--says", "--map", nine.resolve("points.tsv").toString(), "no id 9"),
                Case.badInput("reference lacks an id", "--reference", nine.toString(), "--map", a, "--out", o,
                        "--says", "--reference", "no id 9"),
                Case.badInput("too few for a fit that may reflect", "--reference", three.toString(), "--map",
                        three.toString(), "--out", o, "--says", "--map", "3 points", "at least 4"),
                Case.badInput("too few for a rotation", "--reference", two.toString(), "--map", two.toString(),
                        "--out", o, "--rotation-only", "--says", "--map", "2 points", "at least 3"),
                Case.badInput("non-finite coordinate", "--reference", nan.toString(), "--map", nan.toString(),
                        "--out", o, "--says", "--reference", "nan.tsv line 3", "not finite"),
                Case.refused("min-distance alone", "--reference", a, "--map", a, "--out", o, "--min-distance", "1",
                        "--says", "--min-distance", "--relative"),
                Case.refused("no out", "--reference", a, "--map", a, "--says", "--out", "required"));
        for (Case c : cases) {
            String[] argv = new String[c.args().size() + 1];
            argv[0] = "align";
            for (int i = 0; i < c.args().size(); i++) {
                argv[i + 1] = c.args().get(i);
            }
            Cli.check(c, Cli.run(argv), "meridian align", "usage: ./meridian align");
            assertFalse(Files.exists(out), c + ": nothing left behind");
        }
    }
}
