package io.meridian.perf.stream;

import io.meridian.live.SnapshotWriter;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;
import java.util.concurrent.locks.LockSupport;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Watches the live map's snapshot directory on a thread of its own and records the {@code summary.json} of every
 * frame it sees. The writer keeps the newest two {@code frame-NNNNNNNNN/} directories, so polling every
 * {@link #POLL_MILLIS} ms catches every frame unless two rounds finish within one poll; {@link #missed()} says how many
 * went by unseen.
 */
final class FrameLog implements AutoCloseable {
    static final long POLL_MILLIS = 5;
    private static final Pattern FRAME_DIR = Pattern.compile("frame-([0-9]{9})");

    /** One frame's figures, as {@code SnapshotWriter.summaryJson} writes them; times in seconds. */
    record FrameStat(long frame, int points, double stress, double temperature, int clusters, double drift, int placed,
                     int iterations, boolean annealed, double roundSeconds, double computeSeconds,
                     double collectiveSeconds, double placementSeconds, long staleness, long storedRows,
                     long publishedAtMs, long seenAtMs, boolean settled) {
    }

    private final Path directory;
    private final Thread thread;
    /** Written by the watcher thread; read by others under this object's lock. */
    private final TreeMap<Long, FrameStat> frames = new TreeMap<>();
    private volatile boolean stopping;
    private volatile long lastSeenAtMs;

    FrameLog(Path directory) {
        this.directory = directory;
        this.thread = new Thread(this::run, "bench-frame-log");
        thread.setDaemon(true);
        thread.start();
    }

    private void run() {
        while (!stopping) {
            poll();
            LockSupport.parkNanos(POLL_MILLIS * 1_000_000L);
        }
        poll();
    }

    private void poll() {
        if (!Files.isDirectory(directory)) {
            return;
        }
        List<Long> found = new ArrayList<>();
        try (DirectoryStream<Path> s = Files.newDirectoryStream(directory, "frame-*")) {
            for (Path p : s) {
                Matcher m = FRAME_DIR.matcher(p.getFileName().toString());
                if (m.matches()) {
                    found.add(Long.parseLong(m.group(1)));
                }
            }
        } catch (IOException e) {
            return; // a frame directory went away while listed: the next poll sees the new state
        }
        for (long f : found) {
            synchronized (this) {
                if (frames.containsKey(f)) {
                    continue;
                }
            }
            String json;
            try {
                json = Files.readString(directory.resolve(String.format("frame-%09d", f)).resolve(SnapshotWriter.SUMMARY_FILE),
                        StandardCharsets.UTF_8);
            } catch (IOException e) {
                continue; // deleted meanwhile
            }
            long now = System.currentTimeMillis();
            FrameStat stat = parse(json, now);
            synchronized (this) {
                frames.put(f, stat);
            }
            lastSeenAtMs = now;
        }
    }

    static FrameStat parse(String json, long seenAtMs) {
        return new FrameStat((long) number(json, "frame"), (int) number(json, "points"), number(json, "stress"),
                number(json, "temperature"), (int) number(json, "clusters"), number(json, "drift"),
                (int) number(json, "placed"), (int) number(json, "iterations"), json.contains("\"annealed\": true"),
                number(json, "round_seconds"), number(json, "compute_seconds"), number(json, "collective_seconds"),
                number(json, "placement_seconds"), (long) number(json, "staleness"), (long) number(json, "stored_rows"),
                (long) number(json, "published_at_ms"), seenAtMs, json.contains("\"settled\": true"));
    }

    private static double number(String json, String key) {
        Matcher m = Pattern.compile("\"" + key + "\": (null|-?[0-9.eE+-]+)").matcher(json);
        if (!m.find() || m.group(1).equals("null")) {
            return Double.NaN;
        }
        return Double.parseDouble(m.group(1));
    }

    synchronized List<FrameStat> frames() {
        return new ArrayList<>(frames.values());
    }

    synchronized FrameStat last() {
        return frames.isEmpty() ? null : frames.lastEntry().getValue();
    }

    synchronized FrameStat frame(long f) {
        return frames.get(f);
    }

    /** Wall time this watcher last saw a new frame (0: none yet). */
    long lastSeenAtMs() {
        return lastSeenAtMs;
    }

    /** Frames numbered below the newest seen that this watcher never saw. */
    synchronized long missed() {
        return frames.isEmpty() ? 0 : frames.lastKey() - frames.size();
    }

    @Override
    public void close() throws InterruptedException {
        stopping = true;
        thread.join(5000);
    }
}
