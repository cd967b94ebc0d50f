package io.meridian.collective;

import io.meridian.metrics.MetricsEndpoint;
import io.meridian.shm.ProcessIdentity;
import io.prometheus.metrics.core.metrics.Gauge;
import io.meridian.config.CommandLine;
import io.meridian.config.UsageException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import mpi.Comm;
import mpi.Intracomm;
import mpi.MPI;
import mpi.MPIException;

/**
 * Deployment for members that are not MPI ranks (Storm workers): one leader daemon per memory group, all started
 * together by mpirun across the hosts ({@code ./meridian leaders start}). Daemon rank r leads group r; on its host it
 * is node group {@code j} (its rank among the daemons of that host) and creates region
 * {@code <root>/meridian-<user>/<job>/group-<j>.region}, which local members attach to with
 * {@link TwoLevelCollectives#attach}. It then serves calls until it is stopped (SIGTERM: the region is marked closed
 * and removed). When a call fails (a member missing past the timeout, or gone) it marks its region failed with the
 * reason and aborts the MPI job, so no leader stays blocked in MPI and every member fails instead of hanging. While
 * it waits in MPI it watches the links to the other hosts' daemons ({@link PeerLinkWatch}): a link down fails the
 * region naming the peer host within seconds, which MPI alone would not.
 *
 * <p>With {@code --second-job} a daemon also leads a second group of the same members per host and the same layout (the
 * live map's clustering group beside its rounds' group), in one mpirun job: its own region
 * ({@code <root>/meridian-<user>/<second job>/group-<j>.region}) and its own communicator ({@code MPI.COMM_WORLD.dup()},
 * made by every daemon before serving), so the two groups' calls interleave in any order on any host without matching
 * each other. One thread serves both ({@link LeaderAgent}): each group's exchange among the leaders is a non-blocking
 * collective polled in one duty cycle, so no two threads are ever in MPI and plain {@code MPI_Init} does. One
 * {@link PeerLinkWatch} watches both exchanges (links are per host). A failure in either group (a member missing or
 * gone, a link down, a region that cannot be made) fails both regions with the reason and aborts the job, so the
 * members of both fail at once; SIGTERM closes and removes both.
 */
public final class LeaderDaemon {
    static final String USAGE = "LeaderDaemon --job ID --members K|K0,K1,... [--capacity DOUBLES] [--reduce-capacity DOUBLES]"
            + " [--timeout-ms MS] [--region-root DIR] [--metrics-port PORT|HOST=PORT,...] [--metrics-host ADDRESS]"
            + " [--autogroup-nice 0..19] [--second-job ID [--second-capacity DOUBLES]"
            + " [--second-reduce-capacity DOUBLES] [--second-timeout-ms MS]]";

    /** Host names as MPI gives them are at most 255 bytes (MPI_MAX_PROCESSOR_NAME in Open MPI: 256 with the NUL). */
    private static final int HOST_NAME_BYTES = 256;

    private LeaderDaemon() {
    }

