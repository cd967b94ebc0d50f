package io.meridian.transport.mmap;

import io.meridian.shm.SharedLongs;
import java.nio.file.Path;
import java.util.Collection;
import java.util.Map;

/**
 * The receiving worker's control file, {@code <queues>/<topology>/w<port>/receiver.ctl}: written only by the receiver,
 * read by every same-host sender. It carries what Netty sends back over its socket: liveness (pid, heartbeat),
 * the backpressure status of each of the receiver's tasks and the load of each task (for load-aware shuffle).
 *
 * <p>Layout (64-bit little-endian slots): {@code 0} magic, {@code 1} pid, {@code 2} heartbeat (epoch ms), {@code 3}
 * backpressure version, {@code 4} load version, {@code 5} task capacity, {@code 6} 1 while the reader is about to block on its {@link Doorbell}, {@code 7} a random number per receiver
 * instance (a sender tells a restarted receiver from the old one by it, even in the same process), then three regions: the "owned" bit set
 * (tasks this receiver has reported on), the backpressure bit set, and one double per task (load, NaN = none).
 * A bit set word is written whole with release semantics and the version bumped afterwards; a sender that sees a
 * new version rereads the words. Statuses are complete snapshots (Storm's tracker sends all its tasks), so a sender
 * that reads a mix of two snapshots for a moment converges on the next version.
 */
final class ReceiverControl {
    static final long MAGIC = 0x4d52444e4354524cL; // "MRDNCTRL"
    /** Slots (longs) of the header a sweep reads without mapping the file ({@link QueueFiles#readLiveness}). */
    static final int PID = 1;
    static final int HEARTBEAT = 2;
    private static final int BP_VERSION = 3;
    private static final int LOAD_VERSION = 4;
    private static final int CAPACITY = 5;
    private static final int READER_SLEEPING = 6;
    private static final int INCARNATION = 7;
    static final int HEADER = 8;

    private final SharedLongs longs;
    private final int capacity;
    private final int words;

    private ReceiverControl(SharedLongs longs, int capacity) {
        this.longs = longs;
        this.capacity = capacity;
        this.words = (capacity + 63) >>> 6;
    }

    static int slotsFor(int capacity) {
        int words = (capacity + 63) >>> 6;
        return HEADER + 2 * words + capacity;
    }

    /** Receiver side: creates the file, clears statuses and starts the heartbeat. */
    static ReceiverControl create(Path file, int capacity, long pid) {
        SharedLongs longs = SharedLongs.create(file, slotsFor(capacity));
        ReceiverControl c = new ReceiverControl(longs, capacity);
        longs.setRelease(0, 0);
        for (int i = 0; i < 2 * c.words; i++) {
            longs.setRelease(HEADER + i, 0);
        }
        long nan = Double.doubleToRawLongBits(Double.NaN);
        for (int t = 0; t < capacity; t++) {
            longs.setRelease(c.loadSlot(t), nan);
        }
        longs.setRelease(CAPACITY, capacity);
        longs.setRelease(READER_SLEEPING, 0);
        longs.setRelease(INCARNATION, java.util.concurrent.ThreadLocalRandom.current().nextLong() | 1);
        longs.setRelease(PID, pid);
        longs.setRelease(HEARTBEAT, System.currentTimeMillis());
        longs.getAndAdd(BP_VERSION, 1);
        longs.getAndAdd(LOAD_VERSION, 1);
        longs.setRelease(0, MAGIC);
        return c;
    }

    /** Sender side: maps the file if the receiver has finished creating it, else null. */
    static ReceiverControl open(Path file) {
        SharedLongs longs = SharedLongs.openIfPresent(file, HEADER);
        if (longs == null || longs.getAcquire(0) != MAGIC) {
            return null;
        }
        int capacity = (int) longs.getAcquire(CAPACITY);
        if (capacity <= 0 || longs.slots() < slotsFor(capacity)) {
            return null;
        }
        return new ReceiverControl(longs, capacity);
    }

