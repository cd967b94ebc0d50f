package io.meridian.cli.view;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.List;

/**
 * Turns map files into {@link MapFrame}s: a batch map ({@code ./meridian mds}'s points.tsv, optionally coloured by
 * {@code ./meridian pwc}'s clusters.tsv) or one frame of a live map snapshot directory ({@code frame-N/} with
 * points.tsv, clusters.tsv and summary.json, as {@code SnapshotWriter} writes it). The figures the page shows in its
 * corner are taken from the summaries here, so the page reads one set of names whatever the source.
 */
public final class MapLoader {
    /** The live map's link to its newest frame ({@code SnapshotWriter.CURRENT}). */
    public static final String CURRENT = "current";
    public static final String POINTS = MapFiles.POINTS_FILE;
    public static final String CLUSTERS = MapFiles.CLUSTERS_FILE;
    private static final String FRAME_PREFIX = "frame-";

    /** How the page came to its map: batch files, a snapshot shown as it was, or a snapshot directory followed. */
    public enum Mode {
        BATCH("batch"), SNAPSHOT("snapshot"), LIVE("live");

        private final String json;

        Mode(String json) {
            this.json = json;
        }

        public String json() {
            return json;
        }
    }

    private MapLoader() {
    }

    /**
     * A batch map: the points of {@code pointsFile}, clustered by {@code clustersFile} (null: every point
     * unclustered); the summary.json beside each file (DA-MDS's stress, DA-PWC's clusters) when there is one.
     */
    public static MapFrame batch(Path pointsFile, Path clustersFile) throws IOException {
        MapFiles.Points points = MapFiles.readPointsAndOutliers(pointsFile);
        float[] xyz = points.xyzRowMajor();
        int n = points.n();
        int[] labels = clustersFile == null ? filled(n) : MapFiles.readClusters(clustersFile, n, pointsFile);
        ObjectNode meta = MapFiles.JSON.createObjectNode();
        meta.put("mode", Mode.BATCH.json());
        meta.put("points", pointsFile.toString());
        meta.put("clusters", clustersFile == null ? null : clustersFile.toString());
        meta.putNull("frame");
        ObjectNode mds = summaryBeside(pointsFile);
        meta.set("stress", mds == null ? null : mds.get("normalizedStress"));
        meta.putNull("temperature");
        meta.put("clusterCount", clusterCount(labels));
        meta.put("outlierCount", count(points.outliers()));
        ObjectNode summaries = meta.putObject("summaries");
        summaries.set("points", mds);
        summaries.set("clusters", clustersFile == null ? null : summaryBeside(clustersFile));
        meta.putArray("history");
        return new MapFrame(meta, xyz, labels, points.outliers());
    }

    /**
     * One frame of a snapshot directory, {@code frameDirectory} = {@code frame-N/} (the target of {@code current}).
     * A {@link NoSuchFileException} means the live map deleted the frame while it was read: look at current again.
     */
    public static MapFrame frame(Path frameDirectory, Mode mode) throws IOException {
        Path summaryFile = frameDirectory.resolve(MapFiles.SUMMARY_FILE);
        ObjectNode summary = MapFiles.readSummary(summaryFile);
        Path pointsFile = frameDirectory.resolve(MapFiles.POINTS_FILE);
        MapFiles.Points points = MapFiles.readPointsAndOutliers(pointsFile);
        float[] xyz = points.xyzRowMajor();
        int n = points.n();
        JsonNode said = summary.get("points");
        if (said != null && said.isNumber() && said.asLong() != n) {
            throw new MapFileException(pointsFile, "holds " + n + " points, " + summaryFile + " says "
                    + said.asLong());
        }
        Path clustersFile = frameDirectory.resolve(MapFiles.CLUSTERS_FILE);
        int[] labels = Files.exists(clustersFile) ? MapFiles.readClusters(clustersFile, n, pointsFile) : filled(n);
        ObjectNode meta = MapFiles.JSON.createObjectNode();
        meta.put("mode", mode.json());
        meta.put("points", pointsFile.toString());
        meta.put("clusters", clustersFile.toString());
        meta.set("frame", summary.get("frame"));
        meta.set("stress", summary.get("stress"));
        meta.set("temperature", summary.get("temperature"));
        meta.set("job", summary.get("job"));
        meta.set("placed", summary.get("placed"));
        meta.set("publishedAtMs", summary.get("published_at_ms"));
        meta.put("clusterCount", clusterCount(labels));
        meta.put("outlierCount", count(points.outliers()));
        meta.putObject("summaries").set("frame", summary);
        meta.putArray("history").add(historyEntry(summary, n));
        return new MapFrame(meta, xyz, labels, points.outliers());
    }

    /**
     * A snapshot shown as it is: {@code frameDirectory} of {@code snapshotDirectory}, with what the directory still
     * holds of the frames before it.
     */
    public static MapFrame snapshot(Path snapshotDirectory, Path frameDirectory) throws IOException {
        MapFrame f = frame(frameDirectory, Mode.SNAPSHOT);
        setHistory(f, history(snapshotDirectory), SnapshotFollower.HISTORY);
        return f;
    }

