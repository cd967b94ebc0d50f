package io.meridian.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.meridian.cli.MdsCommandTest.Outcome;
import io.meridian.cli.view.HeadlessChromium;
import io.meridian.cli.view.MapComparison;
import io.meridian.cli.view.MapFiles;
import io.meridian.live.Frame;
import io.meridian.live.SnapshotWriter;
import java.awt.image.BufferedImage;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code ./meridian view} in a real browser: Debian's Chromium, headless (WebGL on SwiftShader), driven over the
 * DevTools protocol. A 5-blob map made by the project's own generator, DA-MDS and DA-PWC is loaded; the page's own
 * state must show every point and every cluster drawn, a cluster toggled off in the legend must vanish from the
 * pixels, hovering and searching must find points. Then {@code --live}: two frames published the way the live map
 * publishes them ({@link SnapshotWriter}) must reach the page without a reload, with the second frame's N and moved
 * points. {@code --compare}: two maps laid over each other draw both maps, a segment per id that a toggle hides, and
 * the legend's residual and largest displacements. Screenshots go to {@code cli/target/view/}.
 */
class ViewerIT {
    static final int N = 600;
    static final int FIRST = 400;
    static final Duration WAIT = Duration.ofSeconds(60);
    static final Path SHOTS = Path.of("target", "view");

    @TempDir
    static Path dir;
    static Path mds;
    static Path pwc;
    static float[] xyz;
    static int[] labels;
    static HeadlessChromium browser;

    @BeforeAll
    static void mapAndBrowser() throws Exception {
        Path data = dir.resolve("data");
        mds = dir.resolve("mds");
        pwc = dir.resolve("pwc");
        Outcome r = MdsCommandTest.main("gen", "--kind", "blobs", "--n", "" + N, "--dim", "8", "--centers", "5",
                "--std", "2", "--seed", "1", "--out", data.toString());
        assertEquals(0, r.status(), r.err());
        String distances = data.resolve("distances.bin").toString();
        r = MdsCommandTest.main("mds", "--distances", distances, "--n", "" + N, "--out", mds.toString());
        assertEquals(0, r.status(), r.err());
        r = MdsCommandTest.main("pwc", "--distances", distances, "--n", "" + N, "--max-clusters", "8", "--out",
                pwc.toString());
        assertEquals(0, r.status(), r.err());
        xyz = MapFiles.readPoints(mds.resolve("points.tsv"));
        labels = MapFiles.readClusters(pwc.resolve("clusters.tsv"), N, mds.resolve("points.tsv"));
        Files.createDirectories(SHOTS);
        browser = HeadlessChromium.launch(1280, 800, List.of());
    }

    @AfterAll
    static void closeBrowser() {
        if (browser != null) {
            browser.close();
        }
    }

