package io.meridian.topology;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.meridian.config.MeridianConfig;
import io.meridian.metrics.MetricSamples;
import io.meridian.stream.row.RowStoreLayout;
import io.meridian.stream.row.RowStoreReader;
import io.meridian.synthetic.GeneratedRows;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The whole ingestion topology in a real Storm LocalCluster, on the file source with bad rows mixed in. */
class LocalIngestTest {
    @TempDir
    Path dir;

    @Test
    void storesEveryValidRowOnceAndDeadLettersEveryBadOneWithItsReason() throws Exception {
        int n = 300;
        int bad = 12;
        int width = 512;
        MeridianConfig config = MeridianConfig.parse(String.format("""
                topology: {name: local-test, workers: 2}
                ingest:
                  source: file
                  maxPoints: %d
                  local: {n: %d, badRows: %d, seed: 7, output: %s}
                  rowStore: {directory: %s, blockRows: 64, parallelism: 2}
                  validation: {parallelism: 2, maxIdAhead: 1000}
                metrics: {localPort: 0}
                """, width, n, bad, dir.resolve("out"), dir.resolve("stores")), "test.yaml");
        LocalRun.Result r = LocalRun.run(config, Duration.ofSeconds(120));

        assertEquals(n, r.storedOnDisk());
        // the source computed its rows from generated points and wrote no matrix file
        GeneratedRows generated = GeneratedRows.uniform(n, 7);
        try (Stream<Path> written = Files.list(dir.resolve("out"))) {
            assertEquals(List.of(), written.filter(f -> f.getFileName().toString().endsWith(".bin")).toList());
        }
        try (RowStoreReader stores = new RowStoreReader(r.rowStores(), 64, width)) {
            for (int id = 0; id < n; id++) {
                short[] expected = new short[id];
                short[] stored = new short[id];
                generated.copy(id, 0, id, expected);
                assertTrue(stores.isStored(id), "row " + id + " stored");
                stores.copy(id, 0, id, stored);
                assertArrayEquals(expected, stored, "row " + id);
            }
        }
        // the value files have the size of their blocks' triangles (five blocks of 64 rows: rows 0..319); the disk
        // holds the rows stored, rounded to a page a block, not the n x maxPoints square of before (307,200 bytes)
        assertEquals(RowStoreLayout.triangleBytes(320), apparentBytes(r.rowStores()));
        long onDisk = allocatedBytes(r.rowStores());
        assertTrue(onDisk >= RowStoreLayout.triangleBytes(n) && onDisk <= RowStoreLayout.triangleBytes(n) + 5 * 4096,
                "the row stores' value files take " + onDisk + " bytes on disk for a triangle of "
                        + RowStoreLayout.triangleBytes(n));

        List<String> rejected = Files.readAllLines(r.rejectedFile());
        assertEquals(bad, rejected.size(), "one dead letter per bad row: " + rejected);
        Map<String, Integer> byReason = new TreeMap<>();
        rejected.forEach(line -> byReason.merge(line.split("\t")[0], 1, Integer::sum));
        assertEquals(Map.of("above-one", 2, "id-out-of-range", 2, "malformed", 2, "nan", 2, "negative", 2,
                "wrong-length", 2), byReason);

        RowCounts counts = r.counts();
        assertTrue(r.metrics().startsWith("http://localhost:"), "the LocalCluster served its metrics: " + r.metrics());
        assertEquals(n, counts.stored, counts.toJson());
        assertEquals(n + bad, counts.received, counts.toJson());
        assertEquals(bad, counts.rejectedTotal(), counts.toJson());
        assertEquals(2, counts.rejected.get("nan"));
        assertEquals(bad, counts.deadLettered);
        assertTrue(counts.latencySamples > 0);

        // the endpoint: Storm's, Meridian's, the collectives' and the JVM's metrics, valid for Prometheus
        MetricSamples samples = MetricSamples.parse(r.metricsText());
        assertTrue(samples.sum("storm_acked_total", s -> s.label("component").equals("row-store")) > 0,
                "Storm's own counters with their component");
        for (MetricSamples.Sample task : samples.get("meridian_map_placed_total", s -> true)) {
            assertEquals(n, Math.round(task.value()), "every map task placed every point: " + task);
        }
        assertTrue(samples.sum("meridian_map_round_seconds_count", s -> true) > 0, "round times as a histogram");
        assertTrue(samples.get("meridian_map_round_seconds_bucket", s -> s.label("le").equals("+Inf")).size() >= 2,
                "one histogram per map task");
        assertTrue(samples.sum("meridian_collective_call_seconds_count",
                s -> s.label("kind").equals("allreduce") && s.label("level").equals("shared_memory")) > 0,
                "the map's collective calls, by kind and level");
        assertTrue(samples.sum("jvm_memory_used_bytes", s -> true) > 0, "the JVM's own metrics");
        assertTrue(samples.sum("meridian_process_resident_bytes", s -> s.label("kind").equals("anonymous")) > 0
                && samples.sum("meridian_process_resident_bytes", s -> s.label("kind").equals("file")) > 0,
                "resident memory by kind, the mapped row stores as file-backed");
        assertEquals(1, samples.get("meridian_map_stress", s -> s.label("task").length() > 0
                && s.label("topology").equals("local-test")).stream().map(s -> s.label("topology_id")).distinct()
                .count(), "labelled with the topology's name and id");
        PromtoolCheck.metrics(r.metricsText());
    }

    private static long apparentBytes(Path stores) throws Exception {
        long total = 0;
        try (var files = Files.newDirectoryStream(stores, "block-*" + RowStoreLayout.VALUES)) {
            for (Path f : files) {
                total += Files.size(f);
            }
        }
        return total;
    }

    /** Bytes the value files take on disk (their allocated blocks, as du counts them: holes take none). */
    private static long allocatedBytes(Path stores) throws Exception {
        Process du = new ProcessBuilder("sh", "-c", "du -B1 -c block-*" + RowStoreLayout.VALUES + " | tail -n 1")
                .directory(stores.toFile()).redirectErrorStream(true).start();
        String out = new String(du.getInputStream().readAllBytes()).trim();
        assertEquals(0, du.waitFor(), out);
        return Long.parseLong(out.split("\\s+")[0]);
    }
}
