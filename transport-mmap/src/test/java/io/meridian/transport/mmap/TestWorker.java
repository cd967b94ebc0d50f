package io.meridian.transport.mmap;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;
import org.apache.storm.messaging.IConnection;
import org.apache.storm.messaging.TaskMessage;
import org.apache.storm.utils.Utils;

/** One simulated Storm worker in the test JVM: a real {@link MmapContext} bound on a real port, recording what it receives. */
final class TestWorker implements AutoCloseable {
    final MmapContext context = new MmapContext();
    final int port;
    final List<Integer> tasks = new ArrayList<>();
    final List<byte[]> bodies = new ArrayList<>();
    final AtomicBoolean[] bpStatus = new AtomicBoolean[64];
    volatile boolean hold;
    MmapReceiver receiver;

    TestWorker(Path dir, int port, Map<String, Object> extra) {
        this.port = port;
        Map<String, Object> conf = new HashMap<>(Utils.readDefaultConfig());
        conf.put(TransportConfig.DIR, dir.toString());
        conf.put(TransportConfig.HEARTBEAT_TIMEOUT_MS, 600);
        conf.putAll(extra);
        context.prepare(conf);
        for (int i = 0; i < bpStatus.length; i++) {
            bpStatus[i] = new AtomicBoolean();
        }
    }

    static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    TestWorker bind(String topology) {
        awaitClosed(port); // a restarted worker binds its predecessor's port: wait until that one let go of it
        receiver = (MmapReceiver) context.bind(topology, port, batch -> {
            while (hold) {
                Thread.onSpinWait();
            }
            synchronized (this) {
                for (TaskMessage m : batch) {
                    tasks.add(m.task());
                    bodies.add(m.message());
                }
            }
        }, () -> null);
        return this;
    }

    IConnection connect(String topology, int toPort) {
        return context.connect(topology, "localhost", toPort, bpStatus);
    }

    synchronized int received() {
        return tasks.size();
    }

    static void await(String what, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out waiting for " + what);
            }
            Thread.sleep(5);
        }
    }

    static List<TaskMessage> messages(int from, int count, int size, int task) {
        List<TaskMessage> list = new ArrayList<>(count);
        for (int i = from; i < from + count; i++) {
            byte[] b = new byte[size];
            java.nio.ByteBuffer.wrap(b).putInt(0, i);
            for (int j = 4; j < size; j++) {
                b[j] = (byte) (i * 31 + j);
            }
            list.add(new TaskMessage(task, b));
        }
        return list;
    }

    static int id(byte[] body) {
        return java.nio.ByteBuffer.wrap(body).getInt(0);
    }

    private static final List<Thread> CLOSING = new ArrayList<>();
    private static final java.util.Map<Integer, Thread> CLOSING_PORTS = new java.util.HashMap<>();

    /**
     * Terminates the context in the background: Storm's Netty event loops take a two-second quiet period to shut down,
     * which would dominate the tests. {@link #awaitClosed()} waits for all of them.
     */
    @Override
    public void close() {
        Thread t = new Thread(context::term, "term-" + port);
        t.start();
        synchronized (CLOSING) {
            CLOSING.add(t);
            CLOSING_PORTS.put(port, t);
        }
    }

    private static void awaitClosed(int port) {
        Thread previous;
        synchronized (CLOSING) {
            previous = CLOSING_PORTS.remove(port);
        }
        if (previous != null) {
            try {
                previous.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    static void awaitClosed() throws InterruptedException {
        List<Thread> all;
        synchronized (CLOSING) {
            all = new ArrayList<>(CLOSING);
            CLOSING.clear();
            CLOSING_PORTS.clear();
        }
        for (Thread t : all) {
            t.join();
        }
    }
}
