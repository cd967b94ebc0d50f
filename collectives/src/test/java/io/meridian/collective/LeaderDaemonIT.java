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

    private static final String TWO_GROUPS = TwoGroupMemberCheck.class.getName();

    /** {@code leaders start} of two daemons (node groups of 2 and 1 members); returns the seconds it took. */
    private static double start(Processes ps, Map<String, String> env, String job, Path root, List<String> more)
            throws Exception {
        List<String> args = new java.util.ArrayList<>(List.of(Processes.home().resolve("deploy/bin/meridian-leaders")
                .toString(), "start", "--job", job, "--members", "2,1", "--groups-per-node", "2", "--timeout-ms",
                "10000", "--region-root", root.toString()));
        args.addAll(more);
        long t0 = System.nanoTime();
        Processes.Running start = ps.start(args, env);
        assertEquals(0, start.await(120), start.output());
        double seconds = (System.nanoTime() - t0) / 1e9;
        assertTrue(start.output().contains("group 0 of 2") && start.output().contains("group 1 of 2"), start.output());
        return seconds;
    }

    private static void stop(Processes ps, Map<String, String> env, String job) throws Exception {
        ps.start(List.of(Processes.home().resolve("deploy/bin/meridian-leaders").toString(), "stop", "--job", job), env)
                .await(60);
    }

    private Map<String, String> env() {
        Map<String, String> env = new HashMap<>();
        env.put("MERIDIAN_CLASSPATH", Processes.testClasspath());
        env.put("MERIDIAN_LEADERS_STATE", tmp.resolve("state").toString());
        return env;
    }

    /**
     * One leader daemon per node group serves two groups (a live map's rounds and clustering) in one mpirun job: every
     * member process calls collectives on both at once from two threads, the second group's calls of a round in the
     * opposite order and node group 1 starting with the second group, so the daemons' two MPI exchanges interleave in
     * different orders on each side; every result is checked, for hundreds of rounds. Prints how long the daemons took
     * to serve with one group and with two, and a first-group call's latency with the second idle and busy.
     */
    @Test
    void oneDaemonPerNodeGroupServesTwoGroupsWhoseCallsInterleaveInOppositeOrders() throws Exception {
        String job = "it2-" + ProcessHandle.current().pid();
        String second = job + "-pwc";
        Path root = tmp.resolve("shm");
        Map<String, String> env = env();
        String script = Processes.home().resolve("deploy/bin/meridian-leaders").toString();
        try (Processes ps = new Processes()) {
            try {
                // startup, one group against two, alternating (the same script, JVMs and MPI start either way)
                List<Double> one = new java.util.ArrayList<>();
                List<Double> two = new java.util.ArrayList<>();
                for (int i = 0; i < 2; i++) {
                    one.add(start(ps, env, job + "-one" + i, root, List.of()));
                    stop(ps, env, job + "-one" + i);
                    if (i == 0) {
                        two.add(start(ps, env, job + "-two", root, List.of("--second-job", job + "-two-pwc")));
                        stop(ps, env, job + "-two");
                    }
                }
                int metricsPort = freePorts();
                two.add(start(ps, env, job, root, List.of("--second-job", second, "--second-capacity", "4096",
                        "--second-reduce-capacity", "512", "--second-timeout-ms", "20000", "--metrics-port",
                        Integer.toString(metricsPort), "--metrics-host", "127.0.0.1")));
                System.out.printf(java.util.Locale.ROOT, "LeaderDaemonIT: leaders start -> every region serving (s):"
                        + " one group %s, two groups %s%n", one, two);
                assertTrue(java.nio.file.Files.exists(TwoLevelCollectives.regionPath(root, second, 0))
                        && java.nio.file.Files.exists(TwoLevelCollectives.regionPath(root, second, 1)),
                        "each daemon made its region of the second job");

                int[][] members = {{0, 0}, {0, 1}, {1, 0}};
                int rounds = 300;
                Processes.Running[] runs = new Processes.Running[3];
                for (int i = 0; i < 3; i++) {
                    runs[i] = ps.start(Processes.java(TWO_GROUPS, root.toString(), "" + members[i][0],
                            "" + members[i][1], "10000", "" + rounds, job, second), env);
                }
                for (int i = 0; i < 3; i++) {
                    assertEquals(0, runs[i].await(300), runs[i].output());
                    for (String j : List.of(job, second)) {
                        assertTrue(runs[i].output().contains("CHECKED job " + j + " block " + i + " of 3: " + rounds
                                + " rounds of 6 calls"), runs[i].output());
                    }
                }
                Processes.Running status = ps.start(List.of(script, "status", "--job", job), env);
                status.await(30);
                assertTrue(status.output().contains("job " + job + ": running")
                        && status.output().contains("also serves job " + second), status.output());

                for (int group = 0; group < 2; group++) {
                    String url = "http://127.0.0.1:" + (metricsPort + group) + "/metrics";
                    String text = io.meridian.metrics.MetricSamples.fetch(url, java.time.Duration.ofSeconds(10));
                    io.meridian.metrics.MetricSamples m = io.meridian.metrics.MetricSamples.parse(text);
                    String g = Integer.toString(group);
                    for (String j : List.of(job, second)) {
                        assertEquals(group == 0 ? 2 : 1, m.sum("meridian_leader_members", x -> x.label(
                                "collective_job").equals(j) && x.label("group").equals(g)), url + " " + j);
                    }
                    assertTrue(m.sum("meridian_collective_call_seconds_count", x -> x.label("level").equals("mpi")) > 0,
                            url);
                    promtoolCheckMetrics(url, text);
                }

                for (int i = 0; i < 3; i++) {
                    runs[i] = ps.start(Processes.java(TWO_GROUPS, root.toString(), "" + members[i][0],
                            "" + members[i][1], "10000", "latency", job, second), env);
                }
                for (int i = 0; i < 3; i++) {
                    assertEquals(0, runs[i].await(300), runs[i].output());
                    System.out.println("LeaderDaemonIT: " + runs[i].awaitLine(l -> l.startsWith("LATENCY"), 10));
                }
            } finally {
                stop(ps, env, job);
            }
            assertTrue(!java.nio.file.Files.exists(TwoLevelCollectives.regionPath(root, job, 0))
                    && !java.nio.file.Files.exists(TwoLevelCollectives.regionPath(root, second, 0)),
                    "stopping the daemons removed both groups' regions");
        }
    }

    /**
     * A member of the second group only is killed: its group's members fail naming it, and so do the first group's
     * members on its host (their daemon fails both regions with the reason); the other host's members of both groups
     * fail within seconds too (the job aborts), none hangs.
     */
    @Test
    void aKilledMemberOfTheSecondGroupFailsTheMembersOfBothGroups() throws Exception {
        String job = "it3-" + ProcessHandle.current().pid();
        String second = job + "-pwc";
        Path root = tmp.resolve("shm");
        Map<String, String> env = env();
        try (Processes ps = new Processes()) {
            try {
                start(ps, env, job, root, List.of("--second-job", second, "--second-timeout-ms", "10000"));
                int[][] members = {{0, 0}, {0, 1}, {1, 0}};
                Processes.Running[] firsts = new Processes.Running[3];
                Processes.Running[] seconds = new Processes.Running[3];
                for (int i = 0; i < 3; i++) {
                    firsts[i] = ps.start(Processes.java(TWO_GROUPS, root.toString(), "" + members[i][0],
                            "" + members[i][1], "10000", "forever", job), env);
                    seconds[i] = ps.start(Processes.java(TWO_GROUPS, root.toString(), "" + members[i][0],
                            "" + members[i][1], "10000", "forever", second), env);
                }
                for (int i = 0; i < 3; i++) {
                    String running = "RUNNING block " + i + " pid ";
                    firsts[i].awaitLine(l -> l.startsWith(running), 120);
                }
                String victim = seconds[1].awaitLine(l -> l.startsWith("RUNNING block 1 pid "), 120);
                long pid = Long.parseLong(victim.substring("RUNNING block 1 pid ".length()));
                long killedAt = System.nanoTime();
                seconds[1].process.destroyForcibly();
                for (Processes.Running r : List.of(firsts[0], firsts[1], firsts[2], seconds[0], seconds[2])) {
                    assertEquals(3, r.await(60), r.output());
                }
                long took = (System.nanoTime() - killedAt) / 1_000_000_000L;
                assertTrue(took < 20, "the others failed only after " + took + " s");
                String named = "member 1 (block 1, pid " + pid + ") is gone";
                assertTrue(seconds[0].output().contains("COLLECTIVE FAILURE job " + second + ": ")
                        && seconds[0].output().contains(named), seconds[0].output());
                for (int i = 0; i < 2; i++) {
                    assertTrue(firsts[i].output().contains("COLLECTIVE FAILURE job " + job + ": ")
                            && firsts[i].output().contains("job " + second + " of the same leader daemon failed: ")
                            && firsts[i].output().contains(named), firsts[i].output());
                }
                // the other node group's daemon learns it as the job aborts: its members of both groups fail
                assertTrue(firsts[2].output().contains("COLLECTIVE FAILURE job " + job), firsts[2].output());
                assertTrue(seconds[2].output().contains("COLLECTIVE FAILURE job " + second), seconds[2].output());
                String log = java.nio.file.Files.readString(tmp.resolve("state").resolve(job + ".log"));
                assertTrue(log.contains("meridian leader: group 0 on ") && log.contains(" failed: ")
                        && log.contains(named), log);
            } finally {
                stop(ps, env, job);
            }
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
