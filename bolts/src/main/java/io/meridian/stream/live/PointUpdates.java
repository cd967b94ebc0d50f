package io.meridian.stream.live;

import io.meridian.live.Arrivals;
import io.meridian.live.Frame;
import io.meridian.mds.GrowingArrays;
import java.util.Arrays;
import java.util.BitSet;
import java.util.function.LongSupplier;

/**
 * Decides which points of the live map go to the updates topic, and when (the {@link KafkaFramePublisher} sends them).
 * A frame's point counts as changed when it is new, its cluster or outlier flag changed, or it moved by more than
 * {@link #MOVE_FRACTION} of the map's RMS radius since it was last sent. A point shown ahead of the rounds
 * ({@link Arrivals}) is sent with the frame it was placed against, unless a frame sent already holds it; the first
 * frame that holds it sends it again, refined.
 *
 * <p>Frames are sent at most every {@code intervalNanos} (0: every one); a frame that comes sooner is held and sent
 * when its time comes ({@link #idle}) unless a newer one replaces it, or at once if it holds a new point not sent on
 * arrival. Why: refining uniform data, the map makes a frame every 30-60 ms, each moving nearly every point by more
 * than {@code MOVE_FRACTION}, so the topic took 4,000 records a frame, 60,000-130,000 a second at N = 4000, and the
 * producer, the broker and the topic's consumers took the CPU that ingestion and the placement need (bench stream,
 * uniform). A point is sent as it stands against what was last sent, so a held frame loses only positions in between.
 * One thread.
 */
final class PointUpdates {
    static final double MOVE_FRACTION = 1e-3;

    /** Where the chosen points go: one record per point. */
    interface Sink {
        void send(int id, double[] points, int offset, int label, boolean outlier, long frame);
    }

    private final Sink sink;
    private final LongSupplier nanoClock;
    private final long intervalNanos;
    /** The most points (the map's capacity): the arrays below grow with the frames up to it. */
    private final int capacity;
    /** What was last sent of each point of the frames sent: 28 MB at a capacity of 1,000,000 sized for it. */
    private double[] sent = new double[0];
    private int[] sentLabels = new int[0];
    private boolean[] sentOutliers = new boolean[0];
    /** Every id below it is in a frame sent. */
    private int sentPoints;
    /** Ids at or above {@link #sentPoints} sent on arrival. */
    private final BitSet sentOnArrival = new BitSet();
    private long lastFrameSentNanos;
    private Frame held;
    private long framesSent;
    private long framesReplaced;

    PointUpdates(int capacity, long intervalNanos, LongSupplier nanoClock, Sink sink) {
        if (intervalNanos < 0) {
            throw new IllegalArgumentException("the interval between frames must be >= 0, got " + intervalNanos);
        }
        if (capacity < 1) {
            throw new IllegalArgumentException("capacity must be at least 1, got " + capacity);
        }
        this.capacity = capacity;
        this.sink = sink;
        this.nanoClock = nanoClock;
        this.intervalNanos = intervalNanos;
        this.lastFrameSentNanos = nanoClock.getAsLong() - intervalNanos;
    }

    void frame(Frame f) {
        if (nanoClock.getAsLong() - lastFrameSentNanos < intervalNanos && !holdsUnsentPoint(f)) {
            if (held != null) {
                framesReplaced++;
            }
            held = f;
            return;
        }
        send(f);
    }

    /** Sends the frame held back, if its time has come. */
    void idle() {
        if (held != null && nanoClock.getAsLong() - lastFrameSentNanos >= intervalNanos) {
            send(held);
        }
    }

    /** Sends the frame held back, if any, whatever the time: the map's last state is on the topic. */
    void flush() {
        if (held != null) {
            send(held);
        }
    }

    void arrivals(Arrivals a) {
        for (int k = 0; k < a.count(); k++) {
            int id = a.ids()[k];
            if (id >= sentPoints) {
                sink.send(id, a.points(), 3 * k, a.labels()[k], a.outlierFlags()[k], a.frame());
                sentOnArrival.set(id);
            }
        }
    }

    long framesSent() {
        return framesSent;
    }

    /** Frames held back and replaced by a newer one before their time came. */
    long framesReplaced() {
        return framesReplaced;
    }

    private boolean holdsUnsentPoint(Frame f) {
        return sentOnArrival.nextClearBit(sentPoints) < f.n();
    }

    private void send(Frame f) {
        held = null;
        lastFrameSentNanos = nanoClock.getAsLong();
        framesSent++;
        double[] p = f.points();
        int[] labels = f.labels();
        boolean[] outliers = f.outlierFlags();
        sent = GrowingArrays.atLeast(sent, 3 * f.n(), 3 * capacity);
        sentLabels = GrowingArrays.atLeast(sentLabels, f.n(), capacity);
        if (sentOutliers.length < f.n()) {
            sentOutliers = Arrays.copyOf(sentOutliers, GrowingArrays.grownLength(sentOutliers.length, f.n(),
                    capacity));
        }
        double limit = MOVE_FRACTION * radius(p, f.n());
        for (int i = 0; i < f.n(); i++) {
            double dx = p[3 * i] - sent[3 * i];
            double dy = p[3 * i + 1] - sent[3 * i + 1];
            double dz = p[3 * i + 2] - sent[3 * i + 2];
            boolean changed = i >= sentPoints || labels[i] != sentLabels[i] || outliers[i] != sentOutliers[i]
                    || dx * dx + dy * dy + dz * dz > limit * limit;
            if (changed) {
                sink.send(i, p, 3 * i, labels[i], outliers[i], f.frame());
                System.arraycopy(p, 3 * i, sent, 3 * i, 3);
                sentLabels[i] = labels[i];
                sentOutliers[i] = outliers[i];
            }
        }
        if (f.n() > sentPoints) {
            sentOnArrival.clear(sentPoints, f.n());
            sentPoints = f.n();
        }
    }

    static double radius(double[] p, int n) {
        double cx = 0;
        double cy = 0;
        double cz = 0;
        for (int i = 0; i < n; i++) {
            cx += p[3 * i];
            cy += p[3 * i + 1];
            cz += p[3 * i + 2];
        }
        cx /= Math.max(1, n);
        cy /= Math.max(1, n);
        cz /= Math.max(1, n);
        double s = 0;
        for (int i = 0; i < n; i++) {
            double dx = p[3 * i] - cx;
            double dy = p[3 * i + 1] - cy;
            double dz = p[3 * i + 2] - cz;
            s += dx * dx + dy * dy + dz * dz;
        }
        return Math.sqrt(s / Math.max(1, n));
    }
}
