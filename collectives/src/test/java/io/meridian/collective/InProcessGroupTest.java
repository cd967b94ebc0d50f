package io.meridian.collective;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The shared-region protocol of one group (no MPI: a single group needs none), members as threads each with its
 * own mapping of the region; the MPI and multi-process cases are in the integration tests.
 */
class InProcessGroupTest {
    @TempDir
    Path root;
    private final ExecutorService pool = Executors.newCachedThreadPool();

    @AfterEach
    void stop() {
        pool.shutdownNow();
    }

    private List<TwoLevelCollectives> group(String job, int members, long timeoutMs) {
        long timeout = Duration.ofMillis(timeoutMs).toNanos();
        Path path = RegionFiles.pathOf(root, job, 0);
        SharedRegion created = RegionFiles.create(path, job,
                new RegionShape(0, 1, members, new int[] {0, members}, 64 * 1024, 4096, false));
        List<TwoLevelCollectives> all = new ArrayList<>();
        all.add(new TwoLevelCollectives(created, 0, new GroupLeader(created, LeaderExchange.NONE, timeout, false), timeout, null));
        for (int m = 1; m < members; m++) {
            all.add(new TwoLevelCollectives(RegionFiles.attach(path, job, timeout), m, null, timeout, null));
        }
        return all;
    }

    @Test
    void everyCollectiveAgreesAcrossThreeMembers() throws Exception {
        List<Future<?>> done = new ArrayList<>();
        for (TwoLevelCollectives c : group("threads", 3, 20_000)) {
            done.add(pool.submit(() -> {
                CollectiveChecks.check(c, -1);
                return null;
            }));
        }
        for (Future<?> f : done) {
            f.get(60, TimeUnit.SECONDS);
        }
    }

    @Test
    void aMissingMemberFailsEveryoneWithinTheTimeoutNamingIt() throws Exception {
        List<TwoLevelCollectives> members = group("missing", 3, 500);
        long start = System.nanoTime();
        Future<?> leader = pool.submit(() -> {
            members.get(0).barrier();
            return null;
        });
        Future<?> other = pool.submit(() -> {
            members.get(1).barrier();
            return null;
        });
        // member 2 never calls
        Throwable leaderError = assertThrowsFrom(leader);
        Throwable otherError = assertThrowsFrom(other);
        long elapsedMs = (System.nanoTime() - start) / 1_000_000;
        assertInstanceOf(CollectiveTimeoutException.class, leaderError);
        assertTrue(leaderError.getMessage().contains("timed out after 500 ms waiting for member 2 (block 2, pid "),
                leaderError.getMessage());
        assertEquals(leaderError.getMessage(), otherError.getMessage(), "every member reports the leader's reason");
        assertTrue(elapsedMs < 5_000, "failed after " + elapsedMs + " ms");
    }

    @Test
    void membersDisagreeingOnTheOperationFail() throws Exception {
        List<TwoLevelCollectives> members = group("disagree", 2, 2_000);
        Future<?> leader = pool.submit(() -> {
            members.get(0).barrier();
            return null;
        });
        Future<?> other = pool.submit(() -> {
            members.get(1).allreduce(3, ReduceOp.SUM);
            return null;
        });
        Throwable e = assertThrowsFrom(leader);
        assertTrue(e.getMessage().contains("member 1 called allreduce(double, SUM)"), e.getMessage());
        assertThrowsFrom(other);
    }

    @Test
    void callsAllocateNothing() {
        TwoLevelCollectives only = group("alloc", 1, 20_000).get(0);
        CollectiveBlockSync sync = new CollectiveBlockSync(only);
        double[] local = new double[1000];
        double[] global = new double[1000];
        long[] longs = new long[64];
        int[] counts = {1000};
        int[] displs = {0};
        Runnable round = () -> {
            sync.allgatherv(local, global, counts, displs);
            sync.allreduceSum(local, 64);
            sync.allreduceMax(local, 64);
            sync.allreduceSum(longs, 64);
            sync.broadcast(local, 64, 0);
            sync.barrier();
        };
        for (int i = 0; i < 20_000; i++) {
            round.run(); // warm up: JIT compiled, lazy class init done
        }
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
        long before = threads.getCurrentThreadAllocatedBytes();
        for (int i = 0; i < 10_000; i++) {
            round.run();
        }
        long allocated = threads.getCurrentThreadAllocatedBytes() - before;
        // 60,000 calls: anything per call would show as hundreds of kilobytes
        assertTrue(allocated < 4096, "allocated " + allocated + " bytes in 60,000 calls");
        only.close();
    }

    private static Throwable assertThrowsFrom(Future<?> f) throws Exception {
        try {
            f.get(30, TimeUnit.SECONDS);
        } catch (java.util.concurrent.ExecutionException e) {
            return e.getCause();
        }
        throw new AssertionError("expected a failure");
    }
}
