package io.meridian.transport.mmap;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.file.Path;
import java.util.ArrayList;
import net.openhft.chronicle.bytes.Bytes;
import net.openhft.chronicle.queue.ExcerptTailer;
import net.openhft.chronicle.queue.RollCycle;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueue;
import net.openhft.chronicle.wire.DocumentContext;
import org.apache.storm.messaging.IConnectionCallback;
import org.apache.storm.messaging.TaskMessage;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The receiving end of one sender's queue, polled by the receiver's reader thread: reads whole batches, hands them to
 * Storm, then commits the position (so a restarted receiver resumes after the last delivered batch, skipping by
 * sequence number anything it already delivered), and deletes cycle files behind the committed position.
 *
 * <p>Allocation: the batch list and the {@link TaskMessage} objects are reused (their fields are set in place; Storm's
 * callback deserializes synchronously and keeps neither). The one allocation per message is the {@code byte[]} a
 * {@code TaskMessage} must carry: Storm's API gives it no other way to hold the bytes.
 */
final class InboundQueue implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(InboundQueue.class);
    private static final int MAX_BATCHES_PER_POLL = 256;
    private static final int MAX_MESSAGES_PER_DELIVERY = 1024;
    private static final VarHandle TASK;
    private static final VarHandle MESSAGE;

    static {
        VarHandle task = null;
        VarHandle message = null;
        try {
            MethodHandles.Lookup l = MethodHandles.privateLookupIn(TaskMessage.class, MethodHandles.lookup());
            task = l.findVarHandle(TaskMessage.class, "task", int.class);
            message = l.findVarHandle(TaskMessage.class, "message", byte[].class);
        } catch (ReflectiveOperationException | RuntimeException e) {
            LOG.info("mmap transport: cannot reuse TaskMessage objects ({}); allocating one per message", e.toString());
        }
        TASK = task;
        MESSAGE = message;
    }

    final String senderId;
    final Path queueDir;
    private final SingleChronicleQueue queue;
    private final ExcerptTailer tailer;
    private final RollCycle rollCycle;
    final ReaderPosition position;
    private final ArrayList<TaskMessage> batch = new ArrayList<>(1024);
    private TaskMessage[] pool = new TaskMessage[0];
    private final Path ringFile;
    private PayloadRing ring;
    private long ringReleased;
    private long expected;
    private long deliveredBytes;
    private volatile int committedCycle = Integer.MIN_VALUE;
    private int cleanedBelow = Integer.MIN_VALUE;
    long deliveredMessages;
    long skippedMessages;
    long gaps;

    InboundQueue(Path receiverDir, String senderId, int rollSeconds, long pid) {
        this.senderId = senderId;
        this.queueDir = QueueFiles.queueDir(receiverDir, senderId);
        this.queue = QueueFiles.open(queueDir, rollSeconds, false, null);
        this.rollCycle = queue.rollCycle();
        this.position = ReaderPosition.attach(QueueFiles.positionFile(receiverDir, senderId), pid);
        this.ringFile = QueueFiles.ringFile(receiverDir, senderId);
        this.ringReleased = position.ringReleased();
        this.expected = position.delivered();
        this.deliveredBytes = position.deliveredBytes();
        this.tailer = queue.createTailer();
        // confined to one thread at a time by the receiver (created, polled and closed under its hand-over)
        tailer.singleThreadedCheckDisabled(true);
        long last = position.lastIndex();
        if (last >= 0) {
            committedCycle = rollCycle.toCycle(last);
            if (!tailer.moveToIndex(last)) {
                tailer.toStart();
            }
        } else {
            tailer.toStart();
        }
        LOG.info("mmap transport: reading {} from message {} (queue index {})", queueDir, expected, last);
    }

    /**
     * Reads the documents available (up to {@link #MAX_MESSAGES_PER_DELIVERY} messages), hands them to Storm in one
     * call, as Netty's decoder does with what one socket read brought, then commits; returns the messages delivered.
     */
    int poll(IConnectionCallback callback) {
        batch.clear();
        long lastIndex = -1;
        for (int n = 0; n < MAX_BATCHES_PER_POLL && batch.size() < MAX_MESSAGES_PER_DELIVERY; n++) {
            int count = readBatch();
            if (count < 0) {
                break;
            }
            if (count > 0) {
                lastIndex = tailer.lastReadIndex();
            }
        }
        int delivered = batch.size();
        if (delivered == 0) {
            return 0;
        }
        callback.recv(batch);
        release(delivered);
        position.commit(lastIndex, deliveredBytes, expected, ringReleased);
        int cycle = rollCycle.toCycle(lastIndex);
        if (cycle > committedCycle) {
            committedCycle = cycle;
        }
        deliveredMessages += delivered;
        return delivered;
    }

    /** @return messages appended to {@link #batch}, 0 for a batch to skip, -1 when the queue has nothing new */
    private int readBatch() {
        try (DocumentContext dc = tailer.readingDocument()) {
            if (!dc.isPresent()) {
                return -1;
            }
            Bytes<?> b = dc.wire().bytes();
            long at = b.readPosition();
            long documentBytes = b.readRemaining();
            if (documentBytes < Frames.HEADER_BYTES) {
                throw new IllegalStateException("mmap transport: " + queueDir + ": a document of " + documentBytes
                    + " bytes after message " + expected + " is shorter than a batch header");
            }
            return readDocument(Chunks.contiguous(b, at, documentBytes, queueDir), documentBytes);
        }
    }

    private int readDocument(long address, long documentBytes) {
        long first = RawMemory.getLong(address + Frames.OFF_FIRST_SEQ);
        long bytesBefore = RawMemory.getLong(address + Frames.OFF_BYTES_BEFORE);
        int count = RawMemory.getInt(address + Frames.OFF_COUNT);
        int payload = RawMemory.getInt(address + Frames.OFF_PAYLOAD);
        long framesAt = RawMemory.getLong(address + Frames.OFF_FRAMES_AT);
        if (!accept(first, count)) {
            return 0;
        }
        int base = batch.size();
        if (pool.length < base + count) {
            growPool(base + count);
        }
        long p;
        long limit;
        long framesBytes = Frames.framesBytes(count, payload);
        if (framesAt >= 0) {
            p = ring().address(framesAt, framesBytes);
            limit = p + framesBytes;
        } else {
            p = address + Frames.HEADER_BYTES;
            limit = address + documentBytes;
        }
        for (int i = 0; i < count; i++) {
            if (p + Frames.MESSAGE_OVERHEAD > limit) {
                throw corrupt(first, i, count);
            }
            int task = RawMemory.getInt(p);
            int length = RawMemory.getInt(p + 4);
            byte[] body;
            if (!Frames.inRing(length)) {
                if (p + Frames.MESSAGE_OVERHEAD + length > limit) {
                    throw corrupt(first, i, count);
                }
                body = new byte[length]; // the unavoidable one: TaskMessage owns its bytes
                RawMemory.copy(p + Frames.MESSAGE_OVERHEAD, body, length);
                p += Frames.MESSAGE_OVERHEAD + length;
            } else {
                if (framesAt >= 0 || p + Frames.RING_MESSAGE_BYTES > limit) {
                    throw corrupt(first, i, count); // frames in the ring hold every message inline
                }
                long ringPosition = RawMemory.getLong(p + 8);
                body = new byte[Frames.ringLength(length)];
                ring().read(ringPosition, body);
                releaseRingTo(ringPosition + body.length);
                p += Frames.RING_MESSAGE_BYTES;
            }
            batch.add(message(base + i, task, body));
        }
        if (framesAt >= 0) {
            releaseRingTo(framesAt + framesBytes);
        }
        expected = first + count;
        deliveredBytes = bytesBefore + payload;
        return count;
    }

    /** Whether a document starting at message {@code first} holds anything not yet delivered. */
    private boolean accept(long first, int count) {
        if (first + count <= expected) {
            skippedMessages += count;
            return false;
        }
        if (first != expected) {
            gaps++;
            LOG.error("mmap transport: {} jumped from message {} to {}", queueDir, expected, first);
        }
        return true;
    }

    private IllegalStateException corrupt(long first, int i, int count) {
        return new IllegalStateException("mmap transport: " + queueDir + ": message " + i + " of " + count
            + " in the document of messages from " + first + " runs past the end of the document");
    }

    /**
     * The ring-release rule: ring bytes below {@code end} may be reused by the sender once the batch that read them is
     * delivered, so the value is published by {@link ReaderPosition#commit} after Storm has taken the batch, never
     * before; a restarted receiver re-reads everything above the last committed value intact.
     */
    private void releaseRingTo(long end) {
        ringReleased = end;
    }

    private PayloadRing ring() {
        if (ring == null) {
            ring = PayloadRing.open(ringFile);
        }
        return ring;
    }

    private TaskMessage message(int i, int task, byte[] body) {
        if (TASK == null) {
            return new TaskMessage(task, body);
        }
        TaskMessage m = pool[i];
        TASK.set(m, task);
        MESSAGE.set(m, body);
        return m;
    }

    private void growPool(int count) {
        TaskMessage[] bigger = java.util.Arrays.copyOf(pool, Math.max(count, pool.length * 2));
        for (int i = pool.length; i < bigger.length; i++) {
            bigger[i] = new TaskMessage(0, null);
        }
        pool = bigger;
    }

    /** Drops the references to delivered bytes so pooled messages do not keep them alive. */
    private void release(int count) {
        if (MESSAGE != null) {
            for (int i = 0; i < count; i++) {
                MESSAGE.set(pool[i], (byte[]) null);
            }
        }
        batch.clear();
    }

    /**
     * The receiver's cleaner thread, now and then: delete the cycle files below the committed position. Not on the
     * reader thread: unlinking a cycle file of a few hundred MB of tmpfs takes tens of milliseconds, a stall every
     * cycle that showed as a 68 ms p99 at 350k tuples/s. The tailer only moves forward, so it never needs them again.
     */
    int cleanUp() {
        int committed = committedCycle;
        if (committed > cleanedBelow) {
            int deleted = QueueFiles.deleteCyclesBefore(queueDir, rollCycle, committed);
            cleanedBelow = committed;
            return deleted;
        }
        return 0;
    }

    long expected() {
        return expected;
    }

    @Override
    public void close() {
        position.detach();
        tailer.close();
        queue.close();
    }
}
