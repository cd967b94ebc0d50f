package io.meridian.perf;

import io.meridian.collective.TwoLevelCollectives;
import io.meridian.config.CommandLine;
import io.meridian.config.UsageException;
import io.meridian.metrics.ResidentMemory;
import io.meridian.mds.TriangleRoofline;
import io.meridian.pwc.Ari;
import io.meridian.perf.stream.ScalePublished;
import io.meridian.pwc.TriangleKernel;
import io.meridian.shm.OwnerOnlyFiles;
import io.meridian.stream.row.RowStoreLayout;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * {@code ./meridian bench scale}: the live map's storage and refinement at SPIDAL's sizes on this machine. For each N
 * (default 10K, 25K, 50K, 100K): part storage makes the rows of N points (blobs, 8-D, 10 centres) from their
 * coordinates as they are stored (no square file anywhere) into the row stores, one writer thread per map task, and
 * compares the bytes on disk with the lower triangle's; then the map tasks time, round by round in the same run
 * ({@link ScaleRefinement}), a SMACOF iteration over the stored triangle, its roofline (part smacof) and a DA-PWC EM
 * iteration at 10 clusters (part em); part clustering times a whole DA-PWC run (at most 10 clusters) over the stored
 * rows, the map's tasks as ranks owning their blocks ({@link ScaleQuality#batchPwc}, the engine the live map runs
 * distributed). Parts run alone with {@code --part} (a part that needs the rows stores them
 * first unless {@code --keep} left them); the store is deleted after each N unless {@code --keep}. Every figure's key
 * starts with its N ({@code n100000_smacof_seconds}); {@code seconds} is the whole run's.
 */
public final class ScaleBench implements Benchmark {
    private static final int BLOCK_ROWS = ScaleRows.BLOCK_ROWS;
    static final Path REGIONS = Path.of("/dev/shm");
    private static final List<String> PARTS = List.of("storage", "smacof", "em", "clustering", "placement",
            "published", "quality");