    @Test
    void batchMapDrawsEveryPointAndClusterTogglesOneAndPicksPoints() throws Exception {
        try (ViewCommand.Viewer viewer = ViewCommand.open(new String[] {mds.toString(), pwc.toString(), "--port",
            "0"}, ViewCommandTest.quiet(), ViewCommandTest.quiet())) {
            long t0 = System.nanoTime();
            browser.navigate(viewer.server().uri());
            browser.waitFor("window.meridianView && meridianView.state().ready", WAIT);
            double pageMs = (System.nanoTime() - t0) / 1e6;
            JsonNode s = state();
            assertEquals("batch", s.get("mode").asText());
            assertEquals(N, s.get("n").asInt());
            assertEquals(N, s.get("drawn").asInt(), "points in the last draw call");
            assertEquals(N, s.get("visible").asInt());
            assertEquals("[]", s.get("errors").toString());
            Map<Integer, Integer> expected = sizes(labels, N);
            assertEquals(expected, pageSizes(s), "every cluster of clusters.tsv, with its size, in the legend");
            Map<Integer, Integer> colours = colours(s);

            BufferedImage shot = screenshot("batch-map.png");
            Map<Integer, Integer> pixels = histogram(shot);
            for (Map.Entry<Integer, Integer> c : colours.entrySet()) {
                assertTrue(pixels.getOrDefault(c.getValue(), 0) > 30, "cluster " + c.getKey() + "'s colour "
                        + hex(c.getValue()) + " drawn: " + pixels.getOrDefault(c.getValue(), 0) + " pixels");
            }
            System.out.printf(Locale.ROOT, "ViewerIT: %d points, %d clusters drawn; page ready %.0f ms after"
                            + " navigation (first frame drawn at %.0f ms), %d distinct colours in the screenshot%n",
                    N, colours.size(), pageMs, s.get("loadMs").asDouble(), pixels.size());

            // the legend: a click on a cluster hides it, from the page's state and from the pixels
            int off = expected.keySet().iterator().next();
            JsonNode rect = browser.evaluate("(() => { const r = document.querySelector('#clusters li[data-cluster=\""
                    + off + "\"]').getBoundingClientRect(); return {x: r.x + r.width / 2, y: r.y + r.height / 2};"
                    + " })()");
            browser.click(rect.get("x").asDouble(), rect.get("y").asDouble());
            browser.waitFor("meridianView.state().clusters.some(c => c.label === " + off + " && !c.visible)", WAIT);
            s = state();
            assertEquals(N - expected.get(off), s.get("visible").asInt());
            shot = screenshot("batch-map-cluster-" + off + "-hidden.png");
            pixels = histogram(shot);
            assertEquals(0, pixels.getOrDefault(colours.get(off), 0), "hidden cluster " + off + " drawn");
            for (Map.Entry<Integer, Integer> c : colours.entrySet()) {
                if (c.getKey() != off) {
                    assertTrue(pixels.getOrDefault(c.getValue(), 0) > 30, "cluster " + c.getKey() + " still drawn");
                }
            }

            // hover over a pixel of another cluster: the tooltip names a point of that cluster
            int other = colours.keySet().stream().filter(c -> c != off).findFirst().orElseThrow();
            int[] at = interiorPixel(shot, colours.get(other));
            browser.moveMouse(at[0], at[1]);
            browser.waitFor("meridianView.state().hover !== null", WAIT);
            JsonNode hover = state().get("hover");
            assertEquals(other, hover.get("cluster").asInt());
            assertEquals(other, labels[hover.get("id").asInt()], "the picked point's cluster in clusters.tsv");
            assertFalse(browser.evaluate("document.getElementById('tip').hidden").asBoolean());
            browser.click(at[0], at[1]);
            browser.waitFor("meridianView.state().selected === " + hover.get("id").asInt(), WAIT);

            // search by id
            browser.evaluate("document.getElementById('search').focus()");
            browser.type("17");
            browser.evaluate("document.getElementById('search').blur()");
            browser.waitFor("meridianView.state().selected === 17", WAIT);
            assertTrue(browser.evaluate("document.getElementById('info').textContent").asText()
                    .startsWith("id 17 · cluster " + labels[17]));

            // the PNG export holds the map as shown: visible clusters, not the hidden one
            String png = browser.evaluate("meridianView.exportPng()").asText();
            assertTrue(png.startsWith("data:image/png;base64,"));
            byte[] exported = Base64.getDecoder().decode(png.substring(png.indexOf(',') + 1));
            Files.write(SHOTS.resolve("batch-map-export.png"), exported);
            Map<Integer, Integer> exportedPixels = histogram(ImageIO.read(new ByteArrayInputStream(exported)));
            assertEquals(0, exportedPixels.getOrDefault(colours.get(off), 0));
            assertTrue(exportedPixels.getOrDefault(colours.get(other), 0) > 30);
            assertEquals(List.of(), browser.pageErrors());
        }
    }

