package io.meridian.perf;

import com.fasterxml.jackson.databind.JsonNode;
import io.meridian.cli.view.HeadlessChromium;
import io.meridian.cli.view.MapLoader;
import io.meridian.cli.view.ViewServer;
import io.meridian.config.CommandLine;
import io.meridian.live.Frame;
import io.meridian.live.SnapshotWriter;
import io.meridian.synthetic.SyntheticDataset;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * {@code ./meridian bench view}: {@code ./meridian view}'s page in Debian's Chromium, headless (WebGL on SwiftShader,
 * Chromium's software renderer, where there is no GPU), driven over the DevTools protocol. For a map of 100,000
 * points (5 Gaussian blobs in 3-D, 5 clusters, written as a live map snapshot by {@link SnapshotWriter}) and for the
 * baseline of 10,000 points on the same page, it measures the page load (navigation to the first frame drawn with
 * every point) and the frames per second while the camera turns, every animation frame rendered with every point;
 * then the same turn as a user's drag draws it (the page draws a sample sized to its frame budget while the view
 * moves, every point once it is still), and the time of a pick (the first after the view moved builds the page's
 * screen-space grid: one pass over the points; the next looks up a cell). The empty
 * scene (the page with its points hidden) is the floor. Chromium runs with its frame rate limit and vsync off, so the
 * figures are what a frame costs, not the display's 60 Hz.
 */
public final class ViewBench implements Benchmark {
    static final int WIDTH = 1280;
    static final int HEIGHT = 800;

    @Override
    public String description() {
        return "./meridian view's page in headless Chromium: frames per second while the camera turns with 100,000"
                + " points (every point, and as dragged) vs 10,000 and an empty scene, page load time [--n 100000]"
                + " [--baseline 10000] [--seconds 5]";
    }

    @Override
    public void run(String[] args) throws Exception {
        CommandLine cl = CommandLine.parse("bench view", args, Set.of("n", "baseline", "seconds"), Set.of());
        cl.requireNoPositional();
        int n = cl.intValue("n", 100_000, 1_000, 4_000_000);
        int baseline = cl.intValue("baseline", 10_000, 100, n);
        int seconds = cl.intValue("seconds", 5, 1, 600);
        Path dir = Path.of(System.getenv().getOrDefault("MERIDIAN_HOME", "."), ".meridian", "bench", "view");
        String load = loadAverage();
        System.out.println("bench view: " + WIDTH + " x " + HEIGHT + " window, " + seconds + " s of turning camera"
                + " per scene; load average " + load + " (2 cores shared: other work lowers the figures)");
        Map<String, Object> figures = new LinkedHashMap<>();
        try (HeadlessChromium browser = HeadlessChromium.launch(WIDTH, HEIGHT,
                List.of("--disable-gpu-vsync", "--disable-frame-rate-limit"))) {
            Scene empty = measure(browser, snapshot(dir, n), n, seconds, Draw.NONE);
            Scene small = measure(browser, snapshot(dir, baseline), baseline, seconds, Draw.ALL);
            Scene large = measure(browser, snapshot(dir, n), n, seconds, Draw.ALL);
            Scene dragged = measure(browser, snapshot(dir, n), n, seconds, Draw.MOVING);
            System.out.println("  WebGL: " + large.renderer);
            for (Scene s : List.of(empty, small, large, dragged)) {
                System.out.printf(Locale.ROOT, "  %-36s %6.1f frames/s (median frame %.1f ms, 95th percentile %.1f"
                                + " ms, %d frames)%s%n", s.label, s.fps, s.p50Ms, s.p95Ms, s.frames,
                        s.draw == Draw.NONE ? "" : String.format(Locale.ROOT, "; page ready in %.0f ms (first frame"
                                + " drawn %.0f ms after navigation, frame applied in %.1f ms); a pick %.1f ms"
                                + " (then %.2f ms)", s.readyMs, s.firstDrawMs, s.applyMs, s.pickMs, s.pickCachedMs));
            }
            System.out.printf(Locale.ROOT, "  %,d points, every point every frame: %.1f frames/s, %.2fx the frame rate"
                            + " of %,d points, %.2fx that of the empty scene; while dragged: %.1f frames/s drawing"
                            + " %,.0f points a frame (%.0f%%), every point once still%n", n, large.fps,
                    large.fps / small.fps, baseline, large.fps / empty.fps, dragged.fps, dragged.drawnPerFrame,
                    100 * dragged.drawnPerFrame / n);
            figures.put("n", n);
            figures.put("fps", large.fps);
            figures.put("frameMsP50", large.p50Ms);
            figures.put("frameMsP95", large.p95Ms);
            figures.put("draggedFps", dragged.fps);
            figures.put("draggedPointsPerFrame", dragged.drawnPerFrame);
            figures.put("pickMs", large.pickMs);
            figures.put("pickCachedMs", large.pickCachedMs);
            figures.put("loadMs", large.readyMs);
            figures.put("firstDrawMs", large.firstDrawMs);
            figures.put("baselineN", baseline);
            figures.put("baselineFps", small.fps);
            figures.put("baselineLoadMs", small.readyMs);
            figures.put("emptyFps", empty.fps);
            figures.put("ratioToBaseline", large.fps / small.fps);
            figures.put("ratioToEmpty", large.fps / empty.fps);
            figures.put("interactive", dragged.fps >= 25);
            figures.put("renderer", large.renderer);
        }
        Figures out = new Figures("view");
        figures.forEach(out::put);
        out.put("seconds", seconds).put("loadAverageBefore", load).put("loadAverageAfter", loadAverage()).print();
    }

