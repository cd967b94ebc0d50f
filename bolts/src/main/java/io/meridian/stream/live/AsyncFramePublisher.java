package io.meridian.stream.live;

import io.meridian.live.Arrivals;
import io.meridian.live.Frame;
import io.meridian.live.FrameListener;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Hands frames to a slow sink (the snapshot files, the Kafka topic) on a thread of its own, so that writing a frame of
 * N points (tens of milliseconds at N = 4000) never delays the map's next round: the round thread only swaps a
 * reference. When frames come faster than the sink takes them, the newest wins and the ones in between are skipped
 * (a snapshot is the state, and the topic sends each point as it stands against what it last sent). Points shown ahead
 * of the rounds ({@link Arrivals}) are each sent, in order, before the next frame: the sink drops those a frame it
 * already sent covers, so a point's last record is never older than the frame that shows it.
 */
final class AsyncFramePublisher implements FrameListener, AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(AsyncFramePublisher.class);
    private static final long IDLE_NANOS = 50_000_000L;

    private final FrameListener sink;
    private final AtomicReference<Frame> next = new AtomicReference<>();
    private final ConcurrentLinkedQueue<Arrivals> arrivals = new ConcurrentLinkedQueue<>();
    private final Thread thread;
    private volatile boolean closed;

    AsyncFramePublisher(FrameListener sink, String name) {
        this.sink = sink;
        this.thread = new Thread(this::run, name);
        thread.setDaemon(true);
        thread.start();
    }

    @Override
    public void onFrame(Frame frame) {
        next.set(frame);
        LockSupport.unpark(thread);
    }

    @Override
    public void onArrivals(Arrivals placed) {
        arrivals.add(placed);
        LockSupport.unpark(thread);
    }

    private void run() {
        while (true) {
            for (Arrivals a = arrivals.poll(); a != null; a = arrivals.poll()) {
                try {
                    sink.onArrivals(a);
                } catch (RuntimeException e) {
                    LOG.error("live map: publishing {} points placed against frame {} failed: {}", a.count(),
                            a.frame(), e.getMessage(), e);
                }
            }
            Frame f = next.getAndSet(null);
            if (f == null) {
                if (closed && arrivals.isEmpty()) {
                    return;
                }
                try {
                    sink.onIdle();
                } catch (RuntimeException e) {
                    LOG.error("live map: publishing a held frame failed: {}", e.getMessage(), e);
                }
                LockSupport.parkNanos(IDLE_NANOS);
                continue;
            }
            try {
                sink.onFrame(f);
            } catch (RuntimeException e) {
                LOG.error("live map: publishing frame {} failed: {}", f.frame(), e.getMessage(), e);
            }
        }
    }

    /** Publishes the frame still waiting, if any, then stops. */
    @Override
    public void close() {
        closed = true;
        LockSupport.unpark(thread);
        try {
            thread.join(10_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
