package io.meridian.collective;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The collectives among MPI ranks under a real mpirun: flat and two-level, P = 1..6, M = 1, 2, 3, and failures. */
class TwoLevelCollectivesIT {
    private static final String CHECK = CollectiveCheck.class.getName();

    /** The failure tests kill processes, which leaves their regions behind: keep those out of /dev/shm. */
    @TempDir
    Path tmp;

    @Test
    void everyCollectiveForOneToSixRanksFlatAndWithOneToThreeGroupsPerNode() throws Exception {
        try (Processes ps = new Processes()) {
            Processes.Running run = ps.start(Processes.mpirun(6, CHECK, "--modes", "flat,1,2,3"), Map.of());
            int exit = run.await(300);
            String out = run.output();
            assertEquals(0, exit, out);
            for (int p = 1; p <= 6; p++) {
                for (String mode : new String[] {"flat", "1", "2", "3"}) {
                    assertTrue(out.contains("CHECKED p=" + p + " mode=" + mode + " "), "p=" + p + " mode=" + mode + " missing:\n" + out);
                }
            }
            // the M groups really are M groups (fewer when there are fewer ranks)
            assertTrue(out.contains("CHECKED p=6 mode=3 (3 groups)"), out);
            assertTrue(out.contains("CHECKED p=5 mode=2 (2 groups)"), out);
            assertTrue(out.contains("CHECKED p=2 mode=3 (2 groups)"), out);
        }
    }

    @Test
    void aHungMemberFailsTheOthersWithinTheTimeoutNamingIt() throws Exception {
        try (Processes ps = new Processes()) {
            long start = System.nanoTime();
            Processes.Running run = ps.start(Processes.mpirun(4, CHECK, "--min-procs", "4", "--modes", "2",
                    "--stuck-block", "1", "--timeout-ms", "2000", "--region-root", tmp.toString()), Map.of());
            String stuck = run.awaitLine(l -> l.startsWith("STUCK block 1 pid "), 120);
            String pid = stuck.substring("STUCK block 1 pid ".length());
            int exit = run.await(120);
            long seconds = (System.nanoTime() - start) / 1_000_000_000L;
            String out = run.output();
            assertNotEquals(0, exit, out);
            assertTrue(out.contains("timed out after 2000 ms waiting for member 1 (block 1, pid " + pid + ", alive)"), out);
            assertTrue(seconds < 100, "took " + seconds + " s");
        }
    }

    @Test
    void aKilledRankEndsTheRunNamingIt() throws Exception {
        try (Processes ps = new Processes()) {
            Processes.Running run = ps.start(Processes.mpirun(3, CHECK, "--min-procs", "3", "--modes", "1",
                    "--stuck-block", "2", "--timeout-ms", "60000", "--region-root", tmp.toString()), Map.of());
            String stuck = run.awaitLine(l -> l.startsWith("STUCK block 2 pid "), 120);
            long pid = Long.parseLong(stuck.substring("STUCK block 2 pid ".length()));
            long killedAt = System.nanoTime();
            ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly);
            int exit = run.await(60);
            long seconds = (System.nanoTime() - killedAt) / 1_000_000_000L;
            String out = run.output();
            assertNotEquals(0, exit, out);
            // well before the 60 s timeout: either our leader saw the member gone or mpirun saw the rank die
            assertTrue(seconds < 30, "took " + seconds + " s:\n" + out);
            assertTrue(out.contains("member 2 (block 2, pid " + pid + ") is gone") || out.contains("PID " + pid), out);
        }
    }
}
