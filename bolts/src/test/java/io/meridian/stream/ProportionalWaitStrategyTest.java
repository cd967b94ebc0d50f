package io.meridian.stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashMap;
import java.util.Map;
import org.apache.storm.Config;
import org.apache.storm.policy.IWaitStrategy.WaitSituation;
import org.junit.jupiter.api.Test;

class ProportionalWaitStrategyTest {

    @Test
    void aParkIsAnEighthOfTheIdleTimeBetweenTheFirstParkAndTheCap() {
        ProportionalWaitStrategy wait = new ProportionalWaitStrategy();
        wait.configure(1_000_000L, 10_000_000L);
        assertEquals(1_000_000L, wait.parkNanos(0));
        assertEquals(1_000_000L, wait.parkNanos(8_000_000L));
        assertEquals(5_000_000L, wait.parkNanos(40_000_000L));
        assertEquals(10_000_000L, wait.parkNanos(80_000_000L));
        assertEquals(10_000_000L, wait.parkNanos(60_000_000_000L));
    }

    @Test
    void theFirstIdleCallReturnsAtOnceAndLaterOnesCount() {
        ProportionalWaitStrategy wait = new ProportionalWaitStrategy();
        wait.prepare(new HashMap<>(), WaitSituation.BOLT_WAIT);
        int counter = wait.idle(0);
        assertEquals(1, counter);
        counter = wait.idle(counter);
        assertEquals(2, counter);
        assertEquals(Integer.MAX_VALUE, wait.idle(Integer.MAX_VALUE), "the counter must not wrap to 0, which means 'just got work'");
    }

    @Test
    void eachSituationStartsFromItsOwnStormParkSetting() {
        Map<String, Object> conf = new HashMap<>();
        conf.put(Config.TOPOLOGY_BOLT_WAIT_PARK_MICROSEC, 1000);
        conf.put(Config.TOPOLOGY_SPOUT_WAIT_PARK_MICROSEC, 100);
        conf.put(ProportionalWaitStrategy.MAX_PARK_MS_PROP, 4);
        ProportionalWaitStrategy bolt = new ProportionalWaitStrategy();
        bolt.prepare(conf, WaitSituation.BOLT_WAIT);
        ProportionalWaitStrategy spout = new ProportionalWaitStrategy();
        spout.prepare(conf, WaitSituation.SPOUT_WAIT);
        assertEquals(1_000_000L, bolt.parkNanos(0));
        assertEquals(100_000L, spout.parkNanos(0));
        assertEquals(4_000_000L, bolt.parkNanos(1_000_000_000L));
        assertEquals(1_000_000L, spout.parkNanos(1_000_000_000L), "a spout waits for acks with it too: capped at 1 ms");
        conf.put(ProportionalWaitStrategy.SPOUT_MAX_PARK_US_PROP, 500);
        spout.prepare(conf, WaitSituation.SPOUT_WAIT);
        assertEquals(500_000L, spout.parkNanos(1_000_000_000L));
    }

    @Test
    void aBadSettingNamesItsKey() {
        Map<String, Object> conf = new HashMap<>();
        conf.put(ProportionalWaitStrategy.MAX_PARK_MS_PROP, 0);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
            () -> new ProportionalWaitStrategy().prepare(conf, WaitSituation.BOLT_WAIT));
        assertTrue(e.getMessage().contains(ProportionalWaitStrategy.MAX_PARK_MS_PROP), e.getMessage());
        conf.clear();
        conf.put(Config.TOPOLOGY_SPOUT_WAIT_PARK_MICROSEC, -5);
        e = assertThrows(IllegalArgumentException.class, () -> new ProportionalWaitStrategy().prepare(conf, WaitSituation.SPOUT_WAIT));
        assertTrue(e.getMessage().contains(Config.TOPOLOGY_SPOUT_WAIT_PARK_MICROSEC), e.getMessage());
    }
}
