package io.meridian.stream.ingest;

import io.meridian.stream.row.RowFormat;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.config.TopicConfig;

/**
 * Every Kafka size limit Meridian sets, derived in this one place from the widest row {@code ingest.maxPoints} allows:
 * {@code maxPoints} float32 distances with their weights ({@link RowFormat#encodedLength}). Kafka's defaults stop a
 * record at 1 MiB (topic {@code max.message.bytes} 1,048,588, producer {@code max.request.size} 1 MiB), which a 16-bit
 * row passes beyond 524K distances and a weighted float32 row beyond 131K.
 *
 * <ul>
 *   <li>Topics: {@link #rowTopicConfigs()} for the row topic, {@link #deadLetterTopicConfigs()} for the dead-letter
 *   topic, which carries any record the row topic took plus its headers. A topic's limit is never set below Kafka's
 *   default: a row too wide for the configuration but not for Kafka reaches validation and is dead-lettered (from a
 *   producer other than {@code feed}, which refuses it), instead of failing in that producer.</li>
 *   <li>Producers ({@code feed}, the dead-letter bolt): {@link #producerProperties} raises {@code max.request.size}
 *   and, when a record would not fit Kafka's default 32 MiB, {@code buffer.memory} (a record larger than it is
 *   refused by the producer itself).</li>
 *   <li>The spout's consumer: {@link #partitionFetchBytes()}, a widest record per partition and fetch at least.</li>
 *   <li>The broker: nothing. Topic settings override its {@code message.max.bytes}; its replica fetches return an
 *   oversized first batch anyway (KIP-74); its one hard limit, {@code socket.request.max.bytes} (100 MiB) on a
 *   request, is checked here.</li>
 * </ul>
 */
public final class KafkaRowLimits {
    /** Kafka's default {@code max.message.bytes} of a topic (the broker's {@code message.max.bytes}): 1 MiB + 12. */
    public static final int KAFKA_DEFAULT_MESSAGE_BYTES = 1_048_588;
    /**
     * What a record needs beyond its value, with room to spare: the batch header (61 bytes), the record's varints,
     * its key (a row id or a reason code) and a dead letter's headers ({@code reason}, {@code source} and
     * {@code detail}, which {@link #detailHeader} cuts to {@link #MAX_DETAIL_BYTES}).
     */
    public static final int RECORD_OVERHEAD_BYTES = 16 << 10;
    /** The longest {@code detail} header of a dead letter, in UTF-8 bytes. */
    public static final int MAX_DETAIL_BYTES = 4 << 10;
    /** The broker's {@code socket.request.max.bytes} default: a larger produce request is refused outright. */
    public static final int BROKER_MAX_REQUEST_BYTES = 104_857_600;
    /** The producer's default {@code buffer.memory}: a record larger than it is refused before it is sent. */
    static final long PRODUCER_DEFAULT_BUFFER_BYTES = 32L << 20;
    /** The spout's consumer fetches at least this much per partition (what it fetched before rows grew wide). */
    static final int MIN_PARTITION_FETCH_BYTES = 4 << 20;

    private final int maxPoints;
    private final int widestRowBytes;
    private final int rowRecordBytes;

    private KafkaRowLimits(int maxPoints) {
        if (maxPoints < 1) {
            throw new IllegalArgumentException("ingest.maxPoints must be positive, got " + maxPoints);
        }
        // bounded first, so that the row format's int arithmetic cannot overflow
        int widest = maxPoints <= BROKER_MAX_REQUEST_BYTES / 8
                ? RowFormat.encodedLength(maxPoints, true, true) : Integer.MAX_VALUE;
        if ((long) widest + 2L * RECORD_OVERHEAD_BYTES > BROKER_MAX_REQUEST_BYTES) {
            throw new IllegalArgumentException("ingest.maxPoints " + maxPoints + " allows rows (float32 with weights)"
                    + " larger than a Kafka broker takes in one request (socket.request.max.bytes "
                    + BROKER_MAX_REQUEST_BYTES + " bytes)");
        }
        this.maxPoints = maxPoints;
        this.widestRowBytes = widest;
        this.rowRecordBytes = Math.max(KAFKA_DEFAULT_MESSAGE_BYTES, widestRowBytes + RECORD_OVERHEAD_BYTES);
    }

    /** The limits for a universe of {@code maxPoints} points ({@code ingest.maxPoints}). */
    public static KafkaRowLimits forMaxPoints(int maxPoints) {
        return new KafkaRowLimits(maxPoints);
    }

    public int maxPoints() {
        return maxPoints;
    }

    /** The largest valid row on the wire: {@code maxPoints} float32 distances and weights. */
    public int widestRowBytes() {
        return widestRowBytes;
    }

    /** The row topic's {@code max.message.bytes}: the widest row and its record, never below Kafka's default. */
    public int rowRecordBytes() {
        return rowRecordBytes;
    }

    /** The largest row value a topic of {@code maxMessageBytes} takes with room for its record. */
    public static int largestValueFor(long maxMessageBytes) {
        return (int) Math.max(0, Math.min(Integer.MAX_VALUE, maxMessageBytes - RECORD_OVERHEAD_BYTES));
    }

    /**
     * The dead-letter topic's {@code max.message.bytes}: any record the row topic took (at most
     * {@link #rowRecordBytes()}) with a dead letter's headers.
     */
    public int deadLetterRecordBytes() {
        return rowRecordBytes + RECORD_OVERHEAD_BYTES;
    }

    /**
     * The longest value a dead letter carries whole: every record the row topic takes as Meridian configures it. A
     * longer one (a row topic whose limit someone raised beyond it) is no valid row at any width this configuration
     * allows; its dead letter carries the first this-many bytes and a {@code truncated} header with the full length.
     */
    public int deadLetterValueBytes() {
        return rowRecordBytes;
    }

    public Map<String, String> rowTopicConfigs() {
        return Map.of(TopicConfig.MAX_MESSAGE_BYTES_CONFIG, Integer.toString(rowRecordBytes));
    }

    public Map<String, String> deadLetterTopicConfigs() {
        return Map.of(TopicConfig.MAX_MESSAGE_BYTES_CONFIG, Integer.toString(deadLetterRecordBytes()));
    }

    /** Sets a producer's request and buffer sizes for records of up to {@code recordBytes}. */
    public static void producerProperties(Properties p, int recordBytes) {
        p.put(ProducerConfig.MAX_REQUEST_SIZE_CONFIG, recordBytes);
        p.put(ProducerConfig.BUFFER_MEMORY_CONFIG, Math.max(PRODUCER_DEFAULT_BUFFER_BYTES, 2L * recordBytes));
    }

    /** The spout's consumer's {@code max.partition.fetch.bytes}: a widest record at least, and 4 MiB at least. */
    public int partitionFetchBytes() {
        return Math.max(MIN_PARTITION_FETCH_BYTES, rowRecordBytes);
    }

    /** A dead letter's {@code detail} header: the detail in UTF-8, cut to {@link #MAX_DETAIL_BYTES} at a character. */
    public static byte[] detailHeader(String detail) {
        byte[] b = detail.getBytes(StandardCharsets.UTF_8);
        if (b.length <= MAX_DETAIL_BYTES) {
            return b;
        }
        int cut = MAX_DETAIL_BYTES;
        while (cut > 0 && (b[cut] & 0xC0) == 0x80) {
            cut--; // b[cut] continues a character: cut before the character's first byte
        }
        return Arrays.copyOf(b, cut);
    }
}