    @Test
    void liveModeAnimatesToEachPublishedFrameWithoutReloading() throws Exception {
        Path snapshots = dir.resolve("live");
        SnapshotWriter writer = new SnapshotWriter(snapshots, "viewer-it");
        double[] first = new double[3 * FIRST];
        for (int i = 0; i < first.length; i++) {
            first[i] = xyz[i];
        }
        writer.onFrame(ViewCommandTest.frame(1, first, Arrays.copyOf(labels, FIRST), FIRST));
        try (ViewCommand.Viewer viewer = ViewCommand.open(new String[] {"--live", snapshots.toString(), "--port",
            "0"}, ViewCommandTest.quiet(), ViewCommandTest.quiet())) {
            browser.navigate(viewer.server().uri());
            browser.waitFor("window.meridianView && meridianView.state().ready && meridianView.state().following",
                    WAIT);
            JsonNode s = state();
            assertEquals("live", s.get("mode").asText());
            assertEquals(1, s.get("frame").asInt());
            assertEquals(FIRST, s.get("n").asInt());
            assertEquals(FIRST, s.get("drawn").asInt());
            assertEquals(sizes(labels, FIRST), pageSizes(s));
            browser.evaluate("window.loadedOnce = 'frame 1'");

            // frame 2: 200 more points, and the map turned a quarter about z and grown by half
            double[] second = new double[3 * N];
            for (int i = 0; i < N; i++) {
                second[3 * i] = -1.5 * xyz[3 * i + 1];
                second[3 * i + 1] = 1.5 * xyz[3 * i];
                second[3 * i + 2] = 1.5 * xyz[3 * i + 2];
            }
            writer.onFrame(ViewCommandTest.frame(2, second, labels.clone(), N - FIRST));
            browser.waitFor("meridianView.state().frame === 2 && meridianView.state().ready", WAIT);
            s = state();
            assertEquals(N, s.get("n").asInt());
            assertEquals(N, s.get("drawn").asInt());
            assertEquals(2, s.get("framesLoaded").asInt());
            assertEquals("frame 1", browser.evaluate("window.loadedOnce").asText(), "the page was not reloaded");
            assertEquals(FIRST, s.get("newFrom").asInt(), "new since 1 frame: the points placed in frame 2");
            assertEquals(N - FIRST, s.get("newCount").asInt());
            assertEquals(sizes(labels, N), pageSizes(s));
            assertEquals("2", browser.evaluate("document.getElementById('frame').textContent").asText());
            assertEquals("600", browser.evaluate("document.getElementById('n').textContent").asText());
            for (int id : new int[] {0, 123, FIRST - 1, FIRST, N - 1}) {
                JsonNode p = browser.evaluate("meridianView.position(" + id + ")");
                for (int k = 0; k < 3; k++) {
                    assertEquals(second[3 * id + k], p.get(k).asDouble(), 1e-4 * (1 + Math.abs(second[3 * id + k])),
                            "point " + id + " drawn at its frame-2 position");
                }
                if (id < FIRST) {
                    assertNotEquals(first[3 * id], p.get(0).asDouble(), 1e-3, "point " + id + " moved");
                }
            }
            BufferedImage shot = screenshot("live-map-frame-2.png");
            Map<Integer, Integer> pixels = histogram(shot);
            assertTrue(pixels.getOrDefault(0xffffff, 0) > 50, "white rings around the points new in frame 2");
            for (Map.Entry<Integer, Integer> c : colours(s).entrySet()) {
                assertTrue(pixels.getOrDefault(c.getValue(), 0) > 30, "cluster " + c.getKey() + " drawn");
            }
            assertEquals(List.of(), browser.pageErrors());
        }
    }

    /** The outliers toggle rings a live frame's flagged points in red and the figures show their count. */
    @Test
    void theOutliersToggleRingsTheFlaggedPointsInRed() throws Exception {
        Path snapshots = dir.resolve("outliers");
        double[] points = new double[3 * N];
        for (int i = 0; i < points.length; i++) {
            points[i] = xyz[i];
        }
        boolean[] flags = new boolean[N];
        for (int i = 0; i < N; i += 10) {
            flags[i] = true;
        }
        Frame plain = ViewCommandTest.frame(5, points, labels.clone(), 0);
        new SnapshotWriter(snapshots, "viewer-it").onFrame(new Frame(plain.frame(), plain.n(), plain.points(),
                plain.labels(), flags, plain.stress(), plain.temperature(), plain.clusters(), N / 10, plain.drift(),
                plain.placed(), plain.iterations(), plain.annealed(), plain.roundSeconds(), plain.computeSeconds(),
                plain.collectiveSeconds(), plain.placementSeconds(), plain.staleness(), plain.storedRows(),
                plain.publishedAtMillis(), plain.settled()));
        try (ViewCommand.Viewer viewer = ViewCommand.open(new String[] {snapshots.toString(), "--port", "0"},
                ViewCommandTest.quiet(), ViewCommandTest.quiet())) {
            browser.navigate(viewer.server().uri());
            browser.waitFor("window.meridianView && meridianView.state().ready", WAIT);
            assertEquals(N / 10, state().get("outliers").asInt());
            assertEquals("60", browser.evaluate("document.getElementById('outlierCount').textContent").asText());
            int red = 0xff2626;
            assertEquals(0, histogram(screenshot("outliers-off.png")).getOrDefault(red, 0), "no red ring while off");
            browser.evaluate("document.getElementById('outliers').click()");
            browser.waitFor("meridianView.state().outliersShown && meridianView.state().ready", WAIT);
            assertTrue(histogram(screenshot("outliers-on.png")).getOrDefault(red, 0) > 50,
                    "red rings around the flagged points");
            assertEquals(List.of(), browser.pageErrors());
        }
    }

