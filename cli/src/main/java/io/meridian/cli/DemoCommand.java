package io.meridian.cli;

import io.meridian.collective.SingleProcessSync;
import io.meridian.config.CommandLine;
import io.meridian.config.MeridianConfig;
import io.meridian.live.SnapshotWriter;
import io.meridian.matrix.LowerRows;
import io.meridian.matrix.TriangleFile;
import io.meridian.matrix.TriangleSource;
import io.meridian.mds.MdsJob;
import io.meridian.mds.MdsOptions;
import io.meridian.mds.MdsResult;
import io.meridian.pwc.Ari;
import io.meridian.pwc.PwcJob;
import io.meridian.pwc.PwcProgress;
import io.meridian.pwc.PwcResult;
import io.meridian.pwc.PwcSettings;
import io.meridian.synthetic.SyntheticDataset;
import io.meridian.topology.LocalRun;
import java.io.IOException;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import java.util.Set;

/**
 * {@code meridian demo}: the main job on an embedded default. It generates Gaussian blobs (their distances as the lower
 * triangle: no N x N file anywhere), streams their distance rows (with a few bad rows mixed in) through the ingestion
 * topology in Storm's LocalCluster into the memory-mapped row stores, maps what the stores hold to 3-D with DA-MDS and
 * clusters it with DA-PWC, both reading the stores' lower triangle in place (no square copy), and prints where
 * everything went.
 */
final class DemoCommand implements Command {
    static final int CENTERS = 5;
    private static final int BLOCK_ROWS = 128;
    private static final int BAD_ROWS = 12;
    private static final int MAP_TASKS = 2;
    private static final int RATE = 150;

    @Override
    public String usage() {
        return "demo [--n 1000] [--seed 1] [--out DIR]   (default DIR: .meridian/demo)";
    }

    @Override
    public int run(String[] args) throws Exception {
        CommandLine cl = CommandLine.parse("demo", args, Set.of("n", "seed", "out"), Set.of());
        cl.requireNoPositional();
        int n = cl.intValue("n", 1000, 50, 8192);
        long seed = cl.longValue("seed", 1, 0, Long.MAX_VALUE);
        Path out = Path.of(cl.string("out", defaultDirectory().toString())).toAbsolutePath();
        run(out, n, seed);
        return 0;
    }

    static Path defaultDirectory() {
        String home = System.getenv("MERIDIAN_HOME");
        return (home == null ? Path.of(".") : Path.of(home)).resolve(".meridian").resolve("demo");
    }

    static void run(Path out, int n, long seed) throws Exception {
        Path data = out.resolve("data");
        Path maps = out.resolve("mds");
        Path clusters = out.resolve("pwc");
        String log = System.getProperty("meridian.log.file");
        if (log != null) {
            say("log of Storm, the workers and the engines: %s", log);
        }
        say("generating %d points in %d Gaussian blobs (8-D) into %s", n, CENTERS, data);
        SyntheticDataset blobs = SyntheticDataset.blobs(n, 8, CENTERS, 2.0, seed);
        // the lower triangle (what the stream sends and the stores keep), not the N x N matrix
        blobs.write(data, ByteOrder.LITTLE_ENDIAN, SyntheticDataset.Layout.TRIANGLE, SyntheticDataset.Progress.NONE);
        Path distances = data.resolve(SyntheticDataset.TRIANGLE_FILE);

        say("streaming the %d rows and %d bad ones at %d rows/s through the topology (Storm LocalCluster): row stores,"
                + " then the live map of %d tasks placing each point as it is stored ...", n, BAD_ROWS, RATE, MAP_TASKS);
        MeridianConfig config = MeridianConfig.load(writeConfig(out, distances, n, seed));
        LocalRun.Result ingest = LocalRun.run(config, Duration.ofSeconds(180 + n / 20),
                frame -> say("map %s", FrameLines.line(frame)));
        if (ingest.counts() != null) {
            System.out.println(ingest.counts().toText());
        }
        if (ingest.storedOnDisk() != n) {
            throw new IllegalStateException("the row stores hold " + ingest.storedOnDisk() + " rows, expected " + n);
        }

        Path rowStores = config.ingest().rowStore().directory();
        int blockRows = config.ingest().rowStore().blockRows();
        long differing;
        try (TriangleSource stored = TriangleSource.rowStores(rowStores, blockRows, n)) {
            differing = differingEntries(stored.rows(), distances, n);
        }
        say("row stores read in place, their lower triangle against the generated matrix: %s (%d entries differ"
                + " from the generated matrix)", rowStores, differing);

        say("DA-MDS to 3-D over the row stores' lower triangle, read in place (progress on stderr) ...");
        MdsResult map = MdsJob.runOnRowStores(rowStores, blockRows, n,
                new MdsOptions().seed(seed).progress(System.err, 2000), SingleProcessSync.INSTANCE, maps);
        say("normalized stress %.5f after %d temperature loops, %d SMACOF iterations, %.1f s",
                map.normalizedStress, map.temperatureLoops, map.smacofIterations, map.seconds);

        say("DA-PWC clustering (up to %d clusters) over the same triangle, in place ...", CENTERS + 3);
        PwcResult pwc;
        try (TriangleSource stored = TriangleSource.rowStores(rowStores, blockRows, n)) {
            pwc = PwcJob.run(stored, PwcSettings.builder().maxClusters(CENTERS + 3).build(), SingleProcessSync.INSTANCE,
                    PwcProgress.NONE, clusters);
        }
        int[] truth = new int[n];
        for (int i = 0; i < n; i++) {
            truth[i] = blobs.label(i);
        }
        say("%d clusters, sizes %s, adjusted Rand index against the blobs %.4f, %.1f s", pwc.clusters(),
                java.util.Arrays.toString(pwc.sizes()), Ari.adjustedRandIndex(truth, pwc.labels()), pwc.seconds());

        Path live = ingest.mapSnapshots().resolve(SnapshotWriter.CURRENT);
        int[] streamedLabels = readLabels(live.resolve(SnapshotWriter.CLUSTERS_FILE), n);
        say("streamed live map: stress %.5f vs batch DA-MDS %.5f on the same rows (ratio %.3f); clusters: ARI %.4f"
                        + " against the blobs (batch DA-PWC %.4f)", ingest.map().stress(), map.normalizedStress,
                ingest.map().stress() / map.normalizedStress, Ari.adjustedRandIndex(truth, streamedLabels),
                Ari.adjustedRandIndex(truth, pwc.labels()));

        System.out.println("demo: outputs:");
        System.out.println("  " + distances + "  generated 16-bit distances, the lower triangle (as gen --layout"
                + " triangle writes it)");
        System.out.println("  " + data.resolve(SyntheticDataset.LABELS_FILE) + "  blob of each point");
        System.out.println("  " + ingest.rowStores() + "  row stores written by the topology (block-*.tri: the lower"
                + " triangle, memory-mapped)");
        System.out.println("  " + ingest.rejectedFile() + "  rejected rows with their reasons (dead letters)");
        System.out.println("  " + live + "  the live map's last frame: points.tsv, clusters.tsv, summary.json");
        System.out.println("  " + maps.resolve(MdsJob.POINTS_FILE) + "  batch 3-D map: id, x, y, z");
        System.out.println("  " + maps.resolve(MdsJob.SUMMARY_FILE) + "  stress, iterations, timings");
        System.out.println("  " + clusters.resolve(PwcJob.CLUSTERS_FILE) + "  cluster of each point");
        System.out.println("  " + clusters.resolve(PwcJob.SUMMARY_FILE) + "  clusters, sizes, temperature, EM iterations");
        System.out.println("demo: see the maps in a browser (3-D, coloured by cluster; Ctrl-C stops the viewer):");
        System.out.println("  " + viewCommand(maps, clusters) + "   batch DA-MDS map, DA-PWC clusters");
        System.out.println("  " + viewCommand(ingest.mapSnapshots()) + "   the live map's last frame");
    }

