package io.meridian.live;

/**
 * Whether the live map flags outliers, and how ({@link MapOutliers}): after each DA-PWC run, DA-VS with a sponge runs
 * on the map's 3-D coordinates, and a point whose sponge responsibility is the largest is an outlier.
 *
 * @param enabled     false: no DA-VS runs and no point is flagged ({@code map.outliers})
 * @param spongeFactor the sponge's scaled distance F, in widths of the map's clusters
 *                    ({@code map.outlierSpongeFactor}); see {@link #DEFAULT_SPONGE_FACTOR}
 */
public record OutlierSettings(boolean enabled, double spongeFactor) {
    /**
     * 4, not the original's 3: a 3-D Gaussian cluster loses the points beyond about F + 0.6 widths to the sponge
     * (at K = 10: 3.7 widths with F = 3, 4.6 with F = 4), 0.32 % of them with F = 3 and 0.012 % with F = 4; on 10
     * Gaussian blobs in 3-D with 0.4 % background ({@code bench map-outliers}, N = 10,000) F = 3 flagged 0.81 % of
     * the blob points and F = 4 0.13 % (DA-VS's clusters are not quite the blobs: two overlap), both every background
     * point more than 6 widths from every blob.
     */
    public static final double DEFAULT_SPONGE_FACTOR = 4.0;
    public static final OutlierSettings DEFAULT = new OutlierSettings(true, DEFAULT_SPONGE_FACTOR);
    public static final OutlierSettings OFF = new OutlierSettings(false, DEFAULT_SPONGE_FACTOR);

    public OutlierSettings {
        if (!(spongeFactor > 0) || Double.isInfinite(spongeFactor)) {
            throw new IllegalArgumentException("the outliers' sponge factor must be finite and > 0, got "
                    + spongeFactor);
        }
    }
}
