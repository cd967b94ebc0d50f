package io.meridian.cli;

import io.meridian.cli.view.MapComparison;
import io.meridian.cli.view.MapFileException;
import io.meridian.cli.view.MapFrame;
import io.meridian.cli.view.MapLoader;
import io.meridian.cli.view.SnapshotFollower;
import io.meridian.cli.view.ViewServer;
import io.meridian.config.CommandLine;
import io.meridian.config.MeridianConfig;
import io.meridian.config.UsageException;
import io.meridian.engine.BadInputException;
import java.io.IOException;
import java.io.PrintStream;
import java.net.BindException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;

/**
 * {@code ./meridian view}: the map in a browser. It reads a batch map ({@code ./meridian mds}'s points.tsv, coloured by
 * {@code ./meridian pwc}'s clusters.tsv) or a live map snapshot, or with {@code --live} follows the snapshot directory
 * the running topology writes its frames to, and serves the page on 127.0.0.1 ({@link ViewServer}) until Ctrl-C. With
 * {@code --compare A B} the page shows two maps laid over each other ({@link MapComparison}).
 * Every problem with the input is found before the server starts and reported on one line.
 */
final class ViewCommand implements Command {
    static final int DEFAULT_PORT = 8765;
    private static final String USAGE_LINE = "view [MAP [CLUSTERS] | --live [SNAPSHOT_DIR] [--config FILE]"
            + " | --compare A B] [--port " + DEFAULT_PORT + "]";

    @Override
    public String usage() {
        return USAGE_LINE + "\n"
                + "    the 3-D map in a browser, served on 127.0.0.1 (--port 0: any free port).\n"
                + "    MAP: ./meridian mds's --out (points.tsv), CLUSTERS: ./meridian pwc's --out (clusters.tsv);\n"
                + "    files work too. MAP may be a live map snapshot directory (its current frame).\n"
                + "    --live follows the running topology's frames in SNAPSHOT_DIR (default: map.snapshotDirectory\n"
                + "    of --config FILE, else of meridian-cluster.yaml)\n"
                + "    --compare A B shows two maps of the same ids in one page: A in blue, B in orange, a segment\n"
                + "    between each id's two positions (a toggle hides them), and a legend with the residual RMS and\n"
                + "    the largest displacements (click one: it is selected). Unless B is already aligned to A (as\n"
                + "    ./meridian align's output is), B is first moved onto A by the least-squares s R y + t over\n"
                + "    the ids both hold (rotation, reflection allowed, scale; ./meridian align's fit), and one line\n"
                + "    says so: scale, rotation or reflection, residual RMS. A and B: a points.tsv, a directory\n"
                + "    holding one, or a live map snapshot directory (its current frame), e.g. A the batch map, B the\n"
                + "    live one. Ids in one map only (a live map still behind the batch one holds its first ids) are\n"
                + "    drawn without a segment, left out of the fit and named in the legend; clusters are not shown";
    }

    @Override
    public int run(String[] args) throws Exception {
        try (Viewer viewer = open(args, System.out, System.err)) {
            CountDownLatch stopped = new CountDownLatch(1);
            Runtime.getRuntime().addShutdownHook(new Thread(viewer::close, "meridian-view-stop"));
            stopped.await(); // until Ctrl-C: the JVM's shutdown runs the hook
        }
        return 0;
    }

    /** A running viewer: the server and, with {@code --live}, the follower feeding it. */
    record Viewer(ViewServer server, SnapshotFollower follower) implements AutoCloseable {
        @Override
        public void close() {
            if (follower != null) {
                follower.close();
            }
            server.close();
        }
    }

    /** Checks the arguments and the map, starts the server (and follower), and prints what is served where. */
    static Viewer open(String[] args, PrintStream out, PrintStream err) throws IOException {
        CommandLine cl = CommandLine.parse("view", args, Set.of("config", "port"), Set.of("live", "compare"));
        int port = cl.intValue("port", DEFAULT_PORT, 0, 65_535);
        List<String> paths = cl.positional();
        if (cl.flag("compare")) {
            return compare(cl, paths, port, out);
        }
        if (cl.flag("live")) {
            if (paths.size() > 1) {
                throw new UsageException("--live follows one snapshot directory, got " + paths.size() + ": "
                        + String.join(" ", paths));
            }
            Path dir = paths.isEmpty() ? configured(cl) : Path.of(paths.get(0)).toAbsolutePath();
            if (!Files.isDirectory(dir)) {
                throw new UsageException("snapshot directory " + dir + " does not exist"
                        + (paths.isEmpty() ? " (map.snapshotDirectory of " + configName(cl) + "); is the topology"
                        + " running? Give the directory: --live DIR" : ""));
            }
            ViewServer server = bind(port);
            SnapshotFollower follower = new SnapshotFollower(dir, server::publish, err).start();
            boolean none = !Files.exists(dir.resolve(MapLoader.CURRENT));
            out.println("meridian view: following the live map's frames in " + dir
                    + (none ? " (none yet: the page waits for the first)" : ""));
            say(out, server);
            return new Viewer(server, follower);
        }
        if (cl.has("config")) {
            throw new UsageException("--config names the snapshot directory that --live follows; a map given as a"
                    + " directory needs none");
        }
        if (paths.isEmpty() || paths.size() > 2) {
            throw new UsageException("give MAP (./meridian mds's output directory, or a live map snapshot directory),"
                    + " optionally CLUSTERS (./meridian pwc's output directory), or --live; got " + paths.size()
                    + " arguments");
        }
        MapFrame frame;
        try {
            frame = load(Path.of(paths.get(0)).toAbsolutePath(),
                    paths.size() > 1 ? Path.of(paths.get(1)).toAbsolutePath() : null);
        } catch (MapFileException e) {
            throw new UsageException(e.getMessage());
        } catch (NoSuchFileException e) {
            throw new UsageException(e.getFile() + ": no such file (replaced while read? try again)");
        } catch (IOException e) {
            throw new UsageException("cannot read the map: " + e);
        }
        ViewServer server = bind(port);
        server.publish(frame);
        out.println("meridian view: " + frame.n() + " points, " + frame.meta().path("clusterCount").asInt()
                + " clusters, from " + frame.meta().path("points").asText()
                + (frame.meta().path("clusters").isTextual() ? " and " + frame.meta().path("clusters").asText() : ""));
        say(out, server);
        return new Viewer(server, null);
    }

