package io.meridian.pwc;

import java.util.HashMap;
import java.util.Map;

/** Adjusted Rand index of two labelings (Hubert and Arabie): 1 for the same partition, about 0 for chance agreement. */
public final class Ari {
    private Ari() {
    }

    public static double adjustedRandIndex(int[] a, int[] b) {
        if (a.length != b.length) {
            throw new IllegalArgumentException("labelings of different lengths");
        }
        Map<Long, Integer> pairs = new HashMap<>();
        Map<Integer, Integer> rows = new HashMap<>();
        Map<Integer, Integer> cols = new HashMap<>();
        for (int i = 0; i < a.length; i++) {
            pairs.merge(((long) a[i] << 32) ^ (b[i] & 0xffffffffL), 1, Integer::sum);
            rows.merge(a[i], 1, Integer::sum);
            cols.merge(b[i], 1, Integer::sum);
        }
        double index = 0;
        for (int v : pairs.values()) {
            index += choose2(v);
        }
        double sumRows = 0;
        for (int v : rows.values()) {
            sumRows += choose2(v);
        }
        double sumCols = 0;
        for (int v : cols.values()) {
            sumCols += choose2(v);
        }
        double expected = sumRows * sumCols / choose2(a.length);
        double max = (sumRows + sumCols) / 2;
        if (max == expected) {
            return 1.0;
        }
        return (index - expected) / (max - expected);
    }

    private static double choose2(int v) {
        return v * (v - 1) / 2.0;
    }
}
