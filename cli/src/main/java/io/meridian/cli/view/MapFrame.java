package io.meridian.cli.view;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * One map as the page gets it: its figures ({@code meta}: mode, frame, N, stress, temperature, where it came from,
 * the recent frames' sizes for the "new since" highlight, the outliers' count) and points {@code 0..n-1} (row-major
 * n x 3 floats) with their clusters and outlier flags. {@link #encode} lays it out for {@code GET /api/frame}:
 * <pre>
 *   0       4       8                          8 + pad4(L)              + 12 n            + 4 n          + n
 *   +-------+-------+--------------------------+------------------------+-------------------+--------------+
 *   | MVF1  |   L   | meta, UTF-8 JSON, 0-pad  | x y z, float32 LE, by id | cluster, int32 LE | outlier, 0/1 |
 *   +-------+-------+--------------------------+------------------------+-------------------+--------------+
 * </pre>
 * so that the page views the arrays in place (typed arrays over the response, no parsing per point).
 */
public record MapFrame(ObjectNode meta, float[] xyzRowMajor, int[] labels, boolean[] outliers) {
    static final int MAGIC = 0x3146564d; // "MVF1" read little-endian

    public MapFrame {
        if (xyzRowMajor.length != 3 * labels.length) {
            throw new IllegalArgumentException(xyzRowMajor.length + " coordinates for " + labels.length + " points");
        }
        if (outliers.length != labels.length) {
            throw new IllegalArgumentException(outliers.length + " outlier flags for " + labels.length + " points");
        }
    }

    /** A map without outlier flags (a comparison of two maps). */
    public MapFrame(ObjectNode meta, float[] xyzRowMajor, int[] labels) {
        this(meta, xyzRowMajor, labels, new boolean[labels.length]);
    }

    public int n() {
        return labels.length;
    }

    /** The frame as {@code GET /api/frame} serves it, {@code seq} (the server's count of maps published) in meta. */
    byte[] encode(long seq) {
        ObjectNode m = meta.deepCopy();
        m.put("seq", seq);
        m.put("n", n());
        byte[] json;
        try {
            json = MapFiles.JSON.writeValueAsBytes(m);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
        int padded = (json.length + 3) & ~3;
        ByteBuffer b = ByteBuffer.allocate(8 + padded + 17 * n()).order(ByteOrder.LITTLE_ENDIAN);
        b.putInt(MAGIC).putInt(json.length).put(json).position(8 + padded);
        b.asFloatBuffer().put(xyzRowMajor);
        b.position(8 + padded + 12 * n());
        b.asIntBuffer().put(labels);
        b.position(8 + padded + 16 * n());
        for (boolean outlier : outliers) {
            b.put((byte) (outlier ? 1 : 0));
        }
        return b.array();
    }

    /** The one-line JSON of the server-sent event that announces this frame. */
    String event(long seq) {
        ObjectNode e = MapFiles.JSON.createObjectNode();
        e.put("seq", seq);
        e.set("frame", meta.get("frame"));
        e.put("n", n());
        return e.toString();
    }
}