    @Test
    void compareDrawsBothMapsTheirSegmentsAndTheLegendsResidual() throws Exception {
        // B: the 5-blob map turned with a reflection, scaled and shifted, every point jittered by 1 % of the map's
        // radius and ids 5, 50 and 500 moved by half its radius; A: the map as DA-MDS wrote it
        double[] a = MapFiles.readCoordinates(mds.resolve("points.tsv"));
        double radius = 0;
        for (double v : a) {
            radius = Math.max(radius, Math.abs(v));
        }
        Random random = new Random(34);
        double[] off = a.clone();
        for (int k = 0; k < off.length; k++) {
            off[k] += 0.01 * radius * random.nextGaussian();
        }
        for (int id : new int[] {5, 50, 500}) {
            off[3 * id] += 0.5 * radius;
        }
        Path b = AlignCommandTest.writeMap(dir, "compare-b", AlignCommandTest.inverseImage(off, 3,
                AlignCommandTest.orthogonal(random, true), new double[] {1, -2, 3}), random);
        MapComparison expected = MapComparison.of(mds.resolve("points.tsv"), b.resolve("points.tsv"));
        try (ViewCommand.Viewer viewer = ViewCommand.open(new String[] {"--compare", mds.toString(), b.toString(),
            "--port", "0"}, ViewCommandTest.quiet(), ViewCommandTest.quiet())) {
            browser.navigate(viewer.server().uri());
            browser.waitFor("window.meridianView && meridianView.state().ready", WAIT);
            JsonNode s = state();
            assertEquals("[]", s.get("errors").toString());
            assertEquals("compare", s.get("mode").asText());
            assertEquals(2 * N, s.get("n").asInt());
            assertEquals(2 * N, s.get("drawn").asInt(), "both maps' points in the last draw call");
            assertEquals(Map.of(0, N, 1, N), pageSizes(s), "the legend's two maps");
            JsonNode c = s.get("compare");
            assertEquals(N, c.get("shared").asInt());
            assertEquals(N, c.get("segments").asInt());
            assertTrue(c.get("segmentsVisible").asBoolean());
            assertEquals(String.format(Locale.ROOT, "residual RMS %.4g over %d shared ids", expected.rmsResidual(), N),
                    c.get("residual").asText());
            int[] largest = expected.largest(MapComparison.LARGEST);
            assertEquals(Arrays.toString(largest), c.get("largest").toString().replace(",", ", "));
            assertEquals(List.of(5, 50, 500), Arrays.stream(largest).limit(3).sorted().boxed().toList());
            for (int id : new int[] {0, 5, 321, N - 1}) {
                JsonNode pa = browser.evaluate("meridianView.position(" + id + ")");
                JsonNode pb = browser.evaluate("meridianView.position(" + (N + id) + ")");
                for (int k = 0; k < 3; k++) {
                    assertEquals(a[3 * id + k], pa.get(k).asDouble(), 1e-5 * (1 + Math.abs(a[3 * id + k])));
                    double moved = expected.shown()[3 * id + k];
                    assertEquals(moved, pb.get(k).asDouble(), 1e-5 * (1 + Math.abs(moved)), "B's id " + id);
                }
            }
            Map<Integer, Integer> colours = colours(s);
            BufferedImage withSegments = screenshot("compare.png");
            Map<Integer, Integer> pixels = histogram(withSegments);
            for (Map.Entry<Integer, Integer> e : colours.entrySet()) {
                assertTrue(pixels.getOrDefault(e.getValue(), 0) > 30, "map " + e.getKey() + "'s colour "
                        + hex(e.getValue()) + " drawn: " + pixels.getOrDefault(e.getValue(), 0) + " pixels");
            }

            // the toggle takes the segments away, and only them
            browser.evaluate("document.getElementById('segments').click()");
            browser.waitFor("!meridianView.state().compare.segmentsVisible", WAIT);
            browser.waitFor("meridianView.state().drawnAll", WAIT);
            BufferedImage without = screenshot("compare-no-segments.png");
            int changed = 0;
            for (int y = 0; y < without.getHeight(); y++) {
                for (int x = 0; x < without.getWidth(); x++) {
                    changed += withSegments.getRGB(x, y) != without.getRGB(x, y) ? 1 : 0;
                }
            }
            assertTrue(changed > 200, "pixels of the segments: " + changed);
            System.out.printf(Locale.ROOT, "ViewerIT compare: %d + %d points, %d segments (%d pixels), residual"
                    + " rms %.4g%n", N, N, N, changed, expected.rmsResidual());

            // a click on the largest displacement selects that id in A
            browser.evaluate("document.querySelector('#largest li').click()");
            browser.waitFor("meridianView.state().selected === " + largest[0], WAIT);
            assertTrue(browser.evaluate("document.getElementById('info').textContent").asText()
                    .startsWith("id " + largest[0] + " · A · "), "the info names the id, its map, how far apart");
            assertEquals(List.of(), browser.pageErrors());
        }
    }

