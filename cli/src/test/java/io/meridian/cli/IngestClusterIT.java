package io.meridian.cli;

import io.meridian.engine.BadInputException;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static io.meridian.cli.ClusterWait.waitFor;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.meridian.matrix.RowBlock;
import io.meridian.stream.ingest.FileRowSpout;
import io.meridian.stream.row.BlockRowStore;
import io.meridian.stream.row.RowStoreLayout;
import io.meridian.stream.row.RowStoreReader;
import io.meridian.stream.row.RowFormat;
import io.meridian.topology.ClusterControl;
import io.meridian.topology.RowCounts;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;

/**
 * Issue 3 end to end on the real cluster: {@code ./meridian cluster start}, {@code deploy/bin/storm jar}, rows through
 * Kafka (valid ones with {@code ./meridian feed}, bad ones of every kind alongside), one worker SIGKILLed mid-stream,
 * then every valid row must be in the row-store files once with its values and every bad row in the dead-letter
 * topic with its reason. Issue 13: text rows written as numpy.savetxt writes them go through {@code feed --stdin}
 * before and after the kill, and the dead-letter topic's counts per reason must match what was sent at both points
 * (the topic is the record: a killed worker's metrics are gone with it). The topology is killed and the cluster
 * stopped whatever happens.
 */
class IngestClusterIT {
    private static final String NAME = "meridian-it";
    private static final int N = 3000;
    private static final int WIDTH = 8192;
    private static final int BLOCK_ROWS = 128;
    private static final String BROKERS = "localhost:9092";
    /** Ids of the text rows fed before and after the kill: beyond the matrix's, within maxIdAhead of it. */
    private static final int TEXT_IDS_BEFORE = 3000;
    private static final int TEXT_IDS_AFTER = 3100;

