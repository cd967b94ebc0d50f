package io.meridian.mds;

import java.util.function.IntPredicate;

/**
 * The row ids a participant of {@link TriangleSmacof} owns, ascending, listed only as far as the map has grown
 * ({@link #cover}): a live map of capacity 1,000,000 in 4 tasks held its 250,000 owned ids twice (2 MB a task) before
 * its first point. Either a fixed list, or the ids of the row blocks a rule gives this participant.
 */
public final class OwnedIds {
    private final int capacity;
    private final int blockRows;
    private final IntPredicate ownsBlock;
    private int[] ids;
    private int count;
    /** Every owned id below it is listed. */
    private int coveredBelow;

    private OwnedIds(int capacity, int blockRows, IntPredicate ownsBlock, int[] ids, int count, int coveredBelow) {
        this.capacity = capacity;
        this.blockRows = blockRows;
        this.ownsBlock = ownsBlock;
        this.ids = ids;
        this.count = count;
        this.coveredBelow = coveredBelow;
    }

    /** A fixed list: ascending ids below {@code capacity}. */
    public static OwnedIds of(int[] ids, int capacity) {
        for (int k = 0; k < ids.length; k++) {
            if (ids[k] < 0 || ids[k] >= capacity || (k > 0 && ids[k] <= ids[k - 1])) {
                throw new IllegalArgumentException("owned rows must be ascending ids below " + capacity + ", got "
                        + ids[k] + " at position " + k);
            }
        }
        return new OwnedIds(capacity, 1, b -> false, ids.clone(), ids.length, capacity);
    }

    /** The ids of every block of {@code blockRows} rows (below {@code capacity}) that {@code ownsBlock} accepts. */
    public static OwnedIds ofBlocks(int capacity, int blockRows, IntPredicate ownsBlock) {
        if (capacity < 1 || blockRows < 1) {
            throw new IllegalArgumentException("capacity " + capacity + " and block rows " + blockRows
                    + " must be positive");
        }
        return new OwnedIds(capacity, blockRows, ownsBlock, new int[0], 0, 0);
    }

    /** Lists every owned id below {@code n} (at most the capacity); allocates only when the list grows. */
    public void cover(int n) {
        int bound = Math.min(n, capacity);
        if (bound <= coveredBelow) {
            return;
        }
        // whole blocks, so that the list's end is always a block's end (or the capacity)
        int firstBlock = coveredBelow / blockRows;
        int lastBlock = (bound - 1) / blockRows;
        int end = Math.min(capacity, (lastBlock + 1) * blockRows);
        int needed = count;
        for (int b = firstBlock; b <= lastBlock; b++) {
            if (ownsBlock.test(b)) {
                needed += Math.min(blockRows, capacity - b * blockRows);
            }
        }
        ids = GrowingArrays.atLeast(ids, needed, capacity);
        for (int b = firstBlock; b <= lastBlock; b++) {
            if (ownsBlock.test(b)) {
                for (int i = b * blockRows; i < Math.min(capacity, (b + 1) * blockRows); i++) {
                    ids[count++] = i;
                }
            }
        }
        coveredBelow = end;
    }

    /** The listed ids: {@code ids()[0 .. count()-1]} (the array may be longer). Replaced when the list grows. */
    public int[] ids() {
        return ids;
    }

    public int count() {
        return count;
    }
}
