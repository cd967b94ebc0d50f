package io.meridian.stream.ingest;

import java.util.List;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.storm.kafka.spout.RecordTranslator;
import org.apache.storm.tuple.Fields;
import org.apache.storm.tuple.Values;

/**
 * Kafka record -> the fields of one row, which {@link BatchingKafkaSpout} gathers into a {@link RowBatch}: the row
 * bytes, the record timestamp (publish time), and its source as the prefix {@code topic-partition@} (one string per
 * partition, made once) and the offset. One per spout task (the spout's thread).
 */
public final class KafkaRowTranslator implements RecordTranslator<String, byte[]> {
    private static final long serialVersionUID = 1L;
    private static final Fields ROW = new Fields("value", "publishedMs", "sourcePrefix", "offset");
    private transient String topic;
    private transient String[] prefixes;

    @Override
    public List<Object> apply(ConsumerRecord<String, byte[]> record) {
        return new Values(record.value(), record.timestamp(), prefix(record.topic(), record.partition()), record.offset());
    }

    private String prefix(String recordTopic, int partition) {
        if (prefixes == null || !recordTopic.equals(topic)) {
            topic = recordTopic;
            prefixes = new String[Math.max(16, partition + 1)];
        } else if (partition >= prefixes.length) {
            prefixes = java.util.Arrays.copyOf(prefixes, 2 * partition + 1);
        }
        String p = prefixes[partition];
        if (p == null) {
            p = recordTopic + "-" + partition + "@";
            prefixes[partition] = p;
        }
        return p;
    }

    @Override
    public Fields getFieldsFor(String stream) {
        return ROW;
    }
}
