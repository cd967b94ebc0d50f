package io.meridian.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.meridian.synthetic.SyntheticDataset;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code meridian pwc --procs 2} under a real mpirun gives the single-process run's labels: over the row stores'
 * lower triangle (two-level collectives, two memory groups), over a triangle file (flat Open MPI) and over the square
 * file's blocks of full rows. N x the most clusters (400 x 6) outgrows the collectives' 1024-double minimum.
 */
class DistributedPwcIT {
    private static final int N = 400;

    @TempDir
    Path tmp;

    @Test
    void ranksOverTheTriangleOrTheSquareGiveTheSingleProcessLabels() throws Exception {
        Path data = tmp.resolve("data");
        SyntheticDataset blobs = SyntheticDataset.blobs(N, 6, 4, 1.0, 11);
        blobs.write(data, ByteOrder.LITTLE_ENDIAN);
        blobs.write(data, ByteOrder.LITTLE_ENDIAN, SyntheticDataset.Layout.TRIANGLE, SyntheticDataset.Progress.NONE);
        Path square = data.resolve(SyntheticDataset.DISTANCES_FILE);
        Path stores = PwcTriangleCommandTest.rowStores(square, tmp.resolve("stores"));
        Path single = tmp.resolve("single");
        assertEquals(0, Main.run(new String[] {"pwc", "--distances", square.toString(), "--n", "" + N, "--out",
            single.toString(), "--max-clusters", "6", "--seed", "5", "--quiet"}));
        String labels = Files.readString(single.resolve("clusters.tsv"));

        String stored = pwc(List.of("--row-stores", stores.toString(), "--block-rows", "64"), tmp.resolve("stores-2"),
                "--procs", "2", "--groups-per-node", "2");
        assertTrue(stored.contains("pwc: 2 processes (two-level, 2 memory groups): communication"), stored);
        assertEquals(labels, Files.readString(tmp.resolve("stores-2").resolve("clusters.tsv")), stored);

        String file = pwc(List.of("--triangle", data.resolve(SyntheticDataset.TRIANGLE_FILE).toString()),
                tmp.resolve("triangle-2"), "--procs", "2", "--flat-mpi");
        assertTrue(file.contains("pwc: 2 processes (flat Open MPI)"), file);
        assertEquals(labels, Files.readString(tmp.resolve("triangle-2").resolve("clusters.tsv")), file);

        String rows = pwc(List.of("--distances", square.toString()), tmp.resolve("square-2"), "--procs", "2");
        assertTrue(rows.contains("pwc: 2 processes (two-level, 1 memory group)"), rows);
        assertEquals(labels, Files.readString(tmp.resolve("square-2").resolve("clusters.tsv")), rows);
    }

    private String pwc(List<String> source, Path out, String... extra) throws Exception {
        String cp = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx256m", "-cp", cp, Main.class.getName(), "pwc"));
        cmd.addAll(source);
        cmd.addAll(List.of("--n", "" + N, "--out", out.toString(), "--max-clusters", "6", "--seed", "5",
                "--collective-timeout-ms", "60000"));
        cmd.addAll(List.of(extra));
        Path log = tmp.resolve(out.getFileName() + ".log");
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        try {
            if (!p.waitFor(240, TimeUnit.SECONDS)) {
                throw new AssertionError("pwc " + String.join(" ", extra) + " still running after 240 s");
            }
        } finally {
            p.descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly();
        }
        String text = Files.readString(log);
        assertEquals(0, p.exitValue(), text);
        return text;
    }
}
