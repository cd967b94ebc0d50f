package io.meridian.collective;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.DoubleBuffer;
import java.nio.LongBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * One thread leading two groups ({@link LeaderAgent}), members as threads attached as a leader daemon's are. The
 * exchange among the leaders is one that completes only on its third poll, so every call is served through the
 * in-flight state a non-blocking MPI call is in; MPI itself is in LeaderDaemonIT.
 */
class LeaderAgentTest {
    @TempDir
    Path root;
    private final ExecutorService pool = Executors.newCachedThreadPool();

    @AfterEach
    void stop() {
        pool.shutdownNow();
    }

    /** Completes a started call on the third poll; counts the calls started and the polls that found one in flight. */
    private static final class ThirdPoll implements LeaderExchange {
        final AtomicInteger started = new AtomicInteger();
        final AtomicInteger inFlightPolls = new AtomicInteger();
        private int polls = -1;

        private void start() {
            if (polls >= 0) {
                throw new IllegalStateException("two calls in flight");
            }
            started.incrementAndGet();
            polls = 0;
        }

        @Override
        public boolean complete() {
            if (polls < 0) {
                return true;
            }
            if (++polls < 3) {
                inFlightPolls.incrementAndGet();
                return false;
            }
            polls = -1;
            return true;
        }

        @Override
        public void startAllgatherv(DoubleBuffer area, int[] groupCounts, int[] groupDispls) {
            start();
        }

        @Override
        public void startAllreduce(DoubleBuffer area, int count, ReduceOp op) {
            start();
        }

        @Override
        public void startAllreduce(LongBuffer area, int count, ReduceOp op) {
            start();
        }

        @Override
        public void startBroadcast(DoubleBuffer area, int count, int rootGroup) {
            start();
        }

        @Override
        public void startBarrier() {
            start();
        }

        @Override
        public void allgatherv(DoubleBuffer area, int[] groupCounts, int[] groupDispls) {
            throw new AssertionError("a one-thread leader never blocks in the exchange");
        }

        @Override
        public void allreduce(DoubleBuffer area, int count, ReduceOp op) {
            throw new AssertionError("a one-thread leader never blocks in the exchange");
        }

        @Override
        public void allreduce(LongBuffer area, int count, ReduceOp op) {
            throw new AssertionError("a one-thread leader never blocks in the exchange");
        }

        @Override
        public void broadcast(DoubleBuffer area, int count, int rootGroup) {
            throw new AssertionError("a one-thread leader never blocks in the exchange");
        }

        @Override
        public void barrier() {
            throw new AssertionError("a one-thread leader never blocks in the exchange");
        }

        @Override
        public void close() {
        }
    }

    private record Job(SharedRegion region, GroupLeader leader, ThirdPoll exchange, List<TwoLevelCollectives> members) {
    }

    private Job job(String id, int members, long timeoutMs) {
        long timeout = Duration.ofMillis(timeoutMs).toNanos();
        Path path = RegionFiles.pathOf(root, id, 0);
        SharedRegion region = RegionFiles.create(path, id,
                new RegionShape(0, 1, members, new int[] {0, members}, 64 * 1024, 4096, true));
        ThirdPoll exchange = new ThirdPoll();
        GroupLeader leader = new GroupLeader(region, exchange, timeout, false);
        List<TwoLevelCollectives> all = new ArrayList<>();
        for (int m = 0; m < members; m++) {
            all.add(TwoLevelCollectives.attach(id, 0, m, root, Duration.ofMillis(timeoutMs)));
        }
        return new Job(region, leader, exchange, all);
    }

    private Future<?> run(LeaderAgent agent) {
        return pool.submit(() -> {
            agent.run();
            return null;
        });
    }

