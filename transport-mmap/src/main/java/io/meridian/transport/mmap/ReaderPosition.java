package io.meridian.transport.mmap;

import io.meridian.shm.SharedLongs;
import java.nio.file.Path;

/**
 * What the receiver has delivered from one sender's queue, {@code <queues>/<topology>/w<port>/from-<sender>.pos}:
 * written by the receiver after each delivered batch, read by the sender (lag, readiness) and by a restarted receiver
 * (where to resume). Slots: {@code 0} magic, {@code 1} reader pid, {@code 2} heartbeat (epoch ms), {@code 3} messages
 * delivered (the sequence number of the next message expected), {@code 4} payload bytes delivered, {@code 5} queue
 * index of the last delivered batch (-1 none), {@code 6} payload ring position released (all before it was delivered).
 */
final class ReaderPosition {
    static final long MAGIC = 0x4d52444e52504f53L; // "MRDNRPOS"
    private static final int PID = 1;
    private static final int HEARTBEAT = 2;
    private static final int DELIVERED = 3;
    private static final int DELIVERED_BYTES = 4;
    private static final int LAST_INDEX = 5;
    private static final int RING_RELEASED = 6;
    static final int SLOTS = 8;

    private final SharedLongs longs;

    private ReaderPosition(SharedLongs longs) {
        this.longs = longs;
    }

    /** Receiver side: opens or creates the file; an existing position is kept (that is how a restart resumes). */
    static ReaderPosition attach(Path file, long pid) {
        SharedLongs longs = SharedLongs.create(file, SLOTS);
        if (longs.getAcquire(0) != MAGIC) {
            longs.setRelease(DELIVERED, 0);
            longs.setRelease(DELIVERED_BYTES, 0);
            longs.setRelease(LAST_INDEX, -1);
            longs.setRelease(RING_RELEASED, 0);
            longs.setRelease(0, MAGIC);
        }
        longs.setRelease(PID, pid);
        longs.setRelease(HEARTBEAT, System.currentTimeMillis());
        return new ReaderPosition(longs);
    }

    /** Sender side: null until the receiver has attached. */
    static ReaderPosition open(Path file) {
        SharedLongs longs = SharedLongs.openIfPresent(file, SLOTS);
        if (longs == null || longs.getAcquire(0) != MAGIC) {
            return null;
        }
        return new ReaderPosition(longs);
    }

    long pid() {
        return longs.getAcquire(PID);
    }

    long heartbeat() {
        return longs.getAcquire(HEARTBEAT);
    }

    void beat(long nowMillis) {
        longs.setRelease(HEARTBEAT, nowMillis);
    }

    void detach() {
        longs.setRelease(HEARTBEAT, 0);
    }

    long delivered() {
        return longs.getAcquire(DELIVERED);
    }

    long deliveredBytes() {
        return longs.getAcquire(DELIVERED_BYTES);
    }

    long ringReleased() {
        return longs.getAcquire(RING_RELEASED);
    }

    long lastIndex() {
        return longs.getAcquire(LAST_INDEX);
    }

    /**
     * Commits a delivered batch. The counts go first: a receiver killed between the stores resumes from the older
     * index and skips by sequence number, so a torn commit neither loses nor repeats a batch.
     */
    void commit(long lastIndex, long deliveredBytes, long delivered, long ringReleased) {
        longs.setRelease(DELIVERED_BYTES, deliveredBytes);
        longs.setRelease(DELIVERED, delivered);
        longs.setRelease(LAST_INDEX, lastIndex);
        longs.setRelease(RING_RELEASED, ringReleased); // last: the sender may overwrite only what is committed
    }
}