    /**
     * The points.tsv a map argument names: {@code map} itself when it is a file, else the points.tsv in the directory
     * ({@code ./meridian mds}'s or {@code align}'s output, one {@code frame-N/}), else, for a live map's snapshot
     * directory, its current frame's ({@link #currentFrame}). What {@code ./meridian align} and {@code view --compare}
     * read; {@code view MAP} also takes the frame's clusters and summary, through {@link #currentFrame}.
     *
     * @throws MapFileException for a directory that holds no points.tsv and is no snapshot directory, or a snapshot
     *                          directory with no frame yet
     */
    public static Path pointsFile(Path map) {
        if (!Files.isDirectory(map)) {
            return map;
        }
        Path points = map.resolve(POINTS);
        if (Files.exists(points)) {
            return points;
        }
        if (!isSnapshotDirectory(map)) {
            throw new MapFileException(map, "holds no " + POINTS + ": expected a " + POINTS + ", a directory holding"
                    + " one (./meridian mds's or align's --out) or a live map snapshot directory"
                    + " (current -> frame-N/)");
        }
        Path frame = currentFrame(map);
        if (frame == null) {
            throw new MapFileException(map, "a live map snapshot directory with no frame yet (no current link)");
        }
        return frame.resolve(POINTS);
    }

    /**
     * The {@code frame-N/} directory that {@code snapshotDirectory}'s {@code current} link names now, resolved once
     * (so that the files read from it belong to one frame while newer ones are published; the live map keeps the
     * previous frame for such a reader), or null when there is no frame yet.
     */
    public static Path currentFrame(Path snapshotDirectory) {
        try {
            return snapshotDirectory.resolve(CURRENT).toRealPath();
        } catch (IOException e) {
            return null;
        }
    }

    /** Whether {@code directory} is one frame of a live map ({@code frame-N/}: its summary.json has a frame). */
    public static boolean isFrameDirectory(Path directory) throws IOException {
        Path summary = directory.resolve(MapFiles.SUMMARY_FILE);
        return Files.isRegularFile(summary) && Files.isRegularFile(directory.resolve(POINTS))
                && MapFiles.readSummary(summary).has("frame");
    }

    /** Whether {@code directory} is a live map's snapshot directory (it has, or had, a {@code current} link). */
    public static boolean isSnapshotDirectory(Path directory) {
        return Files.isSymbolicLink(directory.resolve(CURRENT)) || Files.isDirectory(directory.resolve(CURRENT))
                || hasFrames(directory);
    }

    /**
     * {@code [frame, N, placed]} of every frame directory still in {@code snapshotDirectory} (the live map keeps the
     * last two), oldest first: what the page knows of the frames before the first it is sent.
     */
    static List<long[]> history(Path snapshotDirectory) {
        List<long[]> frames = new ArrayList<>();
        try (DirectoryStream<Path> dirs = Files.newDirectoryStream(snapshotDirectory, FRAME_PREFIX + "*")) {
            for (Path dir : dirs) {
                try {
                    ObjectNode s = MapFiles.readSummary(dir.resolve(MapFiles.SUMMARY_FILE));
                    frames.add(new long[] {s.path("frame").asLong(-1), s.path("points").asLong(0),
                        s.path("placed").asLong(0)});
                } catch (IOException | MapFileException e) {
                    // deleted meanwhile, or being written: not needed for the history
                }
            }
        } catch (IOException e) {
            return frames;
        }
        frames.sort((a, b) -> Long.compare(a[0], b[0]));
        return frames;
    }

    /**
     * Puts into {@code frame}'s meta the frames known before it ({@code [frame, N, placed]}, oldest first; those not
     * older than it are dropped) followed by its own entry, at most {@code keep} entries in all.
     */
    static void setHistory(MapFrame frame, List<long[]> earlier, int keep) {
        long number = frame.meta().path("frame").asLong(-1);
        ArrayNode own = (ArrayNode) frame.meta().withArray("history");
        List<long[]> older = new ArrayList<>();
        for (long[] e : earlier) {
            if (e[0] < number) {
                older.add(e);
            }
        }
        ArrayNode history = MapFiles.JSON.createArrayNode();
        for (long[] e : older.subList(Math.max(0, older.size() - (keep - own.size())), older.size())) {
            history.add(MapFiles.JSON.createArrayNode().add(e[0]).add(e[1]).add(e[2]));
        }
        history.addAll(own);
        frame.meta().set("history", history);
    }

    static ArrayNode historyEntry(JsonNode summary, int n) {
        ArrayNode e = MapFiles.JSON.createArrayNode();
        return e.add(summary.path("frame").asLong(-1)).add(n).add(summary.path("placed").asLong(0));
    }

    private static boolean hasFrames(Path directory) {
        try (DirectoryStream<Path> dirs = Files.newDirectoryStream(directory, FRAME_PREFIX + "*")) {
            return dirs.iterator().hasNext();
        } catch (IOException e) {
            return false;
        }
    }

    private static ObjectNode summaryBeside(Path file) throws IOException {
        Path summary = file.toAbsolutePath().resolveSibling(MapFiles.SUMMARY_FILE);
        return Files.isRegularFile(summary) ? MapFiles.readSummary(summary) : null;
    }

    private static int[] filled(int n) {
        int[] labels = new int[n];
        Arrays.fill(labels, -1);
        return labels;
    }

    private static int clusterCount(int[] labels) {
        BitSet seen = new BitSet();
        for (int l : labels) {
            if (l >= 0) {
                seen.set(l);
            }
        }
        return seen.cardinality();
    }

    private static int count(boolean[] flags) {
        int count = 0;
        for (boolean f : flags) {
            count += f ? 1 : 0;
        }
        return count;
    }
}