    static JsonNode state() throws IOException {
        return browser.evaluate("meridianView.state()");
    }

    static Map<Integer, Integer> sizes(int[] labels, int n) {
        Map<Integer, Integer> sizes = new TreeMap<>();
        for (int i = 0; i < n; i++) {
            sizes.merge(labels[i], 1, Integer::sum);
        }
        return sizes;
    }

    static Map<Integer, Integer> pageSizes(JsonNode state) {
        Map<Integer, Integer> sizes = new TreeMap<>();
        state.get("clusters").forEach(c -> sizes.put(c.get("label").asInt(), c.get("size").asInt()));
        return sizes;
    }

    /** Each cluster's colour, 0xRRGGBB, as the page's legend gives it. */
    static Map<Integer, Integer> colours(JsonNode state) {
        Map<Integer, Integer> colours = new TreeMap<>();
        state.get("clusters").forEach(c -> colours.put(c.get("label").asInt(),
                Integer.parseInt(c.get("color").asText().substring(1), 16)));
        return colours;
    }

    /**
     * The page as a PNG (kept under target/view), with the panels over the map (legend swatches, figures, tools)
     * painted black, so that the pixels counted are the map's.
     */
    static BufferedImage screenshot(String name) throws IOException {
        byte[] png = browser.screenshot();
        Files.write(SHOTS.resolve(name), png);
        BufferedImage image = ImageIO.read(new ByteArrayInputStream(png));
        JsonNode panels = browser.evaluate("[...document.querySelectorAll('.panel, #help, #tip')].filter(e =>"
                + " !e.hidden).map(e => { const r = e.getBoundingClientRect(); return [r.left, r.top, r.right,"
                + " r.bottom]; })");
        double dpr = browser.evaluate("window.devicePixelRatio").asDouble();
        for (JsonNode r : panels) {
            int right = (int) Math.min(image.getWidth(), Math.ceil(r.get(2).asDouble() * dpr));
            int bottom = (int) Math.min(image.getHeight(), Math.ceil(r.get(3).asDouble() * dpr));
            for (int y = Math.max(0, (int) (r.get(1).asDouble() * dpr)); y < bottom; y++) {
                for (int x = Math.max(0, (int) (r.get(0).asDouble() * dpr)); x < right; x++) {
                    image.setRGB(x, y, 0);
                }
            }
        }
        return image;
    }

    static Map<Integer, Integer> histogram(BufferedImage image) {
        Map<Integer, Integer> counts = new HashMap<>();
        for (int y = 0; y < image.getHeight(); y++) {
            for (int x = 0; x < image.getWidth(); x++) {
                counts.merge(image.getRGB(x, y) & 0xffffff, 1, Integer::sum);
            }
        }
        return counts;
    }

    /** A pixel of {@code rgb} whose 4 neighbours have it too (inside a point, not on its edge). */
    static int[] interiorPixel(BufferedImage image, int rgb) {
        for (int y = 1; y < image.getHeight() - 1; y++) {
            for (int x = 1; x < image.getWidth() - 1; x++) {
                if ((image.getRGB(x, y) & 0xffffff) == rgb && (image.getRGB(x - 1, y) & 0xffffff) == rgb
                        && (image.getRGB(x + 1, y) & 0xffffff) == rgb && (image.getRGB(x, y - 1) & 0xffffff) == rgb
                        && (image.getRGB(x, y + 1) & 0xffffff) == rgb) {
                    return new int[] {x, y};
                }
            }
        }
        throw new AssertionError("no pixel of colour " + hex(rgb));
    }

    static String hex(int rgb) {
        return String.format(Locale.ROOT, "#%06x", rgb);
    }
}
