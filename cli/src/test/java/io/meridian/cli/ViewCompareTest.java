package io.meridian.cli;

import static io.meridian.cli.AlignCommandTest.inverseImage;
import static io.meridian.cli.AlignCommandTest.orthogonal;
import static io.meridian.cli.AlignCommandTest.randomMap;
import static io.meridian.cli.AlignCommandTest.writeMap;
import static io.meridian.cli.ViewCommandTest.get;
import static io.meridian.cli.ViewCommandTest.quiet;
import static io.meridian.cli.ViewCommandTest.refused;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.meridian.cli.Cli.Outcome;
import io.meridian.cli.ViewCommandTest.Decoded;
import io.meridian.cli.view.MapFiles;
import io.meridian.live.SnapshotWriter;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code ./meridian view --compare A B}: B, made from A by a known reflection, scale and shift, is served laid back
 * over A (both maps' coordinates in the page's frame, checked against the transform), with one segment per shared
 * id, the legend's residual RMS and largest displacements those of the positions drawn, ids in one map only noted; a
 * map already aligned is shown as given; a live map's snapshot directory is its current frame; bad input is one line.
 * The page in a real browser is {@link ViewerIT}'s.
 */
class ViewCompareTest {
    static final double EXACT = 1e-9;

    @TempDir
    Path dir;

    /** Runs {@code view} with {@code args} and {@code --port 0}; the page's frame and what was printed. */
    record Served(Decoded frame, String out) {
        JsonNode compare() {
            return frame.meta().get("compare");
        }
    }

    static Served serve(String... args) throws Exception {
        String[] argv = Arrays.copyOf(args, args.length + 2);
        argv[args.length] = "--port";
        argv[args.length + 1] = "0";
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (ViewCommand.Viewer viewer = ViewCommand.open(argv, new PrintStream(out, true, StandardCharsets.UTF_8),
                quiet())) {
            Decoded f = Decoded.of(get(viewer.server().uri().resolve("api/frame")).body());
            return new Served(f, out.toString(StandardCharsets.UTF_8));
        }
    }

    /** B's point {@code id} as the page draws it. */
    static double[] drawnB(Decoded f, int id) {
        int o = 3 * (f.meta().get("compare").get("referenceN").asInt() + id);
        return new double[] {f.xyz()[o], f.xyz()[o + 1], f.xyz()[o + 2]};
    }

    static void assertFloat(double expected, double actual, String what) {
        assertEquals(expected, actual, 1e-5 * (1 + Math.abs(expected)), what);
    }

    @Test
    void laysBOverAByTheKnownTransformAndServesBothMapsWithSegmentsAndTheResidual() throws Exception {
        Random random = new Random(11);
        int n = 200;
        int extra = 30;
        double[] x = randomMap(n, random);
        double[] r = orthogonal(random, true);
        double s = 2.5;
        double[] t = {3, -1, 0.5};
        // B: A turned with a reflection, scaled and shifted, and 30 ids more (where the fit must put them too)
        double[] whereB = Arrays.copyOf(x, 3 * (n + extra));
        System.arraycopy(randomMap(extra, random), 0, whereB, 3 * n, 3 * extra);
        Path a = writeMap(dir, "a", x, random);
        Path b = writeMap(dir, "b", inverseImage(whereB, s, r, t), random);

        Served served = serve("--compare", a.toString(), b.toString());
        Decoded f = served.frame();
        JsonNode c = served.compare();
        assertEquals("compare", f.meta().get("mode").asText());
        assertEquals(n + n + extra, f.meta().get("n").asInt(), "A's points, then B's");
        assertEquals(n, c.get("referenceN").asInt());
        assertEquals(n + extra, c.get("mapN").asInt());
        assertEquals(n, c.get("shared").asInt(), "a segment for each of ids 0..199");
        assertTrue(c.get("moved").asBoolean());
        assertEquals(s, c.get("scale").asDouble(), EXACT);
        assertTrue(c.get("reflection").asBoolean());
        for (int k = 0; k < 9; k++) {
            assertEquals(r[k], c.get("rotation").get(k).asDouble(), EXACT);
        }
        for (int k = 0; k < 3; k++) {
            assertEquals(t[k], c.get("translation").get(k).asDouble(), EXACT);
        }
        assertTrue(c.get("rmsResidual").asDouble() < EXACT, c.toString());
        for (int k = 0; k < 3 * n; k++) {
            assertEquals((float) x[k], f.xyz()[k], "A drawn as given");
        }
        for (int id = 0; id < n + extra; id++) {
            double[] p = drawnB(f, id);
            for (int k = 0; k < 3; k++) {
                assertFloat(whereB[3 * id + k], p[k], "B's id " + id + " drawn at s R y + t");
            }
        }
        for (int i = 0; i < f.labels().length; i++) {
            assertEquals(i < n ? 0 : 1, f.labels()[i], "point " + i + ": A's colour, then B's");
        }
        assertEquals("30 ids only in B (ids 200..229), drawn without a segment and not fitted",
                c.get("note").asText());
        List<String> lines = served.out().strip().lines().toList();
        assertEquals(3, lines.size(), served.out());
        assertTrue(lines.get(1).startsWith("meridian view: B moved onto A by s R y + t: scale 2.50000, reflection,"
                + " residual rms ") && lines.get(1).contains("over 200 shared ids; 30 ids only in B"), lines.get(1));
    }

