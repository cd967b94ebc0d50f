package io.meridian.perf;

import io.meridian.collective.CollectiveBlockSync;
import io.meridian.collective.TwoLevelCollectives;
import io.meridian.config.CommandLine;
import io.meridian.config.UsageException;
import io.meridian.metrics.ResidentMemory;
import io.meridian.mds.TriangleRoofline;
import io.meridian.mds.TriangleSmacof;
import io.meridian.shm.OwnerOnlyFiles;
import io.meridian.stream.row.DistanceRow;
import io.meridian.stream.row.RowFormat;
import io.meridian.stream.row.RowStoreLayout;
import io.meridian.stream.row.RowStoreReader;
import io.meridian.stream.row.RowStores;
import io.meridian.synthetic.SyntheticDataset;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.atomic.AtomicReference;

/**
 * {@code ./meridian bench scale}: the live map's storage and refinement at SPIDAL's sizes on this machine. For each N
 * (default 10K, 25K, 50K, 100K): the rows of N points (blobs, 8-D, 10 centres) are made from their coordinates as
 * they are stored (no square file anywhere) into the row stores, one writer thread per map task, and the bytes on
 * disk are compared with the lower triangle's; then the map tasks (threads sharing one memory region through the
 * two-level collectives, as on one host) time SMACOF iterations over the stored triangle against the roofline
 * ({@link TriangleRoofline}: the same rows through the same kernel with cache-resident coordinates and sums, no
 * exchange) in the same run. Parts run alone with {@code --part}; the store is deleted after each N unless
 * {@code --keep}.
 */
public final class ScaleBench implements Benchmark {
    private static final int BLOCK_ROWS = 256;
    private static final List<String> PARTS = List.of("storage", "smacof", "placement", "quality");

    @Override
    public String description() {
        return "the live map at 10K-100K points: row stores' bytes vs the triangle, SMACOF iteration vs the roofline"
                + " (same run), ns per pair, heap and RSS [--n 10000,25000,50000,100000] [--part storage,smacof]"
                + " [--tasks 2] [--iterations 3] [--dir /tmp/meridian-bench-scale] [--keep]; placement: a new point's"
                + " wait at 50 rows/s [--placement-rows 500]; quality: streamed vs batch [--quality-n 50000]"
                + " [--quality-rate 500]";
    }