    @Test
    void ingestsThroughKafkaKeepsEveryAcceptedRowAcrossAWorkerKillAndDeadLettersBadRows() throws Exception {
        Path home = Path.of(System.getenv().getOrDefault("MERIDIAN_HOME", "..")).toAbsolutePath().normalize();
        for (String script : new String[] {"deploy/bin/meridian-cluster", "deploy/bin/storm"}) {
            assertTrue(Files.isExecutable(home.resolve(script)), home.resolve(script) + " is missing: this test needs the cluster scripts");
        }
        long stamp = System.currentTimeMillis();
        Path work = home.resolve("cli/target/it-" + stamp);
        Files.createDirectories(work);
        String topic = "distance-rows-it-" + stamp;
        String rejectedTopic = "distance-rows-rejected-it-" + stamp;
        Path stores = work.resolve("rowstore");
        Path config = work.resolve("meridian-it.yaml");
        Files.writeString(config, String.format("""
                topology: {name: %s, workers: 2, ackers: 1, maxSpoutPending: 500, messageTimeoutSecs: 10, workerHeapMb: 384}
                ingest:
                  maxPoints: %d
                  kafka: {brokers: "%s", topic: %s, rejectedTopic: %s, consumerGroup: it-%d, partitions: 2,
                          maxUncommittedOffsets: 500}
                  validation: {parallelism: 2, maxIdAhead: 4000}
                  rowStore: {directory: %s, blockRows: %d, parallelism: 2}
                """, NAME, WIDTH, BROKERS, topic, rejectedTopic, stamp, stores, BLOCK_ROWS));
        Path matrixFile = work.resolve("matrix.bin");
        FileRowSpout.writeRandomMatrix(matrixFile, N, 11);
        RowBlock matrix = RowBlock.mapAll(BadInputException.Input.DISTANCES, matrixFile, N, ByteOrder.LITTLE_ENDIAN);

        Map<String, String> expectedRejects = new HashMap<>(); // hex(value) -> reason
        Map<Integer, short[]> validText = new TreeMap<>(); // id -> the row as stored, of the valid text rows
        try (ClusterControl cluster = ClusterControl.acquire(home, work.resolve("cluster.log"), 1800)) {
            boolean submitted = false;
            try {
                cluster.start();
                cluster.storm(180, "jar", SubmitCommand.topologyJar(home).toString(), SubmitCommand.MAIN, "--config", config.toString());
                submitted = true;
                waitFor(Duration.ofSeconds(90), "two workers of " + NAME, () -> ClusterControl.workers(NAME).size() == 2);

                try (KafkaProducer<String, byte[]> producer = producer()) {
                    List<byte[]> midStream = badRows();
                    String[] reasons = {"malformed", "malformed", "malformed", "nan", "nan", "negative", "negative",
                        "above-one", "wrong-length", "wrong-length", "id-out-of-range", "id-out-of-range", "bad-weight"};
                    for (int i = 0; i < midStream.size(); i++) {
                        Thread.sleep(150);
                        send(producer, topic, midStream.get(i));
                        expectedRejects.put(HexFormat.of().formatHex(midStream.get(i)), reasons[i]);
                    }
                    // text rows as numpy.savetxt writes them, through feed --stdin; the dead-letter topic must hold
                    // each bad one once per reason, before any worker dies
                    TextBlock before = TextBlock.of(TEXT_IDS_BEFORE);
                    feedText(before, config, topic, rejectedTopic);
                    expectedRejects.putAll(before.rejects);
                    validText.putAll(before.valid);
                    assertWideRowRefused(config, topic, rejectedTopic);
                    Map<String, List<String>> beforeKill = readDeadLetters(rejectedTopic, expectedRejects.keySet(),
                            Duration.ofSeconds(120));
                    assertEquals(expectedRejects.keySet(), beforeKill.keySet(), "dead letters before the kill");
                    assertEquals(countByReason(expectedRejects), distinctByReason(beforeKill),
                            "dead letters per reason before the kill (binary rows and text rows)");
                    System.out.println("IT: before the kill, dead letters by reason " + distinctByReason(beforeKill)
                            + " (" + beforeKill.values().stream().mapToInt(List::size).sum() + " records)");
                    // then the valid rows through the CLI at a steady rate (15 s of them), the kill mid-stream: started
                    // only now, so that however long the dead letters above took to arrive, the stream is not over yet
                    CompletableFuture<Integer> feed = CompletableFuture.supplyAsync(() -> Main.run(new String[] {
                        "feed", "--distances", matrixFile.toString(), "--n", Integer.toString(N), "--rate", "200",
                        "--config", config.toString(), "--topic", topic}));
                    waitFor(Duration.ofSeconds(300), "1000 rows stored before the kill",
                            () -> RowCounts.storedOnDisk(stores) >= 1000);
                    List<ProcessHandle> workers = ClusterControl.workers(NAME);
                    assertFalse(workers.isEmpty());
                    long killed = workers.get(0).pid();
                    assertTrue(workers.get(0).destroyForcibly(), "SIGKILL worker " + killed);
                    long storedAtKill = RowCounts.storedOnDisk(stores);
                    System.out.println("IT: killed worker " + killed + " with SIGKILL at " + storedAtKill + " rows stored");
                    assertTrue(storedAtKill < N, "the worker dies mid-stream (" + storedAtKill + " of " + N + " rows stored)");
                    // more text rows while the killed worker is away: whatever it held is replayed, and every bad
                    // row must still be in the dead-letter topic with its reason (at least once)
                    TextBlock after = TextBlock.of(TEXT_IDS_AFTER);
                    feedText(after, config, topic, rejectedTopic);
                    expectedRejects.putAll(after.rejects);
                    validText.putAll(after.valid);
                    assertEquals(0, feed.get(120, TimeUnit.SECONDS), "feed exit status");

                    waitFor(Duration.ofSeconds(180), "all " + (N + validText.size()) + " valid rows stored after the kill",
                            () -> RowCounts.storedOnDisk(stores) == N + validText.size());
                    waitFor(Duration.ofSeconds(60), "the killed worker restarted by the Supervisor",
                            () -> ClusterControl.workers(NAME).size() == 2
                                    && ClusterControl.workers(NAME).stream().noneMatch(p -> p.pid() == killed));

                    // rows that are bad only against what is stored: now every valid row is in
                    byte[] outOfOrder = floatRow(8000, 0.5f);
                    short[] other = new short[7];
                    Arrays.fill(other, (short) 123);
                    byte[] conflict = RowFormat.encodeInt16(7, other, 0, 7, false);
                    short[] same = new short[N];
                    matrix.copyRow(9, 0, 9, same, 0);
                    byte[] replay = RowFormat.encodeInt16(9, same, 0, 9, false);
                    send(producer, topic, outOfOrder);
                    send(producer, topic, conflict);
                    send(producer, topic, replay);
                    expectedRejects.put(HexFormat.of().formatHex(outOfOrder), "id-out-of-order");
                    expectedRejects.put(HexFormat.of().formatHex(conflict), "conflict");
                }

                Map<String, List<String>> dead = readDeadLetters(rejectedTopic, expectedRejects.keySet(), Duration.ofSeconds(90));
                Map<String, Integer> perReason = new TreeMap<>();
                for (Map.Entry<String, String> e : expectedRejects.entrySet()) {
                    List<String> got = dead.get(e.getKey());
                    if (got == null) {
                        fail("bad row (" + e.getValue() + ") missing from " + rejectedTopic + "; dead letters: " + dead.values());
                    }
                    for (String reason : got) {
                        assertEquals(e.getValue(), reason, "reason of a dead letter");
                    }
                    perReason.merge(e.getValue(), 1, Integer::sum);
                }
                assertEquals(expectedRejects.size(), dead.size(), "nothing valid in the dead-letter topic: " + dead);
                assertEquals(countByReason(expectedRejects), distinctByReason(dead),
                        "dead letters per reason after the kill (the topic is the record: a killed worker's counts are gone)");
                System.out.println("IT: dead letters by reason " + perReason + " ("
                        + dead.values().stream().mapToInt(List::size).sum() + " records: a replay may dead-letter twice)");

                // every valid row exactly once, with its values (16-bit, the row's lower triangle)
                assertEquals(N + validText.size(), RowCounts.storedOnDisk(stores));
                try (RowStoreReader reader = new RowStoreReader(stores, BLOCK_ROWS, WIDTH)) {
                    for (Map.Entry<Integer, short[]> e : validText.entrySet()) {
                        int id = e.getKey();
                        short[] stored = new short[id];
                        reader.copy(id, 0, id, stored);
                        assertArrayEquals(Arrays.copyOf(e.getValue(), id), stored, "text row " + id + " as stored");
                    }
                    short[] expected = new short[WIDTH];
                    short[] stored = new short[WIDTH];
                    for (int block = 0; block * BLOCK_ROWS < N; block++) {
                        try (BlockRowStore b = new BlockRowStore(stores, block, BLOCK_ROWS)) {
                            int rows = Math.min(BLOCK_ROWS, N - block * BLOCK_ROWS);
                            int thisBlock = block;
                            long text = validText.keySet().stream().filter(id -> id / BLOCK_ROWS == thisBlock).count();
                            assertEquals(rows + text, b.storedRows(),
                                    "rows of block " + block + " (text rows among them)");
                        }
                        for (int id = block * BLOCK_ROWS; id < Math.min(N, (block + 1) * BLOCK_ROWS); id++) {
                            matrix.copyRow(id, 0, id, expected, 0);
                            reader.copy(id, 0, id, stored);
                            assertArrayEquals(Arrays.copyOf(expected, id), Arrays.copyOf(stored, id), "row " + id);
                        }
                    }
                }
                assertFalse(Files.exists(stores.resolve(RowStoreLayout.fileBase(8000 / BLOCK_ROWS)
                                + RowStoreLayout.VALUES)),
                        "the out-of-order row left no block behind");
                // the restarted worker's endpoint counts what reached it since its restart, the others since the start
                RowCounts[] last = new RowCounts[1];
                waitFor(Duration.ofSeconds(30), "the workers' endpoints to count both rows rejected after the restart",
                        () -> {
                            last[0] = ClusterControl.rowCounts(NAME);
                            return last[0].rejected.get("conflict") >= 1 && last[0].rejected.get("id-out-of-order") >= 1;
                        });
                RowCounts counts = last[0];
                System.out.println("IT: topology counts " + counts.toJson());
                assertTrue(counts.stored > 0 && counts.stored <= N, counts.toJson());
                assertTrue(counts.rejected.get("conflict") >= 1 && counts.rejected.get("id-out-of-order") >= 1, counts.toJson());
            } finally {
                if (submitted) {
                    try {
                        cluster.storm(120, "kill", NAME, "-w", "1");
                    } catch (Exception e) {
                        System.err.println("IT: killing the topology failed (cluster stop kills it too): " + e);
                    }
                }
            }
        }
        assertTrue(ClusterControl.workers(NAME).isEmpty(), "no worker left behind");
    }

