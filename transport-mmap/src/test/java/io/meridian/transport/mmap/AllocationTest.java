package io.meridian.transport.mmap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.storm.Config;
import org.apache.storm.messaging.IConnection;
import org.apache.storm.messaging.TaskMessage;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The hot paths allocate nothing per message except the {@code byte[]} a received {@link TaskMessage} must own,
 * measured with the JVM's per-thread allocation counter on a real queue.
 */
class AllocationTest {
    @TempDir
    Path dir;

    @Test
    void sendAllocatesNothingAndReceiveOnlyTheMessageBytes() throws Exception {
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        int bodyBytes = 100;
        List<TaskMessage> batch = TestWorker.messages(0, 64, bodyBytes, 3);
        long[] receiverAllocated = new long[2];
        long[] countAt = new long[2];
        long[] receivedCount = new long[1];
        try (TestWorker a = new TestWorker(dir, TestWorker.freePort(), Map.of()).bind("alloc");
             TestWorker b = new TestWorker(dir, TestWorker.freePort(), Map.of())) {
            b.receiver = (MmapReceiver) b.context.bind("alloc", b.port, msgs -> {
                receivedCount[0] += msgs.size();
                // batches vary in size (the reader hands over what is there): take the first crossing of each mark
                if (countAt[0] == 0 && receivedCount[0] >= 64 * 1000) {
                    receiverAllocated[0] = threads.getCurrentThreadAllocatedBytes();
                    countAt[0] = receivedCount[0];
                } else if (countAt[1] == 0 && receivedCount[0] >= 64 * 11_000) {
                    receiverAllocated[1] = threads.getCurrentThreadAllocatedBytes();
                    countAt[1] = receivedCount[0];
                }
            }, () -> null);
            IConnection c = a.connect("alloc", b.port);
            for (int i = 0; i < 1000; i++) {
                c.send(batch.iterator()); // warm-up: JIT, first mappings
            }
            List<java.util.Iterator<TaskMessage>> iterators = new ArrayList<>(10_000);
            for (int i = 0; i < 10_000; i++) {
                iterators.add(batch.iterator()); // Storm hands in its iterator; it is not the transport's allocation
            }
            long before = threads.getCurrentThreadAllocatedBytes();
            for (int i = 0; i < 10_000; i++) {
                c.send(iterators.get(i));
            }
            long sendAllocated = threads.getCurrentThreadAllocatedBytes() - before;
            TestWorker.await("all received", () -> receivedCount[0] >= 64 * 11_000 && receiverAllocated[1] != 0);
            long messages = 64L * 10_000;
            assertTrue(sendAllocated < 64 * 1024, "send allocated " + sendAllocated + " B for " + messages + " messages");
            long perMessage = (receiverAllocated[1] - receiverAllocated[0]) / (countAt[1] - countAt[0]);
            long byteArray = 16 + ((bodyBytes + 7) & ~7); // header + body, 8-byte aligned
            assertTrue(perMessage <= byteArray + 2, "receive allocated " + perMessage + " B per message; the byte[] alone is " + byteArray);
            c.close();
        }
    }

    @Test
    void enableSelectsTheTransportAndTheJvmFlagsMatchThePom() throws Exception {
        Map<String, Object> conf = new HashMap<>();
        conf.put(Config.TOPOLOGY_WORKER_CHILDOPTS, "-Xmx1g");
        MmapTransport.enable(conf);
        MmapTransport.enable(conf);
        assertEquals(MmapContext.class.getName(), conf.get(Config.STORM_MESSAGING_TRANSPORT));
        assertEquals("-Xmx1g " + MmapTransport.JVM_FLAGS, conf.get(Config.TOPOLOGY_WORKER_CHILDOPTS));
        String pom = Files.readString(Path.of("..", "pom.xml"));
        String flags = pom.substring(pom.indexOf("<meridian.jvm.opens>") + 20, pom.indexOf("</meridian.jvm.opens>"));
        assertEquals(flags.trim(), MmapTransport.JVM_FLAGS);
    }
}
