package io.meridian.live;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

class BackgroundPriorityTest {
    @Test
    void lowersOnlyTheCallingThread() throws Exception {
        int before = BackgroundPriority.currentNice();
        AtomicReference<Object> seen = new AtomicReference<>();
        Thread t = new Thread(() -> {
            try {
                String failure = BackgroundPriority.lowerCurrentThread();
                seen.set(failure != null ? failure : BackgroundPriority.currentNice());
            } catch (Exception e) {
                seen.set(e);
            }
        });
        t.start();
        t.join();
        assertEquals(19, seen.get(), "the background thread's nice value");
        assertEquals(before, BackgroundPriority.currentNice(), "the calling test thread keeps its own");
    }

    @Test
    void lowersToAGivenNiceNeverRaisesItAndThreadsStartedAfterwardsInheritIt() throws Exception {
        AtomicReference<Object> lowered = new AtomicReference<>();
        AtomicReference<Object> child = new AtomicReference<>();
        AtomicReference<Object> notRaised = new AtomicReference<>();
        Thread t = new Thread(() -> {
            try {
                String failure = BackgroundPriority.lowerCurrentThread(10);
                lowered.set(failure != null ? failure : BackgroundPriority.currentNice());
                Thread c = new Thread(() -> {
                    try {
                        child.set(BackgroundPriority.currentNice());
                    } catch (Exception e) {
                        child.set(e);
                    }
                });
                c.start();
                c.join();
                String again = BackgroundPriority.lowerCurrentThread(5);
                notRaised.set(again != null ? again : BackgroundPriority.currentNice());
            } catch (Exception e) {
                lowered.set(e);
            }
        });
        t.start();
        t.join();
        assertEquals(10, lowered.get(), "the round thread's nice value");
        assertEquals(10, child.get(), "a thread it starts afterwards");
        assertEquals(10, notRaised.get(), "asking for nice 5 afterwards leaves it at 10");
    }

    @Test
    void refusesANiceValueOutsideOneToNineteen() {
        assertThrows(IllegalArgumentException.class,
                () -> BackgroundPriority.lowerCurrentThread(0));
        assertThrows(IllegalArgumentException.class,
                () -> BackgroundPriority.lowerCurrentThread(20));
    }
}
