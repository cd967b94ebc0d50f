package io.meridian.collective;

import java.util.concurrent.ThreadLocalRandom;
import mpi.Comm;
import mpi.Intracomm;
import mpi.MPI;
import mpi.MPIException;

/**
 * Setting up collectives among processes that are all MPI ranks (started by mpirun; {@code MPI.Init} done). These
 * calls are collective over {@code comm} and may use MPI among all its ranks; the per-call protocol does not.
 */
public final class MpiCollectives {
    private MpiCollectives() {
    }

    /** The baseline: every rank of {@code comm} calls MPI for every collective. */
    public static Collectives flat(Intracomm comm, CollectiveOptions options) {
        return new FlatMpiCollectives(comm, options.capacity(), options.reduceCapacity(), false);
    }

    /**
     * Two-level collectives: the ranks of each node ({@code splitType(SHARED)}) are split into
     * {@code options.groupsPerNode()} memory groups of consecutive node ranks (sizes differ by at most one; fewer
     * groups when the node has fewer ranks). Each group's lowest rank is its leader: it creates the group's region
     * and joins the leaders' communicator. Ranks are renumbered group by group ({@link Collectives#rank()}), in
     * the order of the leaders' ranks, so that one group's blocks are adjacent.
     */
    public static TwoLevelCollectives twoLevel(Intracomm comm, CollectiveOptions options) {
        try {
            int worldRank = comm.getRank();
            String jobId = options.jobId() != null ? options.jobId() : agreedJobId(comm);
            Intracomm node = comm.splitType(Comm.TYPE_SHARED, worldRank, MPI.INFO_NULL);
            int nodeSize = node.getSize();
            int nodeRank = node.getRank();
            int groupsHere = Math.min(options.groupsPerNode(), nodeSize);
            int nodeGroup = groupOf(nodeRank, nodeSize, groupsHere);
            Intracomm group = node.split(nodeGroup, nodeRank);
            node.free();
            boolean leader = group.getRank() == 0;
            Intracomm leaders = comm.split(leader ? 0 : MPI.UNDEFINED, worldRank);

            // group index and every group's size, known to the leaders, told to their members (setup only)
            int[] header = new int[2];
            if (leader) {
                header[0] = leaders.getRank();
                header[1] = leaders.getSize();
            }
            group.bcast(header, 2, MPI.INT, 0);
            int groupIndex = header[0];
            int groups = header[1];
            int[] sizes = new int[groups];
            if (leader) {
                leaders.allGather(new int[] {group.getSize()}, 1, MPI.INT, sizes, 1, MPI.INT);
            }
            group.bcast(sizes, groups, MPI.INT, 0);
            RegionShape shape = new RegionShape(groupIndex, groups, group.getSize(), RegionShape.table(sizes),
                    options.capacity(), options.reduceCapacity(), false);

            long timeoutNanos = options.timeout().toNanos();
            java.nio.file.Path path = RegionFiles.pathOf(options.regionRoot(), jobId, nodeGroup);
            SharedRegion region;
            GroupLeader groupLeader = null;
            LeaderExchange exchange = LeaderExchange.NONE;
            if (leader) {
                region = RegionFiles.create(path, jobId, shape);
                exchange = groups > 1 ? new MpiLeaderExchange(leaders, true) : LeaderExchange.NONE;
                groupLeader = new GroupLeader(region, exchange, timeoutNanos, false);
                group.barrier();
            } else {
                group.barrier();
                region = RegionFiles.attach(path, jobId, timeoutNanos);
            }
            TwoLevelCollectives member = new TwoLevelCollectives(region, group.getRank(), groupLeader, timeoutNanos,
                    closer(group, leader && groups == 1 ? leaders : null, exchange));
            group.barrier(); // every member has claimed its slot before anyone's first call
            return member;
        } catch (MPIException e) {
            throw new CollectiveException("setting up two-level collectives: " + e.getMessage(), e);
        }
    }

    private static AutoCloseable closer(Intracomm group, Intracomm unusedLeaders, LeaderExchange exchange) {
        return () -> {
            exchange.close();
            if (unusedLeaders != null) {
                unusedLeaders.free();
            }
            group.free();
        };
    }

    /** Group of node rank {@code r} among {@code n} ranks split into {@code m} consecutive, near-equal groups. */
    static int groupOf(int r, int n, int m) {
        int base = n / m;
        int extra = n % m;
        int big = extra * (base + 1);
        return r < big ? r / (base + 1) : extra + (r - big) / base;
    }

    private static String agreedJobId(Intracomm comm) throws MPIException {
        long[] id = new long[1];
        if (comm.getRank() == 0) {
            id[0] = ThreadLocalRandom.current().nextLong() & Long.MAX_VALUE;
        }
        comm.bcast(id, 1, MPI.LONG, 0);
        return "mpi-" + Long.toHexString(id[0]);
    }

}
