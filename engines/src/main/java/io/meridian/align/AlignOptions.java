package io.meridian.align;

/**
 * How {@link SimilarityFit} lays a map over a reference.
 *
 * @param allowReflection  R may be a rotation with a reflection (det -1) when that fits better; false: a proper
 *                         rotation only (det +1), the best one even when the map is a mirror image of the reference
 * @param fitScale         fit the scale s; false: s = 1 (a rigid motion)
 * @param relativeErrors   weight each point's squared residual by {@code 1 / max(minimumDistance, |x_i|)^2}, |x_i| the
 *                         length of the reference point as given (not centred): relative errors, MDSasChisq's
 *                         {@code RotationOption = 1}
 * @param minimumDistance  the floor of |x_i| for relative errors (MDSasChisq's positive {@code MinimumDistance}),
 *                         >= 0; with 0, a reference point at the origin is refused
 */
public record AlignOptions(boolean allowReflection, boolean fitScale, boolean relativeErrors, double minimumDistance) {
    /** A similarity transform with reflections allowed, unit weights: MDSasChisq's rotation mode by default. */
    public static final AlignOptions DEFAULT = new AlignOptions(true, true, false, 0);

    public AlignOptions {
        if (!(minimumDistance >= 0) || Double.isInfinite(minimumDistance)) {
            throw new IllegalArgumentException("the minimum distance must be finite and >= 0, got " + minimumDistance);
        }
    }

    /** The fewest points with a positive weight that determine the transform: 4 with reflections allowed, else 3. */
    public int minimumPoints() {
        return allowReflection ? 4 : 3;
    }
}
