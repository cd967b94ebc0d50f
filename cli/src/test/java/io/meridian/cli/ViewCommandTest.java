package io.meridian.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.meridian.cli.MdsCommandTest.Outcome;
import io.meridian.live.Frame;
import io.meridian.live.SnapshotWriter;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code ./meridian view}: every bad input is one line and exit 2 before any server starts; a good map is served as
 * the page's binary frame, and a followed snapshot directory announces each new frame by a server-sent event. The
 * page itself, in a real browser, is {@link ViewerIT}'s.
 */
class ViewCommandTest {
    static final ObjectMapper JSON = new ObjectMapper();
    static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @TempDir
    Path dir;

    static Path write(Path dir, String name, String text) throws Exception {
        Files.createDirectories(dir);
        return Files.writeString(dir.resolve(name), text, StandardCharsets.UTF_8);
    }

    static Outcome refused(String... args) {
        Outcome r = MdsCommandTest.main(args);
        assertEquals(Main.EXIT_USAGE, r.status(), String.join(" ", args) + ": " + r.err());
        List<String> lines = r.err().strip().lines().toList();
        assertTrue(lines.size() == 1 || lines.size() == 2 && lines.get(1).startsWith("usage: ./meridian view "),
                "one line (then the usage line for a usage error): " + r.err());
        assertTrue(r.err().startsWith("meridian view: "), r.err());
        assertFalse(r.err().contains("Exception"), r.err());
        return r;
    }

