package io.meridian.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.meridian.stream.row.RowStoreLayout;
import java.io.File;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The live map at N = 20,000 in Storm's LocalCluster ({@code ./meridian local}) at the default capacity of 1,000,000,
 * in a JVM of 600 MB of heap: the 16-bit square of 20,000 points is 800 MB and its triangle 400 MB, so nothing
 * O(N^2) can live on the heap of a run that finishes. The row stores' value files take the triangle on disk.
 */
class LocalScaleIT {
    private static final int N = 20_000;
    private static final int BLOCK_ROWS = 256;
    private static final int HEAP_MB = 600;

    @TempDir
    Path dir;

    @Test
    void aTwentyThousandPointMapRunsInAHeapSmallerThanItsMatrixAndStoresTheTriangle() throws Exception {
        Path config = dir.resolve("scale.yaml");
        Files.writeString(config, String.format("""
                topology: {name: local-scale, workers: 1}
                ingest:
                  source: file
                  local: {n: %d, badRows: 0, seed: 5, output: %s}
                  validation: {maxIdAhead: 4096}
                  rowStore: {directory: %s, blockRows: %d, parallelism: 2}
                metrics: {localPort: 0}
                map: {tasks: 2, maxClusters: 3, snapshotDirectory: %s}
                """, N, dir.resolve("out"), dir.resolve("stores"), BLOCK_ROWS, dir.resolve("map")));
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx" + HEAP_MB + "m", "-XX:+ExitOnOutOfMemoryError"));
        // the module flags the launcher gives every JVM (surefire's argLine has the same)
        for (String arg : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
            if (arg.startsWith("--add-") || arg.startsWith("-Dchronicle")) {
                cmd.add(arg);
            }
        }
        cmd.addAll(List.of("-Dlog4j2.configurationFile=" + Cli.HOME.resolve("deploy/conf/cli-log4j2.xml"),
                "-Dmeridian.log.file=" + dir.resolve("local.log"), "-cp", Cli.classPath(), Main.class.getName(),
                "local", "--config", config.toString()));
        Path out = dir.resolve("stdout.txt");
        Process p = new ProcessBuilder(cmd).redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
                .redirectErrorStream(true).redirectOutput(out.toFile()).start();
        long start = System.nanoTime();
        if (!p.waitFor(25, TimeUnit.MINUTES)) {
            p.descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly();
            throw new AssertionError("./meridian local at N = " + N + " still runs after 25 minutes: "
                    + tail(out));
        }
        String output = Files.readString(out, StandardCharsets.UTF_8);
        System.out.printf("IT: ./meridian local, N = %d, -Xmx%dm: %.0f s%n%s%n", N, HEAP_MB,
                (System.nanoTime() - start) / 1e9, tail(out));
        assertEquals(0, p.exitValue(), "./meridian local failed (an OutOfMemoryError exits 3): " + tail(out));
        assertTrue(output.contains("(" + N + " rows stored"), "every row stored: " + tail(out));
        Matcher map = Pattern.compile("live map: .* N = (\\d+),").matcher(output);
        assertTrue(map.find() && Integer.parseInt(map.group(1)) == N, "the map holds every point: " + tail(out));

        Path stores = dir.resolve("stores");
        int blocks = (N + BLOCK_ROWS - 1) / BLOCK_ROWS;
        long onDisk = allocatedBytes(stores);
        long triangle = RowStoreLayout.triangleBytes(N);
        assertTrue(onDisk >= triangle && onDisk <= triangle + 4096L * blocks, "the row stores take " + onDisk
                + " bytes on disk for a triangle of " + triangle + " (the square: " + 2L * N * N + ")");
    }

    private static String tail(Path file) throws Exception {
        List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
        return String.join("\n", lines.subList(Math.max(0, lines.size() - 25), lines.size()));
    }

    /** Bytes the value files take on disk (their allocated blocks: holes take none). */
    private static long allocatedBytes(Path stores) throws Exception {
        Process du = new ProcessBuilder("sh", "-c", "du -B1 -c block-*" + RowStoreLayout.VALUES + " | tail -n 1")
                .directory(stores.toFile()).redirectErrorStream(true).start();
        String text = new String(du.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        assertEquals(0, du.waitFor(), text);
        return Long.parseLong(text.split("\\s+")[0]);
    }
}
