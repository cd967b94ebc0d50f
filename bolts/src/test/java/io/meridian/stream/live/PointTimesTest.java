package io.meridian.stream.live;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerArray;
import org.junit.jupiter.api.Test;

class PointTimesTest {
    private static final int POINTS = 4000;

    @Test
    void timesAtACapacityOfOneMillionCostWhatTheyCostAt8192() {
        long small = allocatedToStore(8192);
        long large = allocatedToStore(1_000_000);
        System.out.printf("the live map bolt's times of %d points: capacity 8192 %d bytes, 1,000,000 %d bytes%n",
                POINTS, small, large);
        // 4 pages of 1024 ids (20 KB each) either way; the directory of 977 references is the difference
        assertTrue(large < small + 8 * 1024, "capacity 1,000,000: " + large + " bytes, 8192: " + small);
        assertTrue(large < 128 * 1024, "capacity 1,000,000: " + large + " bytes (sized for it: 20 MB)");
    }

    private static long allocatedToStore(int capacity) {
        com.sun.management.ThreadMXBean mx = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long before = mx.getCurrentThreadAllocatedBytes();
        PointTimes times = new PointTimes(capacity);
        for (int id = 0; id < POINTS; id++) {
            times.stored(id, 1000 + id, 2000 + id);
        }
        long allocated = mx.getCurrentThreadAllocatedBytes() - before;
        assertEquals(4, times.pagesMade());
        for (int id = 0; id < POINTS; id++) {
            assertEquals(1000 + id, times.publishedAt(id));
            assertEquals(2000 + id, times.storedAt(id));
        }
        assertEquals(0, times.storedAt(POINTS), "not stored");
        assertEquals(0, times.storedAt(capacity - 1), "not stored, and no page for it");
        return allocated;
    }

    @Test
    void aPointIsShownOnceAndOnlyOnceItIsStored() {
        PointTimes times = new PointTimes(1_000_000);
        assertFalse(times.firstShown(500_000), "not stored: nothing to record");
        times.stored(500_000, 1, 2);
        assertTrue(times.firstShown(500_000));
        assertFalse(times.firstShown(500_000));
        assertEquals(1, times.pagesMade());
    }

    /**
     * The execute thread stores rows while the round and arrival threads read them and mark them shown: a reader never
     * sees a stored time without its publish time, and each point is shown exactly once.
     */
    @Test
    void readersOnOtherThreadsSeeWholeRecordsAndShowEachPointOnce() throws Exception {
        int n = 200_000;
        PointTimes times = new PointTimes(1_000_000);
        AtomicIntegerArray shownBy = new AtomicIntegerArray(n);
        ExecutorService pool = Executors.newFixedThreadPool(3);
        try {
            List<Future<Integer>> readers = new ArrayList<>();
            for (int r = 0; r < 2; r++) {
                readers.add(pool.submit(() -> {
                    int shown = 0;
                    int id = 0;
                    while (id < n) {
                        long stored = times.storedAt(id);
                        if (stored == 0) {
                            Thread.onSpinWait();
                            continue;
                        }
                        assertEquals(stored - 1, times.publishedAt(id), "id " + id);
                        if (times.firstShown(id)) {
                            shownBy.incrementAndGet(id);
                            shown++;
                        }
                        id++;
                    }
                    return shown;
                }));
            }
            Future<?> writer = pool.submit(() -> {
                for (int id = 0; id < n; id++) {
                    times.stored(id, 10L + id, 11L + id);
                }
            });
            writer.get(60, TimeUnit.SECONDS);
            int shown = 0;
            for (Future<Integer> r : readers) {
                shown += r.get(60, TimeUnit.SECONDS);
            }
            assertEquals(n, shown, "every point shown once");
            for (int id = 0; id < n; id++) {
                assertEquals(1, shownBy.get(id), "id " + id);
            }
        } finally {
            pool.shutdownNow();
        }
    }
}
