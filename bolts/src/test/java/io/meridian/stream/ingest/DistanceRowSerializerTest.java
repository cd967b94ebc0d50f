package io.meridian.stream.ingest;

import io.meridian.stream.row.DistanceRow;
import io.meridian.stream.row.RowFormat;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import com.esotericsoftware.kryo.Kryo;
import com.esotericsoftware.kryo.io.Input;
import com.esotericsoftware.kryo.io.Output;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.storm.Config;
import org.apache.storm.serialization.SerializationFactory;
import org.junit.jupiter.api.Test;

class DistanceRowSerializerTest {
    @Test
    void stormsKryoCarriesTheRowWhenRegisteredLikeTheTopologyDoes() {
        Config conf = new Config();
        conf.registerSerialization(DistanceRow.class, DistanceRowSerializer.class);
        Map<String, Object> all = new HashMap<>(org.apache.storm.utils.Utils.readDefaultConfig());
        all.putAll(conf);
        Kryo kryo = SerializationFactory.getKryo(all);
        DistanceRow row = DistanceRow.decode(RowFormat.encodeFloat32(3, new float[] {0.1f, -1f, 1f}, 3,
                new float[] {1f, 0.5f, 0f}, false), null);
        Output out = new Output(256, -1);
        kryo.writeClassAndObject(out, new java.util.ArrayList<>(List.of(row)));
        Object back = kryo.readClassAndObject(new Input(out.toBytes()));
        DistanceRow copy = (DistanceRow) ((List<?>) back).get(0);
        assertArrayEquals(row.bytes(), copy.bytes());
        assertEquals(3, copy.id());
        assertEquals(0.5f, copy.weight(1));
        assertEquals(-1f, copy.distance(1));
    }
}
