package io.meridian.live;

import io.meridian.davs.FrozenSponge;
import io.meridian.mds.GrowingArrays;
import io.meridian.mds.TriangleSmacof;
import io.meridian.stream.row.RowStoreReader;
import java.util.Arrays;
import java.util.BitSet;
import java.util.SplittableRandom;
import java.util.function.IntToLongFunction;

/**
 * Shows each new point as soon as its row is stored, without waiting for the rounds: the publishing task places it
 * against the points of the last published frame, with the same single-point majorization the rounds use
 * ({@link Placement}, over the row's distances to every point of the frame), and labels it from the frozen DA-PWC
 * state, and flags it an outlier from the frozen DA-VS state ({@link FrozenSponge}, at the place it was put).
 * The rounds are collective: a stored row waits for the iteration under way, the next round's epoch, and, since
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
    private static final int WARM_UP_POINTS = 256;
    private static final long WARM_UP_PASSES = 40_000;
    /** AVX-512's doubles per vector. */
    private static final int WIDEST_VECTOR_DOUBLES = 8;

    private final RowStoreReader rows;
    private final Placement placement = new Placement(DIM, Placement.Options.DEFAULT, true);
    /** A row's distances to the frame's points, grown with the frames (sized for the capacity: 2 MB at 1,000,000). */
    private short[] row = new short[0];
    private final double[] one = new double[DIM];
    /** Ids decided (placed here, or left to the rounds) at or above {@link #floor}. */
    private final BitSet decided = new BitSet();
    private final int[] ids = new int[MAX_PER_CALL];
    private final double[] points = new double[DIM * MAX_PER_CALL];
    private final int[] labels = new int[MAX_PER_CALL];
    private final boolean[] outlierFlags = new boolean[MAX_PER_CALL];
    /** Every id below it is decided or in a frame. */
    private int floor;
    private long placedPoints;

    /** @param rows a reader of its own (one reading thread) over the map's row stores */
    public ArrivalPlacer(RowStoreReader rows) {
        this.rows = rows;
    }

    /**
     * Runs the vector pass until the JIT has had reason to compile it: before C2 has, the Vector API runs its
     * fallback code (a lambda call and a boxed vector per operation), and in bench stream the placement thread was
     * still sampled there 20-30 s into the stream, with the C2 queue full of the worker's own start-up code. Called
     * once, on the placing thread, before the first frame exists: about {@value #WARM_UP_PASSES} passes over maps of
     * {@value #WARM_UP_POINTS} made-up points or a few less, some distances missing. The sizes that are not a whole
     * number of vectors and the missing entries matter: warmed up on whole vectors only, C2 compiled the pass's scalar
     * tail and layOut's missing-entry branch as traps, the first real row (N = 99,500 in {@code bench scale --part
     * placement}) took them, and the placer ran the pass in the interpreter for about 1.1 s (JFR samples in the Vector
     * API's fallback code): stored -> shown p99 320-990 ms at N = 100,000 while its p50 was 8-9 ms.
     */
    public void warmUp() {
        int most = WARM_UP_POINTS;
        double[] map = new double[DIM * most];
        SplittableRandom random = new SplittableRandom(1);
        for (int i = 0; i < DIM * most; i++) {
            map[i] = random.nextDouble();
        }
        short[] distances = new short[most];
        long passes = 0;
        for (int point = 0; passes < WARM_UP_PASSES; point++) {
            int n = most - point % WIDEST_VECTOR_DOUBLES; // every remainder of a vector's lanes
            double x = random.nextDouble();
            double y = random.nextDouble();
            double z = random.nextDouble();
            for (int j = 0; j < n; j++) {
                double dx = x - map[DIM * j];
                double dy = y - map[DIM * j + 1];
                double dz = z - map[DIM * j + 2];
                // scaled into the 16-bit range (distances in the unit cube are below 2); one in 16 missing
                distances[j] = j % 16 == point % 16 ? -1
                        : (short) Math.round(Math.sqrt(dx * dx + dy * dy + dz * dz) / 2 * Short.MAX_VALUE);
            }
            placement.place(map, n, distances, null, one, 0);
            passes += placement.steps() + 1;
        }
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
        return place(frame, clusters, null, upTo, storedAt, notBeforeMillis);
    }

    /**
     * {@link #place(Frame, FrozenClusters, int, IntToLongFunction, long)}, each point also flagged from
     * {@code outliers}, the frozen DA-VS state (null: none flagged).
     */
    public Arrivals place(Frame frame, FrozenClusters clusters, FrozenSponge outliers, int upTo,
                          IntToLongFunction storedAt, long notBeforeMillis) {
        int n = frame.n();
        double[] mapped = frame.points();
        if (n == 0 || mapped.length < DIM * n) {
            return null;
        }
        int end = Math.min(upTo, rows.capacity());
        row = GrowingArrays.atLeast(row, n, rows.capacity());
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
            outlierFlags[count] = outliers != null && outliers.inSponge(one, 0);
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
        return new Arrivals(frame.frame(), count, Arrays.copyOf(ids, count),
                Arrays.copyOf(points, DIM * count), Arrays.copyOf(labels, count),
                Arrays.copyOf(outlierFlags, count), System.currentTimeMillis());
    }

    /**
     * Unmaps the blocks whose every row is below {@code id}: this placer reads only rows of points beyond the frame
     * it places against, so once frames hold them it never reads them again, and a deleted block file keeps its disk
     * space while it is mapped. This placer's thread; returns the blocks unmapped.
     */
    public int releaseRowsBelow(int id) {
        return rows.releaseBelow(id, block -> false);
    }

    @Override
    public void close() {
        rows.close();
    }
}
