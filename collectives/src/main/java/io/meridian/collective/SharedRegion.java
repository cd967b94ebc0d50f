package io.meridian.collective;

import static io.meridian.collective.RegionDescriptor.LAYOUT_VERSION;
import static io.meridian.collective.RegionDescriptor.LONGS;
import static io.meridian.collective.RegionDescriptor.MAGIC;
import static io.meridian.collective.RegionDescriptor.MAX_FAILURE_BYTES;
import static io.meridian.collective.RegionDescriptor.OFF_BLOCKS;
import static io.meridian.collective.RegionDescriptor.OFF_CAPACITY;
import static io.meridian.collective.RegionDescriptor.OFF_CREATOR_PID;
import static io.meridian.collective.RegionDescriptor.OFF_CREATOR_START;
import static io.meridian.collective.RegionDescriptor.OFF_DESCRIPTOR;
import static io.meridian.collective.RegionDescriptor.OFF_FAILURE;
import static io.meridian.collective.RegionDescriptor.OFF_GROUP;
import static io.meridian.collective.RegionDescriptor.OFF_GROUPS;
import static io.meridian.collective.RegionDescriptor.OFF_JOB;
import static io.meridian.collective.RegionDescriptor.OFF_JOB_LEN;
import static io.meridian.collective.RegionDescriptor.OFF_LEADER_MODE;
import static io.meridian.collective.RegionDescriptor.OFF_LEADER_PID;
import static io.meridian.collective.RegionDescriptor.OFF_LEADER_SLEEPING;
import static io.meridian.collective.RegionDescriptor.OFF_LEADER_START;
import static io.meridian.collective.RegionDescriptor.OFF_MAGIC;
import static io.meridian.collective.RegionDescriptor.OFF_MEMBERS;
import static io.meridian.collective.RegionDescriptor.OFF_REDUCE_CAPACITY;
import static io.meridian.collective.RegionDescriptor.OFF_RELEASED;
import static io.meridian.collective.RegionDescriptor.OFF_STATE;
import static io.meridian.collective.RegionDescriptor.OFF_VERSION;
import static io.meridian.collective.RegionDescriptor.SLOT_ARRIVED;
import static io.meridian.collective.RegionDescriptor.SLOT_BYTES;
import static io.meridian.collective.RegionDescriptor.SLOT_COUNT;
import static io.meridian.collective.RegionDescriptor.SLOT_OP;
import static io.meridian.collective.RegionDescriptor.SLOT_PID;
import static io.meridian.collective.RegionDescriptor.SLOT_ROOT;
import static io.meridian.collective.RegionDescriptor.SLOT_START;
import static io.meridian.collective.RegionDescriptor.STATE_CLOSED;
import static io.meridian.collective.RegionDescriptor.STATE_FAILED;
import static io.meridian.collective.RegionDescriptor.STATE_FAILING;
import static io.meridian.collective.RegionDescriptor.STATE_READY;

import io.meridian.shm.ProcessIdentity;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.DoubleBuffer;
import java.nio.LongBuffer;
import java.nio.MappedByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.locks.LockSupport;

/**
 * Flyweight over one memory group's mapped region file ({@link RegionDescriptor}: the layout; {@link RegionFiles}: the
 * files): the collectives' protocol. Members publish their arrival on their slot's counter, the leader its release,
 * either of them the region's failure; the data areas are views made once. Made only by {@link RegionFiles}.
 */
final class SharedRegion implements AutoCloseable {
    final Path path;
    final String jobId;
    final RegionShape shape;
    private final MappedByteBuffer buffer;
    private final int offBlockTable, offSlots, offReduce, reduceSlotBytes;
    private final int blocks;
    private final DoubleBuffer[] result = new DoubleBuffer[2];
    private final LongBuffer[] resultLongs = new LongBuffer[2];
    private final DoubleBuffer[] sums = new DoubleBuffer[2];
    private final DoubleBuffer[] reduceSlots;
    private final LongBuffer[] reduceSlotLongs;

    SharedRegion(Path path, String jobId, RegionShape shape, MappedByteBuffer buffer) {
        this.path = path;
        this.jobId = jobId;
        this.shape = shape;
        this.buffer = buffer;
        this.blocks = shape.blocks();
        RegionDescriptor.Layout layout = new RegionDescriptor.Layout(shape);
        this.offBlockTable = layout.blockTable;
        this.offSlots = layout.slots;
        this.offReduce = layout.reduce;
        this.reduceSlotBytes = layout.reduceSlotBytes;
        for (int p = 0; p < 2; p++) {
            ByteBuffer area = buffer.slice(layout.result[p], shape.capacity() * 8).order(ByteOrder.nativeOrder());
            result[p] = area.asDoubleBuffer();
            resultLongs[p] = area.asLongBuffer();
            sums[p] = buffer.slice(layout.result[p] + shape.capacity() * 8, shape.reduceCapacity() * 8)
                    .order(ByteOrder.nativeOrder()).asDoubleBuffer();
        }
        reduceSlots = new DoubleBuffer[shape.members()];
        reduceSlotLongs = new LongBuffer[shape.members()];
        for (int m = 0; m < shape.members(); m++) {
            ByteBuffer area = buffer.slice(offReduce + m * reduceSlotBytes, shape.reduceCapacity() * 8)
                    .order(ByteOrder.nativeOrder());
            reduceSlots[m] = area.asDoubleBuffer();
            reduceSlotLongs[m] = area.asLongBuffer();
        }
    }

