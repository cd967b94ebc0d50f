package io.meridian.topology;

import io.meridian.config.MeridianConfig;
import io.meridian.stream.ingest.DeadLetterBolt;
import io.meridian.stream.ingest.FileRowSpout;
import io.meridian.stream.ingest.IngestStreams;
import io.meridian.stream.ingest.KafkaRowTranslator;
import io.meridian.stream.ingest.RowStoreBolt;
import io.meridian.stream.ingest.ValidationBolt;
import io.meridian.stream.live.AssignmentHook;
import io.meridian.stream.live.BlockStoreGrouping;
import io.meridian.stream.live.LiveMapBolt;
import io.meridian.stream.live.MapStreams;
import io.meridian.stream.metrics.PrometheusReporter;
import io.meridian.stream.row.DistanceRow;
import io.meridian.stream.ingest.DistanceRowSerializer;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.storm.Config;
import org.apache.storm.generated.StormTopology;
import org.apache.storm.kafka.spout.FirstPollOffsetStrategy;
import org.apache.storm.kafka.spout.KafkaSpout;
import org.apache.storm.kafka.spout.KafkaSpoutConfig;
import org.apache.storm.topology.TopologyBuilder;

/**
 * The ingestion topology: row source (Kafka spout on {@code ingest.kafka.topic}, or the file spout) -> validation ->
 * row stores (fields grouping on the row block), with rejected rows from both bolts -> dead-letter output, and the
 * live map (map.enabled) reading the row stores.
 */
public final class IngestTopology {
    private IngestTopology() {
    }

    public static StormTopology build(MeridianConfig config) {
        MeridianConfig.IngestSettings ingest = config.ingest();
        TopologyBuilder builder = new TopologyBuilder();
        if ("kafka".equals(ingest.source())) {
            builder.setSpout(IngestStreams.SPOUT, new KafkaSpout<>(kafkaSpoutConfig(ingest.kafka())), 1);
        } else {
            builder.setSpout(IngestStreams.SPOUT, new FileRowSpout(), 1);
        }
        builder.setBolt(IngestStreams.VALIDATE, new ValidationBolt(), ingest.validation().parallelism())
                .localOrShuffleGrouping(IngestStreams.SPOUT);
        builder.setBolt(IngestStreams.STORE, new RowStoreBolt(), ingest.rowStore().parallelism())
                .customGrouping(IngestStreams.VALIDATE, IngestStreams.ROWS, new BlockStoreGrouping(MapStreams.MAP));
        builder.setBolt(IngestStreams.DEAD_LETTER, new DeadLetterBolt(), 1)
                .shuffleGrouping(IngestStreams.VALIDATE, IngestStreams.REJECTED)
                .shuffleGrouping(IngestStreams.STORE, IngestStreams.REJECTED);
        if (config.map().enabled()) {
            // the map's tasks exchange through the collectives; the only tuples they get are store notifications,
            // which task 0 (the publisher) times placement by
            builder.setBolt(MapStreams.MAP, new LiveMapBolt(), config.map().tasks())
                    .globalGrouping(IngestStreams.STORE, MapStreams.STORED);
        }
        builder.addWorkerHook(new AssignmentHook()); // the bolts learn the hosts of the tasks from it (MapLayout)
        return builder.createTopology();
    }

    static KafkaSpoutConfig<String, byte[]> kafkaSpoutConfig(MeridianConfig.Kafka kafka) {
        return new KafkaSpoutConfig.Builder<String, byte[]>(kafka.brokers(), kafka.topic())
                .setProp(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class)
                .setProp(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class)
                .setProp(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, Math.min(500, kafka.maxUncommittedOffsets()))
                .setGroupId(kafka.consumerGroup())
                .setRecordTranslator(new KafkaRowTranslator())
                .setProcessingGuarantee(KafkaSpoutConfig.ProcessingGuarantee.AT_LEAST_ONCE)
                .setFirstPollOffsetStrategy("earliest".equals(kafka.firstPoll())
                        ? FirstPollOffsetStrategy.UNCOMMITTED_EARLIEST : FirstPollOffsetStrategy.UNCOMMITTED_LATEST)
                .setMaxUncommittedOffsets(kafka.maxUncommittedOffsets())
                .setOffsetCommitPeriodMs(kafka.commitPeriodMs())
                .build();
    }

    /** The Storm configuration of the topology: sizes, at-least-once settings, Kryo registration, the Prometheus reporter. */
    public static Config stormConfig(MeridianConfig config) {
        MeridianConfig.TopologySettings t = config.topology();
        Config conf = new Config();
        conf.put(IngestStreams.CONFIG_KEY, config.yaml());
        conf.setNumWorkers(t.workers());
        conf.setNumAckers(t.ackers());
        conf.setMaxSpoutPending(t.maxSpoutPending());
        conf.setMessageTimeoutSecs(t.messageTimeoutSecs());
        conf.registerSerialization(DistanceRow.class, DistanceRowSerializer.class);
        conf.put(Config.TOPOLOGY_WORKER_CHILDOPTS, "-Xmx" + t.workerHeapMb() + "m");
        Map<String, Object> reporter = new LinkedHashMap<>();
        reporter.put("class", PrometheusReporter.class.getName());
        reporter.put(PrometheusReporter.PORT_OFFSET, config.metrics().portOffset());
        reporter.put(PrometheusReporter.LOCAL_PORT, config.metrics().localPort());
        conf.put(Config.TOPOLOGY_METRICS_REPORTERS, List.of(reporter));
        if (MeridianConfig.TopologySettings.MMAP.equals(t.transport())) {
            io.meridian.transport.mmap.MmapTransport.enable(conf);
        }
        return conf;
    }
}
