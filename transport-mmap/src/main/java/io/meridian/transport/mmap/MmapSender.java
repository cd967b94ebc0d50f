package io.meridian.transport.mmap;

import io.meridian.shm.ShmFullException;
import io.meridian.shm.TmpfsSpace;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collection;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;
import net.openhft.chronicle.bytes.Bytes;
import net.openhft.chronicle.queue.ExcerptAppender;
import net.openhft.chronicle.queue.ExcerptTailer;
import net.openhft.chronicle.queue.TailerDirection;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueue;
import net.openhft.chronicle.wire.DocumentContext;
import org.apache.storm.grouping.Load;
import org.apache.storm.messaging.ConnectionWithStatus;
import org.apache.storm.messaging.IConnection;
import org.apache.storm.messaging.TaskMessage;
import org.apache.storm.messaging.netty.BackPressureStatus;
import org.apache.storm.metric.api.IStatefulObject;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The sending side of one same-host worker pair: appends each {@code send} batch to the pair's Chronicle queue as raw
 * bytes (see {@link Frames}): the frames in the pair's {@link PayloadRing} while it has room, the queue document
 * then only a header; else inline, tuples of {@code meridian.transport.ring.threshold} bytes or more alone in the
 * ring. What it knows of the receiver (liveness, backpressure, the reader's position, the doorbell) is its
 * {@link ReceiverLink}.
 *
 * <p>Threads: {@link #send} runs on the worker's transfer thread only; {@link #poll} on the context's poller thread,
 * which keeps the {@link ReceiverLink} (readiness, backpressure from the receiver and from the lag: the one writer of
 * the flags); {@link #close} on Storm's connection refresher.
 */
final class MmapSender extends ConnectionWithStatus implements IStatefulObject {
    private static final Logger LOG = LoggerFactory.getLogger(MmapSender.class);
    private static final long FALLBACK_READY_MILLIS = 5000;
    /** How long a fallback waits for the poller to let go of the backpressure flags (it polls every 10 ms). */
    private static final long FLAGS_RELEASE_MILLIS = 1000;
    /**
     * Below this much free tmpfs (plus the batch, and what the worker's other senders are writing: {@link TmpfsBudget})
     * a send goes to Netty instead of touching new queue pages. Catching
     * the fault is not enough: the JVM raises a SIGBUS in compiled code as an InternalError at its next safepoint
     * poll, which on the cluster was in Storm's transfer loop after {@link #send} returned (ShmFullIT: the worker
     * halted, "Async loop died!"). A document is at most 1 MiB and a new 5 s cycle file touches its header and first
     * index pages; 8 MiB leaves room for both and for the receiver's tailer.
     */
    static final long SHM_HEADROOM_BYTES = 8L << 20;

    private final TransportConfig config;
    private final String host;
    private final int port;
    private final Path receiverDir;
    private final Path queueDir;
    private final ReceiverLink link;
    private final SingleChronicleQueue queue;
    private final Path ringFile;
    private PayloadRing ring; // created with the first large tuple: 64 MiB of tmpfs only for pairs that need it
    private long ringHead;
    private final java.util.function.Consumer<MmapSender> onClose;
    private ExcerptAppender appender;
    // the transfer thread's current batch, reused: the messages of one send call and where each went in the ring
    private TaskMessage[] batch = new TaskMessage[1024];
    private long[] ringAt = new long[1024];
    private int appended; // messages of the batch in documents already appended (a fallback sends the rest)

    // written by the transfer thread, read by the poller
    private volatile long sentMessages;
    private volatile long sentBytes;
    private final AtomicLong dropped = new AtomicLong();

    private volatile long rings; // written by the transfer thread only
    private volatile boolean closed;
    private volatile LinkMetrics metrics = LinkMetrics.UNREGISTERED;
    /** Makes the Netty connection this link falls back to when its files cannot get tmpfs pages; null: none. */
    private Supplier<IConnection> nettyLink;
    private Supplier<LinkMetrics> nettyMetrics = () -> LinkMetrics.UNREGISTERED;
    /** The Netty connection once the link fell back (for good, {@link #fallBack}); written by the transfer thread. */
    private volatile IConnection fallback;
    private volatile IConnection fallbackRaw; // its status
    /** Set by the transfer thread as it falls back: the poller clears this link's flags and writes them no more. */
    private volatile boolean fallingBack;
    /** Set by the poller once it has cleared them; the Netty connection is made only after (it sets them from then). */
    private volatile boolean flagsReleased;
    /** The free bytes of the queues' tmpfs, shared with the context's other senders. */
    private final TmpfsBudget budget;

    MmapSender(TransportConfig config, Path root, String topologyId, String host, int port, String senderId,
               AtomicBoolean[] remoteBpStatus, TmpfsBudget budget, java.util.function.Consumer<MmapSender> onClose) {
        this.config = config;
        this.onClose = onClose;
        this.host = host;
        this.port = port;
        this.receiverDir = QueueFiles.receiverDir(root, topologyId, port);
        this.queueDir = QueueFiles.queueDir(receiverDir, senderId);
        this.link = new ReceiverLink(config, receiverDir, QueueFiles.positionFile(receiverDir, senderId),
            remoteBpStatus);
        this.queue = QueueFiles.open(queueDir, config.rollSeconds, false, null);
        this.ringFile = QueueFiles.ringFile(receiverDir, senderId);
        this.budget = budget;
        try {
            recoverCounters();
            poll(System.currentTimeMillis());
        } catch (RuntimeException | Error e) {
            queue.close(); // the link falls back to Netty (a full tmpfs): the queue's files and mappings go now
            throw e;
        }
        LOG.info("mmap transport: sending to {}:{} through {} (resuming at message {})", host, port, queueDir, sentMessages);
    }

    /** Counts what this sender writes into the worker's link metrics; called once, before the first send. */
    void countInto(LinkMetrics linkMetrics) {
        this.metrics = linkMetrics;
    }

    /**
     * Where this link goes when the tmpfs cannot hold its queue: a Netty connection to the same worker, its metrics
     * registered only then (a same-host link that never fell back has no {@code way="netty"} series).
     */
    void fallBackTo(Supplier<IConnection> netty, Supplier<LinkMetrics> counted) {
        this.nettyLink = netty;
        this.nettyMetrics = counted;
    }

    /** A restarted sender continues the numbering of what it wrote before, from the last batch in the queue. */
    private void recoverCounters() {
        try (ExcerptTailer tailer = queue.createTailer()) {
            tailer.direction(TailerDirection.BACKWARD).toEnd();
            try (DocumentContext dc = tailer.readingDocument()) {
                if (dc.isPresent()) {
                    Bytes<?> b = dc.wire().bytes();
                    long p = b.readPosition();
                    sentMessages = b.readLong(p + Frames.OFF_FIRST_SEQ) + b.readInt(p + Frames.OFF_COUNT);
                    sentBytes = b.readLong(p + Frames.OFF_BYTES_BEFORE) + b.readInt(p + Frames.OFF_PAYLOAD);
                    ringHead = b.readLong(p + Frames.OFF_RING_HEAD);
                }
            }
        }
    }

    @Override
    public synchronized void send(Iterator<TaskMessage> msgs) {
        IConnection netty = fallback;
        if (netty != null && !closed) {
            netty.send(msgs);
            return;
        }
        if (closed) {
            long n = 0;
            while (msgs.hasNext()) {
                msgs.next();
                n++;
            }
            if (n > 0) {
                dropped.addAndGet(n);
                LOG.error("Dropping {} messages because the mmap connection to {}:{} is closed", n, host, port);
            }
            return;
        }
        if (!msgs.hasNext()) {
            return;
        }
        int n = 0;
        long batchBytes = 0;
        while (msgs.hasNext()) {
            TaskMessage m = msgs.next();
            batchBytes += m.message().length;
            if (m.message().length > Frames.MAX_MESSAGE_BYTES) {
                throw new IllegalArgumentException("tuple of " + m.message().length + " bytes for task " + m.task()
                    + " is larger than the mmap transport's limit of " + Frames.MAX_MESSAGE_BYTES + " bytes");
            }
            if (n == batch.length) {
                batch = java.util.Arrays.copyOf(batch, n * 2);
                ringAt = java.util.Arrays.copyOf(ringAt, n * 2);
            }
            batch[n++] = m;
        }
        boolean taken = budget.take(batchBytes);
        if (!taken && nettyLink != null) {
            fallBack(TmpfsSpace.full(queueDir, budget.headroom() + batchBytes, null), n);
            return;
        }
        try {
            if (appender == null) {
                appender = queue.createAppender();
                appender.singleThreadedCheckDisabled(true); // closed by another thread, under this object's lock
            }
            appendBatch(n, sentMessages, sentBytes);
        } catch (RuntimeException | InternalError e) {
            ShmFullException full = shmFull(e);
            if (full == null || nettyLink == null) {
                throw e;
            }
            fallBack(full, n);
        } finally {
            if (taken) {
                budget.written(batchBytes);
            }
        }
    }

    /**
     * Appends messages {@code [0, n)} of {@link #batch} as documents; the sequence numbers go on from {@code seq}. A
     * document's frames go into the payload ring when it has room ({@link Frames}: fresh queue pages cost more than
     * the copy), else inline in the document, large tuples alone in the ring as before.
     */
    private void appendBatch(int n, long seq, long bytes) {
        long ringReleased = link.ringReleased();
        for (int first = 0; first < n; ) {
            int end = first;
            int payload = 0;
            while (end < n && payload < Frames.MAX_DOCUMENT_BYTES) {
                payload += batch[end].message().length;
                end++;
            }
            long framesBytes = Frames.framesBytes(end - first, payload);
            long framesAt = config.ringBatches && framesBytes <= config.ringBytes / 2
                ? ring().reserve(ringHead, framesBytes, ringReleased) : -1;
            long documentBytes = Frames.HEADER_BYTES;
            if (framesAt >= 0) {
                ringHead = framesAt + framesBytes;
                java.util.Arrays.fill(ringAt, first, end, -1L);
            } else {
                documentBytes += inlineOrRing(first, end, ringReleased);
            }
            appendDocument(first, end, documentBytes, seq, bytes, payload, framesAt, framesBytes);
            seq += end - first;
            bytes += payload;
            first = end;
            appended = end;
        }
        appended = 0;
        java.util.Arrays.fill(batch, 0, n, null);
        metrics.messages.inc(seq - sentMessages);
        metrics.bytes.inc(bytes - sentBytes);
        sentMessages = seq;
        sentBytes = bytes;
        if (link.wakeReader()) {
            rings++;
            metrics.wakeups.inc();
        }
    }

    /** Frames of messages {@code [first, end)} in the document: each inline, or a large one's place in the ring. */
    private long inlineOrRing(int first, int end, long ringReleased) {
        long bytes = 0;
        for (int i = first; i < end; i++) {
            int length = batch[i].message().length;
            long at = length >= config.ringThreshold && length <= config.ringBytes / 2
                ? ring().reserve(ringHead, length, ringReleased) : -1;
            if (at >= 0) {
                ringHead = at + length;
                bytes += Frames.RING_MESSAGE_BYTES;
            } else {
                bytes += Frames.MESSAGE_OVERHEAD + length;
            }
            ringAt[i] = at;
        }
        return bytes;
    }

    /**
     * One queue document for messages {@code [first, end)} of {@link #batch}: the header and, unless they went to the
     * ring at {@code framesAt}, the frames, stored straight into the mapped queue file (one bounds check for the
     * document, not one per field). Frames in the ring are written before the document, which publishes them.
     */
    private void appendDocument(int first, int end, long documentBytes, long seq, long bytesBefore, int payload,
                                long framesAt, long framesBytes) {
        if (framesAt >= 0) {
            writeFrames(ring.address(framesAt, framesBytes), first, end);
        }
        try (DocumentContext dc = appender.writingDocument()) {
            try {
                Bytes<?> b = dc.wire().bytes();
                long start = b.writePosition();
                long address = Chunks.forWrite(b, start, documentBytes, queueDir);
                writeHeader(address, end - first, seq, bytesBefore, payload, framesAt);
                if (framesAt < 0) {
                    writeFrames(address + Frames.HEADER_BYTES, first, end);
                }
                b.writeSkip(documentBytes);
            } catch (RuntimeException | Error e) {
                dc.rollbackOnClose(); // a document half written (a page that faulted) is never read
                throw e;
            }
        }
    }

    /**
     * The tmpfs failure behind {@code e}: the ring's or a file's reservation refused, a store into a queue page the
     * tmpfs could not back (the JVM's InternalError for the SIGBUS), or Chronicle's ENOSPC creating a cycle file.
     */
    private ShmFullException shmFull(Throwable e) {
        ShmFullException full = ShmFullException.in(e);
        if (full != null) {
            return full;
        }
        for (Throwable c = e; c != null && c.getCause() != c; c = c.getCause()) {
            if (TmpfsSpace.isMappedWriteFault(c)) {
                return TmpfsSpace.fault(queueDir, c);
            }
        }
        return TmpfsSpace.isNoSpace(e) ? TmpfsSpace.full(queueDir, 0, e) : null;
    }

    /**
     * The tmpfs is full: this link goes through Netty from now on, starting with the batch's messages not yet
     * appended (those appended are read as usual). For good, until the worker restarts or its assignment changes:
     * going back to the queue would need the receiver to merge two streams, and Netty carried the topology at 0.98x
     * the queue's tuples/s (docs/transport.md), so staying costs little. Waits up to {@link #FALLBACK_READY_MILLIS}
     * for the connection, once: a Netty client that is not connected drops what it is given (Storm replays it).
     */
    private void fallBack(ShmFullException full, int n) {
        metrics.shmFailures.inc();
        LOG.error("mmap transport: {}; the connection to {}:{} goes on through Netty until the worker restarts",
                full.getMessage(), host, port);
        // the poller's last write of the flags comes before the Netty client's first (the receiver's server sends its
        // status to a new connection at once): cleared after, they stayed off until the status next changed
        fallingBack = true;
        long released = System.currentTimeMillis() + FLAGS_RELEASE_MILLIS;
        while (!flagsReleased && !closed && System.currentTimeMillis() < released) {
            LockSupport.parkNanos(1_000_000L);
        }
        IConnection raw = nettyLink.get();
        long deadline = System.currentTimeMillis() + FALLBACK_READY_MILLIS;
        while (raw instanceof ConnectionWithStatus c && c.status() != Status.Ready
                && System.currentTimeMillis() < deadline) {
            LockSupport.parkNanos(10_000_000L);
        }
        IConnection counted = LinkMetrics.counting(raw, nettyMetrics.get());
        fallbackRaw = raw;
        fallback = counted;
        counted.send(java.util.Arrays.asList(batch).subList(appended, n).iterator());
        java.util.Arrays.fill(batch, 0, n, null);
        appended = 0;
        try {
            if (appender != null) {
                appender.close();
            }
        } catch (RuntimeException | Error e) {
            LOG.warn("mmap transport: closing the appender of {} after the tmpfs filled: {}", queueDir, e.toString());
        }
    }

    private void writeHeader(long address, int count, long seq, long bytesBefore, int payload, long framesAt) {
        RawMemory.putLong(address + Frames.OFF_FIRST_SEQ, seq);
        RawMemory.putLong(address + Frames.OFF_BYTES_BEFORE, bytesBefore);
        RawMemory.putInt(address + Frames.OFF_COUNT, count);
        RawMemory.putInt(address + Frames.OFF_PAYLOAD, payload);
        RawMemory.putLong(address + Frames.OFF_RING_HEAD, ringHead);
        RawMemory.putLong(address + Frames.OFF_FRAMES_AT, framesAt);
    }

    private void writeFrames(long at, int first, int end) {
        for (int i = first; i < end; i++) {
            TaskMessage m = batch[i];
            byte[] body = m.message();
            int task = m.task();
            RawMemory.putInt(at, task);
            long ringPosition = ringAt[i];
            if (ringPosition >= 0) {
                ring.write(ringPosition, body); // published by the document, which commits after it
                RawMemory.putInt(at + 4, Frames.ringLengthField(body.length));
                RawMemory.putLong(at + 8, ringPosition);
                at += Frames.RING_MESSAGE_BYTES;
            } else {
                RawMemory.putInt(at + 4, body.length);
                RawMemory.copy(body, at + Frames.MESSAGE_OVERHEAD, body.length);
                at += Frames.MESSAGE_OVERHEAD + body.length;
            }
            link.markSent(task);
        }
    }

    private PayloadRing ring() {
        if (ring == null) {
            ring = PayloadRing.create(ringFile, config.ringBytes);
        }
        return ring;
    }

    /**
     * Poller thread: keeps the {@link ReceiverLink} current; returns true while something may change soon (not yet
     * connected, or backpressure on), so the poller looks again within a millisecond rather than {@link MmapContext}'s
     * quiet interval.
     */
    boolean poll(long nowMillis) {
        if (closed) {
            return false;
        }
        if (fallingBack) {
            if (!flagsReleased) {
                link.releaseFlags();
                flagsReleased = true; // Netty's client sets them from now on, from the receiver's server
            }
            return false;
        }
        return link.poll(nowMillis, sentMessages, sentBytes, metrics);
    }

    @Override
    public Status status() {
        IConnection raw = fallbackRaw;
        if (raw instanceof ConnectionWithStatus c && !closed) {
            return c.status();
        }
        return closed ? Status.Closed : link.status();
    }

    @Override
    public Map<Integer, Load> getLoad(Collection<Integer> tasks) {
        IConnection netty = fallback;
        if (netty != null) {
            return netty.getLoad(tasks);
        }
        return link.load(tasks, sentMessages);
    }

    @Override
    public void sendLoadMetrics(Map<Integer, Double> taskToLoad) {
        throw new UnsupportedOperationException("a sending connection does not send load metrics");
    }

    @Override
    public void sendBackPressureStatus(BackPressureStatus bpStatus) {
        throw new UnsupportedOperationException("a sending connection does not send backpressure status");
    }

    @Override
    public int getPort() {
        return port;
    }

    long sentMessages() {
        return sentMessages;
    }

    long rings() {
        return rings;
    }

    boolean hasRinger() {
        return link.hasRinger();
    }

    boolean lagBackPressure() {
        return link.lagBackPressure();
    }

    Path queueDir() {
        return queueDir;
    }

    @Override
    public Object getState() {
        Map<String, Object> ret = new HashMap<>();
        ret.put("sent", sentMessages);
        ret.put("pending", sentMessages - link.delivered());
        ret.put("lostOnSend", dropped.get());
        ret.put("doorbellRings", rings);
        ret.put("dest", host + ":" + port);
        ret.put("queue", queueDir.toString());
        return ret;
    }

    @Override
    public void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            if (appender != null) {
                appender.close();
            }
        }
        onClose.accept(this);
        IConnection netty = fallback;
        if (netty != null) {
            netty.close();
        }
        link.close();
        queue.close();
        // the receiver is gone for good (orderly shutdown): nothing will read the queue again
        if (!Files.exists(link.controlFile())) {
            QueueFiles.deleteTree(queueDir);
            QueueFiles.deleteTree(ringFile);
            QueueFiles.deleteEmptyUpTo(receiverDir, receiverDir.getParent().getParent());
        }
        LOG.info("mmap transport: closed connection to {}:{}", host, port);
    }

    @Override
    public String toString() {
        return "mmap connection to " + host + ":" + port + " via " + queueDir;
    }
}