    public static void main(String[] args) throws Exception {
        CommandLine cl;
        String job;
        String membersSpec;
        int capacity;
        int reduceCapacity;
        long timeoutMs;
        Path root;
        String metricsPorts;
        String metricsHost;
        int autogroupNice;
        Second second;
        try {
            cl = CommandLine.parse("leaders", args,
                    Set.of("job", "members", "capacity", "reduce-capacity", "timeout-ms", "region-root",
                            "metrics-port", "metrics-host", "autogroup-nice", "second-job", "second-capacity",
                            "second-reduce-capacity", "second-timeout-ms"), Set.of());
            cl.requireNoPositional();
            job = cl.requiredString("job");
            membersSpec = cl.requiredString("members");
            capacity = cl.intValue("capacity", 1 << 20, 1, 1 << 27);
            // as large as --capacity may be: the live map's allreduce carries 4N + 3 doubles, 16,777,219 at 4,194,304
            // points; the region's own 2 GiB limit says when a shape is too large
            reduceCapacity = cl.intValue("reduce-capacity", 1 << 16, 1, 1 << 27);
            timeoutMs = cl.longValue("timeout-ms", CollectiveOptions.DEFAULT_TIMEOUT.toMillis(), 1, 86_400_000L);
            root = Path.of(cl.string("region-root", CollectiveOptions.DEFAULT_REGION_ROOT.toString()));
            RegionFiles.validateJobId(job);
            metricsPorts = cl.string("metrics-port", "");
            metricsHost = cl.string("metrics-host", "");
            autogroupNice = cl.intValue("autogroup-nice", 0, 0, 19);
            metricsPort(metricsPorts, "any-host", 0); // checks the syntax before mpirun starts anything
            second = Second.of(cl, job);
        } catch (UsageException | IllegalArgumentException e) {
            System.err.println("meridian leaders: " + e.getMessage() + "\nusage: " + USAGE);
            System.exit(2);
            return;
        }
        String notLowered = Autogroup.lower(autogroupNice);
        if (notLowered != null) {
            System.err.println("meridian leaders: " + notLowered);
        }
        MPI.Init(new String[0]);
        int rank = MPI.COMM_WORLD.getRank();
        String host = MPI.getProcessorName();
        int daemons = MPI.COMM_WORLD.getSize();
        int[] members;
        try {
            members = parseMembers(membersSpec, daemons);
        } catch (IllegalArgumentException e) {
            if (rank == 0) {
                System.err.println("meridian leaders: --members " + membersSpec + ": " + e.getMessage());
            }
            MPI.Finalize();
            System.exit(2);
            return;
        }
        Intracomm node = MPI.COMM_WORLD.splitType(Comm.TYPE_SHARED, rank, MPI.INFO_NULL);
        int nodeGroup = node.getRank();
        node.free();

        RegionShape shape = new RegionShape(rank, daemons, members[rank], RegionShape.table(members), capacity,
                reduceCapacity, true);
        RegionShape secondShape = second == null ? null : new RegionShape(rank, daemons, members[rank],
                RegionShape.table(members), second.capacity(), second.reduceCapacity(), true);
        int port = metricsPort(metricsPorts, host, nodeGroup);
        if (port > 0) {
            String bind = metricsHost.isEmpty() ? host : metricsHost;
            try {
                MetricsEndpoint endpoint = MetricsEndpoint.start(bind, port);
                Gauge leads = Gauge.builder().name("meridian_leader_members").help("Members of the memory group this"
                        + " leader daemon leads").labelNames("collective_job", "group").register();
                leads.labelValues(job, Integer.toString(rank)).set(members[rank]);
                if (second != null) {
                    leads.labelValues(second.job(), Integer.toString(rank)).set(members[rank]);
                }
                CollectiveMetrics.get();
                System.out.println("meridian leader: group " + rank + " serves metrics on " + endpoint.url());
            } catch (RuntimeException e) {
                System.err.println("meridian leader: group " + rank + " on " + host + " failed: cannot serve its"
                        + " metrics on " + bind + ":" + port + ": " + e.getMessage());
                System.err.flush();
                MPI.COMM_WORLD.abort(2);
                return;
            }
        }
        List<PeerLinkWatch.Peer> peers = peers(host, rank, daemons, metricsPorts);
        // collectively, by every daemon, before any leader's thread runs
        Intracomm secondComm = second == null || daemons == 1 ? null : MPI.COMM_WORLD.dup();
        // the region last: members attach as soon as it is there and their first call's timeout runs from then, while
        // the live map's task 0 attaches only once every daemon serves. Made before the metrics endpoint and the
        // barrier, their time came out of task 0's: under a load average of 25 TwoHostClusterIT's members timed out
        // waiting for task 0 ('member 0 (block 0, not attached)') in 13 generations in a row (map.collectiveTimeoutMs
        // 10 s), and the map did not re-form within 300 s
        MPI.COMM_WORLD.barrier();
        SharedRegion region;
        try {
            region = RegionFiles.create(RegionFiles.pathOf(root, job, nodeGroup), job, shape);
        } catch (RuntimeException e) {
            // the launcher's line (LeaderLauncher.failures): a full tmpfs here is named on map task 0's host too
            System.err.println("meridian leader: group " + rank + " on " + host + " failed: cannot create its region: "
                    + e.getMessage());
            System.err.flush();
            MPI.COMM_WORLD.abort(2);
            return;
        }
        SharedRegion secondRegion = null;
        if (second != null) {
            try {
                secondRegion = RegionFiles.create(RegionFiles.pathOf(root, second.job(), nodeGroup), second.job(),
                        secondShape);
            } catch (RuntimeException e) {
                // the first region's members may have attached already: they fail at once with the reason
                String reason = region.fail("group " + rank + " on " + host + ": cannot create its region of job "
                        + second.job() + ": " + e.getMessage());
                System.err.println("meridian leader: group " + rank + " on " + host + " failed: " + reason);
                System.err.flush();
                MPI.COMM_WORLD.abort(2);
                return;
            }
            secondRegion.setLeader(ProcessIdentity.SELF_PID, ProcessIdentity.SELF_START);
        }
        List<SharedRegion> regions = secondRegion == null ? List.of(region) : List.of(region, secondRegion);
        region.setLeader(ProcessIdentity.SELF_PID, ProcessIdentity.SELF_START);
        PeerLinkWatch watch = daemons == 1 ? null
                : new PeerLinkWatch(new MpiLeaderExchange(MPI.COMM_WORLD, false), peers, linkDown -> {
                    // MPI would wait for the silent peer for minutes: fail the regions (the members fail at once with
                    // this reason), say so for the launcher (LeaderLauncher.failures) and end the job
                    String reason = null;
                    for (SharedRegion r : regions) {
                        String failed = r.fail("group " + rank + " on " + host + ": " + linkDown);
                        reason = reason == null ? failed : reason;
                    }
                    System.err.println("meridian leader: group " + rank + " on " + host + " failed: " + reason);
                    System.err.flush();
                    Runtime.getRuntime().halt(3);
                });
        LeaderExchange exchange = watch == null ? LeaderExchange.NONE : watch;
        if (second == null) {
            GroupLeader leader = new GroupLeader(region, exchange, Duration.ofMillis(timeoutMs).toNanos(), true);
            Runtime.getRuntime().addShutdownHook(new Thread(() -> {
                region.markClosed();
                leader.closeBell();
                region.unlink();
            }, "meridian-leader-shutdown"));
            announce(rank, daemons, nodeGroup, host, members, shape, region);
            serve(leader, new Failure(rank, host, regions));
            return;
        }
        // the agent's leaders poll; the agent sleeps on both regions' doorbells
        GroupLeader leader = new GroupLeader(region, exchange, Duration.ofMillis(timeoutMs).toNanos(), false);
        GroupLeader secondLeader = new GroupLeader(secondRegion, watch == null ? LeaderExchange.NONE
                : watch.alsoWatch(new MpiLeaderExchange(secondComm, true), "job " + second.job()),
                Duration.ofMillis(second.timeoutMs()).toNanos(), false);
        LeaderAgent agent = new LeaderAgent(List.of(leader, secondLeader));
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            for (SharedRegion r : regions) {
                r.markClosed();
            }
            agent.interrupt();
            agent.closeBells();
            for (SharedRegion r : regions) {
                r.unlink();
            }
        }, "meridian-leader-shutdown"));
        // not the line the launchers count (" serving "): they see this group's region once the first one's is
        // announced below
        System.out.println("meridian leader: group " + rank + " of " + daemons + " (node group " + nodeGroup
                + " on " + host + ", pid " + ProcessIdentity.SELF_PID + ", " + members[rank] + " members, blocks "
                + shape.firstBlock()[rank] + ".." + (shape.firstBlock()[rank + 1] - 1) + " of " + shape.blocks()
                + ") also serves job " + second.job() + " at " + secondRegion.path);
        announce(rank, daemons, nodeGroup, host, members, shape, region);
        serve(agent, new Failure(rank, host, regions));
    }

    private static void announce(int rank, int daemons, int nodeGroup, String host, int[] members, RegionShape shape,
            SharedRegion region) {
        System.out.println("meridian leader: group " + rank + " of " + daemons + " (node group " + nodeGroup + " on "
                + host + ", pid " + ProcessIdentity.SELF_PID + ", " + members[rank] + " members, blocks "
                + shape.firstBlock()[rank] + ".." + (shape.firstBlock()[rank + 1] - 1) + " of " + shape.blocks()
                + ") serving " + region.path);
        System.out.flush();
    }

    /** Serves both groups' calls until a region is closed (returns) or a call fails (fails every region, aborts). */
    private static void serve(LeaderAgent agent, Failure failure) {
        try {
            agent.run();
        } catch (CollectiveException e) {
            SharedRegion failed = null;
            for (SharedRegion r : failure.regions) {
                if (r.state() == RegionDescriptor.STATE_CLOSED) {
                    System.err.println("meridian leader: group " + failure.rank + " on " + failure.host + " stopped: "
                            + e.getMessage());
                    return;
                }
                failed = failed == null && r.state() != RegionDescriptor.STATE_READY ? r : failed;
            }
            failure.abort(failed, e.getMessage());
        } catch (RuntimeException | Error e) {
            failure.abort(null, "group " + failure.rank + " on " + failure.host + ": " + e);
        }
    }

    /** Serves {@code leader}'s calls until its region is closed (returns) or a call fails (fails every region, aborts). */
    private static void serve(GroupLeader leader, Failure failure) {
        SharedRegion region = leader.region();
        try {
            for (long seq = region.released() + 1; ; seq++) {
                leader.serve(seq);
            }
        } catch (CollectiveException e) {
            if (region.state() == RegionDescriptor.STATE_CLOSED) {
                System.err.println("meridian leader: group " + failure.rank + " on " + failure.host + " stopped: "
                        + e.getMessage());
                return;
            }
            failure.abort(region, e.getMessage());
        } catch (RuntimeException | Error e) {
            failure.abort(region, region.fail("group " + failure.rank + " on " + failure.host + ": job " + region.jobId
                    + ": " + e));
        }
    }

    /**
     * A daemon's way out when a call of one of its groups fails: the other group's region fails with the reason too
     * (its members fail at once instead of waiting for calls no leader will serve), the launcher's line is printed and
     * the MPI job aborted, so no daemon stays blocked in MPI ({@code failed} null: every region fails with the reason).
     */
    private static final class Failure {
        final int rank;
        final String host;
        final List<SharedRegion> regions;
        private final AtomicBoolean claimed = new AtomicBoolean();

        Failure(int rank, String host, List<SharedRegion> regions) {
            this.rank = rank;
            this.host = host;
            this.regions = regions;
        }

        void abort(SharedRegion failed, String reason) {
            boolean first = claimed.compareAndSet(false, true);
            if (first) {
                for (SharedRegion other : regions) {
                    if (failed == null) {
                        other.fail(reason);
                    } else if (other != failed) {
                        other.fail("group " + rank + " on " + host + ": job " + failed.jobId + " of the same leader"
                                + " daemon failed: " + reason);
                    }
                }
            }
            // the line a launcher reads to learn which host failed and why (LeaderLauncher.failures)
            System.err.println("meridian leader: group " + rank + " on " + host + " failed: " + reason);
            System.err.flush();
            if (first) {
                try {
                    MPI.COMM_WORLD.abort(3);
                } catch (MPIException e) {
                    Runtime.getRuntime().halt(3);
                }
            }
        }
    }

    /** The second group's options (null when there is none): validated, each refusal naming its option. */
    record Second(String job, int capacity, int reduceCapacity, long timeoutMs) {
        static Second of(CommandLine cl, String firstJob) {
            List<String> options = List.of("second-capacity", "second-reduce-capacity", "second-timeout-ms");
            if (!cl.has("second-job")) {
                for (String o : options) {
                    if (cl.has(o)) {
                        throw new IllegalArgumentException("--" + o + " needs --second-job (the group it sizes)");
                    }
                }
                return null;
            }
            String job = cl.requiredString("second-job");
            try {
                RegionFiles.validateJobId(job);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("--second-job: " + e.getMessage());
            }
            if (job.equals(firstJob)) {
                throw new IllegalArgumentException("--second-job " + job + " is --job's id: the second group needs a"
                        + " job (a region directory) of its own");
            }
            return new Second(job, cl.intValue("second-capacity", 1 << 20, 1, 1 << 27),
                    cl.intValue("second-reduce-capacity", 1 << 16, 1, 1 << 27),
                    cl.longValue("second-timeout-ms", CollectiveOptions.DEFAULT_TIMEOUT.toMillis(), 1, 86_400_000L));
        }
    }

    /**
     * The daemons on other hosts than {@code host}, one per host (the first rank there), each with the port its link
     * is probed on: its host's first daemon's metrics port, or 22 (ssh, which mpirun uses between hosts) when the
     * daemons serve no metrics. Every daemon calls it: it gathers the daemons' host names over MPI.
     */
    private static List<PeerLinkWatch.Peer> peers(String host, int rank, int daemons, String metricsPorts)
            throws MPIException {
        byte[] mine = new byte[HOST_NAME_BYTES];
        byte[] name = host.getBytes(StandardCharsets.UTF_8);
        System.arraycopy(name, 0, mine, 0, Math.min(name.length, HOST_NAME_BYTES));
        byte[] all = new byte[HOST_NAME_BYTES * daemons];
        MPI.COMM_WORLD.allGather(mine, HOST_NAME_BYTES, MPI.BYTE, all, HOST_NAME_BYTES, MPI.BYTE);
        List<PeerLinkWatch.Peer> peers = new ArrayList<>();
        Set<String> seen = new HashSet<>(Set.of(host));
        for (int r = 0; r < daemons; r++) {
            int end = 0;
            while (end < HOST_NAME_BYTES && all[r * HOST_NAME_BYTES + end] != 0) {
                end++;
            }
            String peer = new String(all, r * HOST_NAME_BYTES, end, StandardCharsets.UTF_8);
            if (r != rank && seen.add(peer)) {
                int port = metricsPort(metricsPorts, peer, 0);
                peers.add(new PeerLinkWatch.Peer(r, peer, port > 0 ? port : 22));
            }
        }
        return peers;
    }

    /**
     * The metrics port of the daemon of node group {@code nodeGroup} on {@code host}: {@code spec} is empty (no
     * endpoint), one port (node group j of a host serves on port + j), or {@code HOST=PORT,...} (the port of each
     * host's first daemon: a launcher that knows which ports are free where, such as the live map's task 0).
     */
    static int metricsPort(String spec, String host, int nodeGroup) {
        if (spec.isEmpty()) {
            return 0;
        }
        if (!spec.contains("=")) {
            return checkedPort(spec, "--metrics-port") + nodeGroup;
        }
        int found = 0;
        for (String entry : spec.split(",")) {
            int eq = entry.indexOf('=');
            if (eq <= 0) {
                throw new IllegalArgumentException("--metrics-port " + spec + ": '" + entry + "' is not HOST=PORT");
            }
            int port = checkedPort(entry.substring(eq + 1), "--metrics-port " + entry.substring(0, eq));
            if (entry.substring(0, eq).equals(host)) {
                found = port + nodeGroup;
            }
        }
        return found;
    }

    private static int checkedPort(String text, String what) {
        try {
            int port = Integer.parseInt(text.trim());
            if (port >= 1 && port <= 65535) {
                return port;
            }
        } catch (NumberFormatException e) {
            // below
        }
        throw new IllegalArgumentException(what + ": '" + text + "' is not a port from 1 to 65535");
    }

    static int[] parseMembers(String spec, int groups) {
        String[] parts = spec.split(",");
        int[] members = new int[groups];
        if (parts.length != 1 && parts.length != groups) {
            throw new IllegalArgumentException("give one member count for all " + groups + " groups or one per group, not "
                    + parts.length);
        }
        for (int g = 0; g < groups; g++) {
            String p = parts[parts.length == 1 ? 0 : g].trim();
            try {
                members[g] = Integer.parseInt(p);
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("'" + p + "' is not a member count");
            }
            if (members[g] < 1) {
                throw new IllegalArgumentException("group " + g + " needs at least 1 member, got " + members[g]);
            }
        }
        return members;
    }
}
