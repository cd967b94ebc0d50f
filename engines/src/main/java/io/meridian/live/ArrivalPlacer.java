package io.meridian.live;

import io.meridian.mds.TriangleSmacof;
import io.meridian.stream.row.RowStoreReader;
import java.util.BitSet;
import java.util.function.IntToLongFunction;

/**
 * Shows each new point as soon as its row is stored, without waiting for the rounds: the publishing task places it
 * against the points of the last published frame, with the same single-point majorization the rounds use
 * ({@link Placement}, over the row's distances to every point of the frame), and labels it from the frozen DA-PWC
 * state. The rounds are collective: a stored row waits for the iteration under way, the next round's epoch, and, since
 * the map holds a prefix of the ids, for every lower id still in ingestion; on 2 cores shared by four map tasks and
 * the ingestion, that made most of the stored -> frame tail (bench stream, blobs, N = 4000: p99 256-602 ms). A point
 * placed here does not wait for lower ids either: its row holds its distances to every point of the frame. The rounds
 * place it again in the map they refine, and their next frame shows it refined. Rows reach the map in bursts of tens,
 * so the placement's own speed is the rest of the wait: it runs the vector pass (0.23 ms a point at N = 4000, the
 * scalar pass 1.18 ms; {@code ./meridian bench placement}).
 *
 * <p>Which ids it takes: those in {@code [frame n, upTo)} whose row is stored (a stored time > 0), readable here (a
 * block of another host's row store is not) and stored at or after {@code notBeforeMillis}; a row stored earlier is
 * left to the rounds (it would not be shown much sooner, and placing a backlog costs a core). Each id is placed at
 * most once. One thread.
 */
public final class ArrivalPlacer implements AutoCloseable {
    /** The most points one call places: a backlog is shown in parts, the newest frame used for each. */
    public static final int MAX_PER_CALL = 64;
    /**
     * A call returns once it has placed for this long, so that the first rows of a burst are shown while the later
     * ones are placed (rows reach the map in bursts of tens).
     */
    private static final long CALL_NANOS = 3_000_000L;
    private static final int DIM = TriangleSmacof.DIM;

    private final RowStoreReader rows;
    private final Placement placement = new Placement(DIM, Placement.Options.DEFAULT, true);
    private final short[] row;
    private final double[] one = new double[DIM];
    /** Ids decided (placed here, or left to the rounds) at or above {@link #floor}. */
    private final BitSet decided = new BitSet();
    private final int[] ids = new int[MAX_PER_CALL];
    private final double[] points = new double[DIM * MAX_PER_CALL];
    private final int[] labels = new int[MAX_PER_CALL];
    /** Every id below it is decided or in a frame. */
    private int floor;
    private long placedPoints;

    /** @param rows a reader of its own (one reading thread) over the map's row stores */
    public ArrivalPlacer(RowStoreReader rows) {
        this.rows = rows;
        this.row = new short[rows.width()];
    }

    /** Points placed so far. */
    public long placed() {
        return placedPoints;
    }

    /**
     * Places the new points described above against {@code frame}, up to {@link #MAX_PER_CALL} or as many as 3 ms
     * allow; returns them (arrays
     * of their own: they go to another thread), or null when there is none.
     *
     * @param frame    a frame with its points (the publishing task's)
     * @param clusters the frozen clustering for this thread, or null
     * @param upTo     one past the highest id stored
     * @param storedAt the time an id was stored, in ms (0: not yet)
     */
    public Arrivals place(Frame frame, FrozenClusters clusters, int upTo, IntToLongFunction storedAt,
                          long notBeforeMillis) {
        int n = frame.n();
        double[] mapped = frame.points();
        if (n == 0 || mapped.length < DIM * n) {
            return null;
        }
        int end = Math.min(upTo, rows.width());
        boolean label = clusters != null && clusters.points() <= n;
        int count = 0;
        long deadline = System.nanoTime() + CALL_NANOS;
        for (int id = Math.max(floor, n); id < end && count < MAX_PER_CALL; id++) {
            if (decided.get(id)) {
                continue;
            }
            long stored = storedAt.applyAsLong(id);
            if (stored == 0) {
                continue; // not stored yet: looked at again next time
            }
            decided.set(id);
            if (stored < notBeforeMillis || !rows.isStored(id)) {
                continue;
            }
            rows.copy(id, 0, n, row);
            try {
                placement.place(mapped, n, row, null, one, 0);
            } catch (IllegalArgumentException noDistance) {
                continue; // no distance to the frame's points says where it goes: the rounds place it
            }
            ids[count] = id;
            System.arraycopy(one, 0, points, DIM * count, DIM);
            labels[count] = label ? clusters.assign(row, null) : -1;
            count++;
            if (System.nanoTime() - deadline > 0) {
                break;
            }
        }
        if (floor < n) {
            decided.clear(floor, n); // in a frame now
            floor = n;
        }
        while (floor < end && decided.get(floor)) {
            decided.clear(floor);
            floor++;
        }
        if (count == 0) {
            return null;
        }
        placedPoints += count;
        return new Arrivals(frame.frame(), count, java.util.Arrays.copyOf(ids, count),
                java.util.Arrays.copyOf(points, DIM * count), java.util.Arrays.copyOf(labels, count),
                System.currentTimeMillis());
    }

    @Override
    public void close() {
        rows.close();
    }
}
