package io.meridian.stream.live;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.meridian.collective.CollectiveException;
import io.meridian.shm.ShmFullException;
import io.meridian.shm.TmpfsSpace;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** The live map's wait before it re-forms after a full tmpfs, and what it takes for a full tmpfs. */
class ShmBackoffTest {
    @Test
    void doublesFromHalfASecondToEightAndStartsAgainOnceAGenerationFormed() {
        ShmBackoff b = new ShmBackoff(() -> -1);
        long[] waits = new long[7];
        for (int i = 0; i < waits.length; i++) {
            waits[i] = b.next(0);
        }
        assertEquals("[500, 1000, 2000, 4000, 8000, 8000, 8000]", java.util.Arrays.toString(waits));
        b.reset();
        assertEquals(500, b.next(0));
    }

    @Test
    void parksWhatNextSaidOnceAndNothingAfterASuccess() {
        ShmBackoff b = new ShmBackoff(() -> -1);
        b.next(0);
        long t0 = System.nanoTime();
        b.park(() -> false);
        long waitedMs = (System.nanoTime() - t0) / 1_000_000;
        assertTrue(waitedMs >= 500 && waitedMs < 2000, "waited " + waitedMs + " ms");
        t0 = System.nanoTime();
        b.park(() -> false);
        assertTrue((System.nanoTime() - t0) / 1_000_000 < 100, "no second wait for the same failure");
        b.next(0);
        t0 = System.nanoTime();
        b.park(() -> true);
        assertTrue((System.nanoTime() - t0) / 1_000_000 < 100, "a stopping bolt does not wait");
    }

    @Test
    void triesAgainAsSoonAsTheTmpfsHasAMegabyteMoreThanAtTheFailure() {
        java.util.concurrent.atomic.AtomicLong free = new java.util.concurrent.atomic.AtomicLong(4096);
        ShmBackoff b = new ShmBackoff(free::get);
        b.next(4096);
        b.next(4096);
        b.next(4096);
        assertEquals(4000, b.next(4096));
        new Thread(() -> {
            java.util.concurrent.locks.LockSupport.parkNanos(300_000_000L);
            free.set(4096 + ShmBackoff.ROOM_BACK_BYTES);
        }).start();
        long t0 = System.nanoTime();
        b.park(() -> false);
        long waitedMs = (System.nanoTime() - t0) / 1_000_000;
        assertTrue(waitedMs >= 250 && waitedMs < 2000, "waited " + waitedMs + " ms of 4000: the room came back at 300");
    }

    @Test
    void aFullTmpfsIsFoundBehindTheRegionsCreationAndBehindAFaultedWrite() {
        Path region = Path.of("/dev/shm/meridian-test/job/group-0.region");
        ShmFullException refused = TmpfsSpace.full(region, 4096, null);
        assertSame(refused, LiveMapBolt.shmFull(new UncheckedIOException("cannot create region " + region,
                refused), region));
        InternalError fault = new InternalError("a fault occurred in a recent unsafe memory access operation in"
                + " compiled Java code");
        ShmFullException named = LiveMapBolt.shmFull(new CollectiveException("live map: DA-PWC failed", fault), region);
        assertTrue(named != null && named.getMessage().contains("a write into " + region + " faulted"),
                String.valueOf(named));
        assertEquals(null, LiveMapBolt.shmFull(new CollectiveException("task 3 is gone"), region));
    }
}
