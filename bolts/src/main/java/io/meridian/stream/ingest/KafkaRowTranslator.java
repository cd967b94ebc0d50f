package io.meridian.stream.ingest;

import java.util.List;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.storm.kafka.spout.RecordTranslator;
import org.apache.storm.tuple.Fields;
import org.apache.storm.tuple.Values;

/** Kafka record -> source tuple: the row bytes, the record timestamp (publish time) and {@code topic-partition@offset}. */
public final class KafkaRowTranslator implements RecordTranslator<String, byte[]> {
    private static final long serialVersionUID = 1L;

    @Override
    public List<Object> apply(ConsumerRecord<String, byte[]> record) {
        return new Values(record.value(), record.timestamp(),
                record.topic() + "-" + record.partition() + "@" + record.offset());
    }

    @Override
    public Fields getFieldsFor(String stream) {
        return IngestStreams.SOURCE_FIELDS;
    }
}
