package io.meridian.perf;

import io.meridian.collective.CollectiveBlockSync;
import io.meridian.collective.SingleProcessSync;
import io.meridian.collective.TwoLevelCollectives;
import io.meridian.config.CommandLine;
import io.meridian.live.Frame;
import io.meridian.live.LiveMap;
import io.meridian.live.LiveMapSettings;
import io.meridian.matrix.DistanceSource;
import io.meridian.matrix.RowBlock;
import io.meridian.matrix.Weighting;
import io.meridian.mds.DaMds;
import io.meridian.mds.MdsOptions;
import io.meridian.mds.MdsResult;
import io.meridian.mds.TriangleSmacof;
import io.meridian.stream.row.DistanceRow;
import io.meridian.stream.row.RowFormat;
import io.meridian.stream.row.RowStoreReader;
import io.meridian.stream.row.RowStores;
import io.meridian.synthetic.SyntheticDataset;
import java.lang.management.ManagementFactory;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

/**
 * {@code ./meridian bench live-rounds}: the live map alone, without Storm, Kafka or the other daemons: P map tasks as
 * threads of one process, exchanging through the real shared-memory collectives, reading the rows in place from real
 * row-store files that a feeder thread fills at a fixed rate (rows 0..N0-1 at once, then R rows/s). Measures what the
 * map itself adds to a new point's wait, row stored -> point in a published frame, p50/p99 (all rows, rows >= 1000,
 * and those outside anneal frames), and the frames' round times. Baseline, in the same run: one SMACOF iteration of
 * the whole map on one thread ({@link TriangleSmacof}, the same kernel), the unit a round is made of. {@code bench
 * stream} measures the same latency inside the real topology.
 */
public final class LiveRoundsBench implements Benchmark {
    private static final int BLOCK_ROWS = 256;
    private static final int STEADY_FROM = 1000;

    @Override
    public String description() {
        return "the live map alone (P task threads, shared-memory collectives, row-store files, paced rows): row stored"
                + " -> point in a frame, p50/p99, vs one SMACOF iteration [--n 4000] [--tasks 4] [--rate 100]";
    }

    @Override
    public String usage() {
        return """
                ./meridian bench live-rounds [--n 4000] [--tasks 4] [--rate 100] [--initial-points 200]
                                             [--data blobs|uniform] [--seed 42]
                  --n N               points (8-D synthetic data; blobs: 5 centres, std 2), 300..16384
                  --tasks P           map tasks (threads, one shared-memory group)
                  --rate R            rows/s after the first N0 rows, which are stored at once
                  --initial-points N0 rows the first anneal covers
                Takes about N / R seconds plus the final settling.""";
    }

