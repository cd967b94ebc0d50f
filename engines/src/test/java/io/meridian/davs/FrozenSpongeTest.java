package io.meridian.davs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Random;
import org.junit.jupiter.api.Test;

/** The frozen DA-VS state flags a point by the rule the engine labels its own points by. */
class FrozenSpongeTest {
    /** 4 Gaussian blobs of std 1 in 3-D, 10 apart, and 12 points uniform in a box 8 times as wide. */
    private static double[] blobsAndBackground(int perBlob, int background, long seed) {
        Random random = new Random(seed);
        double[][] centres = {{0, 0, 0}, {10, 0, 0}, {0, 10, 0}, {0, 0, 10}};
        double[] x = new double[3 * (centres.length * perBlob + background)];
        int a = 0;
        for (double[] c : centres) {
            for (int p = 0; p < perBlob; p++, a++) {
                for (int d = 0; d < 3; d++) {
                    x[3 * a + d] = c[d] + random.nextGaussian();
                }
            }
        }
        for (int p = 0; p < background; p++, a++) {
            for (int d = 0; d < 3; d++) {
                x[3 * a + d] = -40 + 80 * random.nextDouble();
            }
        }
        return x;
    }

    private static DavsSettings unitWidth() {
        return DavsSettings.builder().sigmaMethod(SigmaMethod.UNIT).spongeFactor(4).spongeTemperature(4)
                .maxClusters(20).build();
    }

    @Test
    void theFrozenStateFlagsTheRunsOwnPointsAsItsLabelsDo() {
        double[] x = blobsAndBackground(250, 12, 3);
        int n = x.length / 3;
        DavsSettings settings = unitWidth();
        DavsResult r = DavsEngine.run(x, n, 3, settings);
        FrozenSponge frozen = FrozenSponge.of(r, settings);
        assertEquals(r.clusters(), frozen.clusters());
        int agree = 0;
        for (int a = 0; a < n; a++) {
            agree += frozen.inSponge(x, 3 * a) == (r.labels()[a] == DavsResult.SPONGE) ? 1 : 0;
        }
        // the labels come from the last E step, the frozen state after the M step that follows it: converged to a
        // membership change of 0.0005, they differ at most on a point at the sponge's edge
        assertTrue(agree >= n - 2, agree + " of " + n + " agree");
        assertTrue(r.spongeSize() >= 10, "the background far from the blobs is in the sponge: " + r.spongeSize());
        assertFalse(frozen.inSponge(new double[] {10.5, 0.5, -0.5}, 0), "a point inside a blob");
        assertTrue(frozen.inSponge(new double[] {5, 5, 5, 100, 100, 100}, 3), "a point 170 from every blob");
        assertFalse(frozen.inSponge(new double[] {5, 5, 5, 0, 0, 2.5}, 3), "2.5 widths from a centre");
        assertTrue(frozen.inSponge(new double[] {0, -6, 0}, 0), "6 widths from the nearest centre");
    }

    @Test
    void aRunWithoutASpongeHasNoFrozenSponge() {
        double[] x = blobsAndBackground(50, 0, 1);
        DavsSettings none = DavsSettings.builder().sigmaMethod(SigmaMethod.UNIT).spongeFactor(0).maxClusters(8)
                .build();
        DavsResult r = DavsEngine.run(x, x.length / 3, 3, none);
        assertThrows(IllegalArgumentException.class, () -> FrozenSponge.of(r, none));
    }
}