    /**
     * Text rows as numpy writes them, {@code numpy.savetxt(f, [[id, d_0, ...]], delimiter='\t')} with its default
     * format {@code %.18e} for every field (the id too), {@code nan}, {@code inf} and {@code -inf} as numpy spells them:
     * valid rows (with a missing -1), rows the topology rejects for each value reason and for their length or id, and
     * lines that are not rows (a savetxt header, a field that is no number), which feed dead-letters itself.
     */
    private static final class TextBlock {
        final StringBuilder text = new StringBuilder();
        final Map<String, String> rejects = new HashMap<>();
        final Map<Integer, short[]> valid = new TreeMap<>();

        static TextBlock of(int base) {
            TextBlock b = new TextBlock();
            b.text.append("# distances to the points before, written by numpy.savetxt (block ").append(base).append(")\n");
            b.rejects.put(hex(b.text.toString().strip()), "malformed");
            for (int k = 0; k < 6; k++) {
                b.row(base + k, null, 0, null);
            }
            b.row(base + 6, "nan", 3, Double.NaN);
            b.row(base + 7, "nan", 0, Double.NaN);
            b.row(base + 8, "nan", 11, Double.POSITIVE_INFINITY);
            b.row(base + 9, "nan", 12, Double.NEGATIVE_INFINITY);
            b.row(base + 10, "negative", 7, -0.2);
            b.row(base + 11, "above-one", 8, 1.5);
            b.line("wrong-length", base + 12, base + 11, null);
            b.line("id-out-of-range", 9000 + base, 1, null);
            String notANumber = savetxt(base + 13) + "\t2.500000000000000000e-01\tabc";
            b.text.append(notANumber).append('\n');
            b.rejects.put(hex(notANumber), "malformed");
            return b;
        }

