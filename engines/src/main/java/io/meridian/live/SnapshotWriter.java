package io.meridian.live;

import io.meridian.shm.OwnerOnlyFiles;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Writes each frame as a snapshot directory that readers always see whole: {@code frame-NNNNNNNNN/} holds
 * {@code points.tsv} (id, x, y, z, outlier: 1 or 0, {@link Frame#outlierFlags}), {@code clusters.tsv} (id, cluster)
 * and {@code summary.json}; then the link {@code current} is pointed at it by renaming a fresh link over it (an atomic
 * replace). Older frame directories are deleted, keeping the previous one for a reader still inside it. The same
 * files as {@code ./meridian mds} and {@code ./meridian pwc} write, so a snapshot reads like a batch output;
 * points.tsv's outlier column comes last, so a reader of the first four fields reads it as before.
 */
public final class SnapshotWriter implements FrameListener {
    public static final String CURRENT = "current";
    public static final String POINTS_FILE = "points.tsv";
    public static final String CLUSTERS_FILE = "clusters.tsv";
    public static final String SUMMARY_FILE = "summary.json";
    private static final int KEEP = 2;

    private final Path directory;
    private final String job;
    private final StringBuilder text = new StringBuilder();
    /** The points of the frame {@link #CURRENT} names, once written (0 before): what a resumed map starts from. */
    private volatile int currentPoints;

    /** @param job names the map (the topology) in every summary, so a restarted task resumes only its own map */
    public SnapshotWriter(Path directory, String job) {
        this.directory = directory;
        this.job = job;
        try {
            Files.createDirectories(directory);
        } catch (IOException e) {
            throw new UncheckedIOException("snapshot directory " + directory + ": " + e.getMessage(), e);
        }
    }

    /**
     * The points of the last frame written whole and made current (0 before the first): a map that resumes resumes
     * from it, so rows below it are in every later generation's map.
     */
    public int currentPoints() {
        return currentPoints;
    }

    public Path directory() {
        return directory;
    }

    @Override
    public void onFrame(Frame f) {
        try {
            String name = String.format(Locale.ROOT, "frame-%09d", f.frame());
            Path dir = directory.resolve(name);
            Path tmp = directory.resolve("." + name + ".tmp");
            Files.createDirectories(tmp);
            // Double.toString, not String.format("%.9g"): 4x cheaper (a frame of 4,000 points took 8-13 ms of the
            // publisher's core), and exact, so a task resuming from the snapshot holds the map it published
            text.setLength(0);
            double[] p = f.points();
            boolean[] outliers = f.outlierFlags();
            for (int i = 0; i < f.n(); i++) {
                text.append(i).append('\t').append(p[3 * i]).append('\t').append(p[3 * i + 1]).append('\t')
                        .append(p[3 * i + 2]).append('\t').append(outliers[i] ? '1' : '0').append('\n');
            }
            Files.writeString(tmp.resolve(POINTS_FILE), text, StandardCharsets.UTF_8);
            text.setLength(0);
            for (int i = 0; i < f.n(); i++) {
                text.append(i).append('\t').append(f.labels()[i]).append('\n');
            }
            Files.writeString(tmp.resolve(CLUSTERS_FILE), text, StandardCharsets.UTF_8);
            Files.writeString(tmp.resolve(SUMMARY_FILE), summaryJson(f, job), StandardCharsets.UTF_8);
            Files.move(tmp, dir, StandardCopyOption.ATOMIC_MOVE);
            Path link = directory.resolve("." + CURRENT + ".tmp");
            Files.deleteIfExists(link);
            Files.createSymbolicLink(link, Path.of(name));
            try {
                Files.move(link, directory.resolve(CURRENT), StandardCopyOption.ATOMIC_MOVE,
                        StandardCopyOption.REPLACE_EXISTING);
            } catch (AtomicMoveNotSupportedException e) {
                throw new IOException(directory + " does not support atomic rename", e);
            }
            currentPoints = f.n();
            deleteOld(name);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write frame " + f.frame() + " to " + directory + ": "
                    + e.getMessage(), e);
        }
    }

    private void deleteOld(String newest) throws IOException {
        List<String> frames = new ArrayList<>();
        try (DirectoryStream<Path> s = Files.newDirectoryStream(directory, "frame-*")) {
            for (Path p : s) {
                frames.add(p.getFileName().toString());
            }
        }
        frames.sort(null);
        for (int k = 0; k < frames.size() - KEEP; k++) {
            if (!frames.get(k).equals(newest)) {
                Path old = directory.resolve(frames.get(k));
                try (DirectoryStream<Path> files = Files.newDirectoryStream(old)) {
                    for (Path f : files) {
                        Files.deleteIfExists(f);
                    }
                }
                Files.deleteIfExists(old);
            }
        }
    }

    /** The frame's figures as JSON (also what {@code ./meridian status} shows of the map). */
    public static String summaryJson(Frame f, String job) {
        return String.format(Locale.ROOT, "{\n  \"job\": \"%s\",\n  \"frame\": %d,\n  \"points\": %d,\n  \"stress\": %s,\n"
                        + "  \"temperature\": %s,\n  \"clusters\": %d,\n  \"outliers\": %d,\n  \"drift\": %s,\n"
                        + "  \"placed\": %d,\n"
                        + "  \"iterations\": %d,\n  \"annealed\": %b,\n  \"round_seconds\": %s,\n"
                        + "  \"compute_seconds\": %s,\n  \"collective_seconds\": %s,\n  \"placement_seconds\": %s,\n"
                        + "  \"staleness\": %d,\n  \"stored_rows\": %d,\n  \"published_at_ms\": %d,\n  \"settled\": %b\n}\n",
                OwnerOnlyFiles.sanitize(job), f.frame(), f.n(), exact(f.stress()), num(f.temperature()), f.clusters(),
                f.outliers(), num(f.drift()), f.placed(),
                f.iterations(), f.annealed(), num(f.roundSeconds()), num(f.computeSeconds()),
                num(f.collectiveSeconds()), num(f.placementSeconds()), f.staleness(), f.storedRows(),
                f.publishedAtMillis(), f.settled());
    }

    /** All the digits of a double (the stress: runs are compared by it, to rounding). */
    private static String exact(double v) {
        return Double.isFinite(v) ? Double.toString(v) : "null";
    }

    private static String num(double v) {
        return Double.isFinite(v) ? String.format(Locale.ROOT, "%.6g", v) : "null";
    }

}
