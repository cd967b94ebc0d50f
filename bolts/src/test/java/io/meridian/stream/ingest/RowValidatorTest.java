package io.meridian.stream.ingest;

import io.meridian.stream.row.DistanceRow;
import io.meridian.stream.row.RowFormat;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

class RowValidatorTest {
    private final RowValidator validator = new RowValidator(100);

    private static float[] row(int id, float value) {
        float[] d = new float[id];
        Arrays.fill(d, value);
        return d;
    }

    private RejectReason check(byte[] bytes) {
        return validator.check(bytes);
    }

    @Test
    void acceptsLowerTriangleRowsInBothEncodingsAndDecodesThem() {
        short[] values = {0, 32767, -1, 16384};
        assertNull(check(RowFormat.encodeInt16(4, values, 0, 4, false)));
        DistanceRow row = validator.row();
        assertEquals(4, row.id());
        assertEquals(4, row.count());
        assertEquals(1.0f, row.distance(1));
        assertEquals(-1f, row.distance(2));
        assertEquals(16384, row.quantizedDistance(3));

        float[] d = {0f, 0.5f, -1f};
        assertNull(check(RowFormat.encodeFloat32(3, d, 3, new float[] {1f, 0.25f, 0f}, false)));
        assertEquals(Math.round(0.5f * 32767), validator.row().quantizedDistance(1));
        assertEquals(-1, validator.row().quantizedDistance(2));
        assertEquals(0.25f, validator.row().weight(1));
        assertNull(check(RowFormat.encodeInt16(0, new short[0], 0, 0, false)), "row 0 has no distances");
    }

    @Test
    void acceptsFullRowsOfAFixedUniverse() {
        assertNull(check(RowFormat.encodeFloat32(2, row(10, 0.1f), 10, null, true)));
        assertEquals(RejectReason.WRONG_LENGTH, check(RowFormat.encodeFloat32(20, row(10, 0.1f), 10, null, true)));
        assertEquals(RejectReason.WRONG_LENGTH, check(RowFormat.encodeFloat32(2, row(101, 0.1f), 101, null, true)));
    }

    @Test
    void rejectsWrongLength() {
        assertEquals(RejectReason.WRONG_LENGTH, check(RowFormat.encodeFloat32(5, row(4, 0.1f), 4, null, false)));
        assertEquals("row 5 has 4 distances; a row must have one per earlier point (5)", validator.detail());
        assertEquals(RejectReason.WRONG_LENGTH, check(RowFormat.encodeFloat32(5, row(6, 0.1f), 6, null, false)));
    }

    @Test
    void rejectsNanInfinityNegativeAndAboveOne() {
        float[] d = row(8, 0.3f);
        d[3] = Float.NaN;
        assertEquals(RejectReason.NAN, check(RowFormat.encodeFloat32(8, d, 8, null, false)));
        assertEquals("distance 3 of row 8 is NaN", validator.detail());
        d[3] = Float.POSITIVE_INFINITY;
        assertEquals(RejectReason.NAN, check(RowFormat.encodeFloat32(8, d, 8, null, false)));
        d[3] = -0.5f;
        assertEquals(RejectReason.NEGATIVE, check(RowFormat.encodeFloat32(8, d, 8, null, false)));
        d[3] = -1f;
        assertNull(check(RowFormat.encodeFloat32(8, d, 8, null, false)), "-1 is the missing marker");
        d[3] = 1.0001f;
        assertEquals(RejectReason.ABOVE_ONE, check(RowFormat.encodeFloat32(8, d, 8, null, false)));
        assertEquals(RejectReason.NEGATIVE, check(RowFormat.encodeInt16(2, new short[] {5, -2}, 0, 2, false)));
        float[] w = row(8, 0.5f);
        w[7] = -3f;
        assertEquals(RejectReason.BAD_WEIGHT, check(RowFormat.encodeFloat32(8, row(8, 0.2f), 8, w, false)));
    }

    @Test
    void findsA16BitValueBelowMinusOneInEveryLaneOfTheWordAtATimeCheck() {
        for (int id = 1; id <= 11; id++) {
            short[] v = new short[id];
            for (int j = 0; j < id; j++) {
                v[j] = (short) (j % 3 == 0 ? -1 : 32767 - j); // -1 (missing) sets a sign bit too, and is fine
            }
            assertNull(check(RowFormat.encodeInt16(id, v, 0, id, false)), "row " + id + " of missing and valid values");
            for (int bad = 0; bad < id; bad++) {
                short[] b = v.clone();
                b[bad] = (short) (bad % 2 == 0 ? -2 : Short.MIN_VALUE);
                assertEquals(RejectReason.NEGATIVE, check(RowFormat.encodeInt16(id, b, 0, id, false)));
                assertEquals("distance " + bad + " of row " + id + " is the 16-bit value " + b[bad]
                        + " (only -1 may be negative)", validator.detail());
            }
        }
    }

    @Test
    void rejectsIdsOutsideTheUniverse() {
        assertEquals(RejectReason.ID_OUT_OF_RANGE, check(RowFormat.encodeFloat32(-3, new float[0], 0, null, false)));
        assertEquals(RejectReason.ID_OUT_OF_RANGE, check(RowFormat.encodeFloat32(100, row(100, 0f), 100, null, false)));
        assertNull(check(RowFormat.encodeFloat32(99, row(99, 0f), 99, null, false)));
    }

    @Test
    void rejectsMalformedBytes() {
        assertEquals(RejectReason.MALFORMED, check("hello".getBytes(StandardCharsets.UTF_8)));
        assertTrue(validator.detail().startsWith("only 5 bytes"));
        assertEquals(RejectReason.MALFORMED, check(null));
        byte[] good = RowFormat.encodeFloat32(3, row(3, 0.1f), 3, null, false);
        assertEquals(RejectReason.MALFORMED, check(Arrays.copyOf(good, good.length - 1)));
        assertEquals("count 3 needs 22 bytes, the value has 21", validator.detail());
        byte[] version = good.clone();
        version[0] = 9;
        assertEquals(RejectReason.MALFORMED, check(version));
        byte[] flags = good.clone();
        flags[1] = (byte) 0x80;
        assertEquals(RejectReason.MALFORMED, check(flags));
        byte[] count = good.clone();
        count[9] = (byte) 0x80;
        assertEquals(RejectReason.MALFORMED, check(count));
        assertEquals("negative distance count -2147483645", validator.detail());
    }
}