        /** Row {@code id} with {@code id} distances, value {@code bad} at {@code at} (none: a valid row). */
        private void row(int id, String reason, int at, Double bad) {
            line(reason, id, id, bad == null ? null : new double[] {at, bad});
        }

        private void line(String reason, int id, int count, double[] badAt) {
            double[] fields = new double[count + 1];
            fields[0] = id;
            for (int j = 0; j < count; j++) {
                fields[j + 1] = j == 5 ? -1 : ((id * 31 + j * 7) % 1000) / 1000.0;
            }
            if (badAt != null) {
                fields[(int) badAt[0] + 1] = badAt[1];
            }
            String line = savetxt(fields);
            text.append(line).append('\n');
            // what feed sends: each field read as a float32, the row float32-encoded
            String[] parts = line.split("\t");
            float[] values = new float[count];
            for (int j = 0; j < count; j++) {
                values[j] = TextNumbers.parse(parts[j + 1]);
            }
            if (reason != null) {
                rejects.put(HexFormat.of().formatHex(RowFormat.encodeFloat32(id, values, count, null, false)), reason);
                return;
            }
            short[] stored = new short[WIDTH];
            Arrays.fill(stored, RowFormat.MISSING);
            for (int j = 0; j < count; j++) {
                stored[j] = RowFormat.quantize(values[j]);
            }
            stored[id] = 0;
            valid.put(id, stored);
        }

