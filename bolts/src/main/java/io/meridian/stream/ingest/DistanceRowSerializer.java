package io.meridian.stream.ingest;

import io.meridian.stream.row.DistanceRow;
import com.esotericsoftware.kryo.Kryo;
import com.esotericsoftware.kryo.Serializer;
import com.esotericsoftware.kryo.io.Input;
import com.esotericsoftware.kryo.io.Output;

/**
 * Kryo form of a {@link DistanceRow} between workers: its encoded bytes, length-prefixed, nothing else (the header is
 * re-read on arrival). Registered with {@code topology.kryo.register}; see {@code IngestTopology}.
 */
public final class DistanceRowSerializer extends Serializer<DistanceRow> {
    public DistanceRowSerializer() {
        setImmutable(true);
    }

    @Override
    public void write(Kryo kryo, Output output, DistanceRow row) {
        byte[] bytes = row.bytes();
        output.writeVarInt(bytes.length, true);
        output.writeBytes(bytes);
    }

    @Override
    public DistanceRow read(Kryo kryo, Input input, Class<? extends DistanceRow> type) {
        byte[] bytes = input.readBytes(input.readVarInt(true));
        DistanceRow row = new DistanceRow();
        String problem = row.wrap(bytes);
        if (problem != null) {
            throw new com.esotericsoftware.kryo.KryoException("corrupt distance row: " + problem);
        }
        return row;
    }
}