    /** {@code --compare A B}: B laid over A, in one page. */
    private static Viewer compare(CommandLine cl, List<String> paths, int port, PrintStream out) throws IOException {
        if (cl.flag("live") || cl.has("config")) {
            throw new UsageException("--compare shows two maps as they are; it takes no " + (cl.flag("live")
                    ? "--live" : "--config") + " (a live map's snapshot directory as A or B shows its current frame)");
        }
        if (paths.size() != 2) {
            throw new UsageException("--compare takes two maps, A and B, got " + paths.size() + " arguments"
                    + (paths.isEmpty() ? "" : ": " + String.join(" ", paths)));
        }
        MapComparison comparison;
        try {
            comparison = MapComparison.of(existingPoints(paths.get(0)), existingPoints(paths.get(1)));
        } catch (MapFileException e) {
            throw new UsageException(e.getMessage());
        } catch (BadInputException e) {
            throw new UsageException("cannot lay B over A: " + e.getMessage());
        } catch (NoSuchFileException e) {
            throw new UsageException(e.getFile() + ": no such file (replaced while read? try again)");
        } catch (IOException e) {
            throw new UsageException("cannot read the maps: " + e);
        }
        ViewServer server = bind(port);
        server.publish(comparison.frame());
        out.println("meridian view: A " + comparison.referenceN() + " points from " + comparison.referenceFile()
                + ", B " + comparison.mapN() + " points from " + comparison.mapFile());
        out.println("meridian view: " + comparison.summaryLine());
        say(out, server);
        return new Viewer(server, null);
    }

    /** The points.tsv of a map argument of {@code --compare} ({@link MapLoader#pointsFile}), which must exist. */
    private static Path existingPoints(String map) {
        Path path = Path.of(map).toAbsolutePath();
        if (!Files.exists(path)) {
            throw new UsageException(path + " does not exist");
        }
        Path points = MapLoader.pointsFile(path);
        if (!Files.isRegularFile(points)) {
            throw new UsageException(points + " is not a file");
        }
        return points;
    }

    /** The map of MAP [CLUSTERS]: files, output directories or a snapshot directory. */
    private static MapFrame load(Path map, Path clusters) throws IOException {
        if (!Files.exists(map)) {
            throw new UsageException(map + " does not exist");
        }
        if (clusters != null && !Files.exists(clusters)) {
            throw new UsageException(clusters + " does not exist");
        }
        Path points = Files.isDirectory(map) ? map.resolve(MapLoader.POINTS) : map;
        if (Files.isDirectory(map) && !Files.exists(points)) {
            if (!MapLoader.isSnapshotDirectory(map)) {
                throw new UsageException(map + " holds no " + MapLoader.POINTS + ": expected ./meridian mds's output"
                        + " directory or a live map snapshot directory (current -> frame-N/)");
            }
            if (clusters != null) {
                throw new UsageException(map + " is a live map snapshot directory, which has its own clusters;"
                        + " give it alone");
            }
            Path frame = MapLoader.currentFrame(map);
            if (frame == null) {
                throw new UsageException(map + " has no frame yet (no current link); to wait for the live map's"
                        + " frames: ./meridian view --live " + map);
            }
            return MapLoader.snapshot(map, frame);
        }
        if (Files.isDirectory(map) && clusters == null && MapLoader.isFrameDirectory(map)) {
            return MapLoader.snapshot(map.getParent(), map);
        }
        Path clustersFile = null;
        if (clusters != null) {
            clustersFile = Files.isDirectory(clusters) ? clusters.resolve(MapLoader.CLUSTERS) : clusters;
            if (!Files.exists(clustersFile)) {
                throw new UsageException(clusters + " holds no " + MapLoader.CLUSTERS + ": expected ./meridian pwc's"
                        + " output directory");
            }
        } else if (Files.isDirectory(map) && Files.exists(map.resolve(MapLoader.CLUSTERS))) {
            clustersFile = map.resolve(MapLoader.CLUSTERS);
        }
        return MapLoader.batch(points, clustersFile);
    }

    private static Path configured(CommandLine cl) {
        MeridianConfig config = cl.has("config") ? MeridianConfig.load(Path.of(cl.requiredString("config")))
                : MeridianConfig.loadResource(MeridianConfig.CLUSTER_DEFAULTS);
        return config.map().snapshotDirectory().toAbsolutePath();
    }

    private static String configName(CommandLine cl) {
        return cl.has("config") ? cl.string("config", "") : MeridianConfig.CLUSTER_DEFAULTS;
    }

    private static ViewServer bind(int port) throws IOException {
        try {
            return ViewServer.start(port);
        } catch (BindException e) {
            throw new UsageException("port " + port + " on 127.0.0.1 is in use: give another with --port N (0: any"
                    + " free port)");
        }
    }

    private static void say(PrintStream out, ViewServer server) {
        out.println("meridian view: open " + server.uri() + " in a browser (Ctrl-C stops the server)");
        out.flush();
    }
}
