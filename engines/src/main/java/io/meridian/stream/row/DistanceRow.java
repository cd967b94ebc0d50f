package io.meridian.stream.row;

/**
 * A flyweight over one encoded row ({@link RowFormat}): it reads the header once and the values in place, so decoding
 * allocates nothing beyond the byte array Kafka already gave. {@link #wrap} checks the structure (version, flags,
 * length); the values themselves are checked by {@link RowValidator}.
 */
public final class DistanceRow {
    private byte[] bytes;
    private int id;
    private int count;
    private int flags;

    /** A row over {@code bytes}, or {@code null} with the reason in {@code why[0]} when the bytes are malformed. */
    public static DistanceRow decode(byte[] bytes, String[] why) {
        DistanceRow row = new DistanceRow();
        String problem = row.wrap(bytes);
        if (problem != null) {
            if (why != null) {
                why[0] = problem;
            }
            return null;
        }
        return row;
    }

    /** Points this flyweight at {@code bytes}; returns null when well-formed, else what is wrong. */
    public String wrap(byte[] data) {
        this.bytes = data;
        if (data == null) {
            return "no value";
        }
        if (data.length < RowFormat.HEADER_BYTES) {
            return "only " + data.length + " bytes, a row needs at least " + RowFormat.HEADER_BYTES;
        }
        if (data[0] != RowFormat.VERSION) {
            return "unknown format version " + (data[0] & 0xff) + " (expected " + RowFormat.VERSION + ")";
        }
        flags = data[1] & 0xff;
        if ((flags & ~RowFormat.KNOWN_FLAGS) != 0) {
            return "unknown flag bits 0x" + Integer.toHexString(flags & ~RowFormat.KNOWN_FLAGS);
        }
        id = (int) RowFormat.INT.get(data, 2);
        count = (int) RowFormat.INT.get(data, 6);
        if (count < 0) {
            return "negative distance count " + count;
        }
        long expected = RowFormat.HEADER_BYTES + (long) count * (isFloat32() ? 4 : 2) * (hasWeights() ? 2 : 1);
        if (expected != data.length) {
            return "count " + count + " needs " + expected + " bytes, the value has " + data.length;
        }
        return null;
    }

    public byte[] bytes() {
        return bytes;
    }

    public int id() {
        return id;
    }

    /** Number of distances: {@code id} for a lower-triangle row, the universe size for a full row. */
    public int count() {
        return count;
    }

    public boolean isFloat32() {
        return (flags & RowFormat.FLAG_FLOAT32) != 0;
    }

    public boolean isFull() {
        return (flags & RowFormat.FLAG_FULL) != 0;
    }

    public boolean hasWeights() {
        return (flags & RowFormat.FLAG_WEIGHTS) != 0;
    }

    /** Distance {@code j} as decoded from the wire, on the 0..1 scale (-1 missing); float rows may hold anything. */
    public float distance(int j) {
        return value(RowFormat.HEADER_BYTES, j);
    }

    public float weight(int j) {
        return value(RowFormat.HEADER_BYTES + count * (isFloat32() ? 4 : 2), j);
    }

    private float value(int base, int j) {
        if (isFloat32()) {
            return (float) RowFormat.FLOAT.get(bytes, base + 4 * j);
        }
        short s = (short) RowFormat.SHORT.get(bytes, base + 2 * j);
        return s < 0 ? s : s / (float) RowFormat.SCALE;
    }

    /** Distance {@code j} on the 16-bit matrix scale; only for rows that passed {@link RowValidator}. */
    public short quantizedDistance(int j) {
        return quantized(RowFormat.HEADER_BYTES, j);
    }

    public short quantizedWeight(int j) {
        return quantized(RowFormat.HEADER_BYTES + count * (isFloat32() ? 4 : 2), j);
    }

    private short quantized(int base, int j) {
        if (isFloat32()) {
            return RowFormat.quantize((float) RowFormat.FLOAT.get(bytes, base + 4 * j));
        }
        return (short) RowFormat.SHORT.get(bytes, base + 2 * j);
    }

    @Override
    public String toString() {
        return "row " + id + " (" + count + (isFull() ? " full" : "") + (isFloat32() ? " float32" : " int16")
                + (hasWeights() ? " weighted" : "") + ")";
    }
}
