package io.meridian.perf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.meridian.collective.TwoLevelCollectives;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code ./meridian bench scale} at small N: its parts run alone and together, and the JSON line carries every figure
 * of issue 32's goal 8 that they make, keyed by N, with values that hold together (the store is the triangle, both
 * cores' passes cover every pair, the heap stays small).
 */
class ScaleBenchTest {
    private static final Pattern NUMBER = Pattern.compile("\"([a-z0-9_]+)\":(-?[0-9.eE+-]+)");

    @Test
    void theRefinementPartsAtTwoSizesPutEveryFigureUnderItsN(@TempDir Path dir) throws Exception {
        // placement and quality have their own test (ScaleBenchPartsTest); quality's default N is 50,000
        Map<String, Double> f = run("--n", "2000,3000", "--part", "storage,smacof,em", "--iterations", "2", "--dir",
                dir.toString());
        for (int n : new int[] {2000, 3000}) {
            String k = "n" + n + "_";
            long triangle = (long) n * (n - 1);
            assertEquals(triangle, f.get(k + "triangle_bytes"), 0.5, k);
            // every stored value counted, and at most the files' last partly used pages over
            assertTrue(f.get(k + "stored_bytes") >= triangle && f.get(k + "stored_bytes") < triangle + (1 << 20), k);
            for (String figure : new String[] {"store_seconds", "smacof_seconds", "smacof_cpu_seconds",
                "roofline_seconds", "em_seconds", "em_cpu_seconds", "ns_per_pair", "em_ns_per_pair", "heap_used_bytes",
                "rss_anon_bytes", "rss_file_bytes", "load_average"}) {
                assertTrue(f.containsKey(k + figure), k + figure + " missing from " + f.keySet());
                assertTrue(f.get(k + figure) > 0, k + figure + " = " + f.get(k + figure));
            }
            double pairs = (double) n * (n - 1) / 2;
            assertEquals(f.get(k + "smacof_seconds") * 1e9 / pairs, f.get(k + "ns_per_pair"), 1e-3 * f.get(k
                    + "ns_per_pair"), k);
            assertEquals(f.get(k + "em_seconds") / f.get(k + "smacof_seconds"), f.get(k + "em_over_smacof"),
                    1e-3 * f.get(k + "em_over_smacof"), k);
            assertEquals(f.get(k + "smacof_seconds") / f.get(k + "roofline_seconds"), f.get(k
                    + "smacof_over_roofline"), 1e-3 * f.get(k + "smacof_over_roofline"), k);
            assertTrue(f.get(k + "heap_used_bytes") < 200e6, k + "heap " + f.get(k + "heap_used_bytes"));
        }
        assertEquals(2, f.get("tasks"));
        assertTrue(f.get("seconds") > f.get("n2000_store_seconds") + f.get("n3000_store_seconds"));
    }

    @Test
    void partEmAloneStoresTheRowsItNeedsAndTimesSmacofBesideIt(@TempDir Path dir) throws Exception {
        Map<String, Double> f = run("--n", "2000", "--part", "em", "--iterations", "1", "--dir", dir.toString());
        assertTrue(f.get("n2000_em_seconds") > 0 && f.get("n2000_smacof_seconds") > 0, f.toString());
        assertTrue(f.get("n2000_em_over_smacof") > 0, f.toString());
        assertFalse(f.containsKey("n2000_roofline_seconds"), "part em alone times no roofline");
        assertFalse(Files.exists(dir.resolve("n2000")), "the store is deleted without --keep");
    }

    @Test
    void partClusteringRunsAWholeDistributedDaPwcThatFindsTheBlobs(@TempDir Path dir) throws Exception {
        Map<String, Double> f = run("--n", "2000", "--part", "clustering", "--dir", dir.toString());
        String k = "n2000_pwc_run_";
        assertTrue(f.get(k + "seconds") > 0, f.toString());
        assertTrue(f.get(k + "em_iterations") > 1, f.toString());
        assertTrue(f.get(k + "power_iterations") >= 24, "a split test's two power methods, 12 iterations each at least");
        assertEquals(f.get(k + "seconds") / (f.get(k + "em_iterations") + f.get(k + "power_iterations")),
                f.get(k + "seconds_per_pass"), 1e-3 * f.get(k + "seconds_per_pass"));
        assertEquals(ScaleRows.CENTRES, f.get(k + "clusters"), 0.5, f.toString());
        assertTrue(f.get(k + "ari_truth") > 0.98, "the 10 blobs found: " + f);
        assertTrue(f.get(k + "heap_used_bytes") > 0 && f.get(k + "heap_used_bytes") < 200e6, f.toString());
        assertFalse(f.containsKey("n2000_smacof_seconds"), "part clustering alone times no SMACOF");
        assertFalse(Files.exists(dir.resolve("n2000")), "the store is deleted without --keep");
    }

    @Test
    void aKilledRunLeavesNeitherItsRegionsNorItsStores(@TempDir Path dir) throws Exception {
        String pid = Long.toString(ProcessHandle.current().pid());
        Path jobs = TwoLevelCollectives.regionPath(ScaleBench.REGIONS, "bench-scale-" + pid, 0).getParent().getParent();
        Path own = Files.createDirectories(jobs.resolve("bench-scale-pwc-" + pid));
        Files.writeString(own.resolve("group-0.region"), "region");
        Path another = Files.createDirectories(jobs.resolve("bench-scale-pwc-1" + pid)); // another process's job
        Path stores = Files.createDirectories(dir.resolve("n2000"));
        Files.writeString(stores.resolve("block-0.values"), "rows");
        Path quality = Files.createDirectories(dir.resolve("quality-n3000"));
        Path unrelated = Files.createDirectories(dir.resolve("mine"));
        try {
            Thread hook = ScaleBench.cleanupOnKill(dir, new int[] {2000}, 3000, false);
            hook.start();
            hook.join();
            assertFalse(Files.exists(own), "this run's regions removed");
            assertFalse(Files.exists(stores) || Files.exists(quality), "this run's stores removed");
            assertTrue(Files.isDirectory(another) && Files.isDirectory(unrelated), "nothing else removed");

            Files.createDirectories(stores);
            Thread keeping = ScaleBench.cleanupOnKill(dir, new int[] {2000}, 3000, true);
            keeping.start();
            keeping.join();
            assertTrue(Files.isDirectory(stores), "--keep keeps the stores");
        } finally {
            Files.deleteIfExists(another);
        }
    }

    private static Map<String, Double> run(String... args) throws Exception {
        String[] full = new String[args.length + 1];
        full[0] = "scale";
        System.arraycopy(args, 0, full, 1, args.length);
        BenchBadInputTest.Outcome r = BenchBadInputTest.bench(full);
        assertEquals(0, r.status(), r.err());
        String json = r.out().lines().filter(l -> l.startsWith("{\"benchmark\":\"scale\"")).findFirst()
                .orElseThrow(() -> new AssertionError("no JSON line in: " + r.out()));
        Map<String, Double> figures = new HashMap<>();
        Matcher m = NUMBER.matcher(json);
        while (m.find()) {
            figures.put(m.group(1), Double.parseDouble(m.group(2)));
        }
        List<String> parts = List.of(args[List.of(args).indexOf("--part") + 1].split(","));
        if (parts.contains("smacof") || parts.contains("em")) {
            assertTrue(r.out().contains("round 1"), "progress while it runs: " + r.out());
        }
        return figures;
    }
}
