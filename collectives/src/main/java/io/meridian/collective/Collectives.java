package io.meridian.collective;

import java.nio.DoubleBuffer;
import java.nio.LongBuffer;

/**
 * The off-heap collectives: every participant ("rank", one row block of an engine) calls them in the same order.
 * Each operation has an input window, a direct buffer the caller fills before the call (absolute puts), and returns a
 * result view, a direct buffer the caller reads in place (absolute gets) until its next collective call. Windows and
 * views are created once; no call allocates. In the two-level implementation both are the shared memory-mapped region
 * itself, so a part written into the input window is never copied again within the node and results are not copied at
 * all; in the flat implementation they are this process's own direct buffers handed to MPI in place.
 * An instance belongs to one thread at a time (the engine's), like an MPI communicator used without thread support.
 */
public interface Collectives extends AutoCloseable {
    /** Number of participants. */
    int size();

    /** This participant's index, from 0; blocks of the same memory group have consecutive indexes. */
    int rank();

    /** How many doubles an allgatherv result or a broadcast may hold. */
    int capacity();

    /** How many doubles (or longs) one allreduce may reduce. */
    int reduceCapacity();

    /** Window for the next {@link #allgatherv}: put this rank's part at {@code displs[rank()]}, in global positions. */
    DoubleBuffer allgathervInput();

    /** Every rank's part {@code counts[b]} doubles at {@code displs[b]}; returns the whole result, global positions. */
    DoubleBuffer allgatherv(int[] counts, int[] displs);

    /**
     * {@link #allgatherv} of the parts in {@link #allgathervInput()} and a sum of the {@code sumCount} doubles each
     * rank put in {@link #reduceInput()}, in one call; returns the allgatherv result, and {@link #sums()} holds the sums.
     */
    DoubleBuffer allgathervSum(int[] counts, int[] displs, int sumCount);

    /** The sums of the last {@link #allgathervSum} at 0 .. sumCount, valid until the next collective call. */
    DoubleBuffer sums();

    /** Window for the next double {@link #allreduce}: this rank's values at 0 .. count. */
    DoubleBuffer reduceInput();

    DoubleBuffer allreduce(int count, ReduceOp op);

    /** Window for the next long {@link #allreduceLongs}: this rank's values at 0 .. count. */
    LongBuffer reduceInputLongs();

    LongBuffer allreduceLongs(int count, ReduceOp op);

    /** Window for the next {@link #broadcast}; only the root's content counts. */
    DoubleBuffer broadcastInput();

    /** The root's {@code count} doubles at 0 .. count, for every rank. */
    DoubleBuffer broadcast(int count, int root);

    void barrier();

    /** Leaves the collective (releases the region or communicators this instance owns); no call may follow. */
    @Override
    void close();
}
