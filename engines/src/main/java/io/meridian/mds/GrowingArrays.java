package io.meridian.mds;

import java.util.Arrays;

/**
 * Arrays that grow with the points a map holds instead of being sized for its capacity up front (issue 32: at a
 * capacity of 1,000,000 the live map's arrays took 150 MB of heap per task before its first point). Each returns the
 * array itself when it is long enough, else a copy at least twice as long (at most {@code limit}), so that a map that
 * grows one point at a time copies each element a bounded number of times; the caller grows its arrays at the start
 * of a round, so the loops inside a round allocate nothing.
 */
public final class GrowingArrays {
    /** The shortest array a growth makes: a map of a few points does not grow at every new point. */
    static final int MIN_LENGTH = 64;

    private GrowingArrays() {
    }

    /** The new length for an array of {@code length} that must hold {@code needed}, at most {@code limit}. */
    public static int grownLength(int length, int needed, int limit) {
        if (needed > limit) {
            throw new IllegalArgumentException("an array of at most " + limit + " elements cannot hold " + needed);
        }
        long doubled = Math.max(MIN_LENGTH, 2L * length);
        return (int) Math.min(limit, Math.max(needed, doubled));
    }

    /** {@code a}, or a longer copy of it that holds {@code needed} values (at most {@code limit}). */
    public static double[] atLeast(double[] a, int needed, int limit) {
        return a.length >= needed ? a : Arrays.copyOf(a, grownLength(a.length, needed, limit));
    }

    /** {@code a}, or a longer copy of it that holds {@code needed} values (at most {@code limit}). */
    public static short[] atLeast(short[] a, int needed, int limit) {
        return a.length >= needed ? a : Arrays.copyOf(a, grownLength(a.length, needed, limit));
    }

    /** {@code a}, or a longer copy of it that holds {@code needed} values (at most {@code limit}). */
    public static int[] atLeast(int[] a, int needed, int limit) {
        return a.length >= needed ? a : Arrays.copyOf(a, grownLength(a.length, needed, limit));
    }
}
