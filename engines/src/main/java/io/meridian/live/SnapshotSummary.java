package io.meridian.live;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The figures of a live map snapshot's {@code summary.json}, as {@link SnapshotWriter} writes them ({@code outliers}:
 * 0 in a summary written before the outlier flags).
 */
public record SnapshotSummary(String job, long frame, int points, double stress, double temperature, int clusters,
                              int outliers, double drift,
                              int placed, int iterations, boolean annealed, double roundSeconds, long staleness,
                              long storedRows, long publishedAtMillis, boolean settled) {

    /** The current snapshot of {@code directory}, or null when none was published yet (or it is being replaced). */
    public static SnapshotSummary readCurrent(Path directory) {
        Path file = directory.resolve(SnapshotWriter.CURRENT).resolve(SnapshotWriter.SUMMARY_FILE);
        String json;
        try {
            json = Files.readString(file, StandardCharsets.UTF_8);
        } catch (NoSuchFileException e) {
            return null;
        } catch (IOException e) {
            return null; // replaced while read: the next look sees the new one
        }
        return parse(json);
    }

    static SnapshotSummary parse(String json) {
        Matcher job = Pattern.compile("\"job\": \"([^\"]*)\"").matcher(json);
        return new SnapshotSummary(job.find() ? job.group(1) : "",
                (long) number(json, "frame"), (int) number(json, "points"), number(json, "stress"),
                number(json, "temperature"), (int) number(json, "clusters"), (int) number(json, "outliers"),
                number(json, "drift"),
                (int) number(json, "placed"), (int) number(json, "iterations"),
                json.contains("\"annealed\": true"), number(json, "round_seconds"), (long) number(json, "staleness"),
                (long) number(json, "stored_rows"), (long) number(json, "published_at_ms"),
                json.contains("\"settled\": true"));
    }

    private static double number(String json, String key) {
        Matcher m = Pattern.compile("\"" + key + "\": (null|-?[0-9.eE+-]+)").matcher(json);
        if (!m.find() || m.group(1).equals("null")) {
            return Double.NaN;
        }
        return Double.parseDouble(m.group(1));
    }
}
