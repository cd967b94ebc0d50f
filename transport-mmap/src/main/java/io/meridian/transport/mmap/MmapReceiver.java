package io.meridian.transport.mmap;

import io.meridian.shm.Doorbell;
import io.meridian.shm.IdleStrategy;
import io.meridian.shm.TmpfsSpace;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collection;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;
import org.apache.storm.grouping.Load;
import org.apache.storm.messaging.ConnectionWithStatus;
import org.apache.storm.messaging.IConnection;
import org.apache.storm.messaging.IConnectionCallback;
import org.apache.storm.messaging.TaskMessage;
import org.apache.storm.messaging.netty.BackPressureStatus;
import org.apache.storm.metric.api.IStatefulObject;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A worker's receiving side: one reader thread polls the queues of all same-host senders ({@link InboundQueue}),
 * while Storm's Netty server (composed, {@code remote}) serves senders on other hosts. Backpressure statuses and load
 * metrics go to both: to the control file for same-host senders, over Netty for the others.
 */
final class MmapReceiver extends ConnectionWithStatus implements IStatefulObject {
    private static final Logger LOG = LoggerFactory.getLogger(MmapReceiver.class);
    private static final long HOUSEKEEPING_NANOS = 100_000_000L;
    private static final long SWEEP_NANOS = 60_000_000_000L;

    private final TransportConfig config;
    private final int port;
    private final Path receiverDir;
    private final Path topologyDir;
    private final IConnectionCallback callback;
    private final IConnection remote;
    private final ReceiverControl control;
    private final long pid = ProcessHandle.current().pid();
    private volatile InboundQueue[] queues = new InboundQueue[0];
    private final Thread reader;
    private final Doorbell doorbell; // null: the reader never blocks (spin or yield chosen, or no Unix sockets)
    private final Thread cleaner;
    private volatile boolean running = true;
    private volatile long delivered;
    private volatile long deletedFiles;

    MmapReceiver(TransportConfig config, Path root, String topologyId, int port, IConnectionCallback callback,
                 Supplier<Object> newConnectionResponse, IConnection remote) {
        this.config = config;
        this.port = port;
        this.receiverDir = QueueFiles.receiverDir(root, topologyId, port);
        this.topologyDir = receiverDir.getParent();
        this.callback = callback;
        this.remote = remote;
        QueueFiles.createOwnerOnly(receiverDir);
        // before the control file: a sender that sees the control file finds the doorbell too
        this.doorbell = config.sleepAfterNanos >= 0 ? bindDoorbell(receiverDir.resolve(QueueFiles.DOORBELL)) : null;
        this.control = ReceiverControl.create(receiverDir.resolve(QueueFiles.CONTROL), config.maxTasks, pid);
        // what Netty sends each new client first; here it waits in the control file for every sender, new or old
        Object current = newConnectionResponse == null ? null : newConnectionResponse.get();
        if (current instanceof BackPressureStatus s) {
            control.publishBackPressure(s.bpTasks, s.nonBpTasks);
        }
        this.reader = new Thread(this::readUntilStopped, "meridian-mmap-recv-" + port);
        reader.setDaemon(true);
        reader.start();
        this.cleaner = new Thread(this::cleanLoop, "meridian-mmap-clean-" + port);
        cleaner.setDaemon(true);
        cleaner.start();
        LOG.info("mmap transport: receiving for port {} in {}", port, receiverDir);
    }

    /**
     * The read loop, started again after a store into a page the full tmpfs could not back (Chronicle's tailer writes
     * as it reads): the JVM raises that SIGBUS as an InternalError at its next safepoint poll, which may be outside
     * the loop's own catch, and the thread's uncaught Error would halt the worker.
     */
    private void readUntilStopped() {
        while (running) {
            try {
                readLoop();
            } catch (InternalError e) {
                if (!TmpfsSpace.isMappedWriteFault(e)) {
                    throw e;
                }
                LOG.error("mmap transport: receive loop for port {}: {}; reading on in 1 s", port,
                    TmpfsSpace.fault(receiverDir, e).getMessage());
                LockSupport.parkNanos(1_000_000_000L);
            }
        }
    }

