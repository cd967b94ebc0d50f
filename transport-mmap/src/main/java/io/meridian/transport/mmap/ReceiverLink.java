package io.meridian.transport.mmap;

import io.meridian.shm.Doorbell;
import java.nio.file.Path;
import java.util.Collection;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.storm.grouping.Load;
import org.apache.storm.messaging.ConnectionWithStatus.Status;

/**
 * What one sender knows of its receiver, kept current by the context's poller: the receiver's control file (liveness,
 * Storm's backpressure bits, task loads), the reader's position file (messages delivered, ring space released) and the
 * receiver's doorbell. The poller is the one writer of Storm's backpressure flags for the receiver's tasks: it mirrors
 * the receiver's statuses and adds its own while the reader lags more than {@code meridian.transport.max.lag.*}.
 *
 * <p>Threads: {@link #poll}, {@link #releaseFlags} on the poller; {@link #markSent}, {@link #ringReleased} and
 * {@link #wakeReader} on the worker's transfer thread; {@link #load} on Storm's load refresher; {@link #close} on
 * Storm's connection refresher.
 */
final class ReceiverLink {
    /** The flags are written again this often even without a change: cheap, and no update can stay lost. */
    private static final long REAPPLY_MILLIS = 100;
    private static final long RINGER_RETRY_MILLIS = 100;

    private final TransportConfig config;
    private final Path controlFile;
    private final Path positionFile;
    private final Path doorbellFile;
    private final AtomicBoolean[] remoteBpStatus;
    /** The tasks this sender wrote to, one bit each: set by the transfer thread, read by the poller. */
    private final long[] sentTasks;

    private volatile ReceiverControl control;
    private volatile ReaderPosition position;
    private volatile Status status = Status.Connecting;
    private volatile boolean lagBackPressure;
    private long seenBpVersion = Long.MIN_VALUE;
    private long appliedAtMillis;
    private boolean backPressured; // as last applied
    private volatile Doorbell.Ringer ringer;
    private volatile boolean ringFailed;
    private long ringerAttemptMillis;
    private long ringerIncarnation;

    ReceiverLink(TransportConfig config, Path receiverDir, Path positionFile, AtomicBoolean[] remoteBpStatus) {
        this.config = config;
        this.controlFile = receiverDir.resolve(QueueFiles.CONTROL);
        this.positionFile = positionFile;
        this.doorbellFile = receiverDir.resolve(QueueFiles.DOORBELL);
        this.remoteBpStatus = remoteBpStatus;
        this.sentTasks = new long[(config.maxTasks + 63) >>> 6];
    }

    Path controlFile() {
        return controlFile;
    }

    /** Transfer thread: this sender wrote to {@code task}, whose backpressure flag the poller now keeps. */
    void markSent(int task) {
        if (task >= 0 && task < config.maxTasks) {
            sentTasks[task >>> 6] |= 1L << (task & 63);
        }
    }

    /** Ring bytes below this the reader has delivered and released ({@link InboundQueue}'s ring-release rule). */
    long ringReleased() {
        ReaderPosition p = position;
        return p == null ? 0 : p.ringReleased();
    }

    /** Messages the reader has handed to Storm. */
    long delivered() {
        ReaderPosition p = position;
        return p == null ? 0 : p.delivered();
    }

    /**
     * Transfer thread, after an append: rings the doorbell if the reader announced that it sleeps and no other sender
     * rang yet; returns whether it rang. A failed ring leaves the reader to its own timeout until the poller
     * reconnects.
     */
    boolean wakeReader() {
        ReceiverControl c = control;
        Doorbell.Ringer r = ringer;
        if (c == null || r == null || !c.claimWakeUp()) {
            return false;
        }
        if (!r.ring()) {
            ringFailed = true;
        }
        return true;
    }