    @Override
    public void run(String[] args) throws Exception {
        CommandLine cl = CommandLine.parse("bench live-rounds", args,
                Set.of("n", "tasks", "rate", "initial-points", "data", "seed"), Set.of());
        cl.requireNoPositional();
        int n = cl.intValue("n", 4000, 300, 16_384);
        int tasks = cl.intValue("tasks", 4, 1, 64);
        double rate = cl.doubleValue("rate", 100, 1, 100_000, false);
        int initialPoints = cl.intValue("initial-points", 200, 4, n / 2);
        String kind = cl.choice("data", "blobs", "blobs", "uniform");
        long seed = cl.longValue("seed", 42, 0, Long.MAX_VALUE);
        Path dir = Files.createTempDirectory("meridian-bench-live-rounds");
        String job = "bench-live-rounds-" + ProcessHandle.current().pid();
        try {
            SyntheticDataset data = kind.equals("blobs") ? SyntheticDataset.blobs(n, 8, 5, 2, seed)
                    : SyntheticDataset.uniform(n, 8, seed);
            data.write(dir, ByteOrder.LITTLE_ENDIAN);
            RowBlock full = DistanceSource.matrixFile(dir.resolve(SyntheticDataset.DISTANCES_FILE), n,
                    ByteOrder.LITTLE_ENDIAN).all();
            System.out.printf(Locale.ROOT, "bench live-rounds: N = %d %s 8-D, %d tasks (threads), rows 0..%d at once,"
                            + " then %.0f rows/s; %d cores, load average %.2f%n", n, kind, tasks, initialPoints - 1,
                    rate, Runtime.getRuntime().availableProcessors(),
                    ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
            Run run = stream(full, n, tasks, rate, initialPoints, dir.resolve("rowstore"), dir.resolve("work"), job);
            double iterationMs = oneIteration(n, dir.resolve("rowstore"));
            MdsResult batch = new DaMds(DistanceSource.matrixFile(dir.resolve(SyntheticDataset.DISTANCES_FILE), n,
                    ByteOrder.LITTLE_ENDIAN), Weighting.unit(), new MdsOptions().seed(1), SingleProcessSync.INSTANCE).run();

            long[] all = run.latencies(0, false);
            long[] steady = run.latencies(STEADY_FROM, false);
            long[] calm = run.latencies(STEADY_FROM, true);
            System.out.printf(Locale.ROOT, "  %d frames; round time per frame (rows >= %d): p50 %.1f ms, p99 %.1f ms%n",
                    run.frames, STEADY_FROM, quantile(run.roundMs, 0.5), quantile(run.roundMs, 0.99));
            print("all rows", all);
            print("rows >= " + STEADY_FROM, steady);
            print("rows >= " + STEADY_FROM + ", no anneal frame", calm);
            System.out.printf(Locale.ROOT, "  final map: stress %.6f vs batch DA-MDS %.6f on the same matrix: %.4fx"
                    + " (goal <= 1.01)%n", run.finalStress, batch.normalizedStress, run.finalStress / batch.normalizedStress);
            System.out.printf(Locale.ROOT, "  baseline: one SMACOF iteration of all %d points on one thread: %.2f ms;"
                    + " latency p50 = %.1f iterations%n", n, iterationMs, quantile(steady, 0.5) / iterationMs);
            new Figures("live-rounds").put("n", n).put("tasks", tasks).put("rate", rate).put("data", kind)
                    .put("frames", run.frames).put("latency_p50_ms", quantile(all, 0.5))
                    .put("latency_p99_ms", quantile(all, 0.99)).put("steady_latency_p50_ms", quantile(steady, 0.5))
                    .put("steady_latency_p99_ms", quantile(steady, 0.99))
                    .put("steady_no_anneal_latency_p99_ms", quantile(calm, 0.99))
                    .put("round_p50_ms", quantile(run.roundMs, 0.5)).put("iteration_ms", iterationMs)
                    .put("stress", run.finalStress).put("batch_stress", batch.normalizedStress)
                    .put("stress_ratio", run.finalStress / batch.normalizedStress)
                    .put("goal_p99_ms", 100).print();
        } finally {
            TwoLevelCollectives.removeStaleRegions(Path.of("/dev/shm"), job);
            io.meridian.shm.OwnerOnlyFiles.deleteTree(dir);
        }
    }

    /** What the stream showed: per point (id, stored -> first frame in ns, in an anneal frame) and the round times. */
    private static final class Run {
        final List<long[]> points = new ArrayList<>();
        final List<Double> roundMsList = new ArrayList<>();
        double[] roundMs;
        int frames;
        double finalStress = Double.NaN;

        long[] latencies(int fromId, boolean withoutAnneals) {
            return points.stream().filter(p -> p[0] >= fromId && !(withoutAnneals && p[2] == 1))
                    .mapToLong(p -> p[1] / 1_000_000).sorted().toArray();
        }
    }

    private static Run stream(RowBlock full, int n, int tasks, double rate, int initialPoints, Path stores, Path work,
                              String job) throws Exception {
        LiveMapSettings settings = new LiveMapSettings(n, BLOCK_ROWS, tasks, initialPoints, 20, 1e-4, 2.0, 1.0,
                MdsOptions.DEFAULT_ALPHA, MdsOptions.DEFAULT_TMIN_FACTOR, 8, 7);
        AtomicLongArray storedAt = new AtomicLongArray(n);
        Run run = new Run();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Thread[] threads = new Thread[tasks];
        int doubles = TriangleSmacof.reduceCapacity(n);
        try (RowStores out = new RowStores(stores, BLOCK_ROWS, n, b -> true)) {
            for (int t = 0; t < tasks; t++) {
                int task = t;
                threads[t] = new Thread(() -> {
                    try (TwoLevelCollectives c = TwoLevelCollectives.singleHost(job, task, tasks, doubles, doubles,
                            Path.of("/dev/shm"), Duration.ofSeconds(60));
                         LiveMap live = new LiveMap(settings, task, new RowStoreReader(stores, BLOCK_ROWS, n),
                                 new CollectiveBlockSync(c), work, task == 0 ? f -> seen(f, storedAt, run) : null)) {
                        // leave on a reduced condition only, so every task leaves after the same round
                        while (!(live.points() == n && live.idle())) {
                            if (live.round() == null) {
                                LockSupport.parkNanos(5_000_000);
                            }
                        }
                    } catch (Throwable e) {
                        failure.compareAndSet(null, e);
                    }
                }, "live-rounds-task-" + t);
                threads[t].start();
            }
            short[] row = new short[n];
            long start = 0;
            for (int i = 0; i < n; i++) {
                if (i == initialPoints) {
                    start = System.nanoTime();
                }
                if (i >= initialPoints) {
                    long due = start + (long) ((i - initialPoints) * 1e9 / rate);
                    for (long wait = due - System.nanoTime(); wait > 0; wait = due - System.nanoTime()) {
                        LockSupport.parkNanos(wait);
                    }
                }
                full.copyRow(i, row);
                // stamped before the store: a map task may see the row (and place it) as soon as its marker is written
                storedAt.set(i, System.nanoTime());
                out.store(DistanceRow.decode(RowFormat.encodeInt16(i, row, 0, i, false), null));
                if (failure.get() != null) {
                    break;
                }
            }
            for (Thread t : threads) {
                t.join(Duration.ofMinutes(10).toMillis());
            }
        }
        if (failure.get() != null) {
            throw new IllegalStateException("a map task failed: " + failure.get(), failure.get());
        }
        synchronized (run) {
            run.roundMs = run.roundMsList.stream().mapToDouble(Double::doubleValue).toArray();
        }
        return run;
    }

    private static void seen(Frame f, AtomicLongArray storedAt, Run run) {
        long now = System.nanoTime();
        synchronized (run) {
            run.frames++;
            run.finalStress = f.stress();
            for (int i = f.n() - f.placed(); i < f.n(); i++) {
                run.points.add(new long[] {i, now - storedAt.get(i), f.annealed() ? 1 : 0});
            }
            if (f.n() >= STEADY_FROM) {
                run.roundMsList.add(f.roundSeconds() * 1e3);
            }
        }
    }

    /** One SMACOF iteration over all n points on one thread (median of 7 after warm-up). */
    private static double oneIteration(int n, Path stores) {
        int[] all = new int[n];
        for (int i = 0; i < n; i++) {
            all[i] = i;
        }
        TriangleSmacof smacof = new TriangleSmacof(n, new RowStoreReader(stores, BLOCK_ROWS, n),
                SingleProcessSync.INSTANCE, all);
        Random random = new Random(1);
        for (int i = 0; i < n; i++) {
            smacof.setPoint(i, random.nextDouble(), random.nextDouble(), random.nextDouble());
        }
        smacof.distanceRange(n);
        for (int w = 0; w < 10; w++) {
            smacof.iterate(n, 0);
        }
        double[] ms = new double[7];
        for (int r = 0; r < ms.length; r++) {
            long t0 = System.nanoTime();
            smacof.iterate(n, 0);
            ms[r] = (System.nanoTime() - t0) / 1e6;
        }
        return quantile(ms, 0.5);
    }

    private static void print(String what, long[] ms) {
        System.out.printf(Locale.ROOT, "  row stored -> in a frame, %s (%d points): p50 %.0f ms, p99 %.0f ms, max %.0f"
                + " ms (goal p99 <= 100 ms)%n", what, ms.length, quantile(ms, 0.5), quantile(ms, 0.99), quantile(ms, 1));
    }

    private static double quantile(long[] sorted, double q) {
        return sorted.length == 0 ? Double.NaN : sorted[Math.min(sorted.length - 1, (int) (q * sorted.length))];
    }

    private static double quantile(double[] values, double q) {
        if (values.length == 0) {
            return Double.NaN;
        }
        double[] s = values.clone();
        Arrays.sort(s);
        return s[Math.min(s.length - 1, (int) (q * s.length))];
    }
}