        private static String savetxt(double... fields) {
            StringBuilder line = new StringBuilder();
            for (double v : fields) {
                line.append(line.length() == 0 ? "" : "\t").append(Double.isNaN(v) ? "nan"
                        : Double.isInfinite(v) ? (v > 0 ? "inf" : "-inf") : String.format(Locale.ROOT, "%.18e", v));
            }
            return line.toString();
        }

        private static String hex(String line) {
            return HexFormat.of().formatHex(line.getBytes(StandardCharsets.UTF_8));
        }
    }

    /**
     * {@code ./meridian feed --stdin} with {@code block}'s text on stdin: every line reaches Kafka, so exit 0. With the
     * topology's configuration: feed sizes (and raises) the topics for the {@code ingest.maxPoints} it reads, and the
     * default's 1,000,000 would let the wide row of {@link #assertWideRowRefused} through.
     */
    private static void feedText(TextBlock block, Path config, String topic, String rejectedTopic) {
        InputStream stdin = System.in;
        try {
            System.setIn(new ByteArrayInputStream(block.text.toString().getBytes(StandardCharsets.UTF_8)));
            assertEquals(0, Main.run(new String[] {"feed", "--stdin", "--config", config.toString(), "--topic", topic,
                "--rejected-topic", rejectedTopic}), "feed --stdin exit status");
        } finally {
            System.setIn(stdin);
        }
    }

    /**
     * Issue 32: a row over 1 MiB through the cluster's Kafka. The topics, sized for {@code maxPoints} 8192, take
     * Kafka's default 1,048,588 bytes a record, so {@code feed} refuses a 1.2 MB row itself, in one line naming the
     * limit (Kafka's own refusal came after retries and named none), and sends nothing. With the topology's
     * configuration: feed sizes the topics from the {@code maxPoints} it is given.
     */
    private static void assertWideRowRefused(Path config, String topic, String rejectedTopic) {
        StringBuilder wide = new StringBuilder().append(300_000);
        for (int j = 0; j < 300_000; j++) {
            wide.append("\t0.5");
        }
        InputStream stdin = System.in;
        PrintStream stderr = System.err;
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int status;
        try {
            System.setIn(new ByteArrayInputStream(wide.append('\n').toString().getBytes(StandardCharsets.UTF_8)));
            System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
            status = Main.run(new String[] {"feed", "--stdin", "--config", config.toString(), "--topic", topic,
                "--rejected-topic", rejectedTopic});
        } finally {
            System.setIn(stdin);
            System.setErr(stderr);
        }
        String line = err.toString(StandardCharsets.UTF_8).strip();
        System.out.println("IT: feed refused a 1.2 MB row: " + line);
        assertEquals(Main.EXIT_USAGE, status, line);
        assertEquals(1, line.lines().count(), line);
        assertTrue(line.startsWith("meridian feed: row 300000 (stdin line 1, 300000 float32 distances) is 1,200,010"
                + " bytes, more than topic " + topic + " takes") && line.contains("max.message.bytes 1,048,588"), line);
    }

    /** Reason -> how many rows were sent that must be dead-lettered with it. */
    private static Map<String, Integer> countByReason(Map<String, String> expected) {
        Map<String, Integer> out = new TreeMap<>();
        expected.values().forEach(r -> out.merge(r, 1, Integer::sum));
        return out;
    }

    /** Reason -> how many distinct rows the dead-letter topic holds with it (a replay may write one twice). */
    private static Map<String, Integer> distinctByReason(Map<String, List<String>> dead) {
        Map<String, Integer> out = new TreeMap<>();
        dead.values().forEach(reasons -> new java.util.HashSet<>(reasons).forEach(r -> out.merge(r, 1, Integer::sum)));
        return out;
    }