    /**
     * Poller: attaches to the receiver's files, tracks readiness, mirrors backpressure and the lag of {@code
     * sentMessages} / {@code sentBytes} behind the reader. Returns true while something may change soon (not yet
     * connected, or backpressure on), so the poller looks again within a millisecond rather than its quiet interval.
     */
    boolean poll(long nowMillis, long sentMessages, long sentBytes, LinkMetrics metrics) {
        ReceiverControl c = control;
        if (c != null && !c.isValid()) {
            c = null; // the receiver closed or is being recreated; map the new file when it appears
            position = null;
        }
        if (c == null) {
            c = ReceiverControl.open(controlFile);
            control = c;
            seenBpVersion = Long.MIN_VALUE;
            dropRinger(); // a new receiver has a new doorbell
        }
        if (ringFailed || (c != null && c.incarnation() != ringerIncarnation)) {
            dropRinger(); // the receiver restarted (its doorbell is a new socket) or the ring failed
            ringerIncarnation = c == null ? 0 : c.incarnation();
        }
        if (c != null && ringer == null && nowMillis - ringerAttemptMillis >= RINGER_RETRY_MILLIS) {
            ringerAttemptMillis = nowMillis;
            ringer = Doorbell.Ringer.connect(doorbellFile);
        }
        ReaderPosition p = position;
        if (p == null) {
            p = ReaderPosition.open(positionFile);
            position = p;
        }
        boolean live = c != null && p != null
            && nowMillis - c.heartbeat() < config.heartbeatTimeoutMs
            && nowMillis - p.heartbeat() < config.heartbeatTimeoutMs
            && p.pid() == c.pid();
        status = live ? Status.Ready : Status.Connecting;

        boolean changed = false;
        metrics.lag.set(sentMessages - (p == null ? 0 : p.delivered()));
        if (!lagBackPressure && lagExceeded(p, sentMessages, sentBytes, 1)) {
            lagBackPressure = true;
            metrics.backpressure.inc();
            changed = true;
        } else if (lagBackPressure && !lagExceeded(p, sentMessages, sentBytes, 2)) {
            lagBackPressure = false; // released at half the limit, so it does not flap
            changed = true;
        }
        if (c != null) {
            long v = c.bpVersion();
            if (v != seenBpVersion) {
                seenBpVersion = v;
                changed = true;
            }
        }
        if (changed || nowMillis - appliedAtMillis >= REAPPLY_MILLIS) {
            backPressured = applyBackPressure(c);
            appliedAtMillis = nowMillis;
        }
        return status != Status.Ready || backPressured;
    }

    private boolean lagExceeded(ReaderPosition pos, long seq, long bytes, int divisor) {
        long delivered = pos == null ? 0 : pos.delivered();
        long deliveredBytes = pos == null ? 0 : pos.deliveredBytes();
        return seq - delivered > config.maxLagMessages / divisor
            || bytes - deliveredBytes > config.maxLagBytes / divisor;
    }

    /**
     * Sets Storm's flag of every task of this receiver: backpressured if the receiver says so or the lag is too big.
     * Returns whether any task is backpressured.
     */
    private boolean applyBackPressure(ReceiverControl c) {
        boolean lag = lagBackPressure;
        boolean any = false;
        for (int w = 0; w < sentTasks.length; w++) {
            long owned = sentTasks[w];
            long bp = 0;
            if (c != null && w < c.words()) {
                owned |= c.ownedWord(w);
                bp = c.bpWord(w);
            }
            while (owned != 0) {
                int bit = Long.numberOfTrailingZeros(owned);
                owned &= owned - 1;
                int task = (w << 6) + bit;
                if (task < remoteBpStatus.length && remoteBpStatus[task] != null) {
                    boolean pressed = lag || (bp & (1L << bit)) != 0;
                    remoteBpStatus[task].set(pressed);
                    any |= pressed;
                }
            }
        }
        return any;
    }

    /** Poller, as the link falls back to Netty: clears the flags of the tasks this sender wrote to, for good. */
    void releaseFlags() {
        for (int w = 0; w < sentTasks.length; w++) {
            long owned = sentTasks[w];
            while (owned != 0) {
                int task = (w << 6) + Long.numberOfTrailingZeros(owned);
                owned &= owned - 1;
                if (task < remoteBpStatus.length && remoteBpStatus[task] != null) {
                    remoteBpStatus[task].set(false);
                }
            }
        }
    }

    /** Storm's load of each of {@code tasks} the receiver published, and this link's share from the reader's lag. */
    Map<Integer, Load> load(Collection<Integer> tasks, long sentMessages) {
        ReceiverControl c = control;
        Map<Integer, Load> ret = new HashMap<>();
        if (c == null) {
            return ret;
        }
        long lag = sentMessages - delivered();
        double connectionLoad = Math.min(Math.max(lag, 0), 1024) / 1024.0;
        for (Integer task : tasks) {
            double load = c.load(task);
            if (!Double.isNaN(load)) {
                ret.put(task, new Load(true, load, connectionLoad));
            }
        }
        return ret;
    }

    Status status() {
        return status;
    }

    boolean lagBackPressure() {
        return lagBackPressure;
    }

    boolean hasRinger() {
        return ringer != null;
    }

    void close() {
        dropRinger();
    }

    private void dropRinger() {
        Doorbell.Ringer r = ringer;
        ringer = null;
        ringFailed = false;
        ringerAttemptMillis = 0;
        if (r != null) {
            r.close();
        }
    }
}
