package io.meridian.perf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code bench scale}'s parts placement and quality at a small N, through the real live map, row stores and batch
 * engines: the JSON line carries their figures, and they say what the parts measure (every streamed row shown, most
 * by the arrival placer, never later than the rounds' frame; the streamed map and clustering as good as batch's).
 */
class ScaleBenchPartsTest {
    private static final int N = 3000;

    @TempDir
    Path dir;

    @Test
    void placementAndQualityPartsReportTheirFigures() throws Exception {
        PrintStream oldOut = System.out;
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        int status;
        try {
            System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
            status = Bench.run(new String[] {"scale", "--n", Integer.toString(N), "--quality-n", Integer.toString(N),
                    "--part", "placement,quality", "--placement-rows", "100", "--quality-rate", "1000", "--dir",
                    dir.toString()});
        } finally {
            System.setOut(oldOut);
        }
        String text = out.toString(StandardCharsets.UTF_8);
        System.out.print(text);
        assertEquals(0, status, text);
        String[] lines = text.strip().split("\n");
        String json = lines[lines.length - 1];
        String p = "n" + N + "_placement_";
        assertEquals(100, number(json, p + "rows"));
        double p50 = number(json, p + "p50_ms");
        double p99 = number(json, p + "p99_ms");
        double max = number(json, p + "max_ms");
        assertTrue(p50 > 0 && p50 <= p99 && p99 <= max && max < 60_000, "stored -> shown " + p50 + " / " + p99
                + " / " + max + " ms");
        // shown is the earlier of the arrival placer and the rounds' frame, row by row
        assertTrue(number(json, p + "frame_p99_ms") >= p99 && number(json, p + "frame_max_ms") >= max, json);
        assertTrue(number(json, p + "by_arrival_placer") >= 50, "most rows are shown by the arrival placer: " + json);
        assertTrue(number(json, p + "place_p50_ms") > 0 && number(json, p + "iteration_seconds") > 0, json);
        assertTrue(number(json, p + "rss_file_bytes") > 0 && number(json, p + "heap_used_bytes") > 0, json);

        String q = "n" + N + "_quality_";
        double stress = number(json, q + "stress");
        double batch = number(json, q + "batch_stress");
        assertTrue(stress > 0 && batch > 0 && stress < 0.1, json);
        assertEquals(stress / batch, number(json, q + "stress_ratio"), 1e-4);
        assertTrue(stress <= 1.02 * batch, "streamed stress " + stress + " vs batch " + batch);
        assertTrue(number(json, q + "ari") >= 0.98, "ARI against batch DA-PWC: " + json);
        assertTrue(number(json, q + "batch_mds_iterations") > 10, json);
        assertTrue(number(json, "seconds") > 0, json);
        try (var left = Files.list(dir)) {
            assertEquals(0, left.count(), "the parts delete their row stores");
        }
    }

    private static double number(String json, String key) {
        Matcher m = Pattern.compile("\"" + key + "\":(-?[0-9.eE+-]+)").matcher(json);
        assertTrue(m.find(), key + " missing from " + json);
        return Double.parseDouble(m.group(1));
    }
}
