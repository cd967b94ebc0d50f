package io.meridian.live;

/**
 * One published state of the live map: points {@code 0 .. n-1} ({@code points} row-major n x 3, aligned to the
 * previous frame), their clusters ({@code labels}, -1 while DA-PWC has not run yet), their outlier flags
 * ({@code outlierFlags}: in DA-VS's sponge, {@link MapOutliers}; all false before its first run or with outliers
 * off; {@code outliers} of them set), and how the round went. Times
 * are in seconds; {@code drift} is the RMS movement of the previous frame's points over the map's RMS radius;
 * {@code staleness} counts rows stored but not yet in the map; {@code placed} the points new in this frame;
 * {@code points}, {@code labels} and {@code outlierFlags} are empty in the frames of a task that does not publish
 * (only task 0 does); {@code settled}: the map has nothing left to do until a row arrives ({@link LiveMap#idle()})
 * and, in the publishing task's frames, its clustering and outlier flags cover every point.
 */
public record Frame(long frame, int n, double[] points, int[] labels, boolean[] outlierFlags, double stress,
                    double temperature, int clusters, int outliers, double drift, int placed, int iterations,
                    boolean annealed, double roundSeconds, double computeSeconds, double collectiveSeconds,
                    double placementSeconds, long staleness, long storedRows, long publishedAtMillis,
                    boolean settled) {
}
