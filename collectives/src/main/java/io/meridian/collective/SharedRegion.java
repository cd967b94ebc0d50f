package io.meridian.collective;

import io.meridian.shm.ProcessIdentity;
import io.meridian.shm.ProportionalBackoff;
import io.meridian.shm.OwnerOnlyFiles;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.DoubleBuffer;
import java.nio.LongBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Flyweight over one memory group's region file on tmpfs. Layout (byte offsets, native byte order; counters on
 * cache lines of their own, data areas page-aligned):
 * <pre>
 *      0  header: magic, layout version, creator pid + start, group, groups, members, blocks, capacity,
 *         reduce capacity, leader mode, job id (length + 64 bytes)
 *    256  state            READY / FAILED / CLOSED (long, release/acquire)
 *    384  released seq     last call the leader completed (long, release/acquire)
 *    512  leader pid + start
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
final class SharedRegion implements AutoCloseable {
    static final long MAGIC = 0x4E4149444952454DL; // "MERIDIAN" in little-endian bytes
    static final int LAYOUT_VERSION = 2;
    static final int MAX_JOB_ID_BYTES = JobIds.MAX_BYTES;

    static final long STATE_INIT = 0, STATE_READY = 1, STATE_FAILED = 2, STATE_CLOSED = 3, STATE_FAILING = 4;

    private static final int OFF_MAGIC = 0, OFF_VERSION = 8, OFF_CREATOR_PID = 16, OFF_CREATOR_START = 24,
            OFF_GROUP = 32, OFF_GROUPS = 36, OFF_MEMBERS = 40, OFF_BLOCKS = 44, OFF_CAPACITY = 48,
            OFF_REDUCE_CAPACITY = 52, OFF_LEADER_MODE = 56, OFF_JOB_LEN = 60, OFF_JOB = 64;
    private static final int OFF_STATE = 256, OFF_RELEASED = 384, OFF_LEADER_PID = 512, OFF_LEADER_START = 520,
            OFF_FAILURE = 640, MAX_FAILURE_BYTES = 1024 - OFF_FAILURE - 4, OFF_DESCRIPTOR = 1024;
    static final int SLOT_BYTES = 128;
    private static final int SLOT_ARRIVED = 0, SLOT_PID = 8, SLOT_START = 16, SLOT_OP = 24, SLOT_COUNT = 28,
            SLOT_ROOT = 32;
    private static final int HEADER_PROBE_BYTES = OFF_DESCRIPTOR;

    private static final VarHandle LONGS = MethodHandles.byteBufferViewVarHandle(long[].class, ByteOrder.nativeOrder());

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

