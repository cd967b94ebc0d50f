package io.meridian.transport.mmap;

import io.meridian.shm.Doorbell;
import io.meridian.shm.SharedLongs;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import org.apache.storm.grouping.Load;
import org.apache.storm.messaging.ConnectionWithStatus;
import org.apache.storm.messaging.IConnection;
import org.apache.storm.messaging.TaskMessage;
import org.apache.storm.messaging.netty.BackPressureStatus;
import net.openhft.chronicle.bytes.Bytes;
import net.openhft.chronicle.queue.ExcerptTailer;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueue;
import net.openhft.chronicle.wire.DocumentContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The transport on real Chronicle Queue files between two real contexts (each with its real Netty server). */
class MmapTransportTest {
    private static final String TOPO = "topo-1";

    @TempDir
    Path dir;

    /** The two layouts of a document: frames in the payload ring (the default) or inline in the queue. */
    private static Map<String, Object> ringBatches(boolean on) {
        return Map.of(TransportConfig.RING_BATCHES, Boolean.toString(on));
    }

    @ParameterizedTest(name = "frames in the ring: {0}")
    @ValueSource(booleans = {true, false})
    void framingKeepsEveryMessageItsTaskAndBytesInOrder(boolean inRing) throws Exception {
        try (TestWorker a = new TestWorker(dir, TestWorker.freePort(), ringBatches(inRing));
             TestWorker b = new TestWorker(dir, TestWorker.freePort(), ringBatches(inRing)).bind(TOPO)) {
            a.bind(TOPO);
            IConnection c = a.connect(TOPO, b.port);
            List<TaskMessage> sent = new ArrayList<>();
            sent.addAll(TestWorker.messages(0, 1, 4, 3));              // tiny
            sent.addAll(TestWorker.messages(1, 500, 100, 5));          // typical tuples
            sent.addAll(TestWorker.messages(501, 40, 40_000, 7));      // distance rows: 1.6 MB, split over documents
            sent.add(new TaskMessage(9, new byte[0]));                 // empty body
            c.send(sent.subList(0, 1).iterator());
            c.send(sent.subList(1, 501).iterator());
            c.send(sent.subList(501, sent.size()).iterator());
            c.send(new ArrayList<TaskMessage>().iterator());
            TestWorker.await("all messages", () -> b.received() == sent.size());
            for (int i = 0; i < sent.size(); i++) {
                assertEquals(sent.get(i).task(), b.tasks.get(i), "task of message " + i);
                assertArrayEquals(sent.get(i).message(), b.bodies.get(i), "bytes of message " + i);
            }
            assertEquals(0, gaps(b));
            // what the queue holds, one document per send but the distance rows' two (cut at 1 MiB): with frames in
            // the ring, headers only; inline, the frames of the tuples under the ring threshold too
            Path queue = QueueFiles.queueDir(QueueFiles.receiverDir(dir, TOPO, b.port), Integer.toString(a.port));
            long[] documents = documentsAndBytes(queue);
            long small = sent.subList(0, 501).stream().mapToLong(m -> m.message().length).sum();
            assertEquals(4, documents[0], "documents");
            if (inRing) {
                assertEquals(4 * Frames.HEADER_BYTES, documents[1], "bytes in the queue");
            } else {
                assertTrue(documents[1] >= small, documents[1] + " bytes in the queue for " + small + " of small tuples");
            }
        }
    }

    /** Documents in a queue and their bytes, read with a tailer of its own (the receiver's stays where it is). */
    private static long[] documentsAndBytes(Path queueDir) {
        long[] r = new long[2];
        try (SingleChronicleQueue q = QueueFiles.open(queueDir, 5, false, null);
             ExcerptTailer t = q.createTailer()) {
            while (true) {
                try (DocumentContext dc = t.readingDocument()) {
                    if (!dc.isPresent()) {
                        return r;
                    }
                    Bytes<?> bytes = dc.wire().bytes();
                    r[0]++;
                    r[1] += bytes.readRemaining();
                }
            }
        }
    }

