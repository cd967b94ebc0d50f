package io.meridian.stream.live;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class IdleRoundsTest {
    private static final long MS = TimeUnit.MILLISECONDS.toNanos(1);

    @Test
    void aMapStillWorkingWaitsIdleMsBetweenRounds() {
        IdleRounds idle = new IdleRounds(5, 50);
        for (long t = 0; t < 10_000 * MS; t += 100 * MS) {
            assertEquals(5 * MS, idle.parkNanos(false, t));
        }
    }

    @Test
    void aMapAwaitingRowsWaitsAnEighthOfTheTimeItHasAwaitedThemUpToIdleMaxMs() {
        IdleRounds idle = new IdleRounds(5, 50);
        long start = 1_000 * MS;
        assertEquals(5 * MS, idle.parkNanos(true, start));
        assertEquals(5 * MS, idle.parkNanos(true, start + 40 * MS));
        assertEquals(10 * MS, idle.parkNanos(true, start + 80 * MS));
        assertEquals(25 * MS, idle.parkNanos(true, start + 200 * MS));
        assertEquals(50 * MS, idle.parkNanos(true, start + 400 * MS));
        assertEquals(50 * MS, idle.parkNanos(true, start + 60_000 * MS));
    }

    @Test
    void aRoundWithSomethingToShowOrWorkToDoStartsTheWaitAfresh() {
        IdleRounds idle = new IdleRounds(5, 50);
        idle.parkNanos(true, 0);
        assertEquals(50 * MS, idle.parkNanos(true, 1_000 * MS));
        idle.reset();
        assertEquals(5 * MS, idle.parkNanos(true, 2_000 * MS));
        assertEquals(50 * MS, idle.parkNanos(true, 3_000 * MS));
        assertEquals(5 * MS, idle.parkNanos(false, 3_001 * MS));
        assertEquals(5 * MS, idle.parkNanos(true, 3_002 * MS));
    }

    @Test
    void idleMaxMsBelowIdleMsMeansIdleMs() {
        IdleRounds idle = new IdleRounds(5, 1);
        idle.parkNanos(true, 0);
        assertEquals(5 * MS, idle.parkNanos(true, 1_000 * MS));
    }
}
