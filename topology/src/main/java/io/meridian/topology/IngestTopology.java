package io.meridian.topology;

import io.meridian.config.MeridianConfig;
import io.meridian.stream.ProportionalWaitStrategy;
import io.meridian.stream.ingest.BatchingKafkaSpout;
import io.meridian.stream.ingest.DeadLetterBolt;
import io.meridian.stream.ingest.FileRowSpout;
import io.meridian.stream.ingest.IngestStreams;
import io.meridian.stream.ingest.KafkaRowLimits;
import io.meridian.stream.ingest.KafkaRowTranslator;
import io.meridian.stream.ingest.RowStoreBolt;
import io.meridian.stream.ingest.ValidationBolt;
import io.meridian.stream.live.AssignmentHook;
import io.meridian.stream.live.LiveMapBolt;
import io.meridian.stream.live.MapStreams;
import io.meridian.stream.metrics.PrometheusReporter;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.storm.Config;
import org.apache.storm.generated.StormTopology;
import org.apache.storm.kafka.spout.FirstPollOffsetStrategy;
import org.apache.storm.kafka.spout.KafkaSpoutConfig;
import org.apache.storm.topology.BoltDeclarer;
import org.apache.storm.topology.TopologyBuilder;

/**
 * The ingestion topology: row source (Kafka spout on {@code ingest.kafka.topic}, or the file spout) -> validation ->
 * row stores (each valid row to the row store task(s) of its block, {@code MapLayout}), with rejected rows from both
 * bolts -> dead-letter output, and the live map (map.enabled) reading the row stores. Tuples carry batches of rows
 * ({@code RowBatch}): the Kafka spout emits up to {@code ingest.kafka.maxRowsPerTuple} rows of a poll together.
 */
public final class IngestTopology {
    /**
     * The most row bytes one spout tuple carries: well under the mmap transport's 1 MB documents and Netty's frames,
     * and a few dozen rows of a large universe (16 KB each at 8192 points). A row wider than this travels alone
     * (BatchingKafkaSpout): up to the mmap transport's 8 MiB a tuple.
     */
    static final long MAX_BYTES_PER_TUPLE = 512 * 1024;
    /**
     * The row bytes the spout keeps in flight, at most: a quarter of a worker's heap, and 64 MB at most. With
     * {@code bench ingest --width 100000 --pending 5000} (200 KB rows) 301 MB/s into the row stores with it, 309
     * without (the same within the noise), and the busier worker's heap after GC peaked at 179 MB instead of 245 MB
     * of 512. At least one row is always let through, however wide.
     */
    static long maxPendingBytes(MeridianConfig.TopologySettings topology) {
        return Math.min(MAX_PENDING_BYTES, (long) topology.workerHeapMb() << 18);
    }

    static final long MAX_PENDING_BYTES = 64L << 20;

    /**
     * How long the Kafka spout's poll waits for rows when it has none: the most a batch of rows can wait for more to
     * join it (storm-kafka-client's default, 200 ms, would be that much latency at low rates).
     */
    static final long POLL_TIMEOUT_MS = 2;

    private IngestTopology() {
    }

    public static StormTopology build(MeridianConfig config) {
        MeridianConfig.IngestSettings ingest = config.ingest();
        TopologyBuilder builder = new TopologyBuilder();
        if ("kafka".equals(ingest.source())) {
            builder.setSpout(IngestStreams.SPOUT, new BatchingKafkaSpout(kafkaSpoutConfig(ingest),
                    ingest.kafka().maxRowsPerTuple(), MAX_BYTES_PER_TUPLE, config.topology().maxSpoutPending(),
                    maxPendingBytes(config.topology())), 1);
        } else {
            builder.setSpout(IngestStreams.SPOUT, new FileRowSpout(), 1);
        }
        builder.setBolt(IngestStreams.VALIDATE, new ValidationBolt(), ingest.validation().parallelism())
                .localOrShuffleGrouping(IngestStreams.SPOUT);
        BoltDeclarer store = builder.setBolt(IngestStreams.STORE, new RowStoreBolt(), ingest.rowStore().parallelism())
                .directGrouping(IngestStreams.VALIDATE, IngestStreams.ROWS);
        builder.setBolt(IngestStreams.DEAD_LETTER, new DeadLetterBolt(), 1)
                .shuffleGrouping(IngestStreams.VALIDATE, IngestStreams.REJECTED)
                .shuffleGrouping(IngestStreams.STORE, IngestStreams.REJECTED);
        if (config.map().enabled()) {
            // the map's tasks exchange through the collectives; the only tuples they get are store notifications,
            // which task 0 (the publisher) times placement by
            builder.setBolt(MapStreams.MAP, new LiveMapBolt(), config.map().tasks())
                    .globalGrouping(IngestStreams.STORE, MapStreams.STORED);
            // across hosts, task 0 tells the row stores on its host which mirror copies it no longer reads
            store.directGrouping(MapStreams.MAP, MapStreams.MIRROR_NEEDED);
        }
        builder.addWorkerHook(new AssignmentHook()); // the bolts learn the hosts of the tasks from it (MapLayout)
        return builder.createTopology();
    }