    /** Writes the header of a new region, magic last: a region with a valid magic is a complete region. */
    void initialise() {
        buffer.putInt(OFF_VERSION, LAYOUT_VERSION);
        buffer.putLong(OFF_CREATOR_PID, ProcessIdentity.SELF_PID);
        buffer.putLong(OFF_CREATOR_START, ProcessIdentity.SELF_START);
        buffer.putInt(OFF_GROUP, shape.group());
        buffer.putInt(OFF_GROUPS, shape.groups());
        buffer.putInt(OFF_MEMBERS, shape.members());
        buffer.putInt(OFF_BLOCKS, blocks);
        buffer.putInt(OFF_CAPACITY, shape.capacity());
        buffer.putInt(OFF_REDUCE_CAPACITY, shape.reduceCapacity());
        buffer.putInt(OFF_LEADER_MODE, shape.daemonLeader() ? 1 : 0);
        byte[] job = jobId.getBytes(StandardCharsets.UTF_8);
        buffer.putInt(OFF_JOB_LEN, job.length);
        buffer.put(OFF_JOB, job);
        for (int g = 0; g <= shape.groups(); g++) {
            buffer.putInt(offBlockTable + 4 * g, shape.firstBlock()[g]);
        }
        LONGS.setRelease(buffer, OFF_RELEASED, 0L);
        LONGS.setRelease(buffer, OFF_STATE, STATE_READY);
        // magic last: a region with a valid magic is a complete region
        LONGS.setRelease(buffer, OFF_MAGIC, MAGIC);
    }

    // ---------------------------------------------------------------------------------------------- accessors

    int blocks() {
        return blocks;
    }

    int firstBlock(int group) {
        return shape.firstBlock()[group];
    }

    DoubleBuffer result(long seq) {
        return result[(int) (seq & 1)];
    }

    /** Where the sums of allgatherv-with-sum call {@code seq} go, after its result area (double-buffered with it). */
    DoubleBuffer sums(long seq) {
        return sums[(int) (seq & 1)];
    }

    LongBuffer resultLongs(long seq) {
        return resultLongs[(int) (seq & 1)];
    }

    DoubleBuffer reduceSlot(int member) {
        return reduceSlots[member];
    }

    LongBuffer reduceSlotLongs(int member) {
        return reduceSlotLongs[member];
    }

    long state() {
        return (long) LONGS.getAcquire(buffer, OFF_STATE);
    }

    long released() {
        return (long) LONGS.getAcquire(buffer, OFF_RELEASED);
    }

    void release(long seq) {
        LONGS.setRelease(buffer, OFF_RELEASED, seq);
    }

    long arrived(int member) {
        return (long) LONGS.getAcquire(buffer, offSlots + member * SLOT_BYTES + SLOT_ARRIVED);
    }

    /** Publishes this member's call {@code seq}; everything it wrote before (inputs, op) is visible to the leader. */
    void arrive(int member, long seq, int op, int count, int root) {
        int slot = offSlots + member * SLOT_BYTES;
        buffer.putInt(slot + SLOT_OP, op);
        buffer.putInt(slot + SLOT_COUNT, count);
        buffer.putInt(slot + SLOT_ROOT, root);
        LONGS.setRelease(buffer, slot + SLOT_ARRIVED, seq);
    }

    int op(int member) {
        return buffer.getInt(offSlots + member * SLOT_BYTES + SLOT_OP);
    }

    int count(int member) {
        return buffer.getInt(offSlots + member * SLOT_BYTES + SLOT_COUNT);
    }

    int root(int member) {
        return buffer.getInt(offSlots + member * SLOT_BYTES + SLOT_ROOT);
    }

    long memberPid(int member) {
        return (long) LONGS.getAcquire(buffer, offSlots + member * SLOT_BYTES + SLOT_PID);
    }

    long memberStart(int member) {
        return buffer.getLong(offSlots + member * SLOT_BYTES + SLOT_START);
    }

    /**
     * Claims member slot {@code member} for this process. Refuses a slot held by another live process, and one held by
     * a dead process (that run failed; its leader must be restarted). Returns the seq the member continues from.
     */
    long claim(int member) {
        if (member < 0 || member >= shape.members()) {
            throw new IllegalArgumentException("member " + member + " of group " + shape.group() + " in " + path
                    + ": the group has " + shape.members() + " members (0 .. " + (shape.members() - 1) + ")");
        }
        int slot = offSlots + member * SLOT_BYTES;
        long holder = (long) LONGS.compareAndExchange(buffer, slot + SLOT_PID, 0L, ProcessIdentity.SELF_PID);
        if (holder == 0L) {
            buffer.putLong(slot + SLOT_START, ProcessIdentity.SELF_START);
        } else if (holder != ProcessIdentity.SELF_PID) {
            throw new CollectiveException("member slot " + member + " of group " + shape.group() + " in " + path
                    + " is held by pid " + holder + (ProcessIdentity.alive(holder, 0) ? " (alive: two members with one index?)"
                    : " (gone: that run failed; restart the leaders)"));
        }
        return released();
    }

