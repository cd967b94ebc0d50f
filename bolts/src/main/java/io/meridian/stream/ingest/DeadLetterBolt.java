package io.meridian.stream.ingest;

import com.codahale.metrics.Counter;
import io.meridian.config.MeridianConfig;
import io.meridian.stream.WorkingDirectories;
import java.io.BufferedWriter;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.Base64;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.storm.task.OutputCollector;
import org.apache.storm.task.TopologyContext;
import org.apache.storm.topology.OutputFieldsDeclarer;
import org.apache.storm.topology.base.BaseRichBolt;
import org.apache.storm.tuple.Tuple;

/**
 * Writes every rejected row, with its reason, to the dead-letter output and acks it only once written (a failed write
 * fails the tuple, so the source replays the row). On Kafka: topic {@code ingest.kafka.rejectedTopic}, key = reason
 * code, value = the row's original bytes, headers {@code reason}, {@code detail}, {@code source}. The topic takes every
 * record the row topic takes with these headers ({@link KafkaRowLimits}), so the value is whole for every row the row
 * topic, as Meridian sizes it, accepts: it can be re-sent once fixed. A longer value (the row topic's limit raised by
 * hand beyond that) is no valid row at any width the configuration allows: its dead letter carries its first
 * {@link KafkaRowLimits#deadLetterValueBytes()} bytes and a {@code truncated} header with its length, instead of
 * failing (and so replaying) the row forever. With the file source
 * ({@code ./meridian local}): one line per row in {@code <ingest.local.output>/rejected.tsv}:
 * {@code reason<TAB>detail<TAB>source<TAB>base64(bytes)}.
 */
public final class DeadLetterBolt extends BaseRichBolt {
    private static final long serialVersionUID = 1L;
    public static final String REJECTED_FILE = "rejected.tsv";

    private transient OutputCollector collector;
    private transient KafkaProducer<String, byte[]> producer;
    private transient String topic;
    private transient int wholeValueBytes;
    private transient BufferedWriter file;
    private transient Counter written;

    @Override
    public void prepare(Map<String, Object> topoConf, TopologyContext context, OutputCollector collector) {
        this.collector = collector;
        MeridianConfig config = MeridianConfig.parse((String) topoConf.get(IngestStreams.CONFIG_KEY), "topology config");
        this.written = context.registerCounter(IngestMetrics.DEAD_LETTERED);
        if ("kafka".equals(config.ingest().source())) {
            Properties p = new Properties();
            p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, config.ingest().kafka().brokers());
            p.put(ProducerConfig.ACKS_CONFIG, "all");
            p.put(ProducerConfig.CLIENT_ID_CONFIG, "meridian-dead-letter-" + context.getThisTaskId());
            KafkaRowLimits limits = KafkaRowLimits.forMaxPoints(config.ingest().maxPoints());
            KafkaRowLimits.producerProperties(p, limits.deadLetterRecordBytes());
            this.wholeValueBytes = limits.deadLetterValueBytes();
            this.producer = new KafkaProducer<>(p, new StringSerializer(), new ByteArraySerializer());
            this.topic = config.ingest().kafka().rejectedTopic();
        } else {
            Path out = config.ingest().local().output().resolve(REJECTED_FILE);
            try {
                WorkingDirectories.create(out.getParent(), "ingest.local.output");
                this.file = Files.newBufferedWriter(out, StandardCharsets.UTF_8, StandardOpenOption.CREATE,
                        StandardOpenOption.APPEND);
            } catch (IOException e) {
                throw new IllegalStateException("dead-letter file " + out + ": " + e.getMessage(), e);
            }
        }
    }

    @Override
    public void execute(Tuple input) {
        byte[] value = (byte[]) input.getValue(0);
        String reason = input.getString(1);
        String detail = input.getString(2);
        String source = String.valueOf(input.getValue(3));
        try {
            if (producer != null) {
                boolean whole = value == null || value.length <= wholeValueBytes;
                ProducerRecord<String, byte[]> record = new ProducerRecord<>(topic, reason,
                        whole ? value : Arrays.copyOf(value, wholeValueBytes));
                record.headers().add("reason", reason.getBytes(StandardCharsets.UTF_8));
                record.headers().add("detail", KafkaRowLimits.detailHeader(detail));
                record.headers().add("source", source.getBytes(StandardCharsets.UTF_8));
                if (!whole) {
                    record.headers().add("truncated", Integer.toString(value.length).getBytes(StandardCharsets.UTF_8));
                }
                // bad rows are rare: a synchronous send keeps "acked means written" without callbacks on another thread
                producer.send(record).get(30, TimeUnit.SECONDS);
            } else {
                file.write(reason + '\t' + detail.replace('\t', ' ') + '\t' + source + '\t'
                        + (value == null ? "" : Base64.getEncoder().encodeToString(value)) + '\n');
                file.flush();
            }
            written.inc();
            collector.ack(input);
        } catch (Exception e) {
            collector.reportError(e);
            collector.fail(input);
        }
    }

    @Override
    public void cleanup() {
        try {
            if (producer != null) {
                producer.close();
            }
            if (file != null) {
                file.close();
            }
        } catch (IOException e) {
            // closing at shutdown: nothing left to do
        }
    }

    @Override
    public void declareOutputFields(OutputFieldsDeclarer declarer) {
    }
}