    private void readLoop() {
        IdleStrategy idle = config.newIdleStrategy();
        long nextHousekeeping = 0;
        long idleSince = 0;
        boolean announced = false;
        long total = delivered; // a loop restarted after a fault counts on
        int failures = 0; // in a row
        while (running) {
            int work = 0;
            long now;
            try {
                InboundQueue[] qs = queues;
                for (InboundQueue q : qs) {
                    work += q.poll(callback);
                }
                total += work;
                now = System.nanoTime();
                if (now - nextHousekeeping >= 0) {
                    delivered = total;
                    housekeeping();
                    nextHousekeeping = now + HOUSEKEEPING_NANOS;
                }
                failures = 0;
            } catch (RuntimeException | InternalError e) {
                if (e instanceof InternalError && !TmpfsSpace.isMappedWriteFault(e)) {
                    throw e;
                }
                if (!running) {
                    break;
                }
                // a tailer's write into a page the full tmpfs cannot back (Chronicle indexes as it reads) is retried
                // the same way: the worker's uncaught Error would halt it
                failures++;
                // a worker that Storm halts while it starts failed here some 15 times a millisecond, each with its
                // stack trace: the first failure in full, then every power of two in one line, retried ever later
                if (failures == 1) {
                    LOG.error("mmap transport: receive loop for port {} failed; retrying", port, e);
                } else if (Integer.bitCount(failures) == 1) {
                    LOG.error("mmap transport: receive loop for port {} failed {} times in a row, retrying: {}", port,
                        failures, e.toString());
                }
                LockSupport.parkNanos(Math.min(1_000_000L << Math.min(failures - 1, 10), 1_000_000_000L));
                work = 0;
                now = System.nanoTime();
            }
            if (work > 0 || doorbell == null) {
                if (announced) {
                    control.awake();
                    announced = false;
                }
                idleSince = now;
                idle.idle(work);
            } else if (announced) {
                // the queues were empty after the announcement: any later append rings
                awaitDoorbell((nextHousekeeping - now) / 1_000_000L);
                control.awake();
                announced = false;
                idleSince = System.nanoTime();
            } else if (now - idleSince >= config.sleepAfterNanos) {
                control.announceSleep(); // then one more look at the queues before blocking
                announced = true;
            } else {
                idle.idle(0);
            }
        }
    }

    private void housekeeping() {
        long now = System.currentTimeMillis();
        control.beat(now);
        for (InboundQueue q : queues) {
            q.position.beat(now);
        }
        scanForSenders();
    }

    private void cleanLoop() {
        long nextSweep = System.nanoTime() + SWEEP_NANOS;
        while (running) {
            try {
                for (InboundQueue q : queues) {
                    deletedFiles += q.cleanUp();
                }
                if (System.nanoTime() - nextSweep >= 0) {
                    // a long-running host also frees what killed topologies' force-halted workers left behind
                    int swept = QueueFiles.sweepStale(config.root, config.staleMillis, System.currentTimeMillis());
                    if (swept > 0) {
                        LOG.info("mmap transport: deleted {} queue directories of workers dead for over {} min", swept,
                            config.staleMillis / 60_000);
                    }
                    nextSweep = System.nanoTime() + SWEEP_NANOS;
                }
            } catch (RuntimeException | InternalError e) {
                if (e instanceof InternalError && !TmpfsSpace.isMappedWriteFault(e)) {
                    throw e;
                }
                LOG.warn("mmap transport: cleaning the queues of port {} failed: {}", port, e.toString());
            }
            java.util.concurrent.locks.LockSupport.parkNanos(200_000_000L);
        }
    }

    /** Attaches the queues of senders that appeared, drops those whose sender removed its queue. */
    private synchronized void scanForSenders() {
        Map<String, InboundQueue> current = new HashMap<>();
        for (InboundQueue q : queues) {
            current.put(q.senderId, q);
        }
        boolean changed = false;
        try (DirectoryStream<Path> dirs = Files.newDirectoryStream(receiverDir, QueueFiles.QUEUE_PREFIX + "*")) {
            for (Path d : dirs) {
                String name = d.getFileName().toString();
                if (!Files.isDirectory(d) || name.endsWith(QueueFiles.POSITION_SUFFIX)) {
                    continue;
                }
                String sender = name.substring(QueueFiles.QUEUE_PREFIX.length());
                if (!current.containsKey(sender)) {
                    current.put(sender, new InboundQueue(receiverDir, sender, config.rollSeconds, pid));
                    changed = true;
                }
            }
        } catch (IOException e) {
            LOG.warn("mmap transport: cannot list {}: {}", receiverDir, e.toString());
            return;
        }
        for (Iterator<Map.Entry<String, InboundQueue>> it = current.entrySet().iterator(); it.hasNext(); ) {
            InboundQueue q = it.next().getValue();
            if (!Files.isDirectory(q.queueDir)) {
                q.close();
                QueueFiles.deleteTree(QueueFiles.positionFile(receiverDir, q.senderId));
                it.remove();
                changed = true;
            }
        }
        if (changed) {
            queues = current.values().toArray(new InboundQueue[0]);
        }
    }

