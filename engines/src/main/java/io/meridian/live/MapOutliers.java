package io.meridian.live;

import io.meridian.davs.DavsEngine;
import io.meridian.davs.DavsResult;
import io.meridian.davs.DavsSettings;
import io.meridian.davs.FrozenSponge;
import io.meridian.davs.SigmaMethod;
import java.util.Arrays;

/**
 * Outliers of a 3-D map: DA-VS with a sponge ({@link DavsEngine}) on the map's coordinates, every dimension scaled by
 * one width, the map's typical cluster width; a point DA-VS puts in the sponge is an outlier, and the run's final
 * state ({@link FrozenSponge}) flags the points that come later by the same rule.
 *
 * <p>The width: the median over the points of the distance to their DA-PWC cluster's centroid in the map, divided by
 * 1.538, the median of the distance of a 3-D standard Gaussian point to its centre (chi with 3 degrees of freedom), so
 * that it is the per-axis sigma of a Gaussian cluster; robust to the outliers it is to find. DA-VS then runs as
 * {@code ./meridian davs --sigma-method 1 --sigma w,w,w --sponge-temperature 4} would, to T = 1 (a width's square),
 * so its clusters end about one width wide and the sponge factor F counts widths: a point is flagged when, for every
 * cluster k, d^2 / w^2 &gt; F^2 + 2 ln(P_k / P_sponge), beyond about F + 0.6 widths at K = 10.
 */
public final class MapOutliers {
    public static final int DIM = 3;
    /** sqrt of the median of chi-squared with 3 degrees of freedom (2.365974). */
    static final double CHI3_MEDIAN = 1.5381722544550522;
    /**
     * DA-VS's memberships are N x (clusters + 1) doubles: at the engine's default of 200 clusters, 161 MB at N =
     * 100,000; DA-VS needs a few of its clusters for each of DA-PWC's (wider ones are tiled by clusters a width wide).
     */
    static final int CLUSTERS_PER_PWC_CLUSTER = 4;
    static final int MIN_CLUSTERS = 32;
    static final int MAX_CLUSTERS = 200;
    /**
     * The sponge joins when T first falls to 4 (in squared widths), not from the start as in {@code ./meridian davs}:
     * from the start, a blob far from the centroid went to the sponge before a split reached it (10 Gaussian blobs in
     * 3-D, N = 10,000, {@code bench map-outliers}: 8 clusters, 10.1 % of the blob points flagged at sponge factor 4);
     * joining at T = 2, 4, 8 or 16: 9 clusters (two blobs overlap), 0.13 %, every far background point flagged.
     */
    static final double SPONGE_TEMPERATURE = 4.0;

    /**
     * One detection: the width the map was scaled by, DA-VS's result and its frozen state.
     *
     * @param width      the per-axis width w, in map units
     * @param result     DA-VS's run: label 0 ({@link DavsResult#SPONGE}) is an outlier
     * @param frozen     flags later points
     */
    public record Detection(double width, DavsResult result, FrozenSponge frozen) {
        /** Whether point {@code i} of the run is an outlier. */
        public boolean outlier(int i) {
            return result.labels()[i] == DavsResult.SPONGE;
        }

        public int outliers() {
            return result.spongeSize();
        }
    }

    private MapOutliers() {
    }

    /** DA-VS's most clusters for a map whose DA-PWC has at most {@code pwcClusters}. */
    public static int davsClusters(int pwcClusters) {
        return Math.min(MAX_CLUSTERS, Math.max(MIN_CLUSTERS, CLUSTERS_PER_PWC_CLUSTER * pwcClusters));
    }

    /**
     * Runs DA-VS on points {@code 0 .. n-1} of {@code xyzRowMajor} (n x 3) with their DA-PWC clusters {@code labels}
     * (-1: none; with none at all the width is taken around the map's centroid), or null when there is nothing to
     * scale by (fewer than 2 points, or every point on its cluster's centroid). Allocates DA-VS's arrays once
     * (N x (maxClusters + 1) memberships), nothing per iteration.
     */
    public static Detection detect(double[] xyzRowMajor, int[] labels, int n, OutlierSettings settings,
                                   int maxClusters) {
        double width = n < 2 ? 0 : width(xyzRowMajor, labels, n);
        if (!(width > 0) || Double.isInfinite(width)) {
            return null;
        }
        DavsSettings davs = DavsSettings.builder().sigmaMethod(SigmaMethod.FIXED).sigmaParameters(width, width, width)
                .spongeFactor(settings.spongeFactor()).spongeTemperature(SPONGE_TEMPERATURE)
                .maxClusters(maxClusters).build();
        DavsResult result = DavsEngine.run(Arrays.copyOf(xyzRowMajor, DIM * n), n, DIM, davs);
        return new Detection(width, result, FrozenSponge.of(result, davs));
    }

    /** The map's cluster width w (see the class); 0 for a map of points on their clusters' centroids. */
    static double width(double[] xyz, int[] labels, int n) {
        int clusters = 0;
        for (int i = 0; i < n; i++) {
            clusters = Math.max(clusters, labels[i] + 1);
        }
        boolean clustered = clusters > 0;
        int groups = clustered ? clusters : 1;
        double[] centroids = new double[DIM * groups];
        int[] counts = new int[groups];
        for (int i = 0; i < n; i++) {
            int g = clustered ? labels[i] : 0;
            if (g < 0) {
                continue;
            }
            counts[g]++;
            for (int k = 0; k < DIM; k++) {
                centroids[DIM * g + k] += xyz[DIM * i + k];
            }
        }
        for (int g = 0; g < groups; g++) {
            for (int k = 0; k < DIM; k++) {
                centroids[DIM * g + k] /= Math.max(1, counts[g]);
            }
        }
        double[] distances = new double[n];
        int m = 0;
        for (int i = 0; i < n; i++) {
            int g = clustered ? labels[i] : 0;
            if (g < 0) {
                continue;
            }
            double s = 0;
            for (int k = 0; k < DIM; k++) {
                double diff = xyz[DIM * i + k] - centroids[DIM * g + k];
                s += diff * diff;
            }
            distances[m++] = Math.sqrt(s);
        }
        Arrays.sort(distances, 0, m);
        double median = m == 0 ? 0 : m % 2 == 1 ? distances[m / 2] : 0.5 * (distances[m / 2 - 1] + distances[m / 2]);
        return median / CHI3_MEDIAN;
    }
}