    private SharedRegion(Path path, String jobId, RegionShape shape, MappedByteBuffer buffer) {
        this.path = path;
        this.jobId = jobId;
        this.shape = shape;
        this.buffer = buffer;
        this.blocks = shape.blocks();
        Layout layout = new Layout(shape);
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

    /** Byte offsets of a shape's areas. */
    private static final class Layout {
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

    /** {@code root/meridian-<user>/<jobId>/group-<nodeGroup>.region}. */
    static Path pathOf(Path root, String jobId, int nodeGroup) {
        validateJobId(jobId);
        return userDirectory(root).resolve(jobId).resolve("group-" + nodeGroup + ".region");
    }

    static Path userDirectory(Path root) {
        return root.resolve("meridian-" + System.getProperty("user.name", "user").replaceAll("[^A-Za-z0-9._-]", "_"));
    }

    /** The regions under {@code root} whose creator is gone, of any job, as a new region's creation sweeps them. */
    static int sweepStale(Path root) {
        Path userDir = userDirectory(root);
        return Files.isDirectory(userDir) ? sweepStale(userDir, null) : 0;
    }

    static void validateJobId(String jobId) {
        JobIds.validate(jobId);
    }

    // ---------------------------------------------------------------------------------------------- create / attach

    /**
     * Creates the region of a group (by its leader), replacing a stale one left by a crashed run. Refuses when a
     * live process still owns a region at that path. The file is written under a temporary name and renamed into
     * place complete and READY, so an attacher never sees a half-initialised header.
     */
    static SharedRegion create(Path path, String jobId, RegionShape shape) {
        validateJobId(jobId);
        try {
            ensureOwnerOnlyDirs(path.getParent());
            sweepStale(path.getParent().getParent(), path);
            Path existing = path;
            if (Files.exists(existing)) {
                String owner = liveOwner(existing);
                if (owner != null) {
                    throw new CollectiveException("region " + path + " is in use by " + owner
                            + "; another run of job " + jobId + " is active (stop it or use another job id)");
                }
                System.err.println("meridian collectives: replacing stale region " + path);
            }
            Layout layout = new Layout(shape);
            Path tmp = path.resolveSibling(path.getFileName() + ".tmp-" + ProcessIdentity.SELF_PID + "-"
                    + Long.toHexString(ThreadLocalRandom.current().nextLong()));
            MappedByteBuffer buffer;
            try (FileChannel ch = FileChannel.open(tmp, Set.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.READ,
                    StandardOpenOption.WRITE), OwnerOnlyFiles.FILE_ATTRIBUTE)) {
                buffer = ch.map(FileChannel.MapMode.READ_WRITE, 0, layout.size);
            }
            buffer.order(ByteOrder.nativeOrder());
            SharedRegion region = new SharedRegion(path, jobId, shape, buffer);
            region.writeHeader(layout);
            try {
                Files.move(tmp, path, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } catch (AtomicMoveNotSupportedException e) {
                Files.deleteIfExists(tmp);
                throw new CollectiveException("region directory " + path.getParent() + " does not support atomic rename");
            }
            return region;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create region " + path + ": " + e.getMessage(), e);
        }
    }

    private void writeHeader(Layout layout) {
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

    /**
     * Attaches to the region a leader created at {@code path}. Waits (up to {@code timeoutNanos}) for it to appear or
     * for a stale one to be replaced; refuses immediately a region whose magic, layout version or job id differ.
     */
    static SharedRegion attach(Path path, String jobId, long timeoutNanos) {
        validateJobId(jobId);
        long deadline = System.nanoTime() + timeoutNanos;
        ProportionalBackoff backoff = new ProportionalBackoff(10_000_000);
        backoff.reset();
        String lastProblem = "it does not exist";
        while (true) {
            try {
                SharedRegion region = tryAttach(path, jobId);
                if (region != null) {
                    return region;
                }
                lastProblem = "it is stale (its creator is gone) and no leader has replaced it";
            } catch (NoSuchFileException e) {
                lastProblem = "it does not exist";
            } catch (IOException e) {
                throw new UncheckedIOException("cannot open region " + path + ": " + e.getMessage(), e);
            }
            if (System.nanoTime() - deadline > 0) {
                throw new CollectiveTimeoutException("no region to attach at " + path + " after "
                        + timeoutNanos / 1_000_000 + " ms: " + lastProblem + " (is the leader of job " + jobId + " running?)");
            }
            backoff.idle();
        }
    }

    /** The region at {@code path}, or null while it is stale; throws {@link RegionMismatchException} on mismatch. */
    private static SharedRegion tryAttach(Path path, String jobId) throws IOException {
        try (FileChannel ch = FileChannel.open(path, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            long size = ch.size();
            if (size < HEADER_PROBE_BYTES) {
                throw new RegionMismatchException("region " + path + " is " + size + " bytes, too small for a header");
            }
            MappedByteBuffer probe = ch.map(FileChannel.MapMode.READ_ONLY, 0, HEADER_PROBE_BYTES);
            probe.order(ByteOrder.nativeOrder());
            long magic = (long) LONGS.getAcquire(probe, OFF_MAGIC);
            if (magic != MAGIC) {
                throw new RegionMismatchException("region " + path + " has magic 0x" + Long.toHexString(magic)
                        + ", not a Meridian collectives region (0x" + Long.toHexString(MAGIC) + ")");
            }
            int version = probe.getInt(OFF_VERSION);
            if (version != LAYOUT_VERSION) {
                throw new RegionMismatchException("region " + path + " has layout version " + version
                        + ", this build uses " + LAYOUT_VERSION);
            }
            String job = readJob(probe);
            if (!job.equals(jobId)) {
                throw new RegionMismatchException("region " + path + " belongs to job '" + job + "', not '" + jobId + "'");
            }
            long creator = probe.getLong(OFF_CREATOR_PID);
            long state = (long) LONGS.getAcquire(probe, OFF_STATE);
            if (!ProcessIdentity.alive(creator, probe.getLong(OFF_CREATOR_START)) || state == STATE_CLOSED) {
                return null;
            }
            int groups = probe.getInt(OFF_GROUPS);
            int blocks = probe.getInt(OFF_BLOCKS);
            if (groups < 1 || groups > RegionShape.MAX_GROUPS || blocks < 1 || blocks > RegionShape.MAX_BLOCKS) {
                throw new RegionMismatchException("region " + path + " has a corrupt header (" + groups + " groups, "
                        + blocks + " blocks)");
            }
            int tableAt = OFF_DESCRIPTOR + 8 * blocks;
            MappedByteBuffer table = ch.map(FileChannel.MapMode.READ_ONLY, tableAt, 4L * (groups + 1));
            table.order(ByteOrder.nativeOrder());
            int[] first = new int[groups + 1];
            for (int g = 0; g <= groups; g++) {
                first[g] = table.getInt(4 * g);
            }
            RegionShape shape;
            try {
                shape = new RegionShape(probe.getInt(OFF_GROUP), groups, probe.getInt(OFF_MEMBERS), first,
                        probe.getInt(OFF_CAPACITY), probe.getInt(OFF_REDUCE_CAPACITY), probe.getInt(OFF_LEADER_MODE) == 1);
            } catch (IllegalArgumentException e) {
                throw new RegionMismatchException("region " + path + " has a corrupt header: " + e.getMessage());
            }
            Layout layout = new Layout(shape);
            if (size != layout.size) {
                throw new RegionMismatchException("region " + path + " is " + size + " bytes, its header says " + layout.size);
            }
            MappedByteBuffer buffer = ch.map(FileChannel.MapMode.READ_WRITE, 0, layout.size);
            buffer.order(ByteOrder.nativeOrder());
            return new SharedRegion(path, jobId, shape, buffer);
        }
    }

    private static String readJob(ByteBuffer header) {
        int len = header.getInt(OFF_JOB_LEN);
        if (len < 1 || len > MAX_JOB_ID_BYTES) {
            return "<corrupt job id length " + len + ">";
        }
        byte[] job = new byte[len];
        header.get(OFF_JOB, job);
        return new String(job, StandardCharsets.UTF_8);
    }

    /** "pid N" when a live process owns the (complete, valid) region at {@code path}, else null (stale or foreign). */
    /**
     * Removes the regions of job {@code jobId} (every group) under {@code root} that no live process owns, with their
     * directory once it is empty. Returns how many region files it removed.
     */
    static int removeStale(Path root, String jobId) {
        Path jobDir = pathOf(root, jobId, 0).getParent();
        int removed = 0;
        if (!Files.isDirectory(jobDir)) {
            return 0;
        }
        try (var files = Files.newDirectoryStream(jobDir)) {
            for (Path f : files) {
                String name = f.getFileName().toString();
                if ((name.endsWith(".region") && liveOwner(f) == null) || name.contains(".tmp-")) {
                    if (Files.deleteIfExists(f)) {
                        removed++;
                    }
                }
            }
            try (var left = Files.list(jobDir)) {
                if (left.findAny().isEmpty()) {
                    Files.deleteIfExists(jobDir);
                }
            }
        } catch (IOException e) {
            // best effort: a region that stays is found stale by the next sweep
        }
        return removed;
    }

    private static String liveOwner(Path path) throws IOException {
        try (FileChannel ch = FileChannel.open(path, StandardOpenOption.READ)) {
            if (ch.size() < HEADER_PROBE_BYTES) {
                return null;
            }
            MappedByteBuffer probe = ch.map(FileChannel.MapMode.READ_ONLY, 0, HEADER_PROBE_BYTES);
            probe.order(ByteOrder.nativeOrder());
            if ((long) LONGS.getAcquire(probe, OFF_MAGIC) != MAGIC) {
                return null;
            }
            long pid = probe.getLong(OFF_CREATOR_PID);
            long state = (long) LONGS.getAcquire(probe, OFF_STATE);
            if (state == STATE_READY && ProcessIdentity.alive(pid, probe.getLong(OFF_CREATOR_START))) {
                return "pid " + pid;
            }
            return null;
        } catch (NoSuchFileException e) {
            return null;
        }
    }

    /**
     * Removes the regions of crashed runs under the user's directory (any job): regions whose creator is gone (or
     * that are not valid regions), temporary files older than a minute, and job directories empty for a minute.
     */
    private static int sweepStale(Path userDir, Path own) {
        int removed = 0;
        try (var jobs = Files.newDirectoryStream(userDir)) {
            for (Path jobDir : jobs) {
                if (!Files.isDirectory(jobDir)) {
                    continue;
                }
                boolean empty = true;
                try (var files = Files.newDirectoryStream(jobDir)) {
                    for (Path f : files) {
                        String name = f.getFileName().toString();
                        boolean stale = name.contains(".tmp-")
                                ? Files.getLastModifiedTime(f).toMillis() < System.currentTimeMillis() - 60_000
                                : name.endsWith(".region") && liveOwner(f) == null;
                        if (stale) {
                            if (Files.deleteIfExists(f) && name.endsWith(".region")) {
                                removed++;
                            }
                            if (!f.equals(own)) {
                                System.err.println("meridian collectives: removed stale region " + f);
                            }
                        } else {
                            empty = false;
                        }
                    }
                }
                // a directory another leader has just made is empty for a moment: only old ones go
                if (empty && (own == null || !jobDir.equals(own.getParent()))
                        && Files.getLastModifiedTime(jobDir).toMillis() < System.currentTimeMillis() - 60_000) {
                    Files.deleteIfExists(jobDir);
                }
            }
        } catch (IOException | RuntimeException e) {
            // best effort: another process may be sweeping or creating at the same time
        }
        return removed;
    }

    private static void ensureOwnerOnlyDirs(Path jobDir) throws IOException {
        Path userDir = jobDir.getParent();
        Files.createDirectories(userDir.getParent());
        OwnerOnlyFiles.ensureOwned(userDir);
        OwnerOnlyFiles.ensureOwned(jobDir);
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
            java.util.concurrent.locks.LockSupport.parkNanos(100_000L);
        }
        if (state() != STATE_FAILED) {
            return state() == STATE_CLOSED ? "the leader closed the region (leaders stopped)" : "failed (no message)";
        }
        int len = Math.min(buffer.getInt(OFF_FAILURE), MAX_FAILURE_BYTES);
        byte[] bytes = new byte[len];
        buffer.get(OFF_FAILURE + 4, bytes);
        return new String(bytes, StandardCharsets.UTF_8);
    }

    /**
     * Failure messages of the other groups' regions of this job on this host ("" if none): when this group's leader
     * stopped or vanished because another group failed, that is the reason worth reporting. Slow path.
     */
    String otherGroupsFailures() {
        StringBuilder out = new StringBuilder();
        try (var files = Files.newDirectoryStream(path.getParent(), "group-*.region")) {
            for (Path f : files) {
                if (f.equals(path)) {
                    continue;
                }
                try (FileChannel ch = FileChannel.open(f, StandardOpenOption.READ)) {
                    if (ch.size() < HEADER_PROBE_BYTES) {
                        continue;
                    }
                    MappedByteBuffer probe = ch.map(FileChannel.MapMode.READ_ONLY, 0, HEADER_PROBE_BYTES);
                    probe.order(ByteOrder.nativeOrder());
                    if ((long) LONGS.getAcquire(probe, OFF_MAGIC) == MAGIC && (long) LONGS.getAcquire(probe, OFF_STATE) == STATE_FAILED) {
                        int len = Math.min(Math.max(probe.getInt(OFF_FAILURE), 0), MAX_FAILURE_BYTES);
                        byte[] bytes = new byte[len];
                        probe.get(OFF_FAILURE + 4, bytes);
                        out.append("; another group failed: ").append(new String(bytes, StandardCharsets.UTF_8));
                    }
                }
            }
        } catch (IOException | RuntimeException e) {
            // best effort
        }
        return out.toString();
    }

    void markClosed() {
        LONGS.compareAndExchange(buffer, OFF_STATE, STATE_READY, STATE_CLOSED);
    }

    /** Removes the file (mappings stay valid) and the job directory when it is empty. */
    void unlink() {
        try {
            Files.deleteIfExists(path);
            Path dir = path.getParent();
            try (var entries = Files.list(dir)) {
                if (entries.findAny().isEmpty()) {
                    Files.deleteIfExists(dir);
                }
            }
        } catch (IOException e) {
            // best effort: a left-over file is detected as stale by the next run
        }
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