    @Override
    public void sendBackPressureStatus(BackPressureStatus bpStatus) {
        control.publishBackPressure(bpStatus.bpTasks, bpStatus.nonBpTasks);
        remote.sendBackPressureStatus(bpStatus);
    }

    @Override
    public void sendLoadMetrics(Map<Integer, Double> taskToLoad) {
        control.publishLoads(taskToLoad);
        remote.sendLoadMetrics(taskToLoad);
    }

    @Override
    public void send(Iterator<TaskMessage> msgs) {
        throw new UnsupportedOperationException("a receiving connection does not send messages");
    }

    @Override
    public Map<Integer, Load> getLoad(Collection<Integer> tasks) {
        throw new UnsupportedOperationException("a receiving connection has no load to report");
    }

    @Override
    public int getPort() {
        return port;
    }

    @Override
    public Status status() {
        return running && reader.isAlive() ? Status.Ready : running ? Status.Connecting : Status.Closed;
    }

    @Override
    public Object getState() {
        Map<String, Object> state = new HashMap<>();
        long gaps = 0;
        long skipped = 0;
        for (InboundQueue q : queues) {
            gaps += q.gaps;
            skipped += q.skippedMessages;
        }
        state.put("mmapDelivered", delivered);
        state.put("mmapSenders", queues.length);
        state.put("mmapGaps", gaps);
        state.put("mmapSkippedAfterRestart", skipped);
        state.put("mmapDeletedCycleFiles", deletedFiles);
        state.put("mmapDoorbellRings", doorbellRings());
        if (remote instanceof IStatefulObject s) {
            state.put("netty", s.getState());
        }
        return state;
    }

    InboundQueue[] queues() {
        return queues;
    }

    long doorbellRings() {
        return doorbell == null ? 0 : doorbell.rings();
    }

    boolean readerSleeping() {
        return control.readerSleeping();
    }

    long deletedFiles() {
        return deletedFiles;
    }

    @Override
    public void close() {
        if (!running) {
            return;
        }
        control.invalidate();
        stopReading();
        // an orderly shutdown (topology killed or rebalanced): what is left in the queues will never be read
        QueueFiles.deleteTree(receiverDir);
        QueueFiles.deleteEmptyUpTo(topologyDir, topologyDir.getParent());
        remote.close();
        LOG.info("mmap transport: closed receiver for port {}", port);
    }

    /** Test hook: stop as a killed process would, leaving every file as it is. */
    void crash() {
        stopReading(); // a killed process would leave the doorbell's socket file too; the next receiver replaces it
        remote.close();
    }

    /** Stops the reader thread and releases the queues and the doorbell; the files stay. */
    private void stopReading() {
        running = false;
        if (doorbell != null) {
            doorbell.interrupt();
        }
        try {
            reader.join(5000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        for (InboundQueue q : queues) {
            q.close();
        }
        if (doorbell != null) {
            try {
                doorbell.close();
            } catch (IOException e) {
                LOG.warn("mmap transport: closing the doorbell of port {}: {}", port, e.toString());
            }
        }
    }

    private static Doorbell bindDoorbell(Path socket) {
        try {
            return Doorbell.bind(socket);
        } catch (IOException e) {
            LOG.warn("mmap transport: cannot bind the doorbell {} ({}); the reader polls instead of sleeping", socket,
                e.toString());
            return null;
        }
    }

    private void awaitDoorbell(long timeoutMillis) {
        try {
            doorbell.await(timeoutMillis);
        } catch (IOException e) {
            LOG.warn("mmap transport: the doorbell of port {} failed: {}", port, e.toString());
        }
    }
}
