package io.meridian.transport.mmap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TmpfsBudgetTest {
    private static final long MIB = 1L << 20;

    @Test
    void sendersTogetherNeverTakeMoreThanTheFreeBytesLessTheHeadroom() throws Exception {
        AtomicLong free = new AtomicLong(40 * MIB);
        TmpfsBudget budget = new TmpfsBudget(free::get, 8 * MIB);
        budget.refresh(0);
        // twelve senders in the same 10 ms, each a 1 MiB batch, four times: 32 MiB may be taken, no more
        AtomicInteger taken = new AtomicInteger();
        CountDownLatch start = new CountDownLatch(1);
        Thread[] senders = new Thread[12];
        for (int s = 0; s < senders.length; s++) {
            senders[s] = new Thread(() -> {
                try {
                    start.await();
                } catch (InterruptedException e) {
                    return;
                }
                for (int i = 0; i < 4; i++) {
                    if (budget.take(MIB)) {
                        taken.incrementAndGet();
                    }
                }
            });
            senders[s].start();
        }
        start.countDown();
        for (Thread t : senders) {
            t.join();
        }
        assertEquals(32, taken.get(), "40 MiB free, 8 MiB headroom: 32 batches of 1 MiB");
        assertEquals(0, budget.available());
        assertFalse(budget.take(1));
    }

    @Test
    void aReadOfTheFreeBytesCountsWhatIsTakenButNotYetWritten() {
        AtomicLong free = new AtomicLong(20 * MIB);
        TmpfsBudget budget = new TmpfsBudget(free::get, 8 * MIB);
        budget.refresh(0);
        assertTrue(budget.take(10 * MIB));
        // the pages are not touched yet: the file system still says 20 MiB free
        budget.refresh(TmpfsBudget.CHECK_MILLIS);
        assertEquals(2 * MIB, budget.available(), "20 free - 10 in flight - 8 headroom");
        assertFalse(budget.take(3 * MIB));
        // written: the file system counts them now
        free.set(10 * MIB);
        budget.written(10 * MIB);
        budget.refresh(2 * TmpfsBudget.CHECK_MILLIS);
        assertEquals(2 * MIB, budget.available());
        assertTrue(budget.take(2 * MIB));
        // space freed (consumed cycle files deleted): room again at the next read, not before its interval
        free.set(30 * MIB);
        budget.written(2 * MIB);
        budget.refresh(2 * TmpfsBudget.CHECK_MILLIS + 1);
        assertEquals(0, budget.available(), "read at most every " + TmpfsBudget.CHECK_MILLIS + " ms");
        budget.refresh(3 * TmpfsBudget.CHECK_MILLIS);
        assertEquals(22 * MIB, budget.available());
    }

    @Test
    void anUnreadableFileSystemLeavesTheBudgetUnlimitedAndARealOneIsRead(@TempDir Path dir) {
        TmpfsBudget unknown = new TmpfsBudget(() -> {
            throw new IllegalStateException("statvfs failed");
        }, 8 * MIB);
        unknown.refresh(0);
        assertTrue(unknown.take(1L << 40), "a failed write still falls back");

        TmpfsBudget real = TmpfsBudget.of(dir, 8 * MIB);
        real.refresh(0);
        long available = real.available();
        assertTrue(available > 0 && available < dir.toFile().getUsableSpace(), "read from " + dir + ": " + available);
    }
}