    int capacity() {
        return capacity;
    }

    long pid() {
        return longs.getAcquire(PID);
    }

    long heartbeat() {
        return longs.getAcquire(HEARTBEAT);
    }

    boolean isValid() {
        return longs.getAcquire(0) == MAGIC;
    }

    void beat(long nowMillis) {
        longs.setRelease(HEARTBEAT, nowMillis);
    }

    /**
     * Reader: about to block. The full fence orders this store before the reader's last look at the queues, as the
     * sender's fence orders its append before its look here, so one of the two always sees the other.
     */
    void announceSleep() {
        longs.setRelease(READER_SLEEPING, 1);
        java.lang.invoke.VarHandle.fullFence();
    }

    long incarnation() {
        return longs.getAcquire(INCARNATION);
    }

    boolean readerSleeping() {
        return longs.getAcquire(READER_SLEEPING) != 0;
    }

    /** Reader: awake again. */
    void awake() {
        longs.setRelease(READER_SLEEPING, 0);
    }

    /** Sender, after appending: whether this sender must ring (the reader sleeps and no other sender rang yet). */
    boolean claimWakeUp() {
        java.lang.invoke.VarHandle.fullFence();
        return longs.getAcquire(READER_SLEEPING) != 0 && longs.compareAndSet(READER_SLEEPING, 1, 0);
    }

    /** Marks the receiver gone (orderly close): senders stop treating it as live at once. */
    void invalidate() {
        longs.setRelease(HEARTBEAT, 0);
        longs.setRelease(0, 0);
    }

    long bpVersion() {
        return longs.getAcquire(BP_VERSION);
    }

    long loadVersion() {
        return longs.getAcquire(LOAD_VERSION);
    }

    /** Receiver side: applies one of Storm's statuses (tasks listed as backpressured or free). */
    synchronized void publishBackPressure(Collection<Integer> bpTasks, Collection<Integer> freeTasks) {
        if (bpTasks != null) {
            for (Integer t : bpTasks) {
                setBit(t, true);
            }
        }
        if (freeTasks != null) {
            for (Integer t : freeTasks) {
                setBit(t, false);
            }
        }
        longs.getAndAdd(BP_VERSION, 1);
    }

    private void setBit(int task, boolean bp) {
        if (task < 0 || task >= capacity) {
            throw new IllegalArgumentException("task id " + task + " does not fit the transport's control file ("
                + TransportConfig.MAX_TASKS + " = " + capacity + ")");
        }
        int word = task >>> 6;
        long bit = 1L << (task & 63);
        int ownedSlot = HEADER + word;
        int bpSlot = HEADER + words + word;
        longs.setRelease(ownedSlot, longs.getPlain(ownedSlot) | bit);
        long w = longs.getPlain(bpSlot);
        longs.setRelease(bpSlot, bp ? w | bit : w & ~bit);
    }

    long ownedWord(int word) {
        return longs.getAcquire(HEADER + word);
    }

    long bpWord(int word) {
        return longs.getAcquire(HEADER + words + word);
    }

    int words() {
        return words;
    }

    /** Receiver side: the latest per-task loads. */
    synchronized void publishLoads(Map<Integer, Double> taskToLoad) {
        for (Map.Entry<Integer, Double> e : taskToLoad.entrySet()) {
            int t = e.getKey();
            if (t >= 0 && t < capacity && e.getValue() != null) {
                longs.setRelease(loadSlot(t), Double.doubleToRawLongBits(e.getValue()));
            }
        }
        longs.getAndAdd(LOAD_VERSION, 1);
    }

    /** The load of a task, NaN when the receiver has reported none. */
    double load(int task) {
        if (task < 0 || task >= capacity) {
            return Double.NaN;
        }
        return Double.longBitsToDouble(longs.getAcquire(loadSlot(task)));
    }

    private int loadSlot(int task) {
        return HEADER + 2 * words + task;
    }
}
