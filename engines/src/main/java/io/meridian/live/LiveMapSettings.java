package io.meridian.live;

import io.meridian.mds.OwnedIds;

/**
 * How a live map runs. {@code capacity}: the most points (the row stores' width); {@code blockRows}: rows per row-store
 * block, the unit of ownership (task t of {@code tasks} owns the blocks b with b mod tasks = t, so that the work stays
 * even while the map grows); {@code initialPoints}: rows stored before the first full anneal (N0);
 * {@code iterationsPerRound}: SMACOF iterations a round may run (K); {@code threshold}: a round stops early once the
 * stress changes by less than this fraction; {@code reannealGrowth}: re-anneal (warm) when the map has grown by this
 * factor since the last anneal; {@code reannealDegradation}: ...or when its stress has risen by this fraction;
 * {@code alpha} and {@code tminFactor}: the annealing schedule (as {@code ./meridian mds}); {@code maxClusters}: DA-PWC's
 * limit; {@code seed}: the initial random layout.
 */
public record LiveMapSettings(int capacity, int blockRows, int tasks, int initialPoints, int iterationsPerRound,
                              double threshold, double reannealGrowth, double reannealDegradation, double alpha,
                              double tminFactor, int maxClusters, long seed) {
    public LiveMapSettings {
        require(capacity >= 2, "capacity must be at least 2, got " + capacity);
        require(blockRows >= 1 && blockRows <= capacity, "blockRows must be in 1.." + capacity + ", got " + blockRows);
        require(tasks >= 1, "tasks must be at least 1, got " + tasks);
        require(initialPoints >= 4 && initialPoints <= capacity, "initialPoints must be in 4.." + capacity + ", got "
                + initialPoints);
        require(iterationsPerRound >= 1, "iterationsPerRound must be at least 1, got " + iterationsPerRound);
        require(threshold > 0 && threshold < 1, "threshold must be in (0, 1), got " + threshold);
        require(reannealGrowth > 1, "reannealGrowth must exceed 1, got " + reannealGrowth);
        require(reannealDegradation > 0, "reannealDegradation must be positive, got " + reannealDegradation);
        require(alpha > 0 && alpha < 1, "alpha must be in (0, 1), got " + alpha);
        require(tminFactor > 0, "tminFactor must be positive, got " + tminFactor);
        require(maxClusters >= 1, "maxClusters must be at least 1, got " + maxClusters);
    }

    private static void require(boolean ok, String message) {
        if (!ok) {
            throw new IllegalArgumentException(message);
        }
    }

    /** The task of {@code tasks} that owns row block {@code block}: the one rule of ownership. */
    public static int ownerOfBlock(int block, int tasks) {
        return block % tasks;
    }

    /**
     * The ids task {@code task} owns (the blocks whose {@link #ownerOfBlock} it is), listed as the map grows: a list of
     * them all, held twice, took 2 MB a task at a capacity of 1,000,000 in 4 tasks, before the first point.
     */
    public OwnedIds owned(int task) {
        return OwnedIds.ofBlocks(capacity, blockRows, b -> ownerOfBlock(b, tasks) == task);
    }

    /**
     * For every task, the ids below {@code n} it owns, ascending ({@link #ownerOfBlock}): how a DA-PWC run over the
     * map's first n points shares its rows among the tasks ({@code PwcEngine.overLowerRows}). O(n).
     */
    public int[][] ownedBelow(int n) {
        int bound = Math.min(n, capacity);
        int[] counts = new int[tasks];
        for (int block = 0; block * blockRows < bound; block++) {
            counts[ownerOfBlock(block, tasks)] += Math.min(bound, (block + 1) * blockRows) - block * blockRows;
        }
        int[][] owned = new int[tasks][];
        for (int t = 0; t < tasks; t++) {
            owned[t] = new int[counts[t]];
        }
        int[] filled = new int[tasks];
        for (int id = 0; id < bound; id++) {
            int t = ownerOfBlock(id / blockRows, tasks);
            owned[t][filled[t]++] = id;
        }
        return owned;
    }

    /** The smallest id above {@code id} that task {@code task} owns, or {@code capacity} when there is none. */
    public int nextOwnedId(int task, int id) {
        int next = id + 1;
        if (next >= capacity) {
            return capacity;
        }
        int block = next / blockRows;
        if (ownerOfBlock(block, tasks) == task) {
            return next;
        }
        int blocks = (capacity + blockRows - 1) / blockRows;
        for (int b = block + 1; b < blocks; b++) {
            if (ownerOfBlock(b, tasks) == task) {
                return b * blockRows;
            }
        }
        return capacity;
    }
}
