package io.meridian.collective;

import java.nio.DoubleBuffer;
import java.nio.LongBuffer;

/**
 * The inter-group step of a two-level collective, run by each group's leader on its region's result area (in place):
 * with MPI among the leaders, or nothing at all when there is one group.
 */
interface LeaderExchange extends AutoCloseable {
    /** Group g's part is {@code groupCounts[g]} doubles at {@code groupDispls[g]}; this group's part is in place. */
    void allgatherv(DoubleBuffer area, int[] groupCounts, int[] groupDispls);

    void allreduce(DoubleBuffer area, int count, ReduceOp op);

    void allreduce(LongBuffer area, int count, ReduceOp op);

    void broadcast(DoubleBuffer area, int count, int rootGroup);

    void barrier();

    /*
     * The same calls started without waiting, for a daemon that serves several groups on one thread: at most one call
     * in flight per exchange; complete() polls it (and drives MPI's progress), true once it is done. By default a
     * start runs the blocking call, complete at once (one group: nothing to wait for).
     */

    default void startAllgatherv(DoubleBuffer area, int[] groupCounts, int[] groupDispls) {
        allgatherv(area, groupCounts, groupDispls);
    }

    default void startAllreduce(DoubleBuffer area, int count, ReduceOp op) {
        allreduce(area, count, op);
    }

    default void startAllreduce(LongBuffer area, int count, ReduceOp op) {
        allreduce(area, count, op);
    }

    default void startBroadcast(DoubleBuffer area, int count, int rootGroup) {
        broadcast(area, count, rootGroup);
    }

    default void startBarrier() {
        barrier();
    }

    /** True once the call started last is done (and when none was started); nothing is in flight then. */
    default boolean complete() {
        return true;
    }

    @Override
    void close();

    /** One group: every collective is complete once its members are in the region. */
    LeaderExchange NONE = new LeaderExchange() {
        @Override
        public void allgatherv(DoubleBuffer area, int[] groupCounts, int[] groupDispls) {
        }

        @Override
        public void allreduce(DoubleBuffer area, int count, ReduceOp op) {
        }

        @Override
        public void allreduce(LongBuffer area, int count, ReduceOp op) {
        }

        @Override
        public void broadcast(DoubleBuffer area, int count, int rootGroup) {
        }

        @Override
        public void barrier() {
        }

        @Override
        public void close() {
        }
    };
}
