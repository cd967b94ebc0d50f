package io.meridian.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.meridian.config.MeridianConfig;
import io.meridian.stream.ingest.FileRowSpout;
import io.meridian.stream.row.BlockRowStore;
import io.meridian.topology.IngestTopology;
import io.meridian.topology.LocalStorm;
import io.meridian.topology.RowCounts;
import io.meridian.topology.TopicSetup;
import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.storm.LocalCluster;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Kafka path in Storm's LocalCluster against a real broker (child JVM, free ports): {@code feed --distances} and
 * {@code feed --stdin} publish, the Kafka spout reads, bad rows land in the dead-letter topic with their reasons.
 */
class KafkaLocalIngestTest {
    @TempDir
    Path dir;

    @Test
    void feedsThroughKafkaIntoTheRowStoresAndDeadLettersBadRows() throws Exception {
        int n = 400;
        try (ChildKafka kafka = ChildKafka.start(dir.resolve("kafka"))) {
            MeridianConfig config = MeridianConfig.parse(String.format("""
                    topology: {name: kafka-local, workers: 1, messageTimeoutSecs: 20}
                    ingest:
                      maxPoints: 1024
                      kafka: {brokers: "%s", partitions: 2, consumerGroup: t1, maxUncommittedOffsets: 200}
                      rowStore: {directory: %s, blockRows: 64, parallelism: 2}
                      validation: {maxIdAhead: 600}
                    metrics: {localPort: 0}
                    """, kafka.brokers(), dir.resolve("stores")), "test.yaml");
            assertEquals(List.of("distance-rows", "distance-rows-rejected"), TopicSetup.ensureTopics(config.ingest().kafka()));
            Path matrix = dir.resolve("matrix.bin");
            FileRowSpout.writeRandomMatrix(matrix, n, 3);
            assertEquals(0, Main.run(new String[] {"feed", "--distances", matrix.toString(), "--n", Integer.toString(n),
                "--from", "1", "--brokers", kafka.brokers()}));
            InputStream stdin = System.in;
            try {
                // row 0, a valid text row 400 (distances 0..399 of 0.25), a NaN row, a negative one, a short one
                StringBuilder text = new StringBuilder("0\n400");
                for (int j = 0; j < 400; j++) {
                    text.append('\t').append(0.25);
                }
                text.append("\n5\t0.1\tNaN\t0.2\t0.3\t0.4\n6\t0.1\t-0.5\t0\t0\t0\t0\n7\t0.5\n\n");
                System.setIn(new ByteArrayInputStream(text.toString().getBytes(StandardCharsets.UTF_8)));
                assertEquals(0, Main.run(new String[] {"feed", "--stdin", "--brokers", kafka.brokers()}));
                System.setIn(new ByteArrayInputStream("x\t0.1\n".getBytes(StandardCharsets.UTF_8)));
                assertEquals(Main.EXIT_USAGE, Main.run(new String[] {"feed", "--stdin", "--brokers", kafka.brokers()}),
                        "an unparsable line is reported and skipped");
            } finally {
                System.setIn(stdin);
            }

            try (LocalStorm storm = LocalStorm.start()) {
                LocalCluster cluster = storm.cluster();
                org.apache.storm.Config conf = IngestTopology.stormConfig(config);
                conf.put(org.apache.storm.Config.TOPOLOGY_TESTING_ALWAYS_TRY_SERIALIZE, true);
                cluster.submitTopology("kafka-local", conf, IngestTopology.build(config));
                long deadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
                while (RowCounts.storedOnDisk(dir.resolve("stores")) < n + 1) {
                    if (System.nanoTime() > deadline) {
                        fail("only " + RowCounts.storedOnDisk(dir.resolve("stores")) + " of " + (n + 1) + " rows stored");
                    }
                    Thread.sleep(200);
                }
                Map<String, String> dead = deadLetters(kafka.brokers(), 3);
                assertEquals(Map.of("5", "nan", "6", "negative", "7", "wrong-length"), dead);
                io.meridian.topology.ClusterControl.killAndAwait(cluster, "kafka-local", 0, Duration.ofSeconds(30));
            }
            try (BlockRowStore b = new BlockRowStore(dir.resolve("stores"), 400 / 64, 64, 1024)) {
                short[] row = new short[1024];
                b.read(400, row);
                assertEquals(Math.round(0.25f * 32767), row[399]);
                assertEquals(0, row[400]);
                assertEquals(-1, row[401]);
            }
        }
    }

    /** Row id (from the detail) -> reason, for the first {@code expected} dead letters. */
    private static Map<String, String> deadLetters(String brokers, int expected) {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, brokers);
        p.put(ConsumerConfig.GROUP_ID_CONFIG, "reader");
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        Map<String, String> out = new HashMap<>();
        try (KafkaConsumer<String, byte[]> c = new KafkaConsumer<>(p, new StringDeserializer(), new ByteArrayDeserializer())) {
            c.subscribe(List.of("distance-rows-rejected"));
            long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            while (out.size() < expected && System.nanoTime() < deadline) {
                for (ConsumerRecord<String, byte[]> r : c.poll(Duration.ofMillis(300))) {
                    String detail = new String(r.headers().lastHeader("detail").value(), StandardCharsets.UTF_8);
                    String id = detail.replaceAll(".*row (\\d+).*", "$1");
                    out.put(id, r.key());
                }
            }
        }
        assertTrue(out.size() >= expected, "dead letters: " + out);
        return out;
    }
}
