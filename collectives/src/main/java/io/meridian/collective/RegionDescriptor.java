package io.meridian.collective;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

/**
 * The layout of one memory group's region file on tmpfs, offsets only: {@link RegionFiles} creates, maps, attaches and
 * sweeps the files, {@link SharedRegion} is the protocol over a mapped one. Byte offsets, native byte order; counters
 * on cache lines of their own, data areas page-aligned:
 * <pre>
 *      0  header: magic, layout version, creator pid + start, group, groups, members, blocks, capacity,
 *         reduce capacity, leader mode, job id (length + 64 bytes)
 *    256  state            READY / FAILED / CLOSED (long, release/acquire)
 *    384  released seq     last call the leader completed (long, release/acquire)
 *    512  leader pid + start, leader sleeping (a daemon blocked on its doorbell: long, volatile; layout version 3)
 *    640  failure message  (int length + UTF-8)
 *   1024  descriptor       counts[blocks], displs[blocks] of the current allgatherv (written by member 0)
 *         block table      firstBlock[groups + 1]
 *  slots  per member, 128 bytes: arrived seq (long, release/acquire), pid, start, op, count, root
 *  result[0], result[1]    capacity doubles each; call s uses result[s &amp; 1] (double buffering: a member that is
 *                          already writing call s+1 never overwrites what a slower member still reads of call s),
 *                          each followed by reduce capacity doubles: the sums of an allgatherv with sum
 *  reduce slots            per member, reduce capacity doubles/longs: allreduce inputs
 * </pre>
 */
final class RegionDescriptor {
    static final long MAGIC = 0x4E4149444952454DL; // "MERIDIAN" in little-endian bytes
    static final int LAYOUT_VERSION = 3;
    static final int MAX_JOB_ID_BYTES = JobIds.MAX_BYTES;

    static final long STATE_INIT = 0, STATE_READY = 1, STATE_FAILED = 2, STATE_CLOSED = 3, STATE_FAILING = 4;

    static final int OFF_MAGIC = 0, OFF_VERSION = 8, OFF_CREATOR_PID = 16, OFF_CREATOR_START = 24,
            OFF_GROUP = 32, OFF_GROUPS = 36, OFF_MEMBERS = 40, OFF_BLOCKS = 44, OFF_CAPACITY = 48,
            OFF_REDUCE_CAPACITY = 52, OFF_LEADER_MODE = 56, OFF_JOB_LEN = 60, OFF_JOB = 64;
    static final int OFF_STATE = 256, OFF_RELEASED = 384, OFF_LEADER_PID = 512, OFF_LEADER_START = 520,
            OFF_LEADER_SLEEPING = 528,
            OFF_FAILURE = 640, MAX_FAILURE_BYTES = 1024 - OFF_FAILURE - 4, OFF_DESCRIPTOR = 1024;
    static final int SLOT_BYTES = 128;
    static final int SLOT_ARRIVED = 0, SLOT_PID = 8, SLOT_START = 16, SLOT_OP = 24, SLOT_COUNT = 28,
            SLOT_ROOT = 32;
    static final int HEADER_PROBE_BYTES = OFF_DESCRIPTOR;

    /** The counters' access: native-order longs with acquire/release (and CAS) semantics. */
    static final VarHandle LONGS = MethodHandles.byteBufferViewVarHandle(long[].class, ByteOrder.nativeOrder());

    /** Byte offsets of a shape's areas. */
    static final class Layout {
        final int blockTable, slots, reduceSlotBytes, reduce;
        final int[] result = new int[2];
        final long size;

        Layout(RegionShape s) {
            long descriptorEnd = OFF_DESCRIPTOR + 8L * s.blocks();
            blockTable = (int) descriptorEnd;
            slots = (int) align(descriptorEnd + 4L * (s.groups() + 1), SLOT_BYTES);
            long r0 = align((long) slots + (long) SLOT_BYTES * s.members(), 4096);
            long resultBytes = 8L * s.capacity() + 8L * s.reduceCapacity();
            long r1 = align(r0 + resultBytes, 4096);
            long red = align(r1 + resultBytes, 4096);
            long slotBytes = align(8L * s.reduceCapacity(), 128);
            size = align(red + slotBytes * s.members(), 4096);
            if (size > Integer.MAX_VALUE) {
                throw new IllegalArgumentException("region of " + size + " bytes: at most 2 GiB (lower the capacity)");
            }
            result[0] = (int) r0;
            result[1] = (int) r1;
            reduce = (int) red;
            reduceSlotBytes = (int) slotBytes;
        }
    }

    private static long align(long v, long to) {
        return (v + to - 1) / to * to;
    }

    private RegionDescriptor() {
    }
}
