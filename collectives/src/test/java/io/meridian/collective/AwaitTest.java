package io.meridian.collective;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.meridian.shm.ProportionalBackoff;
import org.junit.jupiter.api.Test;

/** The wait loop's order of checks against a clock the test moves (1 ms per reading). */
class AwaitTest {
    private static final long STEP_NANOS = 1_000_000;

    /** Met after {@code metAfterPolls} polls; counts the checks; throws what the test arms. */
    private static final class Probe implements Await.Condition {
        final long metAfterPolls;
        long metAfterSlowPasses = Long.MAX_VALUE;
        long polls;
        int stateChecks;
        int livenessChecks;
        long timedOutWith = -1;
        RuntimeException stateFailure;
        RuntimeException livenessFailure;

        Probe(long metAfterPolls) {
            this.metAfterPolls = metAfterPolls;
        }

        @Override
        public boolean met() {
            return ++polls > metAfterPolls || stateChecks >= metAfterSlowPasses;
        }

        @Override
        public void checkState() {
            stateChecks++;
            if (stateFailure != null) {
                throw stateFailure;
            }
        }

        @Override
        public void checkLiveness() {
            livenessChecks++;
            if (livenessFailure != null) {
                throw livenessFailure;
            }
        }

        @Override
        public RuntimeException timedOut(long timeoutNanos) {
            timedOutWith = timeoutNanos;
            return new CollectiveTimeoutException("timed out after " + timeoutNanos);
        }
    }

    private final long[] now = {0};
    /** Spins, then yields, then parks (for real): slow passes come ever more often, each reading the clock. */
    private final Await await = new Await(new ProportionalBackoff(1_000, true), () -> now[0] += STEP_NANOS);

    @Test
    void aConditionMetAtOnceReturnsWithoutAnyCheck() {
        Probe probe = new Probe(0);
        await.until(probe, 0);
        assertEquals(1, probe.polls);
        assertEquals(0, probe.stateChecks);
        assertEquals(0, probe.livenessChecks);
        assertEquals(0, now[0], "the clock is not even read");
    }

    @Test
    void theDeadlineThrowsTheConditionsTimeoutAfterTheLivenessChecksItsTimeAllowed() {
        Probe probe = new Probe(Long.MAX_VALUE);
        long timeout = 350 * STEP_NANOS;
        RuntimeException thrown = assertThrows(CollectiveTimeoutException.class, () -> await.until(probe, timeout));
        assertEquals("timed out after " + timeout, thrown.getMessage());
        assertEquals(timeout, probe.timedOutWith);
        // one clock reading at the start, one per slow pass: the deadline passes at the 351st slow pass
        assertEquals(351, probe.stateChecks);
        // a liveness check every 100 ms of the clock, after the first 100 ms
        assertEquals(3, probe.livenessChecks);
    }

    @Test
    void aFailedStateEndsTheWaitAtTheFirstSlowPass() {
        Probe probe = new Probe(Long.MAX_VALUE);
        probe.stateFailure = new CollectiveException("the leader stopped");
        RuntimeException thrown = assertThrows(CollectiveException.class, () -> await.until(probe, Await.NO_TIMEOUT));
        assertSame(probe.stateFailure, thrown);
        assertEquals(1, probe.stateChecks);
        assertEquals(0, probe.livenessChecks);
    }

    @Test
    void aDeadProcessEndsTheWaitAtTheFirstLivenessCheck() {
        Probe probe = new Probe(Long.MAX_VALUE);
        probe.livenessFailure = new CollectiveException("member 1 is gone");
        RuntimeException thrown = assertThrows(CollectiveException.class, () -> await.until(probe, Await.NO_TIMEOUT));
        assertSame(probe.livenessFailure, thrown);
        assertEquals(1, probe.livenessChecks);
        assertEquals(101, probe.stateChecks, "the liveness check comes 100 ms of the clock after the start");
    }

    @Test
    void withoutATimeoutTheWaitLastsUntilTheConditionIsMet() {
        Probe probe = new Probe(Long.MAX_VALUE);
        probe.metAfterSlowPasses = 2_000; // 2 s of the clock
        await.until(probe, Await.NO_TIMEOUT);
        assertEquals(2_000, probe.stateChecks);
        assertEquals(-1, probe.timedOutWith);
        assertEquals(19, probe.livenessChecks, "every 101 ms of the clock (100 ms, then the next slow pass)");
    }
}
