package io.meridian.stream.ingest;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import com.esotericsoftware.kryo.Kryo;
import com.esotericsoftware.kryo.io.Input;
import com.esotericsoftware.kryo.io.Output;
import io.meridian.stream.row.RowFormat;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.storm.Config;
import org.apache.storm.serialization.SerializationFactory;
import org.apache.storm.utils.Utils;
import org.junit.jupiter.api.Test;

class RowBatchSerializerTest {
    private static Kryo kryo() {
        Config conf = new Config();
        IngestStreams.registerKryo(conf);
        Map<String, Object> all = new HashMap<>(Utils.readDefaultConfig());
        all.putAll(conf);
        return SerializationFactory.getKryo(all);
    }

    private static Object roundTrip(Kryo kryo, Object value) {
        Output out = new Output(1024, -1);
        kryo.writeClassAndObject(out, new ArrayList<>(List.of(value)));
        return ((List<?>) kryo.readClassAndObject(new Input(out.toBytes()))).get(0);
    }

    @Test
    void stormsKryoCarriesEveryRowWithItsTimeAndSourceWhenRegisteredLikeTheTopologyDoes() {
        RowBatch batch = new RowBatch(2); // grows past its capacity
        byte[] a = RowFormat.encodeFloat32(3, new float[] {0.1f, -1f, 1f}, 3, new float[] {1f, 0.5f, 0f}, false);
        byte[] b = RowFormat.encodeInt16(2, new short[] {7, -1}, 0, 2, false);
        batch.add(a, 1_700_000_000_123L, "distance-rows-2@", 41);
        batch.add(b, 1_700_000_000_124L, "distance-rows-0@", 7);
        batch.add(null, 5, "distance-rows-2@", 42); // a record without a value: validation dead-letters it
        batch.add(new byte[0], 6, "rows.bin#", -1);
        RowBatch copy = (RowBatch) roundTrip(kryo(), batch);
        assertEquals(4, copy.size());
        assertEquals(batch.bytes(), copy.bytes());
        assertArrayEquals(a, copy.value(0));
        assertArrayEquals(b, copy.value(1));
        assertNull(copy.value(2));
        assertArrayEquals(new byte[0], copy.value(3));
        assertEquals(1_700_000_000_124L, copy.publishedMs(1));
        assertEquals("distance-rows-2@41", copy.source(0));
        assertEquals("distance-rows-0@7", copy.source(1));
        assertEquals("distance-rows-2@42", copy.source(2));
        assertEquals("rows.bin#-1", copy.source(3));
    }

    @Test
    void carriesTheRowStoresNotificationsToTheMap() {
        Kryo kryo = kryo();
        assertArrayEquals(new int[] {4, 9}, (int[]) roundTrip(kryo, new int[] {4, 9}));
        assertArrayEquals(new long[] {1L, 2L}, (long[]) roundTrip(kryo, new long[] {1L, 2L}));
    }
}
