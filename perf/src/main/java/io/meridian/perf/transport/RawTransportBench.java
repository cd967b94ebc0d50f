package io.meridian.perf.transport;

import io.meridian.perf.Figures;
import io.meridian.transport.mmap.MmapContext;
import java.lang.management.ManagementFactory;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.storm.messaging.ConnectionWithStatus;
import org.apache.storm.messaging.IConnection;
import org.apache.storm.messaging.IContext;
import org.apache.storm.messaging.TaskMessage;
import org.apache.storm.utils.Utils;

/**
 * The transports alone: a sender thread pushes batches of 64 task messages through {@code IConnection.send} of one
 * context to the receiving side of another (two contexts in this JVM, as two workers would hold them), honouring the
 * backpressure flags as Storm's transfer thread does. It shows what the medium costs without Storm's executors.
 */
final class RawTransportBench {
    private static final int BATCH = 64;
    private final int seconds;

    RawTransportBench(int seconds) {
        this.seconds = seconds;
    }

    void run(int small, int big, Figures figures) throws Exception {
        System.out.println();
        System.out.println("Transports alone (IConnection.send -> IConnectionCallback.recv, batches of " + BATCH + ")");
        Map<String, Object> out = new LinkedHashMap<>();
        for (int size : new int[] {small, big}) {
            double[] netty = measure("netty", size, Map.of());
            double[] mmap = measure("mmap", size, Map.of());
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("netty_msgs_per_s", netty[0]);
            m.put("mmap_msgs_per_s", mmap[0]);
            m.put("ratio", mmap[0] / netty[0]);
            m.put("netty_cpu_s_per_M", netty[1]);
            m.put("mmap_cpu_s_per_M", mmap[1]);
            print(size, "netty", netty);
            print(size, "mmap", mmap);
            if (size == big) {
                double[] plain = measure("mmap", size, Map.of("meridian.transport.ring.bytes", 0));
                print(size, "mmap, inline in Chronicle (no ring)", plain);
                m.put("mmap_inline_msgs_per_s", plain[0]);
                m.put("mmap_inline_cpu_s_per_M", plain[1]);
            }
            System.out.printf(Locale.ROOT, "    %d B: mmap/netty %.2fx%n", size, mmap[0] / netty[0]);
            out.put("raw_" + size + "B", m);
        }
        figures.put("raw", out);
    }

    private static void print(int size, String what, double[] r) {
        System.out.printf(Locale.ROOT, "  %6d B  %-36s %,12.0f msgs/s %,9.1f MB/s  CPU %6.2f s per M msgs%n",
            size, what, r[0], r[0] * size / 1e6, r[1]);
    }

    /** @return {messages per second, CPU seconds per million messages} */
    private double[] measure(String transport, int size, Map<String, Object> extra) throws Exception {
        Path dir = Files.createTempDirectory(Path.of(System.getProperty("java.io.tmpdir")), "raw-bench");
        Map<String, Object> conf = new HashMap<>(Utils.readDefaultConfig());
        conf.put("meridian.transport.dir", Path.of("/dev/shm").toFile().isDirectory()
            ? Files.createTempDirectory(Path.of("/dev/shm"), "meridian-raw-bench").toString() : dir.toString());
        conf.putAll(extra);
        IContext a = transport.equals("mmap") ? new MmapContext() : new org.apache.storm.messaging.netty.Context();
        IContext b = transport.equals("mmap") ? new MmapContext() : new org.apache.storm.messaging.netty.Context();
        a.prepare(conf);
        b.prepare(conf);
        String topo = "raw-" + System.nanoTime();
        AtomicLong received = new AtomicLong();
        int aPort = freePort();
        int bPort = freePort();
        java.util.function.Supplier<Object> noBackPressure =
            () -> new org.apache.storm.messaging.netty.BackPressureStatus("bench", new ArrayList<>(), new ArrayList<>());
        a.bind(topo, aPort, batch -> { }, noBackPressure);
        b.bind(topo, bPort, batch -> {
            long n = 0;
            for (TaskMessage m : batch) {
                n += m.message() != null ? 1 : 0;
            }
            received.addAndGet(n);
        }, noBackPressure);
        AtomicBoolean[] bp = new AtomicBoolean[8];
        for (int i = 0; i < bp.length; i++) {
            bp[i] = new AtomicBoolean();
        }
        IConnection c = a.connect(topo, "localhost", bPort, bp);
        long readyBy = System.nanoTime() + 30_000_000_000L;
        while (c instanceof ConnectionWithStatus s && s.status() != ConnectionWithStatus.Status.Ready) {
            if (System.nanoTime() > readyBy) {
                throw new IllegalStateException(transport + " connection never became ready");
            }
            Thread.sleep(10);
        }
        List<TaskMessage> batch = new ArrayList<>(BATCH);
        for (int i = 0; i < BATCH; i++) {
            batch.add(new TaskMessage(1, new byte[size]));
        }
        com.sun.management.OperatingSystemMXBean os =
            (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        long warmEnd = System.nanoTime() + 2_000_000_000L;
        while (System.nanoTime() < warmEnd) {
            sendOnce(c, batch, bp);
        }
        long r0 = received.get();
        long cpu0 = os.getProcessCpuTime();
        long t0 = System.nanoTime();
        long end = t0 + seconds * 1_000_000_000L;
        while (System.nanoTime() < end) {
            sendOnce(c, batch, bp);
        }
        long r1 = received.get();
        long cpu1 = os.getProcessCpuTime();
        long t1 = System.nanoTime();
        c.close();
        a.term();
        b.term();
        deleteTree(Path.of(conf.get("meridian.transport.dir").toString()));
        deleteTree(dir);
        double n = r1 - r0;
        return new double[] {n / ((t1 - t0) / 1e9), (cpu1 - cpu0) / 1e9 / Math.max(1e-9, n / 1e6)};
    }

    private static void sendOnce(IConnection c, List<TaskMessage> batch, AtomicBoolean[] bp) {
        int spins = 0;
        while (bp[1].get()) {
            if (++spins > 100) {
                Thread.yield();
            }
        }
        c.send(batch.iterator());
    }

    private static int freePort() throws Exception {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    private static void deleteTree(Path p) {
        try (var walk = Files.walk(p)) {
            walk.sorted(java.util.Comparator.reverseOrder()).forEach(x -> x.toFile().delete());
        } catch (Exception ignored) {
            // best effort
        }
    }
}
