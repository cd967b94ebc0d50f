package io.meridian.transport.mmap;

import io.meridian.shm.ShmFullException;
import io.meridian.shm.TmpfsSpace;
import java.net.InetAddress;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;
import org.apache.storm.Config;
import org.apache.storm.messaging.IConnection;
import org.apache.storm.messaging.IConnectionCallback;
import org.apache.storm.messaging.IContext;
import org.apache.storm.metrics2.StormMetricRegistry;
import org.apache.storm.utils.Utils;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Storm messaging transport: same-host workers exchange tuples through memory-mapped Chronicle Queue files, other
 * hosts through Storm's own Netty transport, which this context composes. Select it with
 * {@code storm.messaging.transport: io.meridian.transport.mmap.MmapContext} (storm.yaml or a topology's config);
 * settings are in {@link TransportConfig}.
 */
public final class MmapContext implements IContext {
    private static final Logger LOG = LoggerFactory.getLogger(MmapContext.class);
    private static final AtomicInteger ANONYMOUS = new AtomicInteger();
    /** The poller's interval while a sender connects or has backpressure on: a release reaches Storm within ~1 ms. */
    private static final long PROMPT_POLL_NANOS = 1_000_000L;
    /**
     * Otherwise: the onset of backpressure is seen within 10 ms (the queue holds what comes meanwhile; the lag limit
     * is a soft one), and an idle worker's poller wakes 100 times a second instead of 1,000. Waking it from the send
     * path when a status changed was tried: bench transport's 32 KB-buffer case at Storm's 50 ms backpressure check
     * stayed at 0.96x Netty (0.957, 0.917, 1.009), as without it.
     */
    private static final long QUIET_POLL_NANOS = 10_000_000L;

    static {
        // whatever the worker's command line says: Chronicle must not phone home or print banners from a worker
        System.setProperty("chronicle.analytics.disable", "true");
        System.setProperty("chronicle.announcer.disable", "true");
    }

    private TransportConfig config;
    private final org.apache.storm.messaging.netty.Context netty = new org.apache.storm.messaging.netty.Context();
    private final Set<String> localHosts = new HashSet<>();
    private final List<MmapSender> senders = new CopyOnWriteArrayList<>();
    private final List<MmapReceiver> receivers = new CopyOnWriteArrayList<>();
    private volatile int boundPort = -1;
    private volatile int bindCount;
    private Thread poller;
    private volatile boolean running = true;
    private com.codahale.metrics.MetricRegistry metrics;
    /** The free bytes of the queues' tmpfs, one budget for every sender (set in init). */
    private volatile TmpfsBudget budget;

    @Override
    public void prepare(Map<String, Object> topoConf) {
        init(topoConf);
        netty.prepare(topoConf);
    }

    @Override
    public void prepare(Map<String, Object> topoConf, StormMetricRegistry metricRegistry) {
        init(topoConf);
        this.metrics = metricRegistry == null ? null : metricRegistry.getRegistry();
        netty.prepare(topoConf, metricRegistry);
    }

    private void init(Map<String, Object> topoConf) {
        config = TransportConfig.from(topoConf);
        localHosts.add("localhost");
        localHosts.add("127.0.0.1");
        localHosts.addAll(config.localHosts);
        Object configured = topoConf.get(Config.STORM_LOCAL_HOSTNAME);
        if (configured != null) {
            localHosts.add(configured.toString());
        }
        try {
            localHosts.add(Utils.hostname());
        } catch (Exception e) {
            LOG.warn("mmap transport: cannot resolve Storm's host name: {}", e.toString());
        }
        try {
            InetAddress me = InetAddress.getLocalHost();
            localHosts.add(me.getHostName());
            localHosts.add(me.getCanonicalHostName());
            localHosts.add(me.getHostAddress());
        } catch (Exception e) {
            LOG.warn("mmap transport: cannot resolve the local host: {}", e.toString());
        }
        QueueFiles.createOwnerOnly(config.root);
        budget = TmpfsBudget.of(config.root, MmapSender.SHM_HEADROOM_BYTES);
        int swept = QueueFiles.sweepStale(config.root, config.staleMillis, System.currentTimeMillis());
        if (swept > 0) {
            LOG.info("mmap transport: deleted {} queue directories of workers dead for over {} min", swept, config.staleMillis / 60_000);
        }
        LOG.info("mmap transport: queues in {}, idle strategy {}, same-host names {}", config.root, config.idle, localHosts);
    }

    @Override
    public synchronized IConnection bind(String stormId, int port, IConnectionCallback cb, Supplier<Object> newConnectionResponse) {
        IConnection remote = netty.bind(stormId, port, cb, newConnectionResponse);
        MmapReceiver receiver = new MmapReceiver(config, config.root, stormId, port, cb, newConnectionResponse, remote);
        receivers.add(receiver);
        bindCount++;
        boundPort = port;
        return receiver;
    }

    @Override
    public IConnection connect(String stormId, String host, int port, AtomicBoolean[] remoteBpStatus) {
        if (!localHosts.contains(host)) {
            return LinkMetrics.counting(netty.connect(stormId, host, port, remoteBpStatus),
                LinkMetrics.of(metrics, LinkMetrics.NETTY, host, port));
        }
        Supplier<IConnection> nettyLink = () -> netty.connect(stormId, host, port, remoteBpStatus);
        LinkMetrics links = LinkMetrics.of(metrics, LinkMetrics.MMAP, host, port);
        MmapSender sender;
        try {
            budget.refresh(System.currentTimeMillis());
            sender = new MmapSender(config, config.root, stormId, host, port, senderId(), remoteBpStatus, budget,
                senders::remove);
        } catch (RuntimeException | InternalError e) {
            if (!TmpfsSpace.isNoSpace(e) && !TmpfsSpace.isMappedWriteFault(e)) {
                throw e;
            }
            // the queue's files cannot get tmpfs pages: this link goes through Netty (MmapSender.fallBack says why)
            links.shmFailures.inc();
            ShmFullException full = ShmFullException.in(e);
            LOG.error("mmap transport: cannot create the queue to {}:{} in {}: {}; the connection goes through Netty"
                + " until the worker restarts", host, port, config.root,
                full != null ? full.getMessage() : TmpfsSpace.full(config.root, 0, e).getMessage());
            return LinkMetrics.counting(nettyLink.get(), LinkMetrics.of(metrics, LinkMetrics.NETTY, host, port));
        }
        sender.countInto(links);
        sender.fallBackTo(nettyLink, () -> LinkMetrics.of(metrics, LinkMetrics.NETTY, host, port));
        senders.add(sender);
        startPoller();
        return sender;
    }

    /** The sender's name in the receiver's directory: its own worker port, stable across a restart of the worker. */
    private String senderId() {
        if (bindCount == 1) {
            return Integer.toString(boundPort);
        }
        return "p" + ProcessHandle.current().pid() + "-" + ANONYMOUS.incrementAndGet();
    }

    private synchronized void startPoller() {
        if (poller != null) {
            return;
        }
        poller = new Thread(() -> {
            while (running) {
                long now = System.currentTimeMillis();
                boolean prompt = false;
                try {
                    budget.refresh(now);
                } catch (RuntimeException e) {
                    LOG.warn("mmap transport: reading the free space of {} failed: {}", config.root, e.toString());
                }
                for (MmapSender s : senders) {
                    try {
                        prompt |= s.poll(now);
                    } catch (RuntimeException e) {
                        prompt = true;
                        LOG.warn("mmap transport: polling {} failed: {}", s, e.toString());
                    }
                }
                LockSupport.parkNanos(prompt ? PROMPT_POLL_NANOS : QUIET_POLL_NANOS);
            }
        }, "meridian-mmap-poller");
        poller.setDaemon(true);
        poller.start();
    }

    @Override
    public synchronized void term() {
        if (!running) {
            return;
        }
        running = false;
        for (MmapSender s : senders) {
            s.close();
        }
        senders.clear();
        for (MmapReceiver r : receivers) {
            r.close();
        }
        receivers.clear();
        Thread p = poller;
        if (p != null) {
            try {
                p.join(2000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        netty.term();
    }
}
