package io.meridian.stream.live;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.meridian.live.Arrivals;
import io.meridian.live.Frame;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class PointUpdatesTest {
    private static final long MS = 1_000_000L;

    private record Sent(int id, double x, int label, long frame) {
    }

    private final List<Sent> sent = new ArrayList<>();
    /** The ids sent flagged as outliers, in the order sent. */
    private final List<Integer> sentAsOutliers = new ArrayList<>();
    private long now = 1_000 * MS;

    private PointUpdates updates(long intervalMillis) {
        return new PointUpdates(16, intervalMillis * MS, () -> now, (id, p, offset, label, outlier, frame) -> {
            sent.add(new Sent(id, p[offset], label, frame));
            if (outlier) {
                sentAsOutliers.add(id);
            }
        });
    }

    /** A frame of n points on the x axis at 10, 20, ..., point {@code moved} shifted by {@code shift}. */
    private static Frame frame(long number, int n, int moved, double shift) {
        return frame(number, n, moved, shift, new boolean[n]);
    }

    /** The same, with these outlier flags. */
    private static Frame frame(long number, int n, int moved, double shift, boolean[] outliers) {
        double[] points = new double[3 * n];
        int[] labels = new int[n];
        for (int i = 0; i < n; i++) {
            points[3 * i] = 10 * (i + 1) + (i == moved ? shift : 0);
        }
        int count = 0;
        for (boolean b : outliers) {
            count += b ? 1 : 0;
        }
        return new Frame(number, n, points, labels, outliers, 0.1, 0, 1, count, 0, 0, 0, false, 0, 0, 0, 0, 0, n, 0,
                false);
    }

    private static Arrivals arrival(long frame, int id, double x) {
        return arrival(frame, id, x, false);
    }

    private static Arrivals arrival(long frame, int id, double x, boolean outlier) {
        return new Arrivals(frame, 1, new int[] {id}, new double[] {x, 0, 0}, new int[] {0}, new boolean[] {outlier},
                0);
    }

    /**
     * A point whose outlier flag changes is sent though it has not moved, with its flag; a point flagged on arrival is
     * sent flagged.
     */
    @Test
    void aChangedOutlierFlagSendsThePointWithIt() {
        PointUpdates u = updates(0);
        u.frame(frame(1, 3, -1, 0));
        assertEquals(List.of(), sentAsOutliers);
        sent.clear();
        u.frame(frame(2, 3, -1, 0, new boolean[] {false, true, false}));
        assertEquals(List.of(new Sent(1, 20, 0, 2)), sent, "only the point whose flag changed");
        assertEquals(List.of(1), sentAsOutliers);
        sent.clear();
        sentAsOutliers.clear();
        u.frame(frame(3, 3, -1, 0, new boolean[] {false, true, false}));
        assertEquals(List.of(), sent, "unchanged: nothing sent");
        u.arrivals(arrival(3, 3, 99, true));
        assertEquals(List.of(3), sentAsOutliers, "flagged on arrival");
        sent.clear();
        sentAsOutliers.clear();
        u.frame(frame(4, 4, -1, 0, new boolean[] {false, false, false, true}));
        assertEquals(List.of(new Sent(1, 20, 0, 4), new Sent(3, 40, 0, 4)), sent,
                "point 1 no longer flagged; point 3 new in a frame (sent again, refined)");
        assertEquals(List.of(3), sentAsOutliers);
    }

    @Test
    void everyFrameSendsItsNewAndMovedPointsOnlyWithoutAnInterval() {
        PointUpdates u = updates(0);
        u.frame(frame(1, 3, -1, 0));
        assertEquals(List.of(new Sent(0, 10, 0, 1), new Sent(1, 20, 0, 1), new Sent(2, 30, 0, 1)), sent);
        sent.clear();
        u.frame(frame(2, 4, 1, 5)); // point 1 moved by 5, far more than 1e-3 of the radius; point 3 is new
        assertEquals(List.of(new Sent(1, 25, 0, 2), new Sent(3, 40, 0, 2)), sent);
        sent.clear();
        u.frame(frame(3, 4, 1, 5)); // nothing changed
        assertEquals(List.of(), sent);
        assertEquals(3, u.framesSent());
    }

    @Test
    void aFrameWithinTheIntervalIsHeldReplacedByANewerOneAndSentWhenItsTimeComes() {
        PointUpdates u = updates(200);
        u.frame(frame(1, 3, -1, 0));
        sent.clear();
        now += 50 * MS;
        u.frame(frame(2, 3, 0, 1));
        now += 50 * MS;
        u.frame(frame(3, 3, 0, 2));
        u.idle();
        assertEquals(List.of(), sent, "within 200 ms of the last frame sent, moved points wait");
        now += 100 * MS;
        u.idle();
        assertEquals(List.of(new Sent(0, 12, 0, 3)), sent, "the newest frame held, as it stands");
        assertEquals(1, u.framesReplaced());
        sent.clear();
        u.idle();
        assertEquals(List.of(), sent, "sent once");
    }

    @Test
    void newPointsGoOutAtOnceOnArrivalOrInTheirFrame() {
        PointUpdates u = updates(200);
        u.frame(frame(1, 2, -1, 0));
        sent.clear();
        now += 10 * MS;
        u.arrivals(arrival(1, 2, 31));
        assertEquals(List.of(new Sent(2, 31, 0, 1)), sent, "a point placed on arrival is sent at once");
        sent.clear();
        u.frame(frame(2, 3, 0, 3));
        assertEquals(List.of(), sent, "its frame, which only refines what was sent, waits for the interval");
        u.frame(frame(3, 4, 0, 3));
        assertEquals(List.of(new Sent(0, 13, 0, 3), new Sent(2, 30, 0, 3), new Sent(3, 40, 0, 3)), sent,
                "a frame with a point not sent on arrival goes out at once, with every point it holds anew");
        sent.clear();
        u.arrivals(arrival(1, 3, 41));
        assertEquals(List.of(), sent, "a point a sent frame holds is not sent again from an older placement");
    }

    @Test
    void closingSendsTheFrameHeldBack() {
        PointUpdates u = updates(60_000);
        u.frame(frame(1, 2, -1, 0));
        sent.clear();
        u.frame(frame(2, 2, 1, 4));
        u.idle();
        assertEquals(List.of(), sent);
        u.flush();
        assertEquals(List.of(new Sent(1, 24, 0, 2)), sent);
    }

    @Test
    void aNegativeIntervalIsRefused() {
        assertThrows(IllegalArgumentException.class, () -> updates(-1));
    }

    /**
     * Issue 32: what was last sent of each point grows with the frames. At a capacity of 1,000,000 the updates cost
     * what they cost at 8192 for a map of 4000 points growing frame by frame (sized for it: 28 MB), and send the same.
     */
    @Test
    void atACapacityOfOneMillionTheUpdatesCostWhatTheyCostAt8192AndSendTheSame() {
        List<Sent> small = new ArrayList<>();
        List<Sent> large = new ArrayList<>();
        long smallBytes = allocatedToSend(8192, small);
        long largeBytes = allocatedToSend(1_000_000, large);
        System.out.printf("the map's point updates, 4000 points: capacity 8192 %d bytes, 1,000,000 %d bytes%n",
                smallBytes, largeBytes);
        assertEquals(small, large);
        assertTrue(largeBytes < smallBytes + 1024, "capacity 1,000,000: " + largeBytes + " bytes, 8192: "
                + smallBytes);
    }

    /** Bytes a PointUpdates of {@code capacity} allocates sending frames that grow to 4000 points (made before). */
    private long allocatedToSend(int capacity, List<Sent> out) {
        List<Frame> frames = new ArrayList<>();
        for (int n = 500; n <= 4000; n += 500) {
            frames.add(frame(n / 500, n, n / 2, 7));
        }
        com.sun.management.ThreadMXBean mx = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long before = mx.getCurrentThreadAllocatedBytes();
        PointUpdates u = new PointUpdates(capacity, 0, () -> now, (id, p, offset, label, outlier, frame) -> {
            if (id % 97 == 0) {
                out.add(new Sent(id, p[offset], label, frame));
            }
        });
        for (Frame f : frames) {
            u.frame(f);
        }
        return mx.getCurrentThreadAllocatedBytes() - before; // with the test's own records, the same at either
    }
}
