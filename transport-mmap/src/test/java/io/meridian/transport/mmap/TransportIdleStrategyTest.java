package io.meridian.transport.mmap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.meridian.shm.IdleStrategy;
import java.nio.file.Path;
import java.util.Map;
import org.apache.storm.messaging.IConnection;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The transport's choice of idle strategy, and delivery under each (the strategies themselves: shm). */
class TransportIdleStrategyTest {
    @TempDir
    Path dir;

    @ParameterizedTest
    @ValueSource(strings = {"backoff", "yield", "spin"})
    void everyIdleStrategyDelivers(String idle) throws Exception {
        Map<String, Object> conf = Map.of(TransportConfig.IDLE, idle);
        try (TestWorker a = new TestWorker(dir, TestWorker.freePort(), conf).bind("idle");
             TestWorker b = new TestWorker(dir, TestWorker.freePort(), conf).bind("idle")) {
            IConnection c = a.connect("idle", b.port);
            for (int i = 0; i < 5; i++) {
                c.send(TestWorker.messages(i * 100, 100, 100, 3).iterator());
                Thread.sleep(20); // let the reader go idle in between
            }
            TestWorker.await("all", () -> b.received() == 500);
            c.close();
        }
    }

    @Test
    void configPicksTheStrategyAndRejectsUnknownOnes() {
        assertInstanceOf(IdleStrategy.Backoff.class, TransportConfig.from(Map.of()).newIdleStrategy());
        assertInstanceOf(IdleStrategy.Yield.class, TransportConfig.from(Map.of(TransportConfig.IDLE, "yield")).newIdleStrategy());
        assertInstanceOf(IdleStrategy.Spin.class, TransportConfig.from(Map.of(TransportConfig.IDLE, "SPIN")).newIdleStrategy());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
            () -> TransportConfig.from(Map.of(TransportConfig.IDLE, "nap")));
        assertEquals("meridian.transport.idle must be backoff, yield or spin, got 'nap'", e.getMessage());
        IllegalArgumentException lag = assertThrows(IllegalArgumentException.class,
            () -> TransportConfig.from(Map.of(TransportConfig.MAX_LAG_MESSAGES, "lots")));
        assertEquals("meridian.transport.max.lag.messages must be a non-negative whole number, got 'lots'", lag.getMessage());
    }
}