    /** What a frame of the turn draws: nothing (the page's floor), every point, or what a moving view draws. */
    private enum Draw {
        NONE, ALL, MOVING
    }

    private record Scene(String label, Draw draw, double fps, double p50Ms, double p95Ms, int frames,
                         double drawnPerFrame, double readyMs, double firstDrawMs, double applyMs, double pickMs,
                         double pickCachedMs, String renderer) {
    }

    /** Opens the page on {@code snapshots} in a fresh server, waits until every point is drawn, turns the camera. */
    private static Scene measure(HeadlessChromium browser, Path snapshots, int n, int seconds, Draw draw)
            throws Exception {
        try (ViewServer server = ViewServer.start(0)) {
            server.publish(MapLoader.snapshot(snapshots, snapshots.resolve(MapLoader.CURRENT).toRealPath()));
            long t0 = System.nanoTime();
            browser.navigate(server.uri());
            browser.waitFor("window.meridianView && meridianView.state().ready", Duration.ofSeconds(120));
            double readyMs = (System.nanoTime() - t0) / 1e6;
            JsonNode state = browser.evaluate("meridianView.state()");
            if (state.get("drawn").asInt() != n || !state.get("errors").isEmpty()) {
                throw new IllegalStateException("the page drew " + state.get("drawn") + " of " + n + " points; errors: "
                        + state.get("errors"));
            }
            String options = "showPoints: " + (draw != Draw.NONE) + ", sample: " + (draw == Draw.MOVING);
            browser.evaluate("meridianView.benchmark({ms: 1000, " + options + "})"); // warm-up
            JsonNode r = browser.evaluate("meridianView.benchmark({ms: " + seconds * 1000 + ", " + options + "})");
            if (draw == Draw.ALL && r.get("drawn").asInt() != n) {
                throw new IllegalStateException("the benchmark drew " + r.get("drawn") + " of " + n + " points");
            }
            String label = switch (draw) {
                case NONE -> "empty scene";
                case ALL -> String.format(Locale.ROOT, "%,d points, all each frame", n);
                case MOVING -> String.format(Locale.ROOT, "%,d points, dragged", n);
            };
            return new Scene(label, draw, r.get("fps").asDouble(), r.get("p50Ms").asDouble(),
                    r.get("p95Ms").asDouble(), r.get("frames").asInt(), r.get("drawnPerFrame").asDouble(), readyMs,
                    state.get("loadMs").asDouble(), state.get("lastApplyMs").asDouble(), r.get("pickMs").asDouble(),
                    r.get("pickCachedMs").asDouble(), browser.evaluate("meridianView.glRenderer()").asText());
        }
    }

    /** A live map snapshot of n points in 5 blobs (3-D, std 2, centres in [-10, 10)^3), written once. */
    private static Path snapshot(Path dir, int n) throws Exception {
        Path snapshots = dir.resolve("blobs5-3d-" + n);
        if (Files.exists(snapshots.resolve(MapLoader.CURRENT))) {
            return snapshots;
        }
        SyntheticDataset blobs = SyntheticDataset.blobs(n, 3, 5, 2.0, 7);
        double[] xyz = new double[3 * n];
        int[] labels = new int[n];
        for (int i = 0; i < n; i++) {
            for (int k = 0; k < 3; k++) {
                xyz[3 * i + k] = blobs.coordinate(i, k);
            }
            labels[i] = blobs.label(i);
        }
        new SnapshotWriter(snapshots, "bench-view").onFrame(new Frame(1, n, xyz, labels, new boolean[n], Double.NaN,
                Double.NaN, 5, 0, 0, n, 0, true, 0, 0, 0, 0, 0, n, System.currentTimeMillis(), true));
        return snapshots;
    }

    private static String loadAverage() {
        try {
            return Files.readString(Path.of("/proc/loadavg")).trim().split(" ")[0];
        } catch (Exception e) {
            return "unknown";
        }
    }
}