    static KafkaSpoutConfig<String, byte[]> kafkaSpoutConfig(MeridianConfig.IngestSettings ingest) {
        MeridianConfig.Kafka kafka = ingest.kafka();
        return new KafkaSpoutConfig.Builder<String, byte[]>(kafka.brokers(), kafka.topic())
                .setProp(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class)
                .setProp(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class)
                .setProp(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, Math.min(2000, kafka.maxUncommittedOffsets()))
                // the consumer reads its socket only inside poll, and the spout polls between emitting batches: with
                // the 64 KB default the broker's next fetch response waited for the poll; let the kernel size it
                .setProp(ConsumerConfig.RECEIVE_BUFFER_CONFIG, -1)
                .setProp(ConsumerConfig.MAX_PARTITION_FETCH_BYTES_CONFIG,
                        KafkaRowLimits.forMaxPoints(ingest.maxPoints()).partitionFetchBytes())
                // the broker answers a fetch once 64 KB (about 13 rows) are there or 2 ms have passed: with the default
                // (1 byte) each fetch took a row or two at moderate rates, and the broker spent more CPU per row than
                // the whole topology
                .setProp(ConsumerConfig.FETCH_MIN_BYTES_CONFIG, 64 << 10)
                .setProp(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, 2)
                .setGroupId(kafka.consumerGroup())
                .setRecordTranslator(new KafkaRowTranslator())
                .setProcessingGuarantee(KafkaSpoutConfig.ProcessingGuarantee.AT_LEAST_ONCE)
                .setFirstPollOffsetStrategy("earliest".equals(kafka.firstPoll())
                        ? FirstPollOffsetStrategy.UNCOMMITTED_EARLIEST : FirstPollOffsetStrategy.UNCOMMITTED_LATEST)
                .setMaxUncommittedOffsets(kafka.maxUncommittedOffsets())
                .setOffsetCommitPeriodMs(kafka.commitPeriodMs())
                // BatchingKafkaSpout gathers rows until a poll finds none within this time, then emits: with 0 the
                // consumer read its socket only when polled, between the spout's idle sleeps (24,000 rows/s at most)
                .setPollTimeoutMs(POLL_TIMEOUT_MS)
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
        // an executor with nothing to do parks for 1/8 of the time it has been idle (ProportionalWaitStrategy): a
        // bolt at least 1 ms (Storm's default parks 1 ns 1000 times, some 16,000 wake-ups a second, before it sleeps
        // 1 ms at a time) and at most 10 ms, a spout 100 us to 1 ms (it has waited in its Kafka poll already,
        // POLL_TIMEOUT_MS, and it waits for acks with this strategy too). An idle live-map topology (two workers):
        // 15,800 wake-ups/s before, 5,400 after (1,800 of them Storm's transfer threads, which sleep 1 ms at a time
        // whatever the settings); CPU of all daemons 0.42 -> 0.31 core
        conf.put(Config.TOPOLOGY_SPOUT_WAIT_STRATEGY, ProportionalWaitStrategy.class.getName());
        conf.put(Config.TOPOLOGY_SPOUT_WAIT_PARK_MICROSEC, 100);
        conf.put(Config.TOPOLOGY_BOLT_WAIT_STRATEGY, ProportionalWaitStrategy.class.getName());
        conf.put(Config.TOPOLOGY_BOLT_WAIT_PARK_MICROSEC, 1000);
        conf.setMessageTimeoutSecs(t.messageTimeoutSecs());
        IngestStreams.registerKryo(conf);
        // Kryo with registered types only: Java serialization of whatever a tuple carries would deserialize any class
        // a peer sends (Storm's default, pinned here so that neither a storm.yaml nor a later default turns it on)
        conf.setFallBackOnJavaSerialization(false);
        conf.put(Config.TOPOLOGY_WORKER_CHILDOPTS, "-Xmx" + t.workerHeapMb() + "m");
        Map<String, Object> reporter = new LinkedHashMap<>();
        reporter.put("class", PrometheusReporter.class.getName());
        reporter.put(PrometheusReporter.PORT_OFFSET, config.metrics().portOffset());
        reporter.put(PrometheusReporter.LOCAL_PORT, config.metrics().localPort());
        conf.put(Config.TOPOLOGY_METRICS_REPORTERS, List.of(reporter));
        if (MeridianConfig.TopologySettings.MMAP.equals(t.transport())) {
            io.meridian.transport.mmap.MmapTransport.enable(conf);
            if (t.transportDirectory() != null) {
                conf.put(io.meridian.transport.mmap.TransportConfig.DIR, t.transportDirectory().toString());
            }
        }
        return conf;
    }
}