    /** The command line of {@code ./meridian view} for these directories. */
    static String viewCommand(Path... dirs) {
        StringBuilder b = new StringBuilder("./meridian view");
        for (Path d : dirs) {
            String s = d.toString();
            b.append(' ').append(s.matches("[A-Za-z0-9_./@%+=:,-]+") ? s : "'" + s.replace("'", "'\\''") + "'");
        }
        return b.toString();
    }

    private static int[] readLabels(Path clusters, int n) throws IOException {
        int[] labels = new int[n];
        java.util.Arrays.fill(labels, -1);
        for (String line : Files.readAllLines(clusters, StandardCharsets.UTF_8)) {
            String[] f = line.split("\t");
            if (f.length == 2) {
                labels[Integer.parseInt(f[0])] = Integer.parseInt(f[1]);
            }
        }
        return labels;
    }

    private static Path writeConfig(Path out, Path distances, int n, long seed) throws IOException {
        Path stream = out.resolve("stream");
        Files.createDirectories(stream);
        int width = n;
        int maxIdAhead = Math.max(width, 2 * BLOCK_ROWS + 1);
        String yaml = String.join("\n",
                "# written by ./meridian demo: the ingestion topology in one JVM on the generated matrix",
                "topology:",
                "  name: meridian-demo",
                "  workers: 1",
                "  maxSpoutPending: 2000",
                "ingest:",
                "  source: file",
                "  maxPoints: " + width,
                "  local:",
                "    distances: " + distances,
                "    n: " + n,
                "    seed: " + seed,
                "    badRows: " + BAD_ROWS,
                "    rate: " + RATE + "               # rows per second, so that the map is seen growing",
                "    output: " + stream,
                "  validation:",
                "    maxIdAhead: " + maxIdAhead,
                "  rowStore:",
                "    directory: " + stream.resolve("rowstore"),
                "    blockRows: " + Math.min(BLOCK_ROWS, width),
                "    parallelism: 2",
                "metrics:",
                "  localPort: 0                # the LocalCluster's Prometheus endpoint on any free port",
                "map:",
                "  tasks: " + MAP_TASKS,
                "  initialPoints: " + Math.max(4, Math.min(n, 200)),
                "  maxClusters: " + (CENTERS + 3),
                "  snapshotDirectory: " + stream.resolve("map"),
                "");
        Path file = out.resolve("demo-config.yaml");
        Files.writeString(file, yaml, StandardCharsets.UTF_8);
        return file;
    }

    /** How many entries of the lower triangle {@code stored} differ from the triangle file it was fed from. */
    private static long differingEntries(LowerRows stored, Path generated, int n) {
        short[] expected = new short[n];
        short[] actual = new short[n];
        long differing = 0;
        try (TriangleFile triangle = new TriangleFile(generated, n)) {
            for (int i = 1; i < n; i++) {
                triangle.copy(i, 0, i, expected);
                stored.copy(i, 0, i, actual);
                for (int j = 0; j < i; j++) {
                    differing += expected[j] != actual[j] ? 1 : 0;
                }
            }
        }
        return differing;
    }

    private static void say(String format, Object... args) {
        System.out.println("demo: " + String.format(Locale.ROOT, format, args));
    }
}
