package io.meridian.stream.ingest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.meridian.stream.row.RowFormat;
import java.nio.charset.StandardCharsets;
import java.util.Properties;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.config.TopicConfig;
import org.junit.jupiter.api.Test;

class KafkaRowLimitsTest {
    @Test
    void theWidestRowIsMaxPointsFloat32DistancesWithWeightsAsTheRowFormatEncodesThem() {
        int maxPoints = 1_000_000;
        float[] values = new float[maxPoints];
        byte[] widest = RowFormat.encodeFloat32(maxPoints - 1, values, maxPoints, values, true);
        KafkaRowLimits limits = KafkaRowLimits.forMaxPoints(maxPoints);
        assertEquals(widest.length, limits.widestRowBytes());
        assertEquals(8_000_010, limits.widestRowBytes());
        assertEquals(widest.length + KafkaRowLimits.RECORD_OVERHEAD_BYTES, limits.rowRecordBytes());
        assertEquals(Integer.toString(limits.rowRecordBytes()),
                limits.rowTopicConfigs().get(TopicConfig.MAX_MESSAGE_BYTES_CONFIG));
        assertTrue(KafkaRowLimits.largestValueFor(limits.rowRecordBytes()) >= widest.length);
        assertTrue(limits.partitionFetchBytes() >= limits.rowRecordBytes());
    }

    @Test
    void aTopicIsNeverSizedBelowKafkasDefaultSoThatTooWideRowsReachValidation() {
        KafkaRowLimits limits = KafkaRowLimits.forMaxPoints(8192);
        assertEquals(65_546, limits.widestRowBytes());
        assertEquals(KafkaRowLimits.KAFKA_DEFAULT_MESSAGE_BYTES, limits.rowRecordBytes());
        assertEquals(4 << 20, limits.partitionFetchBytes());
    }

    @Test
    void theDeadLetterTopicTakesEveryRecordOfTheRowTopicWithItsHeaders() {
        KafkaRowLimits limits = KafkaRowLimits.forMaxPoints(400_000);
        assertEquals(limits.rowRecordBytes(), limits.deadLetterValueBytes());
        assertEquals(limits.deadLetterValueBytes() + KafkaRowLimits.RECORD_OVERHEAD_BYTES,
                limits.deadLetterRecordBytes());
        assertTrue(KafkaRowLimits.RECORD_OVERHEAD_BYTES > KafkaRowLimits.MAX_DETAIL_BYTES + 1024,
                "room for the detail header, the others and the record's framing");
    }

    @Test
    void producersBufferTwoWidestRecordsOnceTheyOutgrowKafkasDefaultBuffer() {
        Properties small = new Properties();
        KafkaRowLimits.producerProperties(small, KafkaRowLimits.forMaxPoints(100_000).rowRecordBytes());
        assertEquals(KafkaRowLimits.KAFKA_DEFAULT_MESSAGE_BYTES, small.get(ProducerConfig.MAX_REQUEST_SIZE_CONFIG));
        assertEquals(32L << 20, small.get(ProducerConfig.BUFFER_MEMORY_CONFIG));
        Properties wide = new Properties();
        int record = KafkaRowLimits.forMaxPoints(4_194_304).rowRecordBytes(); // 33.5 MB: over the 32 MiB default
        KafkaRowLimits.producerProperties(wide, record);
        assertEquals(record, wide.get(ProducerConfig.MAX_REQUEST_SIZE_CONFIG));
        assertEquals(2L * record, wide.get(ProducerConfig.BUFFER_MEMORY_CONFIG));
    }

    @Test
    void aUniverseWhoseRowsNoBrokerRequestHoldsIsRefusedNamingMaxPoints() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> KafkaRowLimits.forMaxPoints(14_000_000));
        assertTrue(e.getMessage().startsWith("ingest.maxPoints 14000000 allows rows"), e.getMessage());
        assertTrue(e.getMessage().contains("socket.request.max.bytes 104857600"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> KafkaRowLimits.forMaxPoints(Integer.MAX_VALUE));
    }

    @Test
    void aLongDetailIsCutAtACharacterBoundary() {
        assertEquals("distance 3 of row 8 is NaN",
                new String(KafkaRowLimits.detailHeader("distance 3 of row 8 is NaN"), StandardCharsets.UTF_8));
        String longDetail = "a" + "é".repeat(KafkaRowLimits.MAX_DETAIL_BYTES); // 'é' is 2 bytes: the cut falls in one
        byte[] cut = KafkaRowLimits.detailHeader(longDetail);
        assertEquals(KafkaRowLimits.MAX_DETAIL_BYTES - 1, cut.length);
        String decoded = new String(cut, StandardCharsets.UTF_8);
        assertTrue(longDetail.startsWith(decoded) && decoded.length() == 1 + (cut.length - 1) / 2, decoded);
    }
}
