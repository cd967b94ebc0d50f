package io.meridian.stream.row;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

/**
 * The binary encoding of one distance row, as a Kafka record value and inside Storm tuples. See {@code package-info}
 * for the layout. All multi-byte fields are little-endian, like the 16-bit matrix files.
 */
public final class RowFormat {
    public static final byte VERSION = 1;
    /** Bytes before the first distance. */
    public static final int HEADER_BYTES = 10;
    public static final int FLAG_FLOAT32 = 1;
    public static final int FLAG_FULL = 2;
    public static final int FLAG_WEIGHTS = 4;
    static final int KNOWN_FLAGS = FLAG_FLOAT32 | FLAG_FULL | FLAG_WEIGHTS;
    /** The 16-bit matrix scale: distance = value / 32767; -1 marks a missing distance. */
    public static final int SCALE = io.meridian.matrix.ShortMatrixFormat.SCALE;
    public static final short MISSING = io.meridian.matrix.ShortMatrixFormat.MISSING;

    static final VarHandle SHORT = MethodHandles.byteArrayViewVarHandle(short[].class, ByteOrder.LITTLE_ENDIAN);
    static final VarHandle INT = MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.LITTLE_ENDIAN);
    static final VarHandle LONG = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
    static final VarHandle FLOAT = MethodHandles.byteArrayViewVarHandle(float[].class, ByteOrder.LITTLE_ENDIAN);

    private RowFormat() {
    }

    public static int encodedLength(int count, boolean float32, boolean weights) {
        return HEADER_BYTES + count * (float32 ? 4 : 2) * (weights ? 2 : 1);
    }

    /** Encodes a row of 16-bit matrix values (already on the matrix scale), e.g. read from a matrix file. */
    public static byte[] encodeInt16(int id, short[] values, int offset, int count, boolean full) {
        byte[] out = new byte[encodedLength(count, false, false)];
        writeHeader(out, id, count, full ? FLAG_FULL : 0);
        for (int i = 0; i < count; i++) {
            SHORT.set(out, HEADER_BYTES + 2 * i, values[offset + i]);
        }
        return out;
    }

    /** Encodes decimal distances (and optional weights of the same length) as float32, unvalidated. */
    public static byte[] encodeFloat32(int id, float[] distances, int count, float[] weights, boolean full) {
        boolean w = weights != null;
        byte[] out = new byte[encodedLength(count, true, w)];
        writeHeader(out, id, count, FLAG_FLOAT32 | (full ? FLAG_FULL : 0) | (w ? FLAG_WEIGHTS : 0));
        for (int i = 0; i < count; i++) {
            FLOAT.set(out, HEADER_BYTES + 4 * i, distances[i]);
        }
        if (w) {
            int base = HEADER_BYTES + 4 * count;
            for (int i = 0; i < count; i++) {
                FLOAT.set(out, base + 4 * i, weights[i]);
            }
        }
        return out;
    }

    private static void writeHeader(byte[] out, int id, int count, int flags) {
        out[0] = VERSION;
        out[1] = (byte) flags;
        INT.set(out, 2, id);
        INT.set(out, 6, count);
    }

    /** Quantizes a valid distance or weight (0..1, or exactly -1 for missing) to the 16-bit scale. */
    public static short quantize(float value) {
        if (value == -1f) {
            return MISSING;
        }
        return (short) Math.round(value * SCALE);
    }
}
