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
    void stopAndStatusKeepToTheJobIdRuleAndNeverSignalAPidReusedByAnotherProcess() throws Exception {
        Map<String, String> env = new HashMap<>();
        env.put("MERIDIAN_CLASSPATH", Processes.testClasspath());
        Path state = tmp.resolve("state");
        env.put("MERIDIAN_LEADERS_STATE", state.toString());
        String script = Processes.home().resolve("deploy/bin/meridian-leaders").toString();
        Process bystander = new ProcessBuilder("sleep", "600").start();
        try (Processes ps = new Processes()) {
            // "../x" would read the pid file x.pid one directory up and signal whatever it names
            java.nio.file.Files.createDirectories(state);
            java.nio.file.Files.writeString(tmp.resolve("x.pid"), bystander.pid() + "\n");
            for (String command : List.of("stop", "status", "start")) {
                for (String bad : List.of("../x", ".hidden", "a/b", "x".repeat(65))) {
                    List<String> args = new java.util.ArrayList<>(List.of(script, command, "--job", bad));
                    if (command.equals("start")) {
                        args.addAll(List.of("--members", "1"));
                    }
                    Processes.Running r = ps.start(args, env);
                    assertEquals(2, r.await(60), command + " " + bad + ": " + r.output());
                    assertTrue(r.output().contains("meridian leaders: --job: job id '" + bad + "': use 1-64 letters"),
                            command + " " + bad + ": " + r.output());
                }
            }
            // a pid file whose pid now belongs to another process (another start time) is stale, not a target
            java.nio.file.Files.writeString(state.resolve("reused.pid"), bystander.pid() + " 1\n");
            Processes.Running status = ps.start(List.of(script, "status", "--job", "reused"), env);
            status.await(60);
            assertTrue(status.output().contains("job reused: not running"), status.output());
            Processes.Running stop = ps.start(List.of(script, "stop", "--job", "reused"), env);
            assertEquals(0, stop.await(60), stop.output());
            assertTrue(stop.output().contains("job reused is not running (its pid file named no running mpirun of it"),
                    stop.output());
            assertTrue(bystander.isAlive(), "the process now holding the pid was not signalled");
            assertTrue(!java.nio.file.Files.exists(state.resolve("reused.pid")), "the stale pid file is removed");
        } finally {
            bystander.destroyForcibly();
        }
    }

    @Test
    void plainProcessesRunEveryCollectiveThroughTheLeadersWhichSleepBetweenSessionsAndAKilledOneFailsTheOthers()
            throws Exception {
        String job = "it-" + ProcessHandle.current().pid();
        Path root = tmp.resolve("shm");
        Map<String, String> env = new HashMap<>();
        env.put("MERIDIAN_CLASSPATH", Processes.testClasspath());
        env.put("MERIDIAN_LEADERS_STATE", tmp.resolve("state").toString());
        String script = Processes.home().resolve("deploy/bin/meridian-leaders").toString();
        try (Processes ps = new Processes()) {
            try {
                int metricsPort = freePorts();
                Processes.Running start = ps.start(List.of(script, "start", "--job", job, "--members", "2,1",
                        "--groups-per-node", "2", "--timeout-ms", "10000", "--region-root", root.toString(),
                        "--metrics-port", Integer.toString(metricsPort), "--metrics-host", "127.0.0.1"), env);
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

                // each daemon serves its metrics (node group j on the port + j): its group, its calls at both levels
                for (int group = 0; group < 2; group++) {
                    String url = "http://127.0.0.1:" + (metricsPort + group) + "/metrics";
                    String text = io.meridian.metrics.MetricSamples.fetch(url, java.time.Duration.ofSeconds(10));
                    io.meridian.metrics.MetricSamples m = io.meridian.metrics.MetricSamples.parse(text);
                    int g = group;
                    assertEquals(group == 0 ? 2 : 1, m.sum("meridian_leader_members", x -> x.label("collective_job")
                            .equals(job) && x.label("group").equals(Integer.toString(g))), url);
                    assertTrue(m.sum("meridian_collective_call_seconds_count", x -> x.label("level").equals("mpi")) > 0,
                            url + ": the leaders exchanged over MPI");
                    assertTrue(m.sum("meridian_collective_bytes_total", x -> x.label("level").equals("mpi")) > 0, url);
                    promtoolCheckMetrics(url, text);
                }

                // the same daemons serve a second session; kill member 1 of group 0 in the middle of it
                for (int i = 0; i < 3; i++) {
                    runs[i] = ps.start(Processes.java(MEMBER, job, "" + members[i][0], "" + members[i][1], "10000",
                            root.toString(), "--forever"), env);
                }
                String victim = runs[1].awaitLine(l -> l.startsWith("RUNNING block 1 pid "), 120);
                // between the sessions the daemons slept on their doorbells; this session's first arrival rang them
                for (int group = 0; group < 2; group++) {
                    String url = "http://127.0.0.1:" + (metricsPort + group) + "/metrics";
                    io.meridian.metrics.MetricSamples m = io.meridian.metrics.MetricSamples.parse(
                            io.meridian.metrics.MetricSamples.fetch(url, java.time.Duration.ofSeconds(10)));
                    assertTrue(m.sum("meridian_collective_leader_sleeps_total", x -> true) > 0, url + ": slept");
                    assertTrue(m.sum("meridian_collective_leader_doorbell_rings_total", x -> true) > 0,
                            url + ": a member rang the sleeping daemon");
                }
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

    /** Two adjacent free ports (the daemons of node groups 0 and 1 take the port and the next). */
    private static int freePorts() throws java.io.IOException {
        for (int attempt = 0; attempt < 50; attempt++) {
            int port;
            try (java.net.ServerSocket s = new java.net.ServerSocket(0)) {
                port = s.getLocalPort();
            }
            if (port < 65535) {
                try (java.net.ServerSocket next = new java.net.ServerSocket(port + 1)) {
                    return port;
                } catch (java.io.IOException taken) {
                    // try another pair
                }
            }
        }
        throw new IllegalStateException("no two adjacent free ports");
    }

    /** Prometheus's own linter on what a daemon served: no error, no naming problem. */
    private static void promtoolCheckMetrics(String url, String text) throws Exception {
        Process p = new ProcessBuilder("promtool", "check", "metrics").redirectErrorStream(true).start();
        try (java.io.OutputStream in = p.getOutputStream()) {
            in.write(text.getBytes(java.nio.charset.StandardCharsets.UTF_8));
        }
        String out = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, java.util.concurrent.TimeUnit.SECONDS), "promtool check metrics finished");
        assertEquals(0, p.exitValue(), "promtool check metrics on " + url + ": " + out);
        assertEquals("", out.strip(), "promtool check metrics on " + url + " found problems");
    }
}
