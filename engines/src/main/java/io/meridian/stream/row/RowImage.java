package io.meridian.stream.row;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * One writer's scratch for {@link BlockRowStore#store}: a row in its stored form (its {@code id} lower-triangle values,
 * little-endian 16-bit, the bytes the row takes in a block file, {@link RowStoreLayout}) built from its wire form, and
 * room to read a stored row back for the replay check. Both are direct buffers, written to and read from the block
 * files with positional writes and reads (no copy through a temporary direct buffer). A 16-bit row's values are its
 * wire bytes already, so building its image is one bulk copy, and checking a replay one bulk read and one vectorized
 * compare: element by element through a {@code ShortBuffer}, the two took 80 % of a row-store task's CPU (JFR, bench
 * ingest). The buffers grow (doubling) with the widest row seen, so a store of capacity 1,000,000 costs what its rows
 * need; nothing is allocated per row otherwise. One per writing thread.
 */
public final class RowImage {
    private static final int MIN_BYTES = 4096;
    private ByteBuffer image = allocate(MIN_BYTES);
    private ByteBuffer stored = allocate(MIN_BYTES);
    private ByteBuffer units = unitWeightBuffer(MIN_BYTES);

    /** The image last built: position 0, limit its length. */
    ByteBuffer bytes() {
        return image;
    }

    /** Room for {@code length} bytes of a stored row, read back to compare with the image: position 0, that limit. */
    ByteBuffer readBack(int length) {
        if (stored.capacity() < length) {
            stored = allocate(grown(stored.capacity(), length));
        }
        return stored.clear().limit(length);
    }

    /** Whether the row read back into {@link #readBack} equals the image. */
    boolean sameAsReadBack() {
        return image.rewind().mismatch(stored.rewind()) == -1;
    }

    /** Unit weights (32767) for a row of {@code values} values: position 0, limit its length. */
    ByteBuffer unitWeights(int values) {
        int length = 2 * values;
        if (units.capacity() < length) {
            units = unitWeightBuffer(grown(units.capacity(), length));
        }
        return units.clear().limit(length);
    }

    /** Whether the bytes read back are {@code values} unit weights. */
    boolean readBackIsUnitWeights(int values) {
        return unitWeights(values).mismatch(stored.rewind()) == -1;
    }

    /** The stored distances of {@code row} (valid): its first {@code id} values, on the 16-bit scale. */
    void ofDistances(DistanceRow row) {
        build(row, RowFormat.HEADER_BYTES);
    }

    /** The stored weights of {@code row} (valid, weighted): its first {@code id} weights. */
    void ofWeights(DistanceRow row) {
        build(row, RowFormat.HEADER_BYTES + row.count() * (row.isFloat32() ? 4 : 2));
    }

    /** Bytes of the stored form of {@code row}. */
    static int length(DistanceRow row) {
        return 2 * row.id();
    }

    private void build(DistanceRow row, int base) {
        int values = row.id(); // a full row's diagonal and later columns are those rows' own lower values
        int length = 2 * values;
        if (image.capacity() < length) {
            image = allocate(grown(image.capacity(), length));
        }
        image.clear().limit(length);
        byte[] wire = row.bytes();
        if (row.isFloat32()) {
            for (int j = 0; j < values; j++) {
                image.putShort(2 * j, RowFormat.quantize((float) RowFormat.FLOAT.get(wire, base + 4 * j)));
            }
        } else {
            image.put(0, wire, base, length); // the 16-bit wire values are the stored ones
        }
    }

    private static int grown(int capacity, int length) {
        long c = capacity;
        while (c < length) {
            c *= 2;
        }
        return (int) Math.min(c, Integer.MAX_VALUE - 8);
    }

    private static ByteBuffer allocate(int bytes) {
        return ByteBuffer.allocateDirect(bytes).order(ByteOrder.LITTLE_ENDIAN);
    }

    private static ByteBuffer unitWeightBuffer(int bytes) {
        ByteBuffer b = allocate(bytes);
        for (int i = 0; i + 1 < bytes; i += 2) {
            b.putShort(i, (short) RowFormat.SCALE);
        }
        return b;
    }
}