    @Test
    void badInputIsOneLineNamingFileAndLine() throws Exception {
        assertTrue(refused("view").err().contains("give MAP"));
        assertTrue(refused("view", dir.resolve("nowhere").toString()).err().contains("nowhere does not exist"));
        Path empty = Files.createDirectories(dir.resolve("empty"));
        assertTrue(refused("view", empty.toString()).err().contains("holds no points.tsv"));

        Path map = dir.resolve("map");
        write(map, "points.tsv", "0\t0.5\t1\t2\n1\t1\t2\t3\n2\t1.0\tabc\t3\n");
        Outcome r = refused("view", map.toString());
        assertTrue(r.err().contains(map.resolve("points.tsv") + " line 3: coordinate 'abc' is not a number"), r.err());

        write(map, "points.tsv", "0\t0.5\t1\t2\n1\t1\t2\n");
        assertTrue(refused("view", map.toString()).err()
                .contains("points.tsv line 2: expected an id and 3 fields as in line 1, got 2"));
        write(map, "points.tsv", "0\t0.5\t1\t2\t0\n1\t1\t2\t3\t2\n");
        assertTrue(refused("view", map.toString()).err()
                .contains("points.tsv line 2: the fifth field, the outlier flag, must be 0 or 1, got '2'"));
        write(map, "points.tsv", "0\t0.5\t1\t2\t0\n1\t1\t2\t3\n");
        assertTrue(refused("view", map.toString()).err()
                .contains("points.tsv line 2: expected an id and 4 fields as in line 1, got 3"));
        write(map, "points.tsv", "0\t0.5\t1\t2\t0\t1\n");
        assertTrue(refused("view", map.toString()).err().contains("line 1: more than 3 coordinates and an outlier"));
        write(map, "points.tsv", "0\t0.5\t1\t2\n0\t1\t2\t3\n");
        assertTrue(refused("view", map.toString()).err().contains("points.tsv line 2: id 0 appears twice"));
        write(map, "points.tsv", "0\t0.5\t1\t2\n5\t1\t2\t3\n");
        assertTrue(refused("view", map.toString()).err().contains("points.tsv line 2: id 5 outside 0..1"));
        write(map, "points.tsv", "");
        assertTrue(refused("view", map.toString()).err().contains("points.tsv: holds no points"));
        write(map, "points.tsv", "0\t0.5\t1\tNaN\n");
        assertTrue(refused("view", map.toString()).err().contains("line 1: coordinate 'NaN' is not finite"));

        write(map, "points.tsv", "0\t0.5\t1\t2\n1\t1\t2\t3\n");
        Path pwc = dir.resolve("pwc");
        write(pwc, "clusters.tsv", "0\t1\n7\t0\n");
        r = refused("view", map.toString(), pwc.toString());
        assertTrue(r.err().contains("clusters.tsv line 2: id 7 outside 0..1"), r.err());
        write(pwc, "clusters.tsv", "0\t1\n");
        assertTrue(refused("view", map.toString(), pwc.toString()).err().contains("holds clusters for 1 points"));
        assertTrue(refused("view", map.toString(), empty.toString()).err().contains("holds no clusters.tsv"));

        write(map, "summary.json", "{\"normalizedStress\": 0.01");
        assertTrue(refused("view", map.toString()).err().contains(map.resolve("summary.json") + ": not JSON"));
        Files.delete(map.resolve("summary.json"));

        assertTrue(refused("view", "--live", dir.resolve("nowhere").toString()).err()
                .contains("snapshot directory " + dir.resolve("nowhere") + " does not exist"));
        assertTrue(refused("view", map.toString(), "--config", "x.yaml").err().contains("--config names the snapshot"));
        assertTrue(refused("view", map.toString(), "--port", "70000").err().contains("--port"));
        Path snapshots = Files.createDirectories(dir.resolve("snapshots").resolve("frame-000000001"));
        assertTrue(refused("view", snapshots.getParent().toString()).err().contains("has no frame yet"));

        try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            r = refused("view", map.toString(), "--port", "" + taken.getLocalPort());
            assertTrue(r.err().contains("port " + taken.getLocalPort() + " on 127.0.0.1 is in use"), r.err());
        }
    }

    @Test
    void servesTheBatchMapAsOneBinaryFrameAndThePageFromTheJar() throws Exception {
        Path mds = dir.resolve("mds");
        // ids out of order, a 2-D map (z = 0)
        write(mds, "points.tsv", "1\t3.5\t-1\n0\t1.25\t2\n2\t0\t0.5\n");
        write(mds, "summary.json", "{\"n\":3,\"normalizedStress\":0.0125}\n");
        Path pwc = dir.resolve("pwc");
        write(pwc, "clusters.tsv", "0\t1\r\n1\t0\r\n2\t1\r\n"); // written on Windows
        try (ViewCommand.Viewer viewer = ViewCommand.open(new String[] {mds.toString(), pwc.toString(), "--port", "0"},
                quiet(), quiet())) {
            URI base = viewer.server().uri();
            assertEquals("127.0.0.1", base.getHost());
            Decoded f = Decoded.of(get(base.resolve("api/frame")).body());
            assertEquals(3, f.meta.get("n").asInt());
            assertEquals("batch", f.meta.get("mode").asText());
            assertEquals(0.0125, f.meta.get("stress").asDouble());
            assertEquals(2, f.meta.get("clusterCount").asInt());
            assertTrue(f.meta.get("frame").isNull());
            assertArrayEquals(new float[] {1.25f, 2, 0, 3.5f, -1, 0, 0, 0.5f, 0}, f.xyz);
            assertArrayEquals(new int[] {1, 0, 1}, f.labels);
            assertArrayEquals(new boolean[3], f.outliers, "a batch map flags no outlier");
            assertEquals(0, f.meta.get("outlierCount").asInt());

            HttpResponse<byte[]> page = get(base);
            assertEquals(200, page.statusCode());
            String html = new String(page.body(), StandardCharsets.UTF_8);
            assertTrue(html.contains("\"three\": \"./three/build/three.module.js\""), html);
            for (String file : new String[] {"viewer.js", "viewer.css", "three/build/three.module.js",
                "three/build/three.core.js", "three/examples/jsm/controls/OrbitControls.js"}) {
                HttpResponse<byte[]> r = get(base.resolve(file));
                assertEquals(200, r.statusCode(), file);
                assertTrue(r.body().length > 1000, file);
            }
            assertTrue(new String(get(base.resolve("three/build/three.core.js")).body(), StandardCharsets.UTF_8)
                    .contains("const REVISION = '187'"), "three.js 0.187.0, as package-lock.json pins it");
            assertEquals(404, get(base.resolve("../../etc/passwd")).statusCode());
            assertEquals(404, get(base.resolve("nothing.js")).statusCode());
            HttpResponse<String> post = HTTP.send(HttpRequest.newBuilder(base.resolve("api/frame"))
                    .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
            assertEquals(405, post.statusCode());
        }
    }

    @Test
    void followsASnapshotDirectoryAndAnnouncesEachFrame() throws Exception {
        Path snapshots = dir.resolve("map");
        SnapshotWriter writer = new SnapshotWriter(snapshots, "view-test");
        double[] first = {0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1};
        writer.onFrame(frame(3, first, new int[] {0, 0, 1, 1}, 4));
        try (ViewCommand.Viewer viewer = ViewCommand.open(new String[] {"--live", snapshots.toString(), "--port", "0"},
                quiet(), quiet())) {
            URI base = viewer.server().uri();
            CompletableFuture<HttpResponse<Stream<String>>> events = HTTP.sendAsync(
                    HttpRequest.newBuilder(base.resolve("api/events")).build(), HttpResponse.BodyHandlers.ofLines());
            Iterator<String> lines = events.get(10, TimeUnit.SECONDS).body().iterator();
            JsonNode announced = nextEvent(lines);
            assertEquals(3, announced.get("frame").asInt());
            assertEquals(4, announced.get("n").asInt());
            Decoded f = Decoded.of(get(base.resolve("api/frame")).body());
            assertEquals("live", f.meta.get("mode").asText());
            assertEquals("view-test", f.meta.get("job").asText());

            double[] second = new double[15];
            for (int i = 0; i < second.length; i++) {
                second[i] = i < first.length ? 2 * first[i] + 1 : -1;
            }
            writer.onFrame(frame(4, second, new int[] {0, 0, 1, 1, 2}, 1));
            announced = nextEvent(lines);
            assertEquals(4, announced.get("frame").asInt());
            assertEquals(5, announced.get("n").asInt());
            f = Decoded.of(get(base.resolve("api/frame")).body());
            assertEquals(4, f.meta.get("frame").asInt());
            assertEquals(3f, f.xyz[3], "point 1 moved from x = 1 to 2 * 1 + 1");
            assertEquals(3, f.meta.get("clusterCount").asInt());
            JsonNode history = f.meta.get("history");
            assertEquals("[[3,4,4],[4,5,1]]", history.toString(), "frame, N, placed of the frames seen");
            assertEquals(2, viewer.follower().framesShown());
            assertEquals(0, viewer.follower().framesFailed());
            assertEquals(1, viewer.server().followers());
        }
        // the same directory given without --live: its current frame, with the frames it still holds
        try (ViewCommand.Viewer viewer = ViewCommand.open(new String[] {snapshots.toString(), "--port", "0"},
                quiet(), quiet())) {
            Decoded f = Decoded.of(get(viewer.server().uri().resolve("api/frame")).body());
            assertEquals("snapshot", f.meta.get("mode").asText());
            assertEquals(4, f.meta.get("frame").asInt());
            assertEquals("[[3,4,4],[4,5,1]]", f.meta.get("history").toString());
        }
    }

    /** A live frame's outlier flags (points.tsv's fifth field) reach the page with their count. */
    @Test
    void servesALiveFramesOutlierFlags() throws Exception {
        Path snapshots = dir.resolve("map");
        double[] xyz = {0, 0, 0, 1, 0, 0, 0, 1, 0, 40, 40, 40};
        int[] labels = {0, 0, 0, 0};
        Frame plain = frame(9, xyz, labels, 0);
        boolean[] flags = {false, false, false, true};
        new SnapshotWriter(snapshots, "view-test").onFrame(new Frame(plain.frame(), plain.n(), plain.points(),
                plain.labels(), flags, plain.stress(), plain.temperature(), plain.clusters(), 1, plain.drift(),
                plain.placed(), plain.iterations(), plain.annealed(), plain.roundSeconds(), plain.computeSeconds(),
                plain.collectiveSeconds(), plain.placementSeconds(), plain.staleness(), plain.storedRows(),
                plain.publishedAtMillis(), plain.settled()));
        try (ViewCommand.Viewer viewer = ViewCommand.open(new String[] {snapshots.toString(), "--port", "0"},
                quiet(), quiet())) {
            Decoded f = Decoded.of(get(viewer.server().uri().resolve("api/frame")).body());
            assertArrayEquals(flags, f.outliers);
            assertEquals(1, f.meta.get("outlierCount").asInt());
            assertEquals(40f, f.xyz[9], "the coordinates are read before the flag");
        }
    }

    @Test
    void liveTakesItsDirectoryFromTheConfigurationUnlessGivenOne() throws Exception {
        Path snapshots = Files.createDirectories(dir.resolve("configured"));
        Path config = write(dir, "view.yaml", "map:\n  snapshotDirectory: " + snapshots + "\n");
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (ViewCommand.Viewer viewer = ViewCommand.open(new String[] {"--live", "--config", config.toString(),
            "--port", "0"}, new PrintStream(out, true, StandardCharsets.UTF_8), quiet())) {
            assertTrue(out.toString(StandardCharsets.UTF_8).contains("following the live map's frames in "
                    + snapshots + " (none yet"), out.toString(StandardCharsets.UTF_8));
            assertEquals(503, get(viewer.server().uri().resolve("api/frame")).statusCode(), "no frame yet");
        }
        Path missing = dir.resolve("missing");
        Path other = write(dir, "missing.yaml", "map:\n  snapshotDirectory: " + missing + "\n");
        assertTrue(refused("view", "--live", "--config", other.toString()).err().contains("snapshot directory "
                + missing + " does not exist (map.snapshotDirectory of " + other + ")"));
        assertTrue(refused("view", "--live", snapshots.toString(), "x").err().contains("follows one snapshot"));
    }

    static Frame frame(long number, double[] xyz, int[] labels, int placed) {
        int clusters = (int) Arrays.stream(labels).filter(l -> l >= 0).distinct().count();
        return new Frame(number, labels.length, xyz, labels, new boolean[labels.length], 0.01, 0.5, clusters, 0,
                0.001, placed, 10, false, 0.1,
                0.08, 0.02, 0.001, 0, labels.length, System.currentTimeMillis(), false);
    }

    static JsonNode nextEvent(Iterator<String> lines) throws Exception {
        while (lines.hasNext()) {
            String line = lines.next();
            if (line.startsWith("data: ")) {
                return JSON.readTree(line.substring(6));
            }
        }
        throw new AssertionError("the event stream ended");
    }

    static HttpResponse<byte[]> get(URI uri) throws Exception {
        return HTTP.send(HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(10)).build(),
                HttpResponse.BodyHandlers.ofByteArray());
    }

    static PrintStream quiet() {
        return new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8);
    }

    /**
     * GET api/frame read back by its layout (MapFrame): magic, meta length, meta, xyz floats, cluster ints, outlier
     * bytes.
     */
    record Decoded(JsonNode meta, float[] xyz, int[] labels, boolean[] outliers) {
        static Decoded of(byte[] body) throws Exception {
            ByteBuffer b = ByteBuffer.wrap(body).order(ByteOrder.LITTLE_ENDIAN);
            assertEquals('M', body[0]);
            assertEquals('1', body[3]);
            int length = b.getInt(4);
            JsonNode meta = JSON.readTree(new String(body, 8, length, StandardCharsets.UTF_8));
            int n = meta.get("n").asInt();
            int offset = 8 + ((length + 3) & ~3);
            assertEquals(offset + 17 * n, body.length);
            float[] xyz = new float[3 * n];
            b.position(offset).slice().order(ByteOrder.LITTLE_ENDIAN).asFloatBuffer().get(xyz);
            int[] labels = new int[n];
            b.position(offset + 12 * n).slice().order(ByteOrder.LITTLE_ENDIAN).asIntBuffer().get(labels);
            boolean[] outliers = new boolean[n];
            for (int i = 0; i < n; i++) {
                byte flag = body[offset + 16 * n + i];
                assertTrue(flag == 0 || flag == 1, "outlier byte " + flag);
                outliers[i] = flag == 1;
            }
            return new Decoded(meta, xyz, labels, outliers);
        }
    }
}