    @Test
    void theLegendsResidualAndLargestDisplacementsAreThoseOfThePositionsDrawn() throws Exception {
        Random random = new Random(12);
        int n = 150;
        double[] x = randomMap(n, random);
        double[] r = orthogonal(random, false);
        // B's points of ids 7, 42 and 3 are off their place in A by 1, 0.6 and 0.3 before the transform
        double[] off = x.clone();
        off[3 * 7] += 1;
        off[3 * 42 + 1] -= 0.6;
        off[3 * 3 + 2] += 0.3;
        Path a = writeMap(dir, "a", x, random);
        Path b = writeMap(dir, "b", inverseImage(off, 1.3, r, new double[] {1, 2, 3}), random);

        Served served = serve("--compare", a.toString(), b.toString());
        Decoded f = served.frame();
        JsonNode c = served.compare();
        double[] apart = new double[n];
        double sum = 0;
        for (int id = 0; id < n; id++) {
            double[] p = drawnB(f, id);
            apart[id] = Math.sqrt(Math.pow(p[0] - f.xyz()[3 * id], 2) + Math.pow(p[1] - f.xyz()[3 * id + 1], 2)
                    + Math.pow(p[2] - f.xyz()[3 * id + 2], 2));
            sum += apart[id] * apart[id];
        }
        double rms = Math.sqrt(sum / n);
        assertTrue(rms > 0.05, "the three points moved: rms " + rms);
        assertFloat(rms, c.get("rmsResidual").asDouble(), "the legend's residual RMS, of the segments drawn");
        JsonNode largest = c.get("largest");
        assertEquals(5, largest.size());
        int[] ids = new int[3];
        for (int k = 0; k < 3; k++) {
            ids[k] = largest.get(k).get(0).asInt();
            assertFloat(apart[ids[k]], largest.get(k).get(1).asDouble(), "displacement of id " + ids[k]);
        }
        assertEquals("[7, 42, 3]", Arrays.toString(ids), "largest first");
        assertTrue(largest.get(3).get(1).asDouble() < 0.3, "the other points moved little");
        assertEquals("", c.get("note").asText(), "the same ids in both maps");
        assertFalse(served.out().contains("only in"), served.out());
    }