    void leave(int member) {
        LONGS.setRelease(buffer, offSlots + member * SLOT_BYTES + SLOT_PID, 0L);
    }

    void setLeader(long pid, long start) {
        buffer.putLong(OFF_LEADER_START, start);
        LONGS.setRelease(buffer, OFF_LEADER_PID, pid);
    }

    long leaderPid() {
        return (long) LONGS.getAcquire(buffer, OFF_LEADER_PID);
    }

    long leaderStart() {
        return buffer.getLong(OFF_LEADER_START);
    }

    /**
     * A leader daemon about to block on its doorbell: from here on an arriving member rings it. The caller looks at
     * the members' arrival once more after this (the fence orders this store before those loads; a member orders
     * its arrival before its look at {@link #leaderSleeping} the same way), so an arrival is seen or rung, never
     * missed.
     */
    void announceLeaderSleep() {
        LONGS.setVolatile(buffer, OFF_LEADER_SLEEPING, 1L);
        VarHandle.fullFence();
    }

    void leaderAwake() {
        LONGS.setRelease(buffer, OFF_LEADER_SLEEPING, 0L);
    }

    /** Called by a member after its arrival: whether the leader sleeps and must be rung. */
    boolean leaderSleeping() {
        VarHandle.fullFence();
        return (long) LONGS.getVolatile(buffer, OFF_LEADER_SLEEPING) != 0;
    }

    /** The leader daemon's doorbell: {@code group-<g>.bell} beside the region file. */
    Path bellPath() {
        return RegionFiles.bellOf(path);
    }

    void writeDescriptor(int[] counts, int[] displs) {
        for (int b = 0; b < blocks; b++) {
            buffer.putInt(OFF_DESCRIPTOR + 4 * b, counts[b]);
            buffer.putInt(OFF_DESCRIPTOR + 4 * (blocks + b), displs[b]);
        }
    }

    int descriptorCount(int block) {
        return buffer.getInt(OFF_DESCRIPTOR + 4 * block);
    }

    int descriptorDispl(int block) {
        return buffer.getInt(OFF_DESCRIPTOR + 4 * (blocks + block));
    }

    /** Marks the region failed with {@code message}; the first failure wins. Returns the message in force. */
    String fail(String message) {
        byte[] bytes = message.getBytes(StandardCharsets.UTF_8); // before the claim: keep FAILING as short as can be
        if ((long) LONGS.compareAndExchange(buffer, OFF_STATE, STATE_READY, STATE_FAILING) == STATE_READY) {
            int len = Math.min(bytes.length, MAX_FAILURE_BYTES);
            buffer.putInt(OFF_FAILURE, len);
            buffer.put(OFF_FAILURE + 4, bytes, 0, len);
            LONGS.setRelease(buffer, OFF_STATE, STATE_FAILED);
            return message;
        }
        return failure();
    }

    /**
     * The failure message of a failed region. Waits while the failing party writes it: up to 2 s, since on a host
     * with more busy JVMs than cores that party can be descheduled or stopped at a safepoint between its two stores.
     */
    String failure() {
        long deadline = System.nanoTime() + 2_000_000_000L;
        while (state() == STATE_FAILING && System.nanoTime() < deadline) {
            LockSupport.parkNanos(100_000L);
        }
        if (state() != STATE_FAILED) {
            return state() == STATE_CLOSED ? "the leader closed the region (leaders stopped)" : "failed (no message)";
        }
        int len = Math.min(buffer.getInt(OFF_FAILURE), MAX_FAILURE_BYTES);
        byte[] bytes = new byte[len];
        buffer.get(OFF_FAILURE + 4, bytes);
        return new String(bytes, StandardCharsets.UTF_8);
    }

    /** Failure messages of the other groups' regions of this job on this host ("" if none); slow path. */
    String otherGroupsFailures() {
        return RegionFiles.otherGroupsFailures(path);
    }

    void markClosed() {
        LONGS.compareAndExchange(buffer, OFF_STATE, STATE_READY, STATE_CLOSED);
    }

    /** Removes the file (mappings stay valid) and the job directory when it is empty. */
    void unlink() {
        RegionFiles.unlink(path);
    }

    @Override
    public void close() {
        // the mapping is released by the GC; nothing else is held
    }

    @Override
    public String toString() {
        return "region " + path + " (job " + jobId + ", group " + shape.group() + "/" + shape.groups() + ", "
                + shape.members() + " members)";
    }
}
