package io.meridian.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.meridian.config.MeridianConfig;
import io.meridian.stream.ingest.KafkaRowLimits;
import io.meridian.stream.row.RowFormat;
import io.meridian.stream.row.RowStoreReader;
import io.meridian.topology.ClusterControl;
import io.meridian.topology.IngestTopology;
import io.meridian.topology.LocalStorm;
import io.meridian.topology.TopicSetup;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.storm.LocalCluster;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Rows wider than Kafka's 1 MiB defaults against a real broker with its default limits (child JVM; the cluster's
 * broker sets none either): the topics are sized from {@code ingest.maxPoints}, a 1.1 MB row from {@code feed} is
 * stored, a 1.2 MB row of another producer that no configuration allows is dead-lettered whole, and {@code feed}
 * refuses a row its topic cannot take in one line naming the limit.
 */
class WideRowKafkaTest {
    private static final int MAX_POINTS = 300_000;
    private static final int BLOCK_ROWS = 16;
    /** A lower-triangle row of this id is 10 + 4 x id bytes in float32: 1,120,010, over 1 MiB. */
    private static final int WIDE_ID = 280_000;

    @TempDir
    Path dir;

    @Test
    void storesAndDeadLettersRowsOverOneMegabyteAndFeedRefusesOnesItsTopicCannotTake() throws Exception {
        try (ChildKafka kafka = ChildKafka.start(dir.resolve("kafka"))) {
            MeridianConfig config = MeridianConfig.parse(String.format("""
                    topology: {name: wide-rows, workers: 1, messageTimeoutSecs: 30, workerHeapMb: 512}
                    ingest:
                      maxPoints: %d
                      kafka: {brokers: "%s", partitions: 1, consumerGroup: wide}
                      rowStore: {directory: %s, blockRows: %d, parallelism: 1}
                      validation: {maxIdAhead: %d}
                    map: {enabled: false}
                    metrics: {localPort: 0}
                    """, MAX_POINTS, kafka.brokers(), dir.resolve("stores"), BLOCK_ROWS, MAX_POINTS), "wide.yaml");
            Path configFile = dir.resolve("wide.yaml");
            Files.writeString(configFile, config.yaml());
            KafkaRowLimits limits = KafkaRowLimits.forMaxPoints(MAX_POINTS);
            assertEquals(List.of("distance-rows", "distance-rows-rejected"), TopicSetup.ensureTopics(config.ingest()));
            try (Admin admin = TopicSetup.admin(kafka.brokers())) {
                assertEquals(RowFormat.encodedLength(MAX_POINTS, true, true) + KafkaRowLimits.RECORD_OVERHEAD_BYTES,
                        TopicSetup.maxMessageBytes(admin, "distance-rows"), "the row topic takes the widest row");
                assertTrue(TopicSetup.maxMessageBytes(admin, "distance-rows-rejected")
                        > TopicSetup.maxMessageBytes(admin, "distance-rows"),
                        "the dead-letter topic takes the row topic's records with headers");
            }

            // a 1.1 MB text row through feed; then a 1.2 MB row no maxPoints allows, from another producer
            StringBuilder text = new StringBuilder("0\n").append(WIDE_ID);
            for (int j = 0; j < WIDE_ID; j++) {
                text.append('\t').append(j % 7 == 3 ? "-1" : "0.25");
            }
            text.append('\n');
            assertEquals(0, feedStdin(text.toString(), "--config", configFile.toString()).status);
            byte[] tooLong = RowFormat.encodeInt16(5, new short[600_000], 0, 600_000, false); // 5 has 5 distances
            try (KafkaProducer<String, byte[]> producer = producer(kafka.brokers(), limits)) {
                producer.send(new ProducerRecord<>("distance-rows", "5", tooLong)).get(30, TimeUnit.SECONDS);
            }

            try (LocalStorm storm = LocalStorm.start()) {
                LocalCluster cluster = storm.cluster();
                org.apache.storm.Config conf = IngestTopology.stormConfig(config);
                conf.put(org.apache.storm.Config.TOPOLOGY_TESTING_ALWAYS_TRY_SERIALIZE, true);
                cluster.submitTopology("wide-rows", conf, IngestTopology.build(config));
                try (RowStoreReader stores = new RowStoreReader(dir.resolve("stores"), BLOCK_ROWS, MAX_POINTS)) {
                    long deadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
                    while (!stores.isStored(WIDE_ID)) {
                        if (System.nanoTime() > deadline) {
                            fail("the 1.1 MB row " + WIDE_ID + " was not stored within 120 s");
                        }
                        Thread.sleep(200);
                    }
                    short[] stored = new short[WIDE_ID];
                    stores.copy(WIDE_ID, 0, WIDE_ID, stored);
                    short[] expected = new short[WIDE_ID];
                    for (int j = 0; j < WIDE_ID; j++) {
                        expected[j] = j % 7 == 3 ? RowFormat.MISSING : RowFormat.quantize(0.25f);
                    }
                    assertArrayEquals(expected, stored, "row " + WIDE_ID + " as stored");
                }
                ConsumerRecord<String, byte[]> dead = firstDeadLetter(kafka.brokers());
                assertEquals("wrong-length", dead.key());
                assertArrayEquals(tooLong, dead.value(), "the dead letter carries the 1.2 MB row whole");
                ClusterControl.killAndAwait(cluster, "wide-rows", 0, Duration.ofSeconds(30));
            }

            // a topic sized for 8192 points takes Kafka's default, 1,048,588 bytes: a 1.2 MB row is refused by feed
            Path small = dir.resolve("small.yaml");
            Files.writeString(small, config.yaml().replace("maxPoints: " + MAX_POINTS, "maxPoints: 8192"));
            StringBuilder wide = new StringBuilder("1\t0.5\n").append(300_000);
            for (int j = 0; j < 300_000; j++) {
                wide.append("\t0.5");
            }
            Fed refused = feedStdin(wide.append('\n').toString(), "--config", small.toString(), "--topic", "narrow");
            assertEquals(Main.EXIT_USAGE, refused.status, refused.err);
            assertEquals(1, refused.err.strip().lines().count(), "one line: " + refused.err);
            assertTrue(refused.err.startsWith("meridian feed: row 300000 (stdin line 2, 300000 float32 distances) is"
                    + " 1,200,010 bytes, more than topic narrow takes"), refused.err);
            assertTrue(refused.err.contains("max.message.bytes 1,048,588"), refused.err);
        }
    }

