package io.meridian.perf.soak;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.meridian.perf.Figures;
import java.awt.image.BufferedImage;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.Test;

/**
 * CI's soak (issue 33): {@code ./meridian bench soak --minutes 3} on the real single-host cluster with the live map on,
 * with the 30-minute run's assertions on trend and accounting. The rate is given rather than measured in the run (the
 * short ingest measurement takes 3 minutes more with its cluster start and stop, and the whole test must stay under 6).
 */
class SoakClusterIT {
    /**
     * Records/s. Not 80 % of the sustained ingest rate: bench soak's own measurement gave 102,000-106,000 replays/s
     * of 3 KB rows read from a filled topic, which on 2 shared cores cannot be produced while the topology reads, and
     * would write 46 GB to Kafka in 3 minutes (docs/reliability.md, Soak). At 2000 the stream still replays every
     * point about 120 times and dead-letters 360 malformed records.
     */
    private static final double RATE = 2000;

    @Test
    void threeMinutesAtTheSoakRateKeepTheTrendFlatAndAccountForEveryRow() throws Exception {
        Path home = Path.of(System.getenv().getOrDefault("MERIDIAN_HOME", "..")).toAbsolutePath().normalize();
        Path out = home.resolve("perf/target/soak-it-" + System.currentTimeMillis());
        Figures f = SoakBench.soak(home, out, new SoakRun.Options(3000, RATE, 3, 6, 200, 300, 120, 1));
        System.out.println("IT: " + f.toJson());

        assertEquals(31, ((Number) f.get("samples")).intValue(), "a sample every 6 s over 3 minutes, both ends");
        @SuppressWarnings("unchecked")
        Map<String, Object> accounting = (Map<String, Object>) f.get("accounting");
        assertEquals(accounting.get("offered"), accounting.get("topic_records"), "every acknowledged record in the"
                + " topic, none twice: " + accounting);
        assertEquals(accounting.get("offered_points"), accounting.get("stored"), "every point stored: " + accounting);
        assertEquals(accounting.get("offered_malformed"), accounting.get("dead_lettered"), accounting.toString());
        assertTrue(((Number) accounting.get("offered_malformed")).longValue() > 0, "the malformed path ran");
        @SuppressWarnings("unchecked")
        Map<String, Object> goals = (Map<String, Object>) f.get("goals");
        // every goal but memory_flat, whose RSS half is not yet reliable in 3 minutes (docs/reliability.md, Soak:
        // RSS +9.1 % and +6.0 % between the full collections in one run, live heaps +4.0 % and +3.7 %); the live heap
        // half is asserted alone below
        for (Map.Entry<String, Object> goal : goals.entrySet()) {
            if (!goal.getKey().equals("memory_flat")) {
                assertEquals(Boolean.TRUE, goal.getValue(), goal.getKey() + ": " + f.toJson());
            }
        }
        @SuppressWarnings("unchecked")
        Map<String, Map<String, Object>> jvms = (Map<String, Map<String, Object>>) f.get("jvms");
        for (Map.Entry<String, Map<String, Object>> jvm : jvms.entrySet()) {
            if (jvm.getKey().startsWith("worker")) {
                double live = ((Number) jvm.getValue().get("live_heap_growth")).doubleValue();
                assertTrue(live < SoakTrend.MAX_GROWTH, jvm.getKey() + " live heap grew " + live);
            }
        }
        BufferedImage plot = ImageIO.read(Path.of((String) f.get("plot")).toFile());
        assertTrue(plot.getWidth() > 0 && Files.size(Path.of((String) f.get("plot"))) > 10_000, "a drawn plot");
        assertTrue(Files.readString(Path.of((String) f.get("json"))).strip().equals(f.toJson()));
    }
}
