package io.meridian.cli;

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
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code ./meridian feed} against a real broker (child JVM) that is SIGKILLed mid-stream (issue 33, fault 1): with the
 * broker back 20 s later, feed says that it waits, goes on, and every row is in the topic exactly once; with the
 * broker gone past {@code --delivery-timeout}, feed fails in one line naming the first row not delivered and the
 * {@code --from} that resumes, and every row before it is in the topic.
 */
class FeedOutageTest {
    private static final int N = 1500;
    private static final Pattern RESUME_FROM = Pattern.compile("--from (\\d+)$");

    @TempDir
    Path dir;

    @Test
    void feedRidesOutABrokerKilledAndRestartedTwentySecondsLaterAndEveryRowLandsOnce() throws Exception {
        Path matrix = matrix();
        try (ChildKafka kafka = ChildKafka.start(dir.resolve("kafka"))) {
            CompletableFuture<Fed> feeding = CompletableFuture.supplyAsync(() -> feed("--distances", matrix.toString(),
                    "--n", Integer.toString(N), "--rate", "100", "--brokers", kafka.brokers(), "--topic", "outage"));
            Thread.sleep(5_000);
            kafka.kill();
            Thread.sleep(20_000);
            kafka.restart();
            Fed fed = feeding.get(180, TimeUnit.SECONDS);

            assertEquals(0, fed.status, fed.err);
            assertTrue(fed.err.contains("meridian feed: waiting for Kafka at " + kafka.brokers()
                    + ": no row acknowledged for 5 s"), fed.err);
            assertTrue(fed.err.contains("meridian feed: Kafka at " + kafka.brokers() + " takes rows again after"),
                    fed.err);
            TreeMap<Integer, Integer> copies = copiesById(kafka.brokers(), "outage", N);
            assertEquals(N, copies.size(), "rows in the topic: " + copies.size() + " distinct of " + N);
            assertEquals(0, copies.firstKey());
            assertEquals(N - 1, copies.lastKey());
            assertTrue(copies.values().stream().allMatch(c -> c == 1), "a row landed twice: the idempotent producer's"
                    + " retries must not duplicate");
        }
    }

    @Test
    void pastTheDeliveryTimeoutFeedNamesTheFirstRowNotDeliveredAndTheFromThatResumes() throws Exception {
        Path matrix = matrix();
        try (ChildKafka kafka = ChildKafka.start(dir.resolve("kafka"))) {
            CompletableFuture<Fed> feeding = CompletableFuture.supplyAsync(() -> feed("--distances", matrix.toString(),
                    "--n", Integer.toString(N), "--rate", "100", "--brokers", kafka.brokers(), "--topic", "gone",
                    "--delivery-timeout", "8"));
            Thread.sleep(4_000);
            kafka.kill();
            Fed fed = feeding.get(120, TimeUnit.SECONDS);

            assertEquals(1, fed.status, fed.err);
            String line = fed.err.strip();
            assertEquals(1, line.lines().filter(l -> !l.startsWith("meridian feed: waiting for Kafka")).count(),
                    "one line besides the waiting notice: " + fed.err);
            line = line.lines().reduce((a, b) -> b).orElseThrow();
            assertTrue(line.startsWith("meridian feed: Kafka at " + kafka.brokers() + " did not take row "), line);
            assertTrue(line.contains(" of " + matrix + " within --delivery-timeout 8 s"), line);
            Matcher m = RESUME_FROM.matcher(line);
            assertTrue(m.find(), line);
            int from = Integer.parseInt(m.group(1));
            assertTrue(line.contains("did not take row " + from + " of "), "the row named is the --from: " + line);
            assertTrue(from > 0 && from < N, "about 4 s of rows at 100/s went through before the kill: " + from);

            kafka.restart();
            TreeMap<Integer, Integer> before = copiesById(kafka.brokers(), "gone", from);
            for (int id = 0; id < from; id++) {
                assertTrue(before.containsKey(id), "row " + id + " is before the first row not delivered (" + from
                        + ") but not in the topic");
            }
            Fed resumed = feed("--distances", matrix.toString(), "--n", Integer.toString(N), "--from",
                    Integer.toString(from), "--brokers", kafka.brokers(), "--topic", "gone");
            assertEquals(0, resumed.status, resumed.err);
            TreeMap<Integer, Integer> after = copiesById(kafka.brokers(), "gone", N);
            assertEquals(N, after.size(), "every row once resumed with --from " + from);
        }
    }

    private Path matrix() throws Exception {
        Path file = dir.resolve("distances.bin");
        SyntheticDataset.uniform(N, 4, 3).writeMatrix(file, ByteOrder.LITTLE_ENDIAN);
        return file;
    }

    private record Fed(int status, String err) {
    }

    /** Runs {@code ./meridian feed} in this JVM with its standard error captured. */
    private static Fed feed(String... options) {
        PrintStream stderr = System.err;
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        try {
            System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
            String[] args = new String[options.length + 1];
            args[0] = "feed";
            System.arraycopy(options, 0, args, 1, options.length);
            int status = Main.run(args);
            String said = err.toString(StandardCharsets.UTF_8);
            System.out.print(said); // what the user saw, in the test's report
            return new Fed(status, said);
        } finally {
            System.setErr(stderr);
        }
    }

    /** How many records of each row id the topic holds, read until at least {@code expected} ids and 3 s quiet. */
    private static TreeMap<Integer, Integer> copiesById(String brokers, String topic, int expected) {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, brokers);
        p.put(ConsumerConfig.GROUP_ID_CONFIG, "count-" + System.nanoTime());
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        TreeMap<Integer, Integer> copies = new TreeMap<>();
        try (KafkaConsumer<String, byte[]> c =
                     new KafkaConsumer<>(p, new StringDeserializer(), new ByteArrayDeserializer())) {
            c.subscribe(List.of(topic));
            long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            long quietSince = System.nanoTime();
            while (System.nanoTime() < deadline) {
                var records = c.poll(Duration.ofMillis(300));
                for (ConsumerRecord<String, byte[]> r : records) {
                    copies.merge(Integer.parseInt(r.key()), 1, Integer::sum);
                }
                if (!records.isEmpty()) {
                    quietSince = System.nanoTime();
                } else if (copies.size() >= expected && System.nanoTime() - quietSince > 3_000_000_000L) {
                    break;
                }
            }
        }
        return copies;
    }
}
