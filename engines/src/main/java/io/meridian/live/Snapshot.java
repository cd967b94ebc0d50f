package io.meridian.live;

import io.meridian.shm.OwnerOnlyFiles;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * A live map read back from its last published frame ({@link SnapshotWriter}): what a map task resumes from after a
 * restart, since the map is derived state and the row stores are the source of truth. {@code outlierFlags}:
 * points.tsv's fifth column (all false in a frame written before it).
 */
public record Snapshot(SnapshotSummary summary, double[] points, int[] labels, boolean[] outlierFlags) {

    public int n() {
        return summary.points();
    }

    /**
     * The current frame in {@code directory} if it belongs to {@code job}, else null. The {@code current} link is
     * resolved once, so the files read belong to one frame even while a newer one is published.
     */
    public static Snapshot load(Path directory, String job) {
        return read(directory, job);
    }

    /**
     * The current frame in {@code directory} whichever map published it, else null: what a new submission resumes
     * from ({@code map.resumeFrom}).
     */
    public static Snapshot loadAny(Path directory) {
        return read(directory, null);
    }

    private static Snapshot read(Path directory, String job) {
        Path link = directory.resolve(SnapshotWriter.CURRENT);
        Path frame;
        try {
            if (!Files.exists(link)) {
                return null;
            }
            frame = link.toRealPath();
        } catch (IOException e) {
            return null;
        }
        SnapshotSummary summary;
        try {
            summary = SnapshotSummary.parse(Files.readString(frame.resolve(SnapshotWriter.SUMMARY_FILE),
                    StandardCharsets.UTF_8));
        } catch (IOException e) {
            return null; // deleted as a newer frame replaced it: the caller looks again
        }
        if (job != null && !summary.job().equals(OwnerOnlyFiles.sanitize(job))) {
            return null;
        }
        int n = summary.points();
        double[] points = new double[3 * n];
        int[] labels = new int[n];
        boolean[] outliers = new boolean[n];
        try {
            read(frame.resolve(SnapshotWriter.POINTS_FILE), n, (id, f) -> {
                for (int k = 0; k < 3; k++) {
                    points[3 * id + k] = Double.parseDouble(f[1 + k]);
                }
                outliers[id] = f.length > 4 && f[4].equals("1");
            });
            read(frame.resolve(SnapshotWriter.CLUSTERS_FILE), n, (id, f) -> labels[id] = Integer.parseInt(f[1]));
        } catch (IOException e) {
            return null;
        }
        return new Snapshot(summary, points, labels, outliers);
    }

    private interface Line {
        void accept(int id, String[] fields);
    }

    private static void read(Path file, int n, Line line) throws IOException {
        int count = 0;
        try (BufferedReader in = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            String s;
            while ((s = in.readLine()) != null) {
                String[] f = s.split("\t");
                int id = Integer.parseInt(f[0]);
                if (id < 0 || id >= n) {
                    throw new UncheckedIOException(new IOException(file + ": id " + id + " outside 0.." + (n - 1)));
                }
                line.accept(id, f);
                count++;
            }
        }
        if (count != n) {
            throw new IOException(file + " holds " + count + " points, its summary says " + n);
        }
    }
}