    @Test
    void oneThreadServesTwoGroupsWhoseMembersCallAtOnceEachCallThroughAnExchangeInFlight() throws Exception {
        Job a = job("agent-a", 3, 20_000);
        Job b = job("agent-b", 2, 20_000);
        LeaderAgent agent = new LeaderAgent(List.of(a.leader(), b.leader()));
        Future<?> serving = run(agent);
        List<Future<?>> done = new ArrayList<>();
        for (Job j : List.of(a, b)) {
            for (TwoLevelCollectives c : j.members()) {
                done.add(pool.submit(() -> {
                    CollectiveChecks.check(c, -1);
                    return null;
                }));
            }
        }
        for (Future<?> f : done) {
            f.get(120, TimeUnit.SECONDS);
        }
        for (Job j : List.of(a, b)) {
            assertTrue(j.exchange().started.get() > 0 && j.exchange().inFlightPolls.get() >= 2 * j.exchange().started
                    .get(), "every call of job " + j.region().jobId + " waited in flight: " + j.exchange().started
                    + " started, " + j.exchange().inFlightPolls + " polls in flight");
        }
        a.region().markClosed();
        agent.interrupt();
        ExecutionException closed = org.junit.jupiter.api.Assertions.assertThrows(ExecutionException.class,
                () -> serving.get(10, TimeUnit.SECONDS));
        assertInstanceOf(CollectiveException.class, closed.getCause(), "a closed region ends the agent's run");
        agent.closeBells();
    }

    @Test
    void anIdleAgentSleepsOnBothDoorbellsAndAMemberOfEitherGroupWakesIt() throws Exception {
        Job a = job("sleep-a", 1, 20_000);
        Job b = job("sleep-b", 1, 20_000);
        LeaderAgent agent = new LeaderAgent(List.of(a.leader(), b.leader()));
        assertTrue(Files.exists(a.region().bellPath()) && Files.exists(b.region().bellPath()), "a doorbell per region");
        Future<?> serving = run(agent);
        for (Job j : List.of(b, a, b)) {
            Thread.sleep(300); // idle: the agent sleeps on the shared selector (it checks liveness every 100 ms)
            long start = System.nanoTime();
            pool.submit(() -> {
                j.members().get(0).barrier();
                return null;
            }).get(10, TimeUnit.SECONDS);
            long tookMs = (System.nanoTime() - start) / 1_000_000;
            assertTrue(tookMs < 80, "a barrier of job " + j.region().jobId + " after idling took " + tookMs
                    + " ms: the ring did not wake the agent (it wakes every 100 ms anyway)");
        }
        Thread.sleep(300); // a ring's byte is read at the selector's next wait: the connection woke it first
        assertTrue(agent.rings() >= 3, "each member rang the shared selector once it slept: " + agent.rings());
        assertEquals(2, b.region().released());
        assertEquals(1, a.region().released());
        b.region().markClosed();
        agent.interrupt();
        org.junit.jupiter.api.Assertions.assertThrows(ExecutionException.class, () -> serving.get(10, TimeUnit.SECONDS));
        agent.closeBells();
        assertTrue(!Files.exists(a.region().bellPath()) && !Files.exists(b.region().bellPath()), "doorbells deleted");
    }

    @Test
    void aMissingMemberOfOneGroupFailsThatGroupNamingItWhileTheOtherGroupGoesOn() throws Exception {
        Job a = job("fail-a", 2, 20_000);
        Job b = job("fail-b", 2, 500);
        LeaderAgent agent = new LeaderAgent(List.of(a.leader(), b.leader()));
        Future<?> serving = run(agent);
        Future<?> waiting = pool.submit(() -> {
            b.members().get(0).barrier(); // member 1 of job b never calls
            return null;
        });
        List<Future<?>> others = new ArrayList<>();
        for (TwoLevelCollectives c : a.members()) {
            others.add(pool.submit(() -> {
                for (int i = 0; i < 50; i++) {
                    c.barrier();
                }
                return null;
            }));
        }
        for (Future<?> f : others) {
            f.get(10, TimeUnit.SECONDS); // served while job b's call waits for its missing member
        }
        ExecutionException failed = org.junit.jupiter.api.Assertions.assertThrows(ExecutionException.class,
                () -> waiting.get(10, TimeUnit.SECONDS));
        assertTrue(failed.getCause().getMessage().contains("timed out after 500 ms waiting for member 1 (block 1, pid "),
                failed.getCause().getMessage());
        ExecutionException agentFailed = org.junit.jupiter.api.Assertions.assertThrows(ExecutionException.class,
                () -> serving.get(10, TimeUnit.SECONDS));
        // the leader's timeout or the waiting member's, whichever came first, failed the region
        assertInstanceOf(CollectiveException.class, agentFailed.getCause());
        assertEquals(RegionDescriptor.STATE_FAILED, b.region().state());
        assertEquals(RegionDescriptor.STATE_READY, a.region().state(), "the other group's region is the daemon's to fail");
        assertEquals(50, a.region().released(), "job a's calls were all served meanwhile");
        agent.closeBells();
    }
}
