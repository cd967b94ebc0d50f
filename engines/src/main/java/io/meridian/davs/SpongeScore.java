package io.meridian.davs;

import io.meridian.pwc.Ari;

/**
 * A clustering with a noise label scored against a truth with one: the adjusted Rand index on the points that are not
 * noise in the truth (the noise label counting as one more cluster of the found labels, so a peak point put in the
 * sponge costs), and the noise label's recall and precision.
 *
 * @param peakAri ARI of found against true labels over the true non-noise points
 * @param noiseRecall true noise points labelled noise / true noise points (1 without any)
 * @param noisePrecision true noise points labelled noise / points labelled noise (1 without any)
 */
public record SpongeScore(double peakAri, double noiseRecall, double noisePrecision) {
    /** {@code truth} and {@code found} per point, each with {@code noise} as its noise label. */
    public static SpongeScore of(int[] truth, int trueNoise, int[] found, int foundNoise) {
        if (truth.length != found.length) {
            throw new IllegalArgumentException("labelings of different lengths: " + truth.length + ", "
                    + found.length);
        }
        int peakPoints = 0;
        for (int t : truth) {
            peakPoints += t != trueNoise ? 1 : 0;
        }
        int[] truePeaks = new int[peakPoints];
        int[] foundPeaks = new int[peakPoints];
        int labelledNoise = 0;
        int noiseHit = 0;
        int noise = 0;
        int q = 0;
        for (int a = 0; a < truth.length; a++) {
            boolean saysNoise = found[a] == foundNoise;
            labelledNoise += saysNoise ? 1 : 0;
            if (truth[a] == trueNoise) {
                noise++;
                noiseHit += saysNoise ? 1 : 0;
            } else {
                truePeaks[q] = truth[a];
                foundPeaks[q++] = found[a];
            }
        }
        double ari = peakPoints < 2 ? 1 : Ari.adjustedRandIndex(truePeaks, foundPeaks);
        return new SpongeScore(ari, noise == 0 ? 1 : noiseHit / (double) noise,
                labelledNoise == 0 ? 1 : noiseHit / (double) labelledNoise);
    }
}
