package io.meridian.live;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** Outliers of a 3-D map: the width it is scaled by, the flags, the settings. */
class MapOutliersTest {
    /** {@code perBlob} points each of 5 Gaussian blobs of std {@code std}, centres 15 std apart on a line. */
    private static double[] blobs(int perBlob, double std, int[] labels, long seed) {
        Random random = new Random(seed);
        double[] x = new double[3 * 5 * perBlob];
        for (int a = 0; a < 5 * perBlob; a++) {
            int blob = a % 5;
            labels[a] = blob;
            x[3 * a] = 15 * std * blob + std * random.nextGaussian();
            x[3 * a + 1] = std * random.nextGaussian();
            x[3 * a + 2] = std * random.nextGaussian();
        }
        return x;
    }

    @Test
    void theWidthIsTheClustersPerAxisSigma() {
        int[] labels = new int[5000];
        double[] x = blobs(1000, 2.5, labels, 1);
        assertEquals(2.5, MapOutliers.width(x, labels, 5000), 0.05 * 2.5);
        int[] none = new int[5000];
        Arrays.fill(none, -1);
        assertTrue(MapOutliers.width(x, none, 5000) > 10 * 2.5, "no clusters: the spread around the centroid");
    }

    @Test
    void farPointsAreFlaggedAndBlobPointsAlmostNever() {
        int perBlob = 600;
        int blobPoints = 5 * perBlob;
        int[] labels = new int[blobPoints + 3];
        double[] blobs = blobs(perBlob, 1.0, labels, 2);
        double[] x = Arrays.copyOf(blobs, 3 * (blobPoints + 3));
        double[][] far = {{30, 20, 0}, {-25, 0, 0}, {30, 0, -15}};
        for (int k = 0; k < far.length; k++) {
            System.arraycopy(far[k], 0, x, 3 * (blobPoints + k), 3);
            labels[blobPoints + k] = k == 1 ? 0 : 2; // DA-PWC put them in some cluster
        }
        MapOutliers.Detection d = MapOutliers.detect(x, labels, blobPoints + 3, OutlierSettings.DEFAULT,
                MapOutliers.davsClusters(5));
        for (int k = 0; k < far.length; k++) {
            assertTrue(d.outlier(blobPoints + k), "the point at " + Arrays.toString(far[k]));
            assertTrue(d.frozen().inSponge(far[k], 0));
        }
        int wrong = 0;
        for (int a = 0; a < blobPoints; a++) {
            wrong += d.outlier(a) ? 1 : 0;
        }
        assertTrue(wrong <= 0.005 * blobPoints, wrong + " of " + blobPoints + " blob points flagged");
        assertEquals(wrong + far.length, d.outliers());
        assertFalse(d.frozen().inSponge(new double[] {45.5, 0.5, 0}, 0), "a new point inside the last blob");
    }

    @Test
    void aMapWithNothingToScaleByHasNoDetection() {
        assertNull(MapOutliers.detect(new double[] {1, 2, 3}, new int[] {0}, 1, OutlierSettings.DEFAULT, 32));
        assertNull(MapOutliers.detect(new double[] {1, 2, 3, 1, 2, 3}, new int[] {0, 0}, 2, OutlierSettings.DEFAULT,
                32));
    }

    @Test
    void settingsAndClusterLimits() {
        assertTrue(OutlierSettings.DEFAULT.enabled());
        assertFalse(OutlierSettings.OFF.enabled());
        assertEquals(OutlierSettings.DEFAULT_SPONGE_FACTOR, OutlierSettings.DEFAULT.spongeFactor());
        assertThrows(IllegalArgumentException.class, () -> new OutlierSettings(true, 0));
        assertThrows(IllegalArgumentException.class, () -> new OutlierSettings(true, Double.NaN));
        assertEquals(MapOutliers.MIN_CLUSTERS, MapOutliers.davsClusters(1));
        assertEquals(40, MapOutliers.davsClusters(10));
        assertEquals(MapOutliers.MAX_CLUSTERS, MapOutliers.davsClusters(1000));
    }
}
