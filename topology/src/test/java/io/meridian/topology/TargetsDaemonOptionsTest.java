package io.meridian.topology;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import org.junit.jupiter.api.Test;

/** The targets daemon's own options (its probe's), taken out before the Nimbus poller's. */
class TargetsDaemonOptionsTest {
    @Test
    void readsTheMetricsAddressAndTheBrokersAndLeavesTheRest() {
        TargetsDaemon.ProbeOptions o = TargetsDaemon.ProbeOptions.parse(new String[] {"--out", "d", "--metrics",
                "127.0.0.1:9098", "--interval", "5", "--kafka", "k1:9092,k2:9092"});
        assertEquals("127.0.0.1", o.metricsHost());
        assertEquals(9098, o.metricsPort());
        assertEquals(List.of("k1:9092", "k2:9092"), o.kafka());
        assertArrayEquals(new String[] {"--out", "d", "--interval", "5"}, o.rest());
        TargetsDaemon.ProbeOptions none = TargetsDaemon.ProbeOptions.parse(new String[] {"--out", "d"});
        assertNull(none.metricsHost(), "no --metrics: no probe");
        TargetsDaemon.ProbeOptions v6 = TargetsDaemon.ProbeOptions.parse(new String[] {"--metrics", "[::]:9098"});
        assertEquals("::", v6.metricsHost(), "the IPv6 wildcard meridian-cluster accepts");
        assertEquals(9098, v6.metricsPort());
    }

    @Test
    void aBadValueNamesTheOptionAndWhy() {
        assertEquals("--metrics wants HOST:PORT ([IPV6]:PORT for an IPv6 address), not '9098'",
                refused("--metrics", "9098"));
        assertEquals("--metrics wants HOST:PORT ([IPV6]:PORT for an IPv6 address), not '::1:9098'",
                refused("--metrics", "::1:9098"));
        assertEquals("kafka address wants HOST:PORT, not 'k1'", refused("--kafka", "k1"));
        assertEquals("option --kafka needs a value", refused("--out", "d", "--kafka"));
    }

    private static String refused(String... args) {
        return assertThrows(IllegalArgumentException.class, () -> TargetsDaemon.ProbeOptions.parse(args)).getMessage();
    }
}
