package io.meridian.collective;

import java.nio.DoubleBuffer;
import java.nio.LongBuffer;
import mpi.Intracomm;
import mpi.MPI;
import mpi.MPIException;
import mpi.Op;
import mpi.Request;

/** The leaders' MPI communicator (one rank per group, rank = group index); every call works in place. */
final class MpiLeaderExchange implements LeaderExchange {
    private final Intracomm leaders;
    private final boolean owned;
    /** The call started last and not yet seen complete; null when none is in flight. */
    private Request inFlight;
    private String inFlightCall = "";

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

    /*
     * Non-blocking: Open MPI's libnbc schedules, progressed by each test (MPI_Test runs opal_progress). The bindings
     * allocate one Request per call, the only allocation on this path. A completed request was freed by MPI_Test, so
     * it is dropped, not freed again.
     */

    @Override
    public void startAllgatherv(DoubleBuffer area, int[] groupCounts, int[] groupDispls) {
        try {
            started(leaders.iAllGatherv(area, groupCounts, groupDispls, MPI.DOUBLE), "allgatherv");
        } catch (MPIException e) {
            throw new CollectiveException("MPI iallgatherv among leaders failed: " + e.getMessage(), e);
        }
    }

    @Override
    public void startAllreduce(DoubleBuffer area, int count, ReduceOp op) {
        try {
            started(leaders.iAllReduce(area, count, MPI.DOUBLE, mpiOp(op)), "allreduce");
        } catch (MPIException e) {
            throw new CollectiveException("MPI iallreduce among leaders failed: " + e.getMessage(), e);
        }
    }

    @Override
    public void startAllreduce(LongBuffer area, int count, ReduceOp op) {
        try {
            started(leaders.iAllReduce(area, count, MPI.LONG, mpiOp(op)), "allreduce");
        } catch (MPIException e) {
            throw new CollectiveException("MPI iallreduce among leaders failed: " + e.getMessage(), e);
        }
    }

    @Override
    public void startBroadcast(DoubleBuffer area, int count, int rootGroup) {
        try {
            started(leaders.iBcast(area, count, MPI.DOUBLE, rootGroup), "broadcast");
        } catch (MPIException e) {
            throw new CollectiveException("MPI ibcast among leaders failed: " + e.getMessage(), e);
        }
    }

    @Override
    public void startBarrier() {
        try {
            started(leaders.iBarrier(), "barrier");
        } catch (MPIException e) {
            throw new CollectiveException("MPI ibarrier among leaders failed: " + e.getMessage(), e);
        }
    }

    private void started(Request request, String call) {
        if (inFlight != null) {
            throw new IllegalStateException("an MPI " + inFlightCall + " among the leaders is still in flight");
        }
        inFlight = request;
        inFlightCall = call;
    }

    @Override
    public boolean complete() {
        Request r = inFlight;
        if (r == null) {
            return true;
        }
        try {
            if (!r.test()) {
                return false;
            }
        } catch (MPIException e) {
            inFlight = null;
            throw new CollectiveException("MPI " + inFlightCall + " among leaders failed: " + e.getMessage(), e);
        }
        inFlight = null;
        return true;
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
