package io.meridian.davs;

/**
 * How DA-VS scales the distance of a point to a cluster centre in each dimension:
 * d^2 = sum_i (x_i - y_i)^2 / sigma_i^2,
 * sigma_i given by the original's {@code Program.CalculateSigma} with its parameters {@code SigmaVectorParameters_i}
 * (here {@link DavsSettings#sigmaParameters}, p_i).
 */
public enum SigmaMethod {
    /** 0: sigma_i = 1, the plain Euclidean distance. */
    UNIT(0),
    /** 1: sigma_i = p_i, a fixed width per dimension. */
    FIXED(1),
    /** 2: sigma_0 = p_0 * y_0 (the LC-MS width proportional to the centre's m/z), sigma_i = p_i for i &gt; 0. */
    PROPORTIONAL(2),
    /**
     * 3: as 2, but p_0 itself is annealed: from its given value down to {@link DavsSettings#finalSigma0} as the
     * temperature falls to {@link DavsSettings#finalSigmaTemperature}, then held (the original's {@code ChangeClusterSigmas}).
     */
    ANNEALED_PROPORTIONAL(3);

    /** The original's {@code SigmaMethod} number. */
    public final int code;

    SigmaMethod(int code) {
        this.code = code;
    }

    /** The method numbered {@code code} (0-3), as the original's configuration names them. */
    public static SigmaMethod ofCode(int code) {
        for (SigmaMethod m : values()) {
            if (m.code == code) {
                return m;
            }
        }
        throw new IllegalArgumentException("--sigma-method must be 0, 1, 2 or 3 (was " + code + ")");
    }
}
