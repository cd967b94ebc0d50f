package io.meridian.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.meridian.synthetic.SyntheticDataset;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code feed --distances FILE.tri}: the lower triangle that {@code gen --layout triangle} writes is fed as the square
 * file of the same data is, record for record (a real broker, child JVM).
 */
class FeedTriangleTest {
    private static final int N = 300;

    @TempDir
    Path dir;

    @Test
    void aTriangleFileIsFedAsItsSquareFileIs() throws Exception {
        SyntheticDataset data = SyntheticDataset.blobs(N, 4, 3, 1.0, 9);
        Path square = dir.resolve("distances.bin");
        Path triangle = dir.resolve("distances.tri");
        data.writeMatrix(square, ByteOrder.LITTLE_ENDIAN);
        data.writeTriangle(triangle, SyntheticDataset.Progress.NONE);
        try (ChildKafka kafka = ChildKafka.start(dir.resolve("kafka"))) {
            assertEquals(0, Main.run(new String[] {"feed", "--distances", square.toString(), "--n",
                Integer.toString(N), "--brokers", kafka.brokers(), "--topic", "square"}));
            assertEquals(0, Main.run(new String[] {"feed", "--distances", triangle.toString(), "--n",
                Integer.toString(N), "--brokers", kafka.brokers(), "--topic", "triangle"}));
            Map<String, byte[]> fromSquare = records(kafka.brokers(), "square");
            Map<String, byte[]> fromTriangle = records(kafka.brokers(), "triangle");
            assertEquals(N, fromSquare.size());
            assertEquals(fromSquare.keySet(), fromTriangle.keySet());
            for (String id : fromSquare.keySet()) {
                assertArrayEquals(fromSquare.get(id), fromTriangle.get(id), "row " + id);
            }

            PrintStream stderr = System.err;
            ByteArrayOutputStream err = new ByteArrayOutputStream();
            System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
            int status;
            try {
                status = Main.run(new String[] {"feed", "--distances", triangle.toString(), "--n",
                    Integer.toString(N + 1), "--brokers", kafka.brokers(), "--topic", "triangle"});
            } finally {
                System.setErr(stderr);
            }
            assertEquals(Main.EXIT_USAGE, status, err.toString(StandardCharsets.UTF_8));
            assertTrue(err.toString(StandardCharsets.UTF_8).contains("not the lower triangle of N = " + (N + 1)),
                    "a triangle of too few points is refused naming both sizes: " + err);
        }
    }

    private static Map<String, byte[]> records(String brokers, String topic) {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, brokers);
        p.put(ConsumerConfig.GROUP_ID_CONFIG, "read-" + topic);
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        Map<String, byte[]> out = new TreeMap<>();
        try (KafkaConsumer<String, byte[]> c =
                     new KafkaConsumer<>(p, new StringDeserializer(), new ByteArrayDeserializer())) {
            c.subscribe(List.of(topic));
            long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            while (out.size() < N && System.nanoTime() < deadline) {
                for (ConsumerRecord<String, byte[]> r : c.poll(Duration.ofMillis(300))) {
                    out.put(r.key(), r.value());
                }
            }
        }
        return out;
    }
}
