package io.meridian.stream.ingest;

import io.meridian.stream.row.DistanceRow;
import io.meridian.stream.row.BlockRowStore;
/**
 * The checks a row must pass before it reaches a row store, other than those needing the store's state
 * (out of order, conflicting replay; see {@link BlockRowStore}). Not thread-safe: one per bolt task; the last
 * rejection's detail is kept in a field so the accept path allocates nothing.
 */
public final class RowValidator {
    private final int maxPoints;
    private final DistanceRow row = new DistanceRow();
    private String detail;

    /** @param maxPoints the universe capacity: ids are 0..maxPoints-1 and a row has at most maxPoints distances */
    public RowValidator(int maxPoints) {
        this.maxPoints = maxPoints;
    }

    /** The row of the last {@link #check} call, valid until the next call. */
    public DistanceRow row() {
        return row;
    }

    /** What was wrong with the last rejected row, one line. */
    public String detail() {
        return detail;
    }

    /** Null when {@code bytes} is an acceptable row (then {@link #row()} reads it), else the reason. */
    public RejectReason check(byte[] bytes) {
        String problem = row.wrap(bytes);
        if (problem != null) {
            detail = problem;
            return RejectReason.MALFORMED;
        }
        int id = row.id();
        int count = row.count();
        if (id < 0 || id >= maxPoints) {
            detail = "id " + id + " is outside 0.." + (maxPoints - 1) + " (ingest.maxPoints " + maxPoints + ")";
            return RejectReason.ID_OUT_OF_RANGE;
        }
        if (row.isFull() ? count <= id || count > maxPoints : count != id) {
            detail = row.isFull()
                    ? "full row " + id + " has " + count + " distances; needs more than " + id + " and at most " + maxPoints
                    : "row " + id + " has " + count + " distances; a row must have one per earlier point (" + id + ")";
            return RejectReason.WRONG_LENGTH;
        }
        RejectReason r = checkValues(false);
        if (r == null && row.hasWeights()) {
            r = checkValues(true);
        }
        return r;
    }

    private RejectReason checkValues(boolean weights) {
        int count = row.count();
        String what = weights ? "weight" : "distance";
        if (row.isFloat32()) {
            for (int j = 0; j < count; j++) {
                float v = weights ? row.weight(j) : row.distance(j);
                if (v >= 0f && v <= 1f || v == -1f) {
                    continue;
                }
                detail = what + " " + j + " of row " + row.id() + " is " + v;
                if (weights) {
                    detail += " (weights are 0..1, or -1 missing)";
                    return RejectReason.BAD_WEIGHT;
                }
                return Float.isNaN(v) || Float.isInfinite(v) ? RejectReason.NAN
                        : v < 0f ? RejectReason.NEGATIVE : RejectReason.ABOVE_ONE;
            }
        } else {
            int j = row.firstBelowMissing(weights);
            if (j >= 0) {
                short v = weights ? row.quantizedWeight(j) : row.quantizedDistance(j);
                detail = what + " " + j + " of row " + row.id() + " is the 16-bit value " + v + " (only -1 may be negative)";
                return weights ? RejectReason.BAD_WEIGHT : RejectReason.NEGATIVE;
            }
        }
        return null;
    }
}
