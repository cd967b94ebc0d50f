package io.meridian.live;

import static org.junit.jupiter.api.Assertions.assertEquals;

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
}
