package io.meridian.perf.soak;

import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class HeapHistogramTest {
    @Test
    void namesTheClassThatAJvmsLiveHeapGrewBy() throws Exception {
        long self = ProcessHandle.current().pid();
        HeapHistogram before = HeapHistogram.take(self);
        List<long[]> retained = new ArrayList<>();
        for (int i = 0; i < 64; i++) {
            retained.add(new long[16_384]); // 64 x 128 KB = 8 MB of long[] kept alive
        }
        HeapHistogram after = HeapHistogram.take(self);
        assertNotNull(before, "jcmd GC.class_histogram of this JVM");
        assertNotNull(after);
        String growth = HeapHistogram.topGrowth(before, after, 3);
        assertTrue(growth.contains("; ") || growth.contains(": "), growth);
        String first = growth.substring(growth.indexOf(':') + 1).split(";")[0].strip();
        assertTrue(first.matches("\\+\\d+\\.\\d+ MB \\[J \\(\\+\\d+\\)"), "long[] first: " + growth);
        double mb = Double.parseDouble(first.substring(1, first.indexOf(" MB")));
        long instances = Long.parseLong(first.substring(first.indexOf("(+") + 2, first.length() - 1));
        assertTrue(mb >= 8.3 && mb < 10, "64 arrays of 131,088 bytes and the JVM's own: " + growth);
        assertTrue(instances >= 64, growth);
        assertTrue(after.totalBytes() - before.totalBytes() > 8_000_000, growth);
        assertTrue(retained.size() == 64);
    }

    @Test
    void readsJcmdRowsAndSkipsTheHeaderAndTotal() {
        HeapHistogram h = HeapHistogram.parse("""
                12345:
                 num     #instances         #bytes  class name (module)
                -------------------------------------------------------
                   1:          1000         160000  [B (java.base@17.0.9)
                   2:            10            240  java.lang.String (java.base@17.0.9)
                Total          1010         160240
                """);
        assertTrue(h.totalBytes() == 160_240, "rows 1 and 2 only: " + h.totalBytes());
    }

    @Test
    void countsZooKeepersProposalsOfBothKinds() {
        HeapHistogram h = HeapHistogram.parse("""
                   1:           480          11520  org.apache.zookeeper.server.quorum.Leader$PureRequestProposal
                   2:            20            640  org.apache.zookeeper.server.quorum.Leader$Proposal
                   3:           480          38400  org.apache.zookeeper.server.Request
                   4:             1             24  org.apache.zookeeper.server.quorum.Leader$ProposalStats
                """);
        long proposals = h.instances("Leader$PureRequestProposal", "Leader$Proposal");
        assertTrue(proposals == 480 + 20, "both proposal classes, not the stats: " + proposals);
        assertTrue(h.instances("NoSuchClass") == 0);
    }
}