    @Test
    void largeTuplesGoThroughThePayloadRingAcrossLapsAndInlineWhenItIsFull() throws Exception {
        Map<String, Object> smallRing = Map.of(TransportConfig.RING_BYTES, 256 * 1024);
        try (TestWorker a = new TestWorker(dir, TestWorker.freePort(), smallRing).bind(TOPO);
             TestWorker b = new TestWorker(dir, TestWorker.freePort(), smallRing).bind(TOPO)) {
            IConnection c = a.connect(TOPO, b.port);
            List<TaskMessage> sent = new ArrayList<>();
            // 100 x 40 KB through a 256 KB ring: about 16 laps, the reader releasing space as it delivers
            for (int i = 0; i < 100; i++) {
                List<TaskMessage> one = TestWorker.messages(i, 1, 40_000, 4);
                sent.addAll(one);
                c.send(one.iterator());
                int expect = sent.size();
                TestWorker.await("message " + i, () -> b.received() == expect);
            }
            // a stalled reader: the ring fills, the rest goes inline in the queue, nothing is lost or reordered
            b.hold = true;
            List<TaskMessage> burst = TestWorker.messages(100, 20, 40_000, 5);
            sent.addAll(burst);
            c.send(burst.iterator());
            b.hold = false;
            TestWorker.await("the burst", () -> b.received() == sent.size());
            for (int i = 0; i < sent.size(); i++) {
                assertEquals(sent.get(i).task(), b.tasks.get(i), "task of message " + i);
                assertArrayEquals(sent.get(i).message(), b.bodies.get(i), "bytes of message " + i);
            }
            Path ring = QueueFiles.ringFile(QueueFiles.receiverDir(dir, TOPO, b.port), Integer.toString(a.port));
            assertEquals(256 * 1024, Files.size(ring));
            assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(ring)));
            c.close();
        }
    }

    @Test
    void readyOnlyWhileTheReceiverAndItsReaderAreLive() throws Exception {
        int bPort = TestWorker.freePort();
        try (TestWorker a = new TestWorker(dir, TestWorker.freePort(), Map.of()).bind(TOPO)) {
            ConnectionWithStatus c = (ConnectionWithStatus) a.connect(TOPO, bPort);
            Thread.sleep(100);
            assertEquals(ConnectionWithStatus.Status.Connecting, c.status(), "no receiver yet");
            try (TestWorker b = new TestWorker(dir, bPort, Map.of()).bind(TOPO)) {
                TestWorker.await("ready", () -> c.status() == ConnectionWithStatus.Status.Ready);
                b.receiver.crash(); // stops heartbeating, files stay: what a SIGKILL leaves
                TestWorker.await("not ready after the receiver died", () -> c.status() == ConnectionWithStatus.Status.Connecting);
            }
            c.close();
            assertEquals(ConnectionWithStatus.Status.Closed, c.status());
        }
    }

    @Test
    void backpressureStatusReachesOldAndNewSenders() throws Exception {
        try (TestWorker a = new TestWorker(dir, TestWorker.freePort(), Map.of()).bind(TOPO);
             TestWorker b = new TestWorker(dir, TestWorker.freePort(), Map.of()).bind(TOPO);
             TestWorker late = new TestWorker(dir, TestWorker.freePort(), Map.of()).bind(TOPO)) {
            IConnection c = a.connect(TOPO, b.port);
            b.receiver.sendBackPressureStatus(new BackPressureStatus("w", List.of(5, 6), List.of(7)));
            TestWorker.await("bp on 5 and 6", () -> a.bpStatus[5].get() && a.bpStatus[6].get());
            assertFalse(a.bpStatus[7].get());
            IConnection c2 = late.connect(TOPO, b.port); // connects after the status was sent
            TestWorker.await("a new sender gets the current status", () -> late.bpStatus[5].get() && late.bpStatus[6].get());
            b.receiver.sendBackPressureStatus(new BackPressureStatus("w", List.of(6), List.of(5, 7)));
            TestWorker.await("5 released", () -> !a.bpStatus[5].get() && !late.bpStatus[5].get());
            assertTrue(a.bpStatus[6].get());
            assertFalse(a.bpStatus[10].get(), "a task the receiver never reported stays untouched");
            c.close();
            c2.close();
        }
    }

    @Test
    void readerLagTurnsIntoBackpressureAndReleasesWhenTheReaderCatchesUp() throws Exception {
        Map<String, Object> small = Map.of(TransportConfig.MAX_LAG_MESSAGES, 1000);
        try (TestWorker a = new TestWorker(dir, TestWorker.freePort(), small).bind(TOPO);
             TestWorker b = new TestWorker(dir, TestWorker.freePort(), small).bind(TOPO)) {
            IConnection c = a.connect(TOPO, b.port);
            b.hold = true; // a slow receiver: its reader does not deliver
            c.send(TestWorker.messages(0, 500, 100, 3).iterator());
            Thread.sleep(50);
            assertFalse(a.bpStatus[3].get(), "below the lag limit");
            c.send(TestWorker.messages(500, 1000, 100, 4).iterator());
            // the poller, the one writer of the flags, turns the lag into backpressure within a poll (1 ms)
            TestWorker.await("over the limit: every task of the receiver backs off", () -> a.bpStatus[3].get() && a.bpStatus[4].get());
            b.hold = false;
            TestWorker.await("released", () -> !a.bpStatus[3].get() && !a.bpStatus[4].get());
            TestWorker.await("all delivered", () -> b.received() == 1500);
            c.close();
        }
    }

    @Test
    void loadMetricsReachSenders() throws Exception {
        try (TestWorker a = new TestWorker(dir, TestWorker.freePort(), Map.of()).bind(TOPO);
             TestWorker b = new TestWorker(dir, TestWorker.freePort(), Map.of()).bind(TOPO)) {
            IConnection c = a.connect(TOPO, b.port);
            assertTrue(c.getLoad(List.of(5)).isEmpty(), "nothing reported yet");
            b.receiver.sendLoadMetrics(new java.util.HashMap<>(Map.of(5, 0.75, 6, 0.0))); // Storm sends a HashMap
            TestWorker.await("load", () -> c.getLoad(List.of(5, 6, 8)).size() == 2);
            Map<Integer, Load> load = c.getLoad(List.of(5, 6, 8));
            assertEquals(0.75, load.get(5).getBoltLoad(), 1e-12);
            assertEquals(0.0, load.get(6).getBoltLoad(), 1e-12);
            c.close();
        }
    }

    @Test
    void anIdleReaderBlocksOnItsDoorbellAndASenderRingsItAwakeAlsoAfterTheReceiverRestarts() throws Exception {
        int bPort = TestWorker.freePort();
        try (TestWorker a = new TestWorker(dir, TestWorker.freePort(), Map.of()).bind(TOPO)) {
            MmapSender c = (MmapSender) a.connect(TOPO, bPort);
            int sent;
            try (TestWorker b = new TestWorker(dir, bPort, Map.of()).bind(TOPO)) {
                TestWorker.await("the sender's ringer", c::hasRinger);
                sent = sendWhileAsleep(c, b, 0);
                assertEquals(1, c.rings(), "the append after the announcement rang, once");
                TestWorker.await("the doorbell heard it", () -> b.receiver.doorbellRings() == 1);
                b.receiver.crash();
            }
            try (TestWorker b2 = new TestWorker(dir, bPort, Map.of()).bind(TOPO)) {
                TestWorker.await("the sender rings the new doorbell", c::hasRinger);
                long before = c.rings();
                sendWhileAsleep(c, b2, sent);
                assertEquals(before + 1, c.rings());
                TestWorker.await("the new doorbell heard it", () -> b2.receiver.doorbellRings() == 1);
            }
            c.close();
        }
    }

    /**
     * Sends batches of 10 messages to {@code receiver} (the first from id {@code from}) until one goes while its
     * reader sleeps, each delivered before the next; returns the messages sent. The reader wakes every housekeeping
     * interval (100 ms) and announces its sleep again after {@code sleepAfter}: a batch sent in between is polled, not
     * rung (CI met one so). At most one ring a batch.
     */
    private static int sendWhileAsleep(MmapSender c, TestWorker receiver, int from) throws InterruptedException {
        int sent = 0;
        for (int attempt = 1; ; attempt++) {
            TestWorker.await("the idle reader announces it blocks", receiver.receiver::readerSleeping);
            long before = c.rings();
            c.send(TestWorker.messages(from + sent, 10, 100, 3).iterator());
            sent += 10;
            int expected = sent;
            TestWorker.await("delivered", () -> receiver.received() == expected);
            long rang = c.rings() - before;
            assertTrue(rang <= 1, "a batch rang " + rang + " times");
            if (rang == 1) {
                return sent;
            }
            assertTrue(attempt < 10, "none of 10 batches sent to a sleeping reader rang its doorbell");
        }
    }

    @Test
    void aReceiverWhoseDirectoryIsTooDeepForASocketAddressStillSleepsOnItsDoorbell() throws Exception {
        String longTopology = TOPO + "-" + "x".repeat(120);
        int bPort = TestWorker.freePort();
        Path receiverDir = QueueFiles.receiverDir(dir, longTopology, bPort);
        Path socket = Doorbell.shortDir().resolve(Doorbell.shortName(receiverDir.resolve(QueueFiles.DOORBELL)));
        try (TestWorker a = new TestWorker(dir, TestWorker.freePort(), Map.of()).bind(longTopology)) {
            MmapSender c = (MmapSender) a.connect(longTopology, bPort);
            try (TestWorker b = new TestWorker(dir, bPort, Map.of()).bind(longTopology)) {
                assertTrue(receiverDir.resolve(QueueFiles.DOORBELL).toString().length() > 107,
                    "the test needs a deep directory");
                assertEquals(socket, Files.readSymbolicLink(receiverDir.resolve(QueueFiles.DOORBELL)));
                TestWorker.await("the sender's ringer", c::hasRinger);
                sendWhileAsleep(c, b, 0);
                TestWorker.await("the doorbell heard it", () -> b.receiver.doorbellRings() == 1);
            }
            TestWorker.await("an orderly close removes the socket outside the receiver's directory", () -> !Files.exists(socket));
            c.close();
        }
    }

    @Test
    void aDoorbellSocketNobodyListensOnIsSweptWhenTheNextOneIsBound() throws Exception {
        Path orphan = Doorbell.shortDir().resolve("0000000000000000.sock");
        Files.createDirectories(orphan.getParent());
        Files.deleteIfExists(orphan);
        // a receiver halted before its orderly close: the socket file stays, nobody listens
        try (java.nio.channels.ServerSocketChannel killed = java.nio.channels.ServerSocketChannel.open(java.net.StandardProtocolFamily.UNIX)) {
            killed.bind(java.net.UnixDomainSocketAddress.of(orphan));
        }
        assertTrue(Files.exists(orphan));
        String longTopology = TOPO + "-sweep-" + "y".repeat(120);
        int port = TestWorker.freePort();
        Path liveLink = QueueFiles.receiverDir(dir, longTopology, port).resolve(QueueFiles.DOORBELL);
        Path live = Doorbell.shortDir().resolve(Doorbell.shortName(liveLink));
        try (TestWorker b = new TestWorker(dir, port, Map.of()).bind(longTopology)) {
            assertFalse(Files.exists(orphan), "the orphaned socket is gone");
            assertTrue(Files.exists(live), "the new doorbell is there");
            Doorbell.sweepUnanswered(Doorbell.shortDir());
            assertTrue(Files.exists(live), "a sweep leaves a doorbell that answers");
        }
    }

    @Test
    void spinningAndYieldingReadersNeverBlock() throws Exception {
        for (String idle : new String[] {"spin", "yield"}) {
            try (TestWorker b = new TestWorker(dir, TestWorker.freePort(), Map.of(TransportConfig.IDLE, idle)).bind(TOPO + idle)) {
                Thread.sleep(50);
                assertFalse(b.receiver.readerSleeping(), idle);
                assertEquals(0, b.receiver.doorbellRings());
                assertFalse(java.nio.file.Files.exists(
                    QueueFiles.receiverDir(dir, TOPO + idle, b.port).resolve(QueueFiles.DOORBELL)),
                    idle + ": no doorbell");
            }
        }
    }

    @ParameterizedTest(name = "frames in the ring: {0}")
    @ValueSource(booleans = {true, false})
    void restartedReceiverResumesWithoutLossOrDuplicates(boolean inRing) throws Exception {
        int bPort = TestWorker.freePort();
        try (TestWorker a = new TestWorker(dir, TestWorker.freePort(), ringBatches(inRing)).bind(TOPO)) {
            IConnection c = a.connect(TOPO, bPort);
            Set<Integer> seen = new HashSet<>();
            try (TestWorker b = new TestWorker(dir, bPort, ringBatches(inRing)).bind(TOPO)) {
                c.send(TestWorker.messages(0, 700, 100, 3).iterator());
                TestWorker.await("first part", () -> b.received() == 700);
                b.receiver.crash();
                for (byte[] body : b.bodies) {
                    assertTrue(seen.add(TestWorker.id(body)));
                }
                // written while no receiver runs: they wait in the queue (the large ones in the payload ring)
                c.send(TestWorker.messages(700, 300, 100, 3).iterator());
                c.send(TestWorker.messages(1000, 290, 100, 3).iterator());
                c.send(TestWorker.messages(1290, 10, 40_000, 3).iterator());
            }
            try (TestWorker b2 = new TestWorker(dir, bPort, ringBatches(inRing)).bind(TOPO)) {
                TestWorker.await("the rest", () -> b2.received() >= 600);
                Thread.sleep(200);
                assertEquals(600, b2.received(), "nothing delivered twice");
                for (byte[] body : b2.bodies) {
                    int id = TestWorker.id(body);
                    assertTrue(seen.add(id), "duplicate " + id);
                    assertArrayEquals(TestWorker.messages(id, 1, body.length, 3).get(0).message(), body, "bytes of " + id);
                }
                assertEquals(1300, seen.size());
                assertEquals(0, gaps(b2));
            }
            c.close();
        }
    }

    @Test
    void restartedSenderContinuesTheNumbering() throws Exception {
        int aPort = TestWorker.freePort();
        try (TestWorker b = new TestWorker(dir, TestWorker.freePort(), Map.of()).bind(TOPO)) {
            try (TestWorker a = new TestWorker(dir, aPort, Map.of()).bind(TOPO)) {
                a.connect(TOPO, b.port).send(TestWorker.messages(0, 100, 100, 3).iterator());
                TestWorker.await("first", () -> b.received() == 100);
            }
            try (TestWorker a2 = new TestWorker(dir, aPort, Map.of()).bind(TOPO)) {
                a2.connect(TOPO, b.port).send(TestWorker.messages(100, 100, 100, 3).iterator());
                TestWorker.await("second", () -> b.received() == 200);
            }
            assertEquals(0, gaps(b));
        }
    }

    @Test
    void consumedCycleFilesAreDeletedAndDirectoriesAreOwnerOnly() throws Exception {
        Map<String, Object> fast = Map.of(TransportConfig.ROLL_SECONDS, 1);
        try (TestWorker a = new TestWorker(dir, TestWorker.freePort(), fast).bind(TOPO);
             TestWorker b = new TestWorker(dir, TestWorker.freePort(), fast).bind(TOPO)) {
            IConnection c = a.connect(TOPO, b.port);
            int sent = 0;
            for (int second = 0; second < 4; second++) {
                c.send(TestWorker.messages(sent, 200, 100, 3).iterator());
                sent += 200;
                Thread.sleep(1000);
            }
            int total = sent;
            TestWorker.await("delivered", () -> b.received() == total);
            Path queue = QueueFiles.queueDir(QueueFiles.receiverDir(dir, TOPO, b.port), Integer.toString(a.port));
            TestWorker.await("old cycles deleted", () -> cycleFiles(queue) <= 2);
            assertTrue(b.receiver.deletedFiles() >= 2, "deleted " + b.receiver.deletedFiles());
            for (Path d : List.of(dir.resolve(TOPO), QueueFiles.receiverDir(dir, TOPO, b.port), queue)) {
                assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(d)), d.toString());
            }
            c.close();
            a.context.term();
            b.context.term();
        }
        assertFalse(Files.exists(dir.resolve(TOPO)), "an orderly shutdown removes the topology's queues");
    }

    @Test
    void queuesOfWorkersLongDeadAreSweptAtStartButLiveOnesStay() throws Exception {
        int deadPort = TestWorker.freePort();
        int senderPort = TestWorker.freePort();
        try (TestWorker dead = new TestWorker(dir, deadPort, Map.of()).bind("old-topology");
             TestWorker sender = new TestWorker(dir, senderPort, Map.of()).bind("old-topology")) {
            sender.connect("old-topology", deadPort).send(TestWorker.messages(0, 10, 100, 3).iterator());
            dead.receiver.crash(); // files stay, as after a SIGKILL
        }
        // the sender's own receiving side shut down in order: its directory goes (on a loaded machine, not at once)
        TestWorker.await("orderly receiver removed", () -> !Files.exists(QueueFiles.receiverDir(dir, "old-topology", senderPort)));
        Path deadDir = QueueFiles.receiverDir(dir, "old-topology", deadPort);
        assertTrue(Files.exists(deadDir));
        // the crashed receiver's pid is this (live) JVM: a sweep must not touch it however old its heartbeat
        assertEquals(0, QueueFiles.sweepStale(dir, 1, System.currentTimeMillis() + 60_000));
        ReceiverControl ctl = ReceiverControl.open(deadDir.resolve(QueueFiles.CONTROL));
        // make it a dead process's: a pid that cannot exist
        SharedLongs longs = SharedLongs.openIfPresent(deadDir.resolve(QueueFiles.CONTROL), 8);
        longs.setRelease(1, Long.MAX_VALUE);
        assertEquals(0, QueueFiles.sweepStale(dir, 600_000, System.currentTimeMillis()), "recently alive: kept");
        assertEquals(1, QueueFiles.sweepStale(dir, 600_000, System.currentTimeMillis() + 700_000), "dead for long: swept");
        assertFalse(Files.exists(dir.resolve("old-topology")), "and its empty topology directory");
        assertTrue(ctl.capacity() > 0);
    }

    @Test
    void aKilledTopologysDeadReceiversGoAtOnceWhileRunningTopologiesAndLiveProcessesKeepTheirs() throws Exception {
        int[] ports = {TestWorker.freePort(), TestWorker.freePort(), TestWorker.freePort()};
        try (TestWorker killed = new TestWorker(dir, ports[0], Map.of()).bind("killed-topology");
             TestWorker killedLive = new TestWorker(dir, ports[1], Map.of()).bind("killed-topology");
             TestWorker running = new TestWorker(dir, ports[2], Map.of()).bind("running-topology")) {
            killed.receiver.crash();
            killedLive.receiver.crash();
            running.receiver.crash();
        }
        Path dead = QueueFiles.receiverDir(dir, "killed-topology", ports[0]);
        Path live = QueueFiles.receiverDir(dir, "killed-topology", ports[1]);
        Path kept = QueueFiles.receiverDir(dir, "running-topology", ports[2]);
        // this JVM is every receiver's process: make two of them a dead process's, with a heartbeat of just now
        for (Path receiver : List.of(dead, kept)) {
            SharedLongs.openIfPresent(receiver.resolve(QueueFiles.CONTROL), 8).setRelease(1, Long.MAX_VALUE);
        }
        long[] liveness = QueueFiles.readLiveness(dead.resolve(QueueFiles.CONTROL));
        assertEquals(Long.MAX_VALUE, liveness[0], "the pid, read without mapping the file");
        assertTrue(Math.abs(System.currentTimeMillis() - liveness[1]) < 600_000, "the heartbeat: " + liveness[1]);
        assertNull(QueueFiles.readLiveness(dir.resolve("no-such-receiver.ctl")));

        assertEquals(1, KilledTopologies.sweep(Map.of(TransportConfig.DIR, dir.toString()), Set.of("running-topology")));
        assertFalse(Files.exists(dead), "a killed topology's dead receiver goes, however recent its heartbeat");
        assertTrue(Files.exists(live), "a receiver whose process lives stays");
        assertTrue(Files.exists(kept), "a running topology's dead receiver stays: a restarted worker resumes from it");
        assertEquals(0, KilledTopologies.sweep(Map.of(TransportConfig.DIR, dir.resolve("absent").toString()), Set.of()),
                "no transport root on this host: nothing to do");
    }

    @org.junit.jupiter.api.AfterAll
    static void awaitClosed() throws InterruptedException {
        TestWorker.awaitClosed();
    }

    private static long cycleFiles(Path queue) {
        try (Stream<Path> s = Files.list(queue)) {
            return s.filter(p -> p.toString().endsWith(".cq4")).count();
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    private static long gaps(TestWorker w) {
        long g = 0;
        for (InboundQueue q : w.receiver.queues()) {
            g += q.gaps;
        }
        return g;
    }
}
