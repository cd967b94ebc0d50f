package io.meridian.live;

/**
 * New points shown ahead of the rounds ({@link ArrivalPlacer}): {@code ids[0 .. count-1]}, placed against the points
 * of published frame {@code frame} (so in its aligned coordinates), {@code points} row-major count x 3, their clusters
 * from the frozen DA-PWC state ({@code labels}, -1 before the first run), their outlier flags from the frozen DA-VS
 * state ({@code outlierFlags}, false before its first run), and when they were placed. The next frame of the rounds
 * that covers an id shows it again, refined.
 */
public record Arrivals(long frame, int count, int[] ids, double[] points, int[] labels, boolean[] outlierFlags,
                       long placedAtMillis) {
}
