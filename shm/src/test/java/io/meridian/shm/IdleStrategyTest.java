package io.meridian.shm;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.management.ManagementFactory;
import org.junit.jupiter.api.Test;

class IdleStrategyTest {
    @Test
    void backoffGivesTheCpuAwayWhenIdle() throws Exception {
        com.sun.management.ThreadMXBean mx = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long[] cpu = new long[1];
        Thread t = new Thread(() -> {
            IdleStrategy idle = new IdleStrategy.Backoff(200_000);
            long start = mx.getCurrentThreadCpuTime();
            long end = System.nanoTime() + 500_000_000L;
            while (System.nanoTime() < end) {
                idle.idle(0);
            }
            cpu[0] = mx.getCurrentThreadCpuTime() - start;
        });
        t.start();
        t.join();
        // a busy-spinning poller would burn the whole 500 ms; parking at up to 200 us costs a few percent
        assertTrue(cpu[0] < 100_000_000L, "an idle back-off loop used " + cpu[0] / 1_000_000 + " ms of CPU in 500 ms");
    }

    @Test
    void theCollectivesBackoffIsAnIdleStrategyThatResetsOnWork() throws Exception {
        IdleStrategy idle = new ProportionalBackoff(1_000_000);
        long start = System.nanoTime();
        for (int i = 0; i < 1000; i++) {
            idle.idle(0); // past the spins and yields it parks, for longer the longer it has waited
        }
        long waited = System.nanoTime() - start;
        assertTrue(waited > 1_000_000L, "1000 idle calls returned after " + waited + " ns: they never parked");
        idle.idle(1); // work done: the next wait starts with spins again
        long t0 = System.nanoTime();
        for (int i = 0; i < 100; i++) {
            idle.idle(0);
        }
        assertTrue(System.nanoTime() - t0 < waited, "after work the first waits are spins, not parks");
    }

    @Test
    void waitersSkipTheSpinsWhenOpenMpiIsToldToYield() {
        assertFalse(ProportionalBackoff.yieldWhenIdle(null, null), "not launched by mpirun: spin");
        assertTrue(ProportionalBackoff.yieldWhenIdle("1", null), "mpirun --mca mpi_yield_when_idle 1 yields");
        assertTrue(ProportionalBackoff.yieldWhenIdle(" true ", "0"), "mpi_yield_when_idle decides over the rest");
        assertFalse(ProportionalBackoff.yieldWhenIdle("0", "1"), "mpi_yield_when_idle 0 decides over the rest");
        assertTrue(ProportionalBackoff.yieldWhenIdle(null, "1"), "a node mpirun oversubscribed yields");
        assertFalse(ProportionalBackoff.yieldWhenIdle(" ", "0"), "mpirun's word that the node has the slots");
    }

    @Test
    void aBackoffWithoutSpinsYieldsFromItsFirstPoll() {
        // idle() asks for the slow checks every 64th spin and every 16th yield: poll 16 tells the phases apart
        ProportionalBackoff spinning = new ProportionalBackoff(1_000_000, true);
        ProportionalBackoff yielding = new ProportionalBackoff(1_000_000, false);
        for (int i = 0; i < 15; i++) {
            spinning.idle();
            yielding.idle();
        }
        assertFalse(spinning.idle(), "poll 16 of a spinning back-off is a spin");
        assertTrue(yielding.idle(), "poll 16 of a back-off without spins is a yield");
    }
}