    @Test
    void anAlignedMapIsShownAsGivenAndASnapshotDirectoryIsItsCurrentFrame() throws Exception {
        Random random = new Random(13);
        int n = 80;
        double[] x = randomMap(n, random);
        double[] r = orthogonal(random, false);
        double[] t = {0, 5, -5};
        double[] y = inverseImage(x, 0.5, r, t);
        Path a = writeMap(dir, "a", x, random);
        Path b = writeMap(dir, "b", y, random);
        Path aligned = dir.resolve("aligned");
        Outcome o = Cli.run("align", "--reference", a.toString(), "--map", b.toString(), "--out", aligned.toString());
        assertEquals(0, o.status(), o.err());

        Served served = serve("--compare", a.toString(), aligned.toString());
        assertFalse(served.compare().get("moved").asBoolean(), served.compare().toString());
        assertTrue(served.out().contains("meridian view: B already aligned to A"), served.out());
        double[] given = MapFiles.readCoordinates(aligned.resolve("points.tsv"));
        for (int id = 0; id < n; id++) {
            double[] p = drawnB(served.frame(), id);
            for (int k = 0; k < 3; k++) {
                assertEquals((float) given[3 * id + k], (float) p[k], "B drawn as given");
            }
        }

        // a live map's snapshot directory as B (or A): its current frame, frame 2, not frame 1
        Path snapshots = dir.resolve("snapshots");
        SnapshotWriter writer = new SnapshotWriter(snapshots, "compare-test");
        writer.onFrame(ViewCommandTest.frame(1, randomMap(n, random), new int[n], n));
        writer.onFrame(ViewCommandTest.frame(2, y, new int[n], 0));
        served = serve("--compare", a.toString(), snapshots.toString());
        JsonNode c = served.compare();
        assertTrue(c.get("map").asText().endsWith("snapshots/frame-000000002/points.tsv"), c.toString());
        assertEquals(0.5, c.get("scale").asDouble(), EXACT);
        assertTrue(c.get("rmsResidual").asDouble() < EXACT);
        served = serve("--compare", snapshots.toString(), a.toString());
        assertEquals(2, served.compare().get("scale").asDouble(), EXACT, "A the live map, B the batch one");
    }

    @Test
    void badInputIsOneLine() throws Exception {
        Random random = new Random(14);
        String a = writeMap(dir, "a", randomMap(10, random), random).toString();
        String three = writeMap(dir, "three", randomMap(3, random), random).toString();
        Path flat = dir.resolve("line.tsv");
        Files.writeString(flat, "0\t0\t0\t0\n1\t1\t1\t1\n2\t2\t2\t2\n3\t3\t3\t3\n4\t4\t4\t4\n");
        Path bad = dir.resolve("bad.tsv");
        Files.writeString(bad, "0\t1\t2\t3\n1\t4\tx\t6\n");
        Path empty = Files.createDirectories(dir.resolve("empty"));
        Path early = Files.createDirectories(dir.resolve("early").resolve("frame-000000001")).getParent();

        assertTrue(refused("view", "--compare", a).err().contains("--compare takes two maps, A and B, got 1"));
        assertTrue(refused("view", "--compare", a, a, a).err().contains("got 3 arguments"));
        assertTrue(refused("view", "--compare", "--live", a, a).err().contains("takes no --live"));
        assertTrue(refused("view", "--compare", a, a, "--config", "x.yaml").err().contains("takes no --config"));
        assertTrue(refused("view", "--compare", a, dir.resolve("nowhere").toString()).err()
                .contains(dir.resolve("nowhere") + " does not exist"));
        assertTrue(refused("view", "--compare", empty.toString(), a).err().contains(empty + ": holds no points.tsv"));
        assertTrue(refused("view", "--compare", a, early.toString()).err().contains(early + ": a live map snapshot"
                + " directory with no frame yet"));
        assertTrue(refused("view", "--compare", a, bad.toString()).err()
                .contains(bad + " line 2: coordinate 'x' is not a number"));
        MdsCommandTest.Outcome r = refused("view", "--compare", three, three);
        assertTrue(r.err().contains("cannot lay B over A: 3 points: a fit that may reflect needs at least 4"),
                r.err());
        assertTrue(refused("view", "--compare", a, flat.toString()).err().contains("collinear"));

        Outcome help = Cli.run("view", "--help");
        assertEquals(0, help.status());
        assertTrue(help.out().contains("| --compare A B]") && help.out().contains("--compare A B shows two maps"),
                help.out());
    }
}
