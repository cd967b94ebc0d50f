package io.meridian.transport.mmap;

import com.codahale.metrics.Counter;
import com.codahale.metrics.Gauge;
import com.codahale.metrics.MetricRegistry;
import java.util.Collection;
import java.util.Iterator;
import java.util.Map;
import org.apache.storm.grouping.Load;
import org.apache.storm.messaging.IConnection;
import org.apache.storm.messaging.TaskMessage;
import org.apache.storm.messaging.netty.BackPressureStatus;

/**
 * What one worker sent to one other worker, by the way it went: {@code meridian.transport.mmap.HOST_PORT.messages}
 * and {@code .bytes} for a same-host link through the queue files (with the reader's {@code .lag}, the times the lag
 * engaged {@code .backpressure}, and the doorbell {@code .wakeups}), {@code meridian.transport.netty.HOST_PORT.*} for a
 * link to another host through Storm's Netty. Worker-level counters in Storm's metric registry (one pair per peer
 * worker, so their number is bounded by the topology's workers); a reconnect to the same peer keeps counting on the
 * same pair.
 */
final class LinkMetrics {
    static final String PREFIX = "meridian.transport.";
    static final String MMAP = "mmap";
    static final String NETTY = "netty";

    /** Counts nobody reads: a sender's until its context hands it the registered ones. */
    static final LinkMetrics UNREGISTERED = new LinkMetrics(new Counter(), new Counter(), new LagGauge(), new Counter(),
            new Counter(), new Counter());

    final Counter messages;
    final Counter bytes;
    /** mmap only: messages appended and not yet read, as the poller last saw it. */
    final LagGauge lag;
    /** mmap only: times the sender held Storm's backpressure flag because the reader lagged. */
    final Counter backpressure;
    /** mmap only: times a send rang the doorbell of a reader that had gone to sleep. */
    final Counter wakeups;
    /** mmap only: times the link's queue files could not get tmpfs pages, and the link went on through Netty. */
    final Counter shmFailures;

    private LinkMetrics(Counter messages, Counter bytes, LagGauge lag, Counter backpressure, Counter wakeups,
                        Counter shmFailures) {
        this.shmFailures = shmFailures;
        this.messages = messages;
        this.bytes = bytes;
        this.lag = lag;
        this.backpressure = backpressure;
        this.wakeups = wakeups;
    }

    /** A gauge that holds its value (so a reconnected sender finds and updates the registered one). */
    static final class LagGauge implements Gauge<Long> {
        private volatile long value;

        void set(long v) {
            value = v;
        }

        @Override
        public Long getValue() {
            return value;
        }
    }

    static String name(String kind, String host, int port, String what) {
        return PREFIX + kind + "." + host + "_" + port + "." + what; // no ':' (a separator in properties files)
    }

    /** The counters of the link to {@code host:port}; unregistered ones when there is no registry (Storm's tests). */
    static LinkMetrics of(MetricRegistry registry, String kind, String host, int port) {
        if (registry == null) {
            return UNREGISTERED;
        }
        if (!MMAP.equals(kind)) {
            return new LinkMetrics(registry.counter(name(kind, host, port, "messages")),
                    registry.counter(name(kind, host, port, "bytes")), new LagGauge(), new Counter(), new Counter(),
                    new Counter());
        }
        return new LinkMetrics(registry.counter(name(kind, host, port, "messages")),
                registry.counter(name(kind, host, port, "bytes")),
                registry.gauge(name(kind, host, port, "lag"), LagGauge::new),
                registry.counter(name(kind, host, port, "backpressure")),
                registry.counter(name(kind, host, port, "wakeups")),
                registry.counter(name(kind, host, port, "shmFailures")));
    }

    /** Counts what goes through a Netty connection to another host. */
    static IConnection counting(IConnection netty, LinkMetrics metrics) {
        return new CountingConnection(netty, metrics);
    }

    private static final class CountingConnection implements IConnection {
        private final IConnection delegate;
        private final LinkMetrics metrics;

        CountingConnection(IConnection delegate, LinkMetrics metrics) {
            this.delegate = delegate;
            this.metrics = metrics;
        }

        @Override
        public void send(Iterator<TaskMessage> msgs) {
            // one small iterator per batch: the cross-host path is Storm's Netty, which allocates per batch itself
            delegate.send(new Iterator<>() {
                @Override
                public boolean hasNext() {
                    return msgs.hasNext();
                }

                @Override
                public TaskMessage next() {
                    TaskMessage m = msgs.next();
                    metrics.messages.inc();
                    metrics.bytes.inc(m.message().length);
                    return m;
                }
            });
        }

        @Override
        public void sendLoadMetrics(Map<Integer, Double> taskToLoad) {
            delegate.sendLoadMetrics(taskToLoad);
        }

        @Override
        public void sendBackPressureStatus(BackPressureStatus bpStatus) {
            delegate.sendBackPressureStatus(bpStatus);
        }

        @Override
        public Map<Integer, Load> getLoad(Collection<Integer> tasks) {
            return delegate.getLoad(tasks);
        }

        @Override
        public int getPort() {
            return delegate.getPort();
        }

        @Override
        public void close() {
            delegate.close();
        }

        @Override
        public String toString() {
            return delegate.toString();
        }
    }
}
