/**
 * Laying one 3-D map over another of the same points ({@code ./meridian align}): the least-squares similarity
 * transform {@code s R y + t} in closed form ({@link io.meridian.align.SimilarityFit}, Umeyama's method over the
 * 3 x 3 SVD of {@link io.meridian.align.Svd3}), as SPIDAL's MDSasChisq fits it iteratively in its rotation mode. No
 * files and no Storm types: the CLI reads the maps and writes the results.
 */
package io.meridian.align;