    @Override
    public String description() {
        return "the live map at 10K-100K points: row stores' bytes vs the triangle, SMACOF iteration vs the roofline"
                + " and DA-PWC EM iteration (k = 10) vs SMACOF (same run), ns per pair, heap and RSS; clustering: a whole"
                + " DA-PWC run's time"
                + " [--n 10000,25000,50000,100000] [--part storage,smacof,em,clustering,placement,published,quality]"
                + " [--tasks 2] [--iterations 3] [--dir /tmp/meridian-bench-scale] [--keep]; placement: a new point's"
                + " wait at 50 rows/s, the map's engines alone; published: the same on the real cluster, row published"
                + " to Kafka -> point on map-updates [--placement-rows 500]; quality: streamed vs batch [--quality-n 50000]"
                + " [--quality-rate 500]. Every part at every size takes hours (clustering at 100K about 1 h,"
                + " quality at 50K about 2 h: docs/scale.md); storage, smacof, em, placement and published alone take"
                + " minutes";
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
        Thread cleanup = cleanupOnKill(root, sizes, qualityN, keep);
        Runtime.getRuntime().addShutdownHook(cleanup);
        boolean compiled = TriangleRoofline.warmUp(120_000);
        boolean emCompiled = !parts.contains("em") || TriangleKernel.warmUpVectors(120_000);
        Figures figures = new Figures("scale").put("tasks", tasks).put("block_rows", BLOCK_ROWS)
                .put("cores", Runtime.getRuntime().availableProcessors()).put("vector_kernel_compiled", compiled)
                .put("em_vector_kernel_compiled", emCompiled)
                .put("parts", String.join(",", parts)).put("em_clusters", ScaleRefinement.CLUSTERS);
        System.out.printf(Locale.ROOT, "bench scale: N = %s, parts %s, %d map tasks, %d timed iterations; stores under"
                + " %s; load average %.2f%n", Arrays.toString(sizes), parts, tasks, iterations, root,
                loadAverage());
        for (int n : sizes) {
            Path stores = root.resolve("n" + n);
            String key = "n" + n + "_";
            try {
                boolean needsRows = parts.contains("smacof") || parts.contains("em") || parts.contains("clustering");
                if (parts.contains("storage") || needsRows && !Files.isDirectory(stores)) {
                    store(n, tasks, stores, figures, key);
                }
                if (parts.contains("smacof") || parts.contains("em")) {
                    Memory m = ScaleRefinement.run(n, tasks, iterations, stores, BLOCK_ROWS, parts.contains("smacof"),
                            parts.contains("em"), figures, key);
                    figures.put(key + "heap_used_bytes", m.heapUsed).put(key + "rss_anon_bytes", m.rssAnon)
                            .put(key + "rss_file_bytes", m.rssFile);
                    System.out.printf(Locale.ROOT, "  N = %d: while the map's tasks held it, heap used %.0f MB after"
                            + " GC, RSS anonymous %.0f MB, file-backed %.0f MB (the mapped triangle)%n", n,
                            m.heapUsed / 1e6, m.rssAnon / 1e6, m.rssFile / 1e6);
                }
                if (parts.contains("clustering")) {
                    clustering(n, tasks, stores, figures, key);
                }
                if (parts.contains("placement")) {
                    ScalePlacement.run(n, tasks, Math.min(placementRows, n / 2), root, figures, key);
                }
                if (parts.contains("published")) {
                    ScalePublished.run(n, tasks, Math.min(placementRows, n / 2), root, figures, key);
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
        Runtime.getRuntime().removeShutdownHook(cleanup);
    }

    /**
     * What a run stopped by Ctrl-C or kill would otherwise leave behind, since its parts' finally blocks do not run
     * then: its collective regions in /dev/shm (each part's job id ends with this process's id; a later region's
     * creation sweeps them only once this process is gone) and, unless {@code --keep}, its row stores under
     * {@code root} (10 GB at 100K).
     */
    static Thread cleanupOnKill(Path root, int[] sizes, int qualityN, boolean keep) {
        List<Path> stores = new ArrayList<>();
        if (!keep) {
            for (int n : sizes) {
                stores.add(root.resolve("n" + n));
                stores.add(root.resolve("placement-n" + n));
                stores.add(root.resolve("published-n" + n));
            }
            stores.add(root.resolve("quality-n" + qualityN));
        }
        String suffix = "-" + ProcessHandle.current().pid();
        return new Thread(() -> {
            ScalePublished.interrupted();
            Path jobs = TwoLevelCollectives.regionPath(REGIONS, "bench-scale" + suffix, 0).getParent().getParent();
            try (var dirs = !Files.isDirectory(jobs) ? null : Files.newDirectoryStream(jobs, d -> {
                String name = d.getFileName().toString();
                return name.startsWith("bench-scale-") && name.endsWith(suffix);
            })) {
                for (Path job : dirs == null ? List.<Path>of() : dirs) {
                    OwnerOnlyFiles.deleteTree(job);
                }
            } catch (IOException | RuntimeException e) {
                System.err.println("bench scale: could not remove this run's collective regions under " + jobs + ": "
                        + e.getMessage());
            }
            for (Path dir : stores) {
                try {
                    OwnerOnlyFiles.deleteTree(dir);
                } catch (RuntimeException e) {
                    System.err.println("bench scale: could not remove " + dir + ": " + e.getMessage());
                }
            }
        }, "bench-scale-cleanup");
    }

    /** Makes the rows of n blob points and stores them, one writer thread per task (each its own blocks). */
    private static void store(int n, int tasks, Path stores, Figures figures, String key) throws Exception {
        OwnerOnlyFiles.deleteTree(stores);
        long t0 = System.nanoTime();
        new ScaleRows(n).store(stores, 0, n, tasks, "N = " + n);
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
        figures.put(key + "store_seconds", seconds).put(key + "store_load_average", loadAverage())
                .put(key + "stored_bytes", allocated)
                .put(key + "value_file_bytes", apparent).put(key + "triangle_bytes", triangle)
                .put(key + "stored_over_triangle", (double) allocated / triangle).put(key + "square_bytes", square);
    }

    /** A whole DA-PWC run over the stored rows of n points, {@code tasks} ranks; its time, iterations and memory. */
    private static void clustering(int n, int tasks, Path stores, Figures figures, String key) throws Exception {
        System.out.printf(Locale.ROOT, "  N = %d: a whole DA-PWC run (at most %d clusters, %d ranks owning the map's"
                + " blocks); load average %.2f%n", n, ScaleRows.CENTRES, tasks, loadAverage());
        long t0 = System.nanoTime();
        ScaleQuality.Clustered c = ScaleQuality.batchPwc(n, tasks, stores, "    DA-PWC N = " + n);
        double seconds = (System.nanoTime() - t0) / 1e9;
        double ari = Ari.adjustedRandIndex(new ScaleRows(n).truth(), c.result().labels());
        // a power iteration is a pass over the triangle too (its product with one vector per cluster): dapwc's
        // split test runs at least 12 of them per eigenvalue, two eigenvalues per test
        int passes = c.result().emIterations() + c.result().powerIterations();
        System.out.printf(Locale.ROOT, "  N = %d: DA-PWC finished in %.1f s: %d EM iterations and %d power iterations"
                + " (%.3f s a pass over the triangle), %d clusters, ARI against the blobs %.4f; heap used %.0f MB"
                + " after GC while the ranks held it; load average %.2f%n", n, seconds, c.result().emIterations(),
                c.result().powerIterations(), seconds / Math.max(1, passes), c.result().clusters(), ari,
                c.heapUsed() / 1e6, loadAverage());
        figures.put(key + "pwc_run_seconds", seconds).put(key + "pwc_run_em_iterations", c.result().emIterations())
                .put(key + "pwc_run_power_iterations", c.result().powerIterations())
                .put(key + "pwc_run_seconds_per_pass", seconds / Math.max(1, passes))
                .put(key + "pwc_run_clusters", c.result().clusters()).put(key + "pwc_run_ari_truth", ari)
                .put(key + "pwc_run_heap_used_bytes", c.heapUsed()).put(key + "pwc_run_load_after", loadAverage());
    }

    /** The rows map task {@code task} of {@code tasks} owns: every tasks-th block, as LiveMapSettings assigns them. */
    static int[] owned(int n, int task, int tasks) {
        int[] ids = new int[n];
        int count = 0;
        for (int i = 0; i < n; i++) {
            if (i / BLOCK_ROWS % tasks == task) {
                ids[count++] = i;
            }
        }
        return Arrays.copyOf(ids, count);
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

    static double loadAverage() {
        return ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();
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
