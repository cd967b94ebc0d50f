package io.meridian.collective;

import java.nio.DoubleBuffer;
import java.nio.LongBuffer;
import mpi.Intracomm;
import mpi.MPI;
import mpi.MPIException;
import mpi.Op;

/** The leaders' MPI communicator (one rank per group, rank = group index); every call works in place. */
final class MpiLeaderExchange implements LeaderExchange {
    private final Intracomm leaders;
    private final boolean owned;

    /** @param owned whether {@link #close()} frees the communicator */
    MpiLeaderExchange(Intracomm leaders, boolean owned) {
        this.leaders = leaders;
        this.owned = owned;
    }

    static Op mpiOp(ReduceOp op) {
        return switch (op) {
            case SUM -> MPI.SUM;
            case MAX -> MPI.MAX;
            case MIN -> MPI.MIN;
        };
    }

    @Override
    public void allgatherv(DoubleBuffer area, int[] groupCounts, int[] groupDispls) {
        try {
            leaders.allGatherv(area, groupCounts, groupDispls, MPI.DOUBLE);
        } catch (MPIException e) {
            throw new CollectiveException("MPI allgatherv among leaders failed: " + e.getMessage(), e);
        }
    }

    @Override
    public void allreduce(DoubleBuffer area, int count, ReduceOp op) {
        try {
            leaders.allReduce(area, count, MPI.DOUBLE, mpiOp(op));
        } catch (MPIException e) {
            throw new CollectiveException("MPI allreduce among leaders failed: " + e.getMessage(), e);
        }
    }

    @Override
    public void allreduce(LongBuffer area, int count, ReduceOp op) {
        try {
            leaders.allReduce(area, count, MPI.LONG, mpiOp(op));
        } catch (MPIException e) {
            throw new CollectiveException("MPI allreduce among leaders failed: " + e.getMessage(), e);
        }
    }

    @Override
    public void broadcast(DoubleBuffer area, int count, int rootGroup) {
        try {
            leaders.bcast(area, count, MPI.DOUBLE, rootGroup);
        } catch (MPIException e) {
            throw new CollectiveException("MPI broadcast among leaders failed: " + e.getMessage(), e);
        }
    }

    @Override
    public void barrier() {
        try {
            leaders.barrier();
        } catch (MPIException e) {
            throw new CollectiveException("MPI barrier among leaders failed: " + e.getMessage(), e);
        }
    }

    @Override
    public void close() {
        if (owned) {
            try {
                leaders.free();
            } catch (MPIException e) {
                // freeing at shutdown: nothing left to do
            }
        }
    }
}