    @Override
    public void run(String[] args) throws Exception {
        CommandLine cl = CommandLine.parse("bench scale", args, Set.of("n", "part", "tasks", "iterations", "dir",
                "placement-rows", "quality-n", "quality-rate"),
                Set.of("keep"));
        cl.requireNoPositional();
        int[] sizes = sizes(cl.string("n", "10000,25000,50000,100000"));
        Set<String> parts = parts(cl.string("part", String.join(",", PARTS)));
        int tasks = cl.intValue("tasks", Runtime.getRuntime().availableProcessors(), 1, 64);
        int iterations = cl.intValue("iterations", 3, 1, 100);
        Path root = Path.of(cl.string("dir", "/tmp/meridian-bench-scale"));
        boolean keep = cl.flag("keep");
        int placementRows = cl.intValue("placement-rows", 500, 10, 100_000);
        int qualityN = cl.intValue("quality-n", 50_000, 1000, 400_000);
        double qualityRate = cl.doubleValue("quality-rate", 500, 1, 1_000_000, false);
        long start = System.nanoTime();
        boolean compiled = TriangleRoofline.warmUp(120_000);
        Figures figures = new Figures("scale").put("tasks", tasks).put("block_rows", BLOCK_ROWS)
                .put("cores", Runtime.getRuntime().availableProcessors()).put("vector_kernel_compiled", compiled);
        System.out.printf(Locale.ROOT, "bench scale: N = %s, parts %s, %d map tasks, %d timed iterations; stores under"
                + " %s; load average %.2f%n", Arrays.toString(sizes), parts, tasks, iterations, root,
                ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
        for (int n : sizes) {
            Path stores = root.resolve("n" + n);
            String key = "n" + n + "_";
            try {
                if (parts.contains("storage") || parts.contains("smacof") && !Files.isDirectory(stores)) {
                    store(n, tasks, stores, figures, key);
                }
                if (parts.contains("smacof")) {
                    Memory m = smacof(n, tasks, iterations, stores, figures, key);
                    figures.put(key + "heap_used_bytes", m.heapUsed).put(key + "rss_anon_bytes", m.rssAnon)
                            .put(key + "rss_file_bytes", m.rssFile);
                    System.out.printf(Locale.ROOT, "  N = %d: while the map's tasks held it, heap used %.0f MB after"
                            + " GC, RSS anonymous %.0f MB, file-backed %.0f MB (the mapped triangle)%n", n,
                            m.heapUsed / 1e6,
                            m.rssAnon / 1e6, m.rssFile / 1e6);
                }
                if (parts.contains("placement")) {
                    ScalePlacement.run(n, tasks, Math.min(placementRows, n / 2), root, figures, key);
                }
            } finally {
                if (!keep) {
                    OwnerOnlyFiles.deleteTree(stores);
                }
            }
        }
        if (parts.contains("quality")) {
            ScaleQuality.run(qualityN, tasks, qualityRate, root, figures);
        }
        figures.put("seconds", (System.nanoTime() - start) / 1e9);
        figures.print();
    }

    /** Makes the rows of n blob points and stores them, one writer thread per task (each its own blocks). */
    private static void store(int n, int tasks, Path stores, Figures figures, String key) throws Exception {
        OwnerOnlyFiles.deleteTree(stores);
        SyntheticDataset data = SyntheticDataset.blobs(n, 8, 10, 2, 1);
        double inv = 1 / scaleBound(data);
        long t0 = System.nanoTime();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Thread[] writers = new Thread[tasks];
        for (int t = 0; t < tasks; t++) {
            int task = t;
            writers[t] = new Thread(() -> {
                try (RowStores out = new RowStores(stores, BLOCK_ROWS, n, b -> b % tasks == task)) {
                    short[] row = new short[n];
                    for (int i = 0; i < n; i++) {
                        if (i / BLOCK_ROWS % tasks != task) {
                            continue;
                        }
                        for (int j = 0; j < i; j++) {
                            row[j] = RowFormat.quantize((float) (data.distance(i, j) * inv));
                        }
                        out.store(DistanceRow.decode(RowFormat.encodeInt16(i, row, 0, i, false), null));
                        if (task == 0 && i % 5000 < tasks * BLOCK_ROWS && i % BLOCK_ROWS == 0 && i > 0) {
                            System.out.printf(Locale.ROOT, "    N = %d: stored about %d rows, %.0f s%n", n, i,
                                    (System.nanoTime() - t0) / 1e9);
                        }
                    }
                    out.force();
                } catch (Throwable e) {
                    failure.compareAndSet(null, e);
                }
            }, "scale-store-" + t);
            writers[t].start();
        }
        for (Thread w : writers) {
            w.join();
        }
        if (failure.get() != null) {
            throw new IllegalStateException("storing the rows failed: " + failure.get(), failure.get());
        }
        double seconds = (System.nanoTime() - t0) / 1e9;
        long apparent = 0;
        try (var files = Files.newDirectoryStream(stores, "block-*" + RowStoreLayout.VALUES)) {
            for (Path f : files) {
                apparent += Files.size(f);
            }
        }
        long allocated = allocatedBytes(stores);
        long triangle = RowStoreLayout.triangleBytes(n);
        long square = 2L * n * n;
        System.out.printf(Locale.ROOT, "  N = %d: stored %d rows in %.1f s (%.0f rows/s, %.0f MB/s); value files"
                + " %.3f GB on disk (%.4fx the triangle's %.3f GB; the square of before: %.3f GB)%n", n, n, seconds,
                n / seconds, triangle / seconds / 1e6, allocated / 1e9, (double) allocated / triangle, triangle / 1e9,
                square / 1e9);
        figures.put(key + "store_seconds", seconds).put(key + "stored_bytes", allocated)
                .put(key + "value_file_bytes", apparent).put(key + "triangle_bytes", triangle)
                .put(key + "stored_over_triangle", (double) allocated / triangle).put(key + "square_bytes", square);
    }

    /** Times SMACOF iterations of n points by the map's tasks against the roofline, in the same run. */
    private static Memory smacof(int n, int tasks, int iterations, Path stores, Figures figures, String key)
            throws Exception {
        AtomicReference<Memory> memory = new AtomicReference<>();
        String job = "bench-scale-" + ProcessHandle.current().pid();
        int doubles = TriangleSmacof.reduceCapacity(n);
        double[][] iterationMs = new double[tasks][iterations];
        double[][] rooflineMs = new double[tasks][iterations];
        long[] pairs = new long[tasks];
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Thread[] threads = new Thread[tasks];
        TwoLevelCollectives.removeStaleRegions(Path.of("/dev/shm"), job);
        for (int t = 0; t < tasks; t++) {
            int task = t;
            threads[t] = new Thread(() -> {
                try (TwoLevelCollectives c = TwoLevelCollectives.singleHost(job, task, tasks, doubles, doubles,
                        Path.of("/dev/shm"), Duration.ofMinutes(10));
                     RowStoreReader rows = new RowStoreReader(stores, BLOCK_ROWS, n)) {
                    CollectiveBlockSync sync = new CollectiveBlockSync(c);
                    int[] owned = owned(n, task, tasks);
                    TriangleSmacof smacof = new TriangleSmacof(n, rows, sync, owned);
                    TriangleRoofline roofline = new TriangleRoofline(rows, owned);
                    pairs[task] = roofline.pairs(n);
                    Random random = new Random(1);
                    for (int i = 0; i < n; i++) {
                        smacof.setPoint(i, random.nextDouble(), random.nextDouble(), random.nextDouble());
                    }
                    smacof.distanceRange(n);
                    double sink = 0;
                    for (int w = 0; w < 3; w++) { // warm-up: the pages come in, the gates open
                        smacof.iterate(n, 0);
                        sink += roofline.pass(n);
                    }
                    for (int r = 0; r < iterations; r++) {
                        sync.barrier();
                        long a = System.nanoTime();
                        smacof.iterate(n, 0);
                        long b = System.nanoTime();
                        sync.barrier();
                        long b2 = System.nanoTime();
                        sink += roofline.pass(n);
                        sync.barrier();
                        long e = System.nanoTime();
                        iterationMs[task][r] = (b - a) / 1e6;
                        rooflineMs[task][r] = (e - b2) / 1e6;
                        if (task == 0) {
                            System.out.printf(Locale.ROOT, "    N = %d: iteration %d %.0f ms, roofline %.0f ms%n", n,
                                    r + 1, iterationMs[task][r], rooflineMs[task][r]);
                        }
                    }
                    sync.barrier();
                    if (task == 0) {
                        memory.set(Memory.now());
                    }
                    sync.barrier();
                    if (Double.isNaN(sink)) {
                        System.out.println("    (roofline sum NaN)");
                    }
                } catch (Throwable e) {
                    failure.compareAndSet(null, e);
                }
            }, "scale-task-" + t);
            threads[t].start();
        }
        for (Thread t : threads) {
            t.join();
        }
        TwoLevelCollectives.removeStaleRegions(Path.of("/dev/shm"), job);
        if (failure.get() != null) {
            throw new IllegalStateException("a map task failed: " + failure.get(), failure.get());
        }
        double it = median(iterationMs[0]);
        double roof = median(rooflineMs[0]);
        long allPairs = (long) n * (n - 1) / 2;
        long slowest = Arrays.stream(pairs).max().orElse(0);
        double nsPerPair = it * 1e6 / allPairs;
        System.out.printf(Locale.ROOT, "  N = %d: SMACOF iteration %.3f s (median of %d), roofline %.3f s: %.2fx (goal"
                + " <= 1.5x); %.3f ns per pair (%d pairs, %.2f ns per pair per core; the busiest task has %.1f %%)%n",
                n, it / 1e3, iterations, roof / 1e3, it / roof, nsPerPair, allPairs, nsPerPair * tasks,
                100.0 * slowest / allPairs);
        figures.put(key + "smacof_seconds", it / 1e3).put(key + "roofline_seconds", roof / 1e3)
                .put(key + "smacof_over_roofline", it / roof).put(key + "ns_per_pair", nsPerPair)
                .put(key + "ns_per_pair_core", nsPerPair * tasks);
        return memory.get();
    }

    /** The rows map task {@code task} of {@code tasks} owns: every tasks-th block, as LiveMapSettings assigns them. */
    private static int[] owned(int n, int task, int tasks) {
        int[] ids = new int[n];
        int count = 0;
        for (int i = 0; i < n; i++) {
            if (i / BLOCK_ROWS % tasks == task) {
                ids[count++] = i;
            }
        }
        return Arrays.copyOf(ids, count);
    }

    /**
     * An upper bound of the largest distance, from the coordinates' ranges (O(N), where the largest distance itself is
     * a pass over all pairs): the 16-bit values are distance / bound, so every value fits.
     */
    static double scaleBound(SyntheticDataset data) {
        double sum = 0;
        for (int k = 0; k < data.dim(); k++) {
            double lo = Double.MAX_VALUE;
            double hi = -Double.MAX_VALUE;
            for (int i = 0; i < data.n(); i++) {
                lo = Math.min(lo, data.coordinate(i, k));
                hi = Math.max(hi, data.coordinate(i, k));
            }
            sum += (hi - lo) * (hi - lo);
        }
        return Math.sqrt(sum);
    }

    /** Bytes the value files take on disk (allocated blocks, as du counts them; holes take none). */
    private static long allocatedBytes(Path stores) throws IOException, InterruptedException {
        Process du = new ProcessBuilder("sh", "-c", "du -B1 -c block-*" + RowStoreLayout.VALUES + " | tail -n 1")
                .directory(stores.toFile()).redirectErrorStream(true).start();
        String out = new String(du.getInputStream().readAllBytes()).trim();
        if (du.waitFor() != 0) {
            throw new IOException("du in " + stores + ": " + out);
        }
        return Long.parseLong(out.split("\\s+")[0]);
    }

    private static int[] sizes(String list) {
        List<Integer> out = new ArrayList<>();
        for (String s : list.split(",")) {
            try {
                int n = Integer.parseInt(s.trim());
                out.add(n);
            } catch (NumberFormatException e) {
                throw new UsageException("--n: '" + s + "' is not a whole number (a list like 10000,25000)");
            }
        }
        for (int n : out) {
            if (n < 1000 || n > 400_000) {
                throw new UsageException("--n: each size must be in 1000..400000, got " + n);
            }
        }
        return out.stream().mapToInt(Integer::intValue).toArray();
    }

    private static Set<String> parts(String list) {
        Set<String> out = new LinkedHashSet<>();
        for (String s : list.split(",")) {
            if (!PARTS.contains(s.trim())) {
                throw new UsageException("--part: '" + s + "' is not one of " + PARTS);
            }
            out.add(s.trim());
        }
        return out;
    }

    private static double median(double[] values) {
        double[] s = values.clone();
        Arrays.sort(s);
        return s[s.length / 2];
    }

    /** This process's heap after a GC and its resident set, anonymous and file-backed. */
    record Memory(long heapUsed, long rssAnon, long rssFile) {
        static Memory now() {
            System.gc();
            long heap = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
            ResidentMemory resident = ResidentMemory.read();
            return new Memory(heap, resident.anonymousBytes(), resident.fileBytes());
        }
    }
}
