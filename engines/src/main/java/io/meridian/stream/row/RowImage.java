package io.meridian.stream.row;

import java.util.Arrays;

/**
 * One writer's scratch for {@link BlockRowStore#store}: a row in its stored form ({@code width} little-endian 16-bit
 * values, the bytes of one row of a block file) built from its wire form, and room to read a stored row back for the
 * replay check. A 16-bit row's values are its wire bytes already, so building its image is three copies (values,
 * the missing tail from a template, the diagonal), and checking a replay is one bulk read and one vectorized compare:
 * element by element through a {@code ShortBuffer}, the two took 80 % of a row-store task's CPU (JFR, bench ingest).
 * Allocates nothing per row. One per writing thread.
 */
public final class RowImage {
    private final int width;
    /** The image being built: {@link #bytes()}. */
    private final byte[] image;
    /** A stored row read back, to compare with the image. */
    private final byte[] stored;
    /** {@code width} missing values (-1: every byte 0xff). */
    private final byte[] missing;

    public RowImage(int width) {
        this.width = width;
        this.image = new byte[2 * width];
        this.stored = new byte[2 * width];
        this.missing = new byte[2 * width];
        Arrays.fill(missing, (byte) 0xff);
    }

    public int width() {
        return width;
    }

    /** Bytes of the image (and of a row in a block file). */
    public int length() {
        return image.length;
    }

    /** The image last built. */
    byte[] bytes() {
        return image;
    }

    /** Room for a stored row read back. */
    byte[] readBack() {
        return stored;
    }

    /** Whether the row read back into {@link #readBack()} equals the image. */
    boolean sameAsReadBack() {
        return Arrays.equals(image, stored);
    }

    /** The distances of {@code row} (valid): its values, missing (-1) beyond them, 0 on the diagonal. */
    void ofDistances(DistanceRow row) {
        build(row, RowFormat.HEADER_BYTES, (short) 0);
    }

    /** The weights of {@code row} (valid, weighted): its weights, missing beyond them, 1 (32767) on the diagonal. */
    void ofWeights(DistanceRow row) {
        build(row, RowFormat.HEADER_BYTES + row.count() * (row.isFloat32() ? 4 : 2), (short) RowFormat.SCALE);
    }

    private void build(DistanceRow row, int base, short diagonal) {
        int count = row.count();
        byte[] wire = row.bytes();
        if (row.isFloat32()) {
            for (int j = 0; j < count; j++) {
                RowFormat.SHORT.set(image, 2 * j, RowFormat.quantize((float) RowFormat.FLOAT.get(wire, base + 4 * j)));
            }
        } else {
            System.arraycopy(wire, base, image, 0, 2 * count); // the 16-bit wire values are the stored ones
        }
        System.arraycopy(missing, 0, image, 2 * count, 2 * (width - count));
        if (row.id() < width) {
            RowFormat.SHORT.set(image, 2 * row.id(), diagonal);
        }
    }
}
