package io.meridian.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.meridian.config.MeridianConfig;
import io.meridian.stream.ingest.FileRowSpout;
import io.meridian.stream.row.RowStoreReader;
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
            assertEquals(List.of("distance-rows", "distance-rows-rejected"), TopicSetup.ensureTopics(config.ingest()));
            Path matrix = dir.resolve("matrix.bin");
            FileRowSpout.writeRandomMatrix(matrix, n, 3);
            assertEquals(0, Main.run(new String[] {"feed", "--distances", matrix.toString(), "--n", Integer.toString(n),
                "--from", "1", "--brokers", kafka.brokers()}));
            InputStream stdin = System.in;
            try {
                // row 0; a valid text row 400 (distances 0..399, each 0.25 in another common spelling, CRLF line end);
                // rows the topology must refuse: NaN and infinities as numpy and Java write them, a negative, a short
                // one; and lines that are not rows at all, which feed itself sends to the dead-letter topic
                String[] quarter = {"0.25", "2.5e-1", " 0.25 ", "2.5E-01", "+0.25", "2.500000000000000000e-01"};
                StringBuilder text = new StringBuilder("0\n400");
                for (int j = 0; j < 400; j++) {
                    text.append('\t').append(quarter[j % quarter.length]);
                }
                text.append("\r\n5\t0.1\tnan\t0.2\t0.3\t0.4\n6\t0.1\t-0.5\t0\t0\t0\t0\n7\t0.5\n\n");
                text.append("8\t0.1\tinf\t0\t0\t0\t0\t0\t0\n9\t-Infinity\t0\t0\t0\t0\t0\t0\t0\t0\n");
                text.append("x\t0.1\n10\t0.1\tfoo\n");
                System.setIn(new ByteArrayInputStream(text.toString().getBytes(StandardCharsets.UTF_8)));
                assertEquals(0, Main.run(new String[] {"feed", "--stdin", "--brokers", kafka.brokers()}),
                        "every line reached Kafka: malformed ones are data for the dead-letter topic");
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
                Map<String, String> dead = deadLetters(kafka.brokers(), 7);
                assertEquals(Map.of("5", "nan", "6", "negative", "7", "wrong-length", "8", "nan", "9", "nan",
                        "x\t0.1", "malformed", "10\t0.1\tfoo", "malformed"), dead);
                io.meridian.topology.ClusterControl.killAndAwait(cluster, "kafka-local", 0, Duration.ofSeconds(30));
            }
            try (RowStoreReader stores = new RowStoreReader(dir.resolve("stores"), 64, 1024)) {
                short[] row = new short[400];
                stores.copy(400, 0, 400, row);
                assertEquals(Math.round(0.25f * 32767), row[399]);
            }
        }
    }

    /**
     * Row id (from the detail) -> reason for the topology's dead letters, line text -> reason for the lines feed
     * itself could not read, for the first {@code expected} dead letters.
     */
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
                    String source = new String(r.headers().lastHeader("source").value(), StandardCharsets.UTF_8);
                    String id = source.startsWith("feed stdin line") ? new String(r.value(), StandardCharsets.UTF_8)
                            : detail.replaceAll(".*row (\\d+).*", "$1");
                    out.put(id, r.key());
                }
            }
        }
        assertTrue(out.size() >= expected, "dead letters: " + out);
        return out;
    }
}
