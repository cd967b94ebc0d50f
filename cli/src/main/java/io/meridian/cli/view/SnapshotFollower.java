package io.meridian.cli.view;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/**
 * Follows a live map's snapshot directory: every {@link #POLL_MS} it resolves {@code current} and, when the link names
 * a frame directory it has not shown, reads that frame and hands it on (to {@link ViewServer#publish}). The live map
 * writes a frame whole before it points {@code current} at it, and keeps the previous frame directory while a reader
 * may be inside it, so a frame read through the resolved link is one frame; a frame deleted while it was read (the
 * map moved on twice) is simply looked for again. Frames published faster than the poll are skipped: the page
 * animates to the newest. A frame that cannot be read is reported once on {@code err} and the last good one stays.
 * <p>
 * One thread, {@code meridian-view-follower}, owns every field; others only read the counters and set
 * {@link #running}.
 */
public final class SnapshotFollower implements AutoCloseable {
    /** Resolving one symbolic link costs microseconds; 100 ms keeps the page within a tenth of a second. */
    static final long POLL_MS = 100;
    /** Frames remembered for the page's "new since" highlight. */
    static final int HISTORY = 64;

    private final Path directory;
    private final Consumer<MapFrame> publish;
    private final PrintStream err;
    private final List<long[]> history;
    private final Thread thread;
    private volatile boolean running = true;
    private Path shown;
    private Path failed;
    private volatile long framesShown;
    private volatile long framesFailed;

    public SnapshotFollower(Path directory, Consumer<MapFrame> publish, PrintStream err) {
        this.directory = directory;
        this.publish = publish;
        this.err = err;
        this.history = new ArrayList<>(MapLoader.history(directory));
        this.thread = new Thread(this::run, "meridian-view-follower");
        this.thread.setDaemon(true);
    }

    public SnapshotFollower start() {
        thread.start();
        return this;
    }

    /** One look at {@code current}: 1 when a new frame was read and handed on, else 0. */
    int doWork() {
        Path target;
        try {
            target = directory.resolve(MapLoader.CURRENT).toRealPath();
        } catch (IOException e) {
            return 0; // no frame yet, or current replaced this instant
        }
        if (target.equals(shown) || target.equals(failed)) {
            return 0;
        }
        MapFrame frame;
        try {
            frame = MapLoader.frame(target, MapLoader.Mode.LIVE);
        } catch (NoSuchFileException e) {
            return 0;
        } catch (IOException | MapFileException e) {
            failed = target;
            framesFailed++;
            err.println("meridian view: cannot show " + target + ": " + e.getMessage()
                    + (shown == null ? "" : " (still showing " + shown.getFileName() + ")"));
            return 0;
        }
        MapLoader.setHistory(frame, history, HISTORY);
        history.clear();
        frame.meta().withArray("history").forEach(e -> history.add(new long[] {e.get(0).asLong(),
            e.get(1).asLong(), e.get(2).asLong()}));
        shown = target;
        framesShown++;
        frame.meta().put("framesUnreadable", framesFailed);
        publish.accept(frame);
        return 1;
    }

    /** Frames read and handed on. */
    public long framesShown() {
        return framesShown;
    }

    /** Frames that could not be read (each reported once on err). */
    public long framesFailed() {
        return framesFailed;
    }

    private void run() {
        while (running) {
            if (doWork() == 0) {
                try {
                    Thread.sleep(POLL_MS);
                } catch (InterruptedException e) {
                    return;
                }
            }
        }
    }

    @Override
    public void close() {
        running = false;
        thread.interrupt();
    }
}