    private static List<byte[]> badRows() {
        List<byte[]> rows = new ArrayList<>();
        rows.add("garbage".getBytes(StandardCharsets.UTF_8));
        byte[] truncated = floatRow(40, 0.5f);
        rows.add(Arrays.copyOf(truncated, truncated.length - 3));
        byte[] version = floatRow(41, 0.5f);
        version[0] = 7;
        rows.add(version);
        byte[] nan = floatRow(50, 0.5f);
        RowFormatAccess.setFloat(nan, 3, Float.NaN);
        rows.add(nan);
        byte[] inf = floatRow(51, 0.5f);
        RowFormatAccess.setFloat(inf, 0, Float.POSITIVE_INFINITY);
        rows.add(inf);
        byte[] neg = floatRow(52, 0.5f);
        RowFormatAccess.setFloat(neg, 10, -0.2f);
        rows.add(neg);
        rows.add(RowFormat.encodeInt16(3, new short[] {1, 2, -5}, 0, 3, false));
        byte[] above = floatRow(54, 0.5f);
        RowFormatAccess.setFloat(above, 53, 2.5f);
        rows.add(above);
        rows.add(RowFormat.encodeFloat32(60, new float[59], 59, null, false));
        rows.add(RowFormat.encodeFloat32(61, new float[70], 70, null, false));
        rows.add(RowFormat.encodeFloat32(9000, new float[0], 0, null, false));
        rows.add(RowFormat.encodeFloat32(-4, new float[0], 0, null, false));
        float[] w = new float[62];
        w[5] = -3f;
        rows.add(RowFormat.encodeFloat32(62, new float[62], 62, w, false));
        return rows;
    }

    private static byte[] floatRow(int id, float value) {
        float[] d = new float[id];
        Arrays.fill(d, value);
        return RowFormat.encodeFloat32(id, d, id, null, false);
    }

    /** Writes one float32 distance in place (little-endian, after the 10-byte header). */
    private static final class RowFormatAccess {
        static void setFloat(byte[] row, int j, float v) {
            java.nio.ByteBuffer.wrap(row).order(ByteOrder.LITTLE_ENDIAN).putFloat(RowFormat.HEADER_BYTES + 4 * j, v);
        }
    }

    private static KafkaProducer<String, byte[]> producer() {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, BROKERS);
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        return new KafkaProducer<>(p, new StringSerializer(), new ByteArraySerializer());
    }

    private static void send(KafkaProducer<String, byte[]> producer, String topic, byte[] value) throws Exception {
        producer.send(new ProducerRecord<>(topic, "bad", value)).get(30, TimeUnit.SECONDS);
    }

    /** hex(value) -> the reasons of its dead letters (a replayed rejection may appear twice: at least once). */
    private static Map<String, List<String>> readDeadLetters(String topic, java.util.Set<String> expected, Duration timeout) {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, BROKERS);
        p.put(ConsumerConfig.GROUP_ID_CONFIG, "it-reader-" + System.nanoTime());
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        Map<String, List<String>> out = new HashMap<>();
        try (KafkaConsumer<String, byte[]> consumer = new KafkaConsumer<>(p, new StringDeserializer(), new ByteArrayDeserializer())) {
            consumer.subscribe(List.of(topic));
            long deadline = System.nanoTime() + timeout.toNanos();
            while (!out.keySet().containsAll(expected) && System.nanoTime() < deadline) {
                for (ConsumerRecord<String, byte[]> r : consumer.poll(Duration.ofMillis(500))) {
                    Header reason = r.headers().lastHeader("reason");
                    assertEquals(r.key(), reason == null ? null : new String(reason.value(), StandardCharsets.UTF_8));
                    assertTrue(r.headers().lastHeader("detail") != null && r.headers().lastHeader("source") != null);
                    out.computeIfAbsent(HexFormat.of().formatHex(r.value()), k -> new ArrayList<>()).add(r.key());
                }
            }
        }
        return out;
    }
}
