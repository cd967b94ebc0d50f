package io.meridian.perf.soak;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.meridian.shm.OwnerOnlyFiles;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import org.apache.storm.shade.org.apache.zookeeper.CreateMode;
import org.apache.storm.shade.org.apache.zookeeper.ZooDefs;
import org.apache.storm.shade.org.apache.zookeeper.ZooKeeper;
import org.apache.storm.shade.org.apache.zookeeper.server.NIOServerCnxnFactory;
import org.apache.storm.shade.org.apache.zookeeper.server.ZooKeeperServer;
import org.apache.storm.shade.org.apache.zookeeper.server.quorum.Leader;
import org.junit.jupiter.api.Test;

class CommitLogPrimerTest {
    private static final String BEAT = "/storm/supervisors/f735d0cb-127.0.0.1";

    @Test
    void theMeanCountsEachWriteWithItsPathAndDataAndEveryOtherTransactionAsNone() {
        String created = "/storm/workerbeats/topo-1/node-6700";
        CommitLogPrimer.Census before = new CommitLogPrimer.Census(0x100, 0, Map.of(
                "/", new CommitLogPrimer.Node(0, 0, 0),
                BEAT, new CommitLogPrimer.Node(0x10, 3, 187),
                "/storm/assignments/topo-1", new CommitLogPrimer.Node(0x20, 0, 358)));
        CommitLogPrimer.Census after = new CommitLogPrimer.Census(0x100 + 40, 60_000_000_000L, Map.of(
                "/", new CommitLogPrimer.Node(0, 0, 0),
                BEAT, new CommitLogPrimer.Node(0x10, 15, 187),
                "/storm/assignments/topo-1", new CommitLogPrimer.Node(0x20, 0, 358),
                created, new CommitLogPrimer.Node(0x110, 1, 750)));
        CommitLogPrimer.Sizing s = CommitLogPrimer.meanBytesPerTransaction(before, after);
        long beats = 12 * (BEAT.length() + 187L); // 12 new versions of the heartbeat
        long beat = 2 * (created.length() + 750L); // created since, and written once
        assertEquals(40, s.transactions());
        assertEquals(beats + beat, s.bytes(), "the assignment was not written");
        assertEquals((beats + beat + 39) / 40, s.meanBytes(), "rounded up over all 40, sessions and deletes too");
        assertEquals(750, s.maxDataLength());
        assertEquals(60, s.seconds(), 1e-9);
        assertEquals(s.meanBytes() - CommitLogPrimer.PATH.length(), CommitLogPrimer.payloadFor(s.meanBytes()));
        assertEquals(0, CommitLogPrimer.payloadFor(3), "never negative");

        CommitLogPrimer.Sizing none = CommitLogPrimer.meanBytesPerTransaction(before, before);
        assertEquals(0, none.transactions());
        assertEquals(0, none.meanBytes());
    }

    @Test
    void aZnodeDeletedAndCreatedAgainCountsAsNew() {
        CommitLogPrimer.Census before = new CommitLogPrimer.Census(0x100, 0,
                Map.of(BEAT, new CommitLogPrimer.Node(0x10, 30, 187)));
        CommitLogPrimer.Census after = new CommitLogPrimer.Census(0x110, 1,
                Map.of(BEAT, new CommitLogPrimer.Node(0x105, 2, 187))); // a Supervisor restarted: its version anew
        long bytes = CommitLogPrimer.meanBytesPerTransaction(before, after).bytes();
        assertEquals(3 * (BEAT.length() + 187L), bytes, "its create and 2 writes, not 2 - 30");
    }

    @Test
    void transactionsAcrossAnEpochCountFromTheNewEpochsStart() {
        assertEquals(20, CommitLogPrimer.transactionsBetween(0x1_0000_00e7L, 0x1_0000_00fbL));
        assertEquals(5, CommitLogPrimer.transactionsBetween(0x1_0000_0200L, 0x2_0000_0005L));
    }

    @Test
    void theCapacityIsZooKeepersDefaultUnlessTheCommandLineRaisesIt() {
        assertEquals(500, CommitLogPrimer.commitLogCount(List.of("java", "-Xmx256m", "QuorumPeerMain")));
        assertEquals(500, CommitLogPrimer.commitLogCount(List.of("java", "-Dzookeeper.commitLogCount=100")),
                "ZooKeeper raises a value below 500 to 500");
        assertEquals(800, CommitLogPrimer.commitLogCount(List.of("java", "-Dzookeeper.commitLogCount=800")));
        assertEquals(500, CommitLogPrimer.commitLogCount(List.of("java", "-Dzookeeper.commitLogCount=lots")));
    }

    @Test
    void primingFillsTheCommittedLogWithItsOwnProposalsAndLeavesTheTreeAsItWas() throws Exception {
        Path dir = Files.createTempDirectory("meridian-primer-zk-");
        NIOServerCnxnFactory factory = new NIOServerCnxnFactory();
        try {
            factory.configure(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
            ZooKeeperServer server = new ZooKeeperServer(dir.toFile(), dir.toFile(), 2000);
            factory.startup(server);
            String address = "127.0.0.1:" + factory.getLocalPort();
            ZooKeeper storm = new ZooKeeper(address, 30_000, e -> { });
            try (CommitLogPrimer primer = CommitLogPrimer.connect(address)) {
                // a small cluster: a heartbeat written now and then, like the Supervisor's
                storm.create("/storm", new byte[1], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
                storm.create("/storm/beat", new byte[187], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
                CommitLogPrimer.Census before = primer.census();
                for (int i = 0; i < 10; i++) {
                    storm.setData("/storm/beat", new byte[187], -1);
                }
                CommitLogPrimer.Census after = primer.census();
                CommitLogPrimer.Sizing sizing = CommitLogPrimer.meanBytesPerTransaction(before, after);
                assertEquals(10, sizing.transactions(), "srvr's Zxid moved by the 10 writes");
                assertEquals("/storm/beat".length() + 187, sizing.meanBytes());
                assertTrue(server.getZKDatabase().getCommittedLog().size() < 20, "filling from empty");

                int capacity = server.getZKDatabase().commitLogCount;
                assertEquals(CommitLogPrimer.DEFAULT_COMMIT_LOG_COUNT, capacity);
                long lastBefore = server.getZKDatabase().getmaxCommittedLog();
                int payload = CommitLogPrimer.payloadFor(sizing.meanBytes());
                CommitLogPrimer.Priming p = primer.prime(capacity, capacity, payload, sizing);

                Collection<Leader.Proposal> log = server.getZKDatabase().getCommittedLog();
                assertEquals(capacity, log.size(), "full");
                long own = log.stream().filter(x -> x.getZxid() > lastBefore).count();
                assertEquals(capacity, own, "every proposal in it is the priming's");
                assertEquals(capacity + 2, p.proposals());
                assertEquals(payload, p.payloadBytes());
                assertTrue(p.seconds() < 10, "pipelined: " + p.seconds() + " s for " + p.proposals());
                assertNull(storm.exists(CommitLogPrimer.PATH, false), "the soak's znode deleted");
                assertEquals(after.nodes().keySet(), primer.census().nodes().keySet(), "the tree as it was");

                // the cluster's later writes replace proposals one for one
                for (int i = 0; i < 30; i++) {
                    storm.setData("/storm/beat", "x".repeat(187).getBytes(StandardCharsets.US_ASCII), -1);
                }
                assertEquals(capacity, server.getZKDatabase().getCommittedLog().size());
            } finally {
                storm.close();
            }
        } finally {
            factory.shutdown();
            OwnerOnlyFiles.deleteTree(dir);
        }
    }
}