    private record Fed(int status, String err) {
    }

    private static Fed feedStdin(String text, String... options) {
        InputStream stdin = System.in;
        PrintStream stderr = System.err;
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        try {
            System.setIn(new ByteArrayInputStream(text.getBytes(StandardCharsets.UTF_8)));
            System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
            String[] args = new String[options.length + 2];
            args[0] = "feed";
            args[1] = "--stdin";
            System.arraycopy(options, 0, args, 2, options.length);
            int status = Main.run(args);
            return new Fed(status, err.toString(StandardCharsets.UTF_8));
        } finally {
            System.setIn(stdin);
            System.setErr(stderr);
        }
    }

    private static KafkaProducer<String, byte[]> producer(String brokers, KafkaRowLimits limits) {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, brokers);
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        KafkaRowLimits.producerProperties(p, limits.rowRecordBytes());
        return new KafkaProducer<>(p, new StringSerializer(), new ByteArraySerializer());
    }

    private static ConsumerRecord<String, byte[]> firstDeadLetter(String brokers) {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, brokers);
        p.put(ConsumerConfig.GROUP_ID_CONFIG, "reader");
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        try (KafkaConsumer<String, byte[]> c =
                     new KafkaConsumer<>(p, new StringDeserializer(), new ByteArrayDeserializer())) {
            c.subscribe(List.of("distance-rows-rejected"));
            long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            while (System.nanoTime() < deadline) {
                for (ConsumerRecord<String, byte[]> r : c.poll(Duration.ofMillis(300))) {
                    return r;
                }
            }
        }
        throw new AssertionError("no dead letter within 60 s; expected the 1.2 MB row 5");
    }
}
