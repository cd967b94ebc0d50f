package io.meridian.perf.soak;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.meridian.metrics.MetricSamples;
import io.meridian.perf.Figures;
import java.awt.image.BufferedImage;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.ToDoubleFunction;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SoakTrendTest {
    private static final double RUN = 600;

    /** A run of 60 samples, 10 s apart, whose worker RSS follows {@code rss(t)} and threads {@code threads(t)}. */
    private static List<SoakSample> run(java.util.function.DoubleUnaryOperator rss,
                                        java.util.function.DoubleUnaryOperator threads, double placementsPerSample,
                                        double lateSlowdown) {
        List<SoakSample> out = new ArrayList<>();
        double fast = 0;
        double slow = 0;
        for (int k = 0; k <= 60; k++) {
            double t = 10 * k;
            ProcStats p = new ProcStats((long) rss.applyAsDouble(t), 0, (int) threads.applyAsDouble(t), 50, 400);
            // placements land in the 10 ms bucket, or (late in the run, when slowed) in the 1 s one
            if (t > RUN * 5 / 6 && lateSlowdown > 0) {
                slow += placementsPerSample;
            } else {
                fast += placementsPerSample;
            }
            out.add(new SoakSample(t, Map.of("worker-6700", new SoakSample.Jvm(1, p, 1e8)), 3, 1 << 20, 0, 4, 1 << 22,
                    0, buckets(fast, slow), 100 * k, 1000 * k, k >= 10 && k <= 12 || k >= 58));
        }
        return out;
    }

    private static MetricSamples buckets(double fast, double slow) {
        return MetricSamples.of(List.of(bucket("0.01", fast), bucket("1.0", fast + slow),
                bucket("+Inf", fast + slow)));
    }

    private static MetricSamples.Sample bucket(String le, double count) {
        return new MetricSamples.Sample(SoakTrend.PLACEMENT + "_bucket", Map.of("le", le), count);
    }

    @Test
    void aSteadyRunIsFlatAndALeakIsNot() {
        List<SoakSample> steady = run(t -> 5e8 + (t < 100 ? 1e8 * t / 100 : 1e8), t -> 60, 10, 0);
        SoakTrend trend = new SoakTrend(steady, RUN);
        ToDoubleFunction<SoakSample> rss = s -> s.jvms().get("worker-6700").proc().rssBytes();
        assertEquals(0, trend.growth(rss), 1e-12, "warm-up growth (first T/6) does not count");
        assertTrue(trend.flat(s -> s.jvms().get("worker-6700").proc().threads()));

        // 0.1 MB a second: medians 515 MB early (t = 150 s) against 555 MB late (t = 550 s), 7.8 %
        SoakTrend leaking = new SoakTrend(run(t -> 5e8 + 1e5 * t, t -> 60 + t / 50, 10, 0), RUN);
        assertEquals(555.0 / 515 - 1, leaking.growth(rss), 1e-9);
        assertTrue(leaking.growth(rss) > SoakTrend.MAX_GROWTH);
        assertEquals(558.0 / 510 - 1, leaking.growthBetweenFullCollections(rss), 1e-9,
                "the least after the full collections: t = 100 s against 580 s");
        assertFalse(leaking.flat(s -> s.jvms().get("worker-6700").proc().threads()));
    }

    @Test
    void rowsInFlightAtOneFullCollectionDoNotReadAsGrowth() {
        // a flat 500 MB, with 50 MB more at t = 600 s (rows in flight when that collection ran): the floor is flat
        SoakTrend spiky = new SoakTrend(run(t -> t == 600 ? 5.5e8 : 5e8, t -> 60, 10, 0), RUN);
        ToDoubleFunction<SoakSample> rss = s -> s.jvms().get("worker-6700").proc().rssBytes();
        assertEquals(0, spiky.growthBetweenFullCollections(rss), 1e-12);
        // the same 50 MB held from t = 580 s on is growth
        SoakTrend grown = new SoakTrend(run(t -> t >= 580 ? 5.5e8 : 5e8, t -> 60, 10, 0), RUN);
        assertEquals(0.1, grown.growthBetweenFullCollections(rss), 1e-12);
    }

    @Test
    void placementQuantilesComeFromTheBucketsCountedInsideEachWindow() {
        SoakTrend steady = new SoakTrend(run(t -> 5e8, t -> 60, 10, 0), RUN);
        double early = steady.placementQuantile(0.99, steady.earlyFrom(), steady.earlyTo());
        double late = steady.placementQuantile(0.99, steady.lateFrom(), Double.MAX_VALUE);
        assertTrue(early <= 0.01 && late <= 0.01, early + " " + late);
        assertEquals(100, steady.placements(steady.earlyFrom(), steady.earlyTo()), "10 intervals of 10 placements");

        SoakTrend slowed = new SoakTrend(run(t -> 5e8, t -> 60, 10, 1), RUN);
        double slowLate = slowed.placementQuantile(0.99, slowed.lateFrom(), Double.MAX_VALUE);
        assertTrue(slowLate > 0.5, "the late window's placements all took 10 ms - 1 s: " + slowLate);
        assertTrue(slowLate > SoakTrend.P99_SLACK * slowed.placementQuantile(0.99, slowed.earlyFrom(),
                slowed.earlyTo()));
    }

    /** memory_flat binds every JVM: a daemon whose RSS grows fails it, as a worker's would; flat ones hold it. */
    @Test
    void memoryFlatJudgesTheDaemonsAsTheWorkers() {
        SoakRun.Options options = new SoakRun.Options(1000, 100, 10, 10, 100, 10, 5, 1);
        Figures flat = new Figures("soak");
        SoakBench.judge(result(daemonRss -> 3e8), options, flat);
        assertEquals(Boolean.TRUE, goals(flat).get("memory_flat"), flat.toJson());

        // ZooKeeper's RSS up 10 % from t = 300 s on, its live heap and every worker flat
        Figures grown = new Figures("soak");
        SoakBench.judge(result(t -> t >= 300 ? 3.3e8 : 3e8), options, grown);
        assertEquals(Boolean.FALSE, goals(grown).get("memory_flat"), grown.toJson());
        @SuppressWarnings("unchecked")
        Map<String, Map<String, Object>> jvms = (Map<String, Map<String, Object>>) grown.get("jvms");
        assertEquals(Boolean.FALSE, jvms.get("zookeeper").get("memory_flat"));
        assertEquals(Boolean.TRUE, jvms.get("worker-6700").get("memory_flat"));
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> goals(Figures f) {
        return (Map<String, Object>) f.get("goals");
    }

    /** A run whose two workers are flat and whose ZooKeeper's RSS follows {@code daemonRss(t)}. */
    private static SoakRun.Result result(java.util.function.DoubleUnaryOperator daemonRss) {
        List<SoakSample> samples = new ArrayList<>();
        for (SoakSample s : run(t -> 5e8, t -> 60, 10, 0)) {
            ProcStats worker = s.jvms().get("worker-6700").proc();
            ProcStats zk = new ProcStats((long) daemonRss.applyAsDouble(s.seconds()), 0, 40, 30, 200);
            samples.add(new SoakSample(s.seconds(), Map.of("worker-6700", s.jvms().get("worker-6700"),
                    "worker-6701", new SoakSample.Jvm(2, worker, 1e8), "zookeeper", new SoakSample.Jvm(3, zk, 7e6)),
                    s.shmFiles(), s.shmBytes(), s.devShmUsedBytes(), s.storeFiles(), s.storeBytes(),
                    s.diskUsedBytes(), s.placement(), s.storedRows(), s.offered(), s.afterFullGc()));
        }
        SoakRun.Accounting exact = new SoakRun.Accounting(1000, 1000, 900, 90, 10, 900, Map.of("malformed", 10L), 90,
                0, 0.5);
        return new SoakRun.Result("soak-test", samples, RUN, exact, SoakRun.WORKERS, Map.of(), Map.of(), Map.of(),
                Map.of(), Map.of());
    }

    @Test
    void procStatsReadThisProcess() {
        ProcStats self = ProcStats.of(ProcessHandle.current().pid());
        assertNotNull(self);
        assertTrue(self.rssBytes() > 1 << 20 && self.rssAnonBytes() > 0 && self.rssAnonBytes() <= self.rssBytes());
        assertTrue(self.threads() >= Thread.activeCount(), self.threads() + " threads");
        assertTrue(self.openFiles() >= 3 && self.mappings() > 10, self.toString());
        assertEquals(null, ProcStats.of(Long.MAX_VALUE), "no such process");
    }

    @Test
    void thePlotIsAPngWithAPanelPerMeasure(@TempDir Path dir) throws Exception {
        List<SoakSample> samples = run(t -> 5e8 + 1e5 * t, t -> 60, 10, 1);
        Path png = dir.resolve("soak.png");
        SoakPlot.write(png, samples, new SoakTrend(samples, RUN), "test");
        BufferedImage image = ImageIO.read(png.toFile());
        assertEquals(1120, image.getWidth());
        assertEquals(4 * 250 + 30, image.getHeight());
    }
}
