package io.meridian.stream.live;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.meridian.collective.JobIds;
import io.meridian.collective.TwoLevelCollectives;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class GenerationsTest {
    @TempDir
    Path dir;

    private static void region(Path root, String jobId) throws Exception {
        Path file = TwoLevelCollectives.regionPath(root, jobId, 0);
        Files.createDirectories(file.getParent());
        Files.writeString(file, "");
    }

    @Test
    void theClusteringGroupsRegionIsAValidJobIdThatNoTaskTakesForAGenerationOfTheRounds() throws Exception {
        Path root = dir.resolve("regions");
        for (String job : new String[] {"short-map", "x".repeat(64), "t-" + "y".repeat(58) + "-map"}) {
            Generations generations = new Generations(dir.resolve("snapshots-" + job.length()), job);
            for (long g : new long[] {0, 7, 123_456_789_012L}) {
                String cluster = generations.clusterJobId(g);
                JobIds.validate(cluster);
                assertTrue(cluster.length() <= JobIds.MAX_BYTES, cluster);
                assertNotEquals(generations.jobId(g), cluster);
                // the two-host test finds the rounds' daemons' log by its end
                assertTrue(!cluster.endsWith("-g" + g), cluster);
            }
            region(root, generations.clusterJobId(5));
            assertEquals(-1, generations.newestRegion(root), job + ": a clustering region is not a generation");
            region(root, generations.jobId(2));
            assertEquals(2, generations.newestRegion(root), job);
        }
    }
}
