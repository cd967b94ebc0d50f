package io.meridian.collective;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Deployment for members that are not MPI ranks: two leader daemons (two memory groups on this host, of 2 and 1
 * members) started by {@code deploy/bin/meridian-leaders} with mpirun, and three plain JVMs attaching by job id.
 */
class LeaderDaemonIT {
    private static final String MEMBER = MemberCheck.class.getName();

    @TempDir
    Path tmp;

    @Test
    void plainProcessesRunEveryCollectiveThroughTheLeadersAndAKilledOneFailsTheOthers() throws Exception {
        String job = "it-" + ProcessHandle.current().pid();
        Path root = tmp.resolve("shm");
        Map<String, String> env = new HashMap<>();
        env.put("MERIDIAN_CLASSPATH", Processes.testClasspath());
        env.put("MERIDIAN_LEADERS_STATE", tmp.resolve("state").toString());
        String script = Processes.home().resolve("deploy/bin/meridian-leaders").toString();
        try (Processes ps = new Processes()) {
            try {
                Processes.Running start = ps.start(List.of(script, "start", "--job", job, "--members", "2,1",
                        "--groups-per-node", "2", "--timeout-ms", "10000", "--region-root", root.toString()), env);
                assertEquals(0, start.await(120), start.output());
                assertTrue(start.output().contains("group 0 of 2") && start.output().contains("group 1 of 2"), start.output());

                int[][] members = {{0, 0}, {0, 1}, {1, 0}};
                Processes.Running[] runs = new Processes.Running[3];
                for (int i = 0; i < 3; i++) {
                    runs[i] = ps.start(Processes.java(MEMBER, job, "" + members[i][0], "" + members[i][1], "10000", root.toString()), env);
                }
                for (int i = 0; i < 3; i++) {
                    assertEquals(0, runs[i].await(120), runs[i].output());
                    assertTrue(runs[i].output().contains("CHECKED block " + i + " of 3 (group " + members[i][0] + " of 2)"),
                            runs[i].output());
                }
                Processes.Running status = ps.start(List.of(script, "status", "--job", job), env);
                status.await(30);
                assertTrue(status.output().contains("job " + job + ": running"), status.output());

                // the same daemons serve a second session; kill member 1 of group 0 in the middle of it
                for (int i = 0; i < 3; i++) {
                    runs[i] = ps.start(Processes.java(MEMBER, job, "" + members[i][0], "" + members[i][1], "10000",
                            root.toString(), "--forever"), env);
                }
                String victim = runs[1].awaitLine(l -> l.startsWith("RUNNING block 1 pid "), 120);
                long pid = Long.parseLong(victim.substring("RUNNING block 1 pid ".length()));
                long killedAt = System.nanoTime();
                runs[1].process.destroyForcibly();
                assertEquals(3, runs[0].await(60), runs[0].output());
                assertEquals(3, runs[2].await(60), runs[2].output());
                long seconds = (System.nanoTime() - killedAt) / 1_000_000_000L;
                assertTrue(seconds < 20, "the others failed only after " + seconds + " s");
                String named = "member 1 (block 1, pid " + pid + ") is gone";
                assertTrue(runs[0].output().contains(named), runs[0].output());
                // the other group learns it through its own leader, which stops when the job aborts
                assertTrue(runs[2].output().contains("COLLECTIVE FAILURE: collective call #"), runs[2].output());
            } finally {
                ps.start(List.of(script, "stop", "--job", job), env).await(60);
            }
            Processes.Running status = ps.start(List.of(script, "status", "--job", job), env);
            status.await(30);
            assertTrue(status.output().contains("job " + job + ": not running") || status.output().contains("no leader"),
                    status.output());
        }
    }
}
