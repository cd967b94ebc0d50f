package io.meridian.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.meridian.cli.MdsCommandTest.Outcome;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The quality targets at N = 2000, 8-D, 10 blobs, through {@code gen} and {@code pwc}, with the issue's own
 * options: --std 2 (separated) and --std 4 (overlapping); gen draws centres in [-10, 10)^D like scikit-learn's
 * make_blobs. About 15 s of CPU each on a quiet machine.
 */
class PwcBlobsQualityTest {
    @TempDir
    static Path dir;

    static double run(String std, int maxClusters, int expectedClusters) throws Exception {
        Path data = dir.resolve("blobs-" + std);
        Outcome gen = MdsCommandTest.main("gen", "--kind", "blobs", "--n", "2000", "--dim", "8", "--centers", "10",
                "--std", std, "--seed", "1", "--out", data.toString());
        assertEquals(0, gen.status(), gen.err());
        Path out = dir.resolve("pwc-" + std);
        Outcome r = MdsCommandTest.main("pwc", "--distances", data.resolve("distances.bin").toString(), "--n", "2000",
                "--out", out.toString(), "--max-clusters", "" + maxClusters, "--quiet");
        assertEquals(0, r.status(), r.err());
        int clusters = PwcCommandTest.intField(Files.readString(out.resolve("summary.json")), "clusters");
        if (expectedClusters > 0) {
            assertEquals(expectedClusters, clusters, "clusters found");
        }
        return PwcCommandTest.ari(out, data.resolve("labels.tsv"), 2000);
    }

    @Test
    void separatedBlobsAreFoundExactlyEvenWithRoomForMoreClusters() throws Exception {
        assertEquals(1.0, run("2", 12, 10), 1e-12);
    }

    @Test
    void overlappingBlobsReachAnAdjustedRandIndexOfAtLeast085() throws Exception {
        double ari = run("4", 10, 10);
        assertTrue(ari >= 0.85, "ARI " + ari);
    }
}
