package io.meridian.cli;

import io.meridian.engine.BadInputException;
import io.meridian.config.CommandLine;
import io.meridian.config.MeridianConfig;
import io.meridian.config.UsageException;
import io.meridian.matrix.LowerRows;
import io.meridian.matrix.RowBlock;
import io.meridian.matrix.TriangleFile;
import io.meridian.stream.ingest.FileRowSpout;
import io.meridian.matrix.ShortMatrixFormat;
import io.meridian.stream.row.RowFormat;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalTime;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import java.util.Arrays;
import java.util.BitSet;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.producer.Callback;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import io.meridian.stream.ingest.KafkaRowLimits;
import io.meridian.stream.ingest.RejectReason;
import io.meridian.topology.TopicSetup;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * {@code ./meridian feed}: publishes distance rows to the row topic. From a 16-bit N x N matrix file (or its lower
 * triangle, a {@code *.tri} file as {@code gen --layout triangle} writes it), row {@code id}
 * carries its distances to points 0..id-1 (16-bit encoding, lossless); from stdin, text lines
 * {@code id<TAB>d_0<TAB>...<TAB>d_{id-1}} with decimal distances in any common spelling ({@link TextNumbers}; float32
 * encoding, passed on unvalidated: the topology validates and dead-letters), and lines that are not rows at all to the
 * dead-letter topic as {@code malformed}. Each record's key is the row id, its timestamp the publish time. The row and
 * dead-letter topics are made (or raised) to the sizes {@link KafkaRowLimits} derives from {@code ingest.maxPoints}
 * first; a row the row topic cannot take is refused in one line naming the limit ({@link RowTooWideException}).
 */
final class FeedCommand implements Command {
    /** Seconds a row may wait for Kafka: Kafka's own default {@code delivery.timeout.ms}. */
    static final int DEFAULT_DELIVERY_TIMEOUT_S = 120;
    /** Seconds without an acknowledgement, rows waiting, before feed says that it waits for Kafka. */
    static final int WAIT_NOTICE_S = 5;

    @Override
    public String optionFor(BadInputException.Input input) {
        return input == BadInputException.Input.DISTANCES ? "--distances" : null;
    }

    @Override
    public String usage() {
        return "feed --distances FILE|FILE.tri --n N [--big-endian] [--rate ROWS_PER_S] [--from ID] [--brokers HOST:PORT]"
                + " [--topic T] [--delivery-timeout S] [--config FILE]\n"
                + "  feed --stdin [--rate ROWS_PER_S] [--brokers HOST:PORT] [--topic T] [--rejected-topic T]"
                + " [--delivery-timeout S] [--config FILE]\n"
                + "  --delivery-timeout S  how long feed waits for Kafka to take each row while the broker is down or"
                + " unreachable\n"
                + "                        (default " + DEFAULT_DELIVERY_TIMEOUT_S + ", Kafka's own delivery.timeout.ms);"
                + " it says that it waits, goes on when Kafka is back,\n"
                + "                        and past the timeout fails naming the first row not delivered and the --from"
                + " that resumes";
    }

    @Override
    public int run(String[] args) throws Exception {
        CommandLine cl = CommandLine.parse("feed", args,
                Set.of("distances", "n", "rate", "from", "brokers", "topic", "rejected-topic", "config",
                        "delivery-timeout"),
                Set.of("stdin", "big-endian"));
        cl.requireNoPositional();
        MeridianConfig config = cl.has("config") ? MeridianConfig.load(Path.of(cl.requiredString("config")))
                : MeridianConfig.loadResource(MeridianConfig.CLUSTER_DEFAULTS);
        String brokers = cl.string("brokers", config.ingest().kafka().brokers());
        if (!brokers.matches("[A-Za-z0-9_.\\-]+:[0-9]{1,5}(,[A-Za-z0-9_.\\-]+:[0-9]{1,5})*")) {
            throw new UsageException("--brokers must be HOST:PORT[,HOST:PORT...], got '" + brokers + "'");
        }
        String topic = topicName(cl, "topic", config.ingest().kafka().topic());
        String rejectedTopic = topicName(cl, "rejected-topic", config.ingest().kafka().rejectedTopic());
        double rate = cl.doubleValue("rate", 0, 0, 10_000_000, true);
        int deliveryTimeoutSeconds = cl.intValue("delivery-timeout", DEFAULT_DELIVERY_TIMEOUT_S, 1, 86_400);
        boolean stdin = cl.flag("stdin");
        if (stdin == cl.has("distances")) {
            throw new UsageException("give either --distances FILE --n N or --stdin");
        }
        // every option and the matrix are checked before anything connects
        LowerRows matrix = null;
        int n = 0;
        int from = 0;
        if (stdin) {
            if (cl.has("n") || cl.has("from") || cl.flag("big-endian")) {
                throw new UsageException("--n, --from and --big-endian go with --distances, not --stdin");
            }
        } else {
            n = cl.requiredInt("n", 1, Integer.MAX_VALUE);
            Path file = Path.of(cl.requiredString("distances"));
            from = cl.intValue("from", 0, 0, n - 1);
            if (file.getFileName().toString().endsWith(FileRowSpout.TRIANGLE_SUFFIX)) {
                if (cl.flag("big-endian")) {
                    throw new UsageException("--big-endian goes with a square matrix file; a lower triangle (*.tri)"
                            + " is little-endian");
                }
                matrix = new TriangleFile(file, n); // what gen --layout triangle writes
            } else {
                ShortMatrixFormat.checkFile(BadInputException.Input.DISTANCES, file, n);
                RowBlock square = RowBlock.mapAll(BadInputException.Input.DISTANCES, file, n,
                        cl.flag("big-endian") ? ByteOrder.BIG_ENDIAN : ByteOrder.LITTLE_ENDIAN);
                matrix = LowerRows.of(square);
            }
        }
        requireBroker(brokers, cl.has("brokers") ? "--brokers" : "ingest.kafka.brokers");
        KafkaRowLimits limits = KafkaRowLimits.forMaxPoints(config.ingest().maxPoints());
        RowTopic target = RowTopic.prepare(brokers, topic, rejectedTopic, config.ingest().kafka().partitions(), limits);
        if (!stdin && RowFormat.encodedLength(n - 1, false, false) > target.largestRowBytes()) {
            int firstTooWide = Math.max(from, (target.largestRowBytes() - RowFormat.HEADER_BYTES) / 2 + 1);
            throw new RowTooWideException(target.refusal("row " + firstTooWide + " of " + cl.requiredString("distances")
                    + " (" + firstTooWide + " 16-bit distances)", RowFormat.encodedLength(firstTooWide, false, false))
                    + "; nothing was sent");
        }
        Resume resume = stdin ? Resume.STDIN : new Resume(cl.requiredString("distances"), n);
        try (Publisher out = new Publisher(brokers, topic, cl.has("rate") ? rate : 0, target,
                deliveryTimeoutSeconds, resume)) {
            if (stdin) {
                int malformed = feedText(out, rejectedTopic, target);
                out.finish();
                if (malformed > 0) {
                    System.out.println(malformed + " line" + (malformed == 1 ? "" : "s") + " could not be read as rows:"
                            + " published to the dead-letter topic with reason malformed");
                }
                return 0; // every line reached Kafka: a malformed row is data, not a failure of feed
            }
            short[] row = new short[n];
            for (int id = from; id < n; id++) {
                matrix.copy(id, 0, id, row);
                out.send(id, 0, RowFormat.encodeInt16(id, row, 0, id, false));
            }
            out.finish();
            return 0;
        }
    }

    private static String topicName(CommandLine cl, String option, String dflt) {
        String topic = cl.string(option, dflt);
        if (!topic.matches("[A-Za-z0-9._-]{1,249}")) {
            throw new UsageException("--" + option + " must be a Kafka topic name (1-249 letters, digits, '.', '_', '-'),"
                    + " got '" + topic + "'");
        }
        return topic;
    }

    /**
     * A producer learns that no broker listens only by retrying until {@code max.block.ms} (15 s) and logging every
     * attempt: ask with one TCP connection per broker first.
     */
    static void requireBroker(String brokers, String setting) {
        String down = Endpoints.noneAnswers(brokers, Endpoints.CONNECT_TIMEOUT);
        if (down != null) {
            throw new UnavailableException("no Kafka broker answers (" + down + "; " + setting
                    + "): is the cluster up? ./meridian cluster status");
        }
    }

    /**
     * Text rows from stdin: each parsed line goes to the row topic as a float32 row (the topology judges its values);
     * a line that is not a row at all goes to the dead-letter topic with reason {@code malformed}, its text as the
     * value and the reason in the {@code detail} header, as the topology's dead letters do. Returns how many lines
     * were malformed.
     */
    private static int feedText(Publisher out, String rejectedTopic, RowTopic target) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8), 1 << 16);
        int malformed = 0;
        long lineNo = 0;
        float[] values = new float[1024];
        for (String line; (line = in.readLine()) != null; ) {
            lineNo++;
            if (line.isBlank()) {
                continue;
            }
            String[] fields = line.split("\t", -1);
            int id;
            try {
                id = TextNumbers.parseId(fields[0]);
            } catch (NumberFormatException e) {
                malformed++;
                out.deadLetter(rejectedTopic, line, lineNo, "the id '" + fields[0].strip() + "' is not an integer");
                continue;
            }
            int count = fields.length - 1;
            if (count == 1 && fields[1].isBlank()) {
                count = 0; // "0<TAB>": row 0 written with its (empty) list of distances
            }
            if (values.length < count) {
                values = new float[Math.max(count, 2 * values.length)];
            }
            String bad = null;
            for (int j = 0; j < count && bad == null; j++) {
                try {
                    values[j] = TextNumbers.parse(fields[j + 1]);
                } catch (NumberFormatException e) {
                    bad = "field " + (j + 2) + " '" + fields[j + 1].strip() + "' is not a number";
                }
            }
            if (bad != null) {
                malformed++;
                out.deadLetter(rejectedTopic, line, lineNo, bad);
                continue;
            }
            byte[] row = RowFormat.encodeFloat32(id, values, count, null, false);
            if (row.length > target.largestRowBytes()) {
                if (out.sent() > 0) {
                    out.finish(); // what was read before is in Kafka: say so, then refuse
                }
                throw new RowTooWideException(target.refusal("row " + id + " (stdin line " + lineNo + ", " + count
                        + " float32 distances)", row.length) + (out.sent() == 0 ? "; nothing was sent"
                        : "; the " + out.sent() + " rows before it were sent, none after"));
            }
            out.send(id, lineNo, row);
        }
        return malformed;
    }

    /**
     * The row topic as the broker has it: made (or raised) to the size {@link KafkaRowLimits} derives from
     * {@code ingest.maxPoints}, then asked for the {@code max.message.bytes} in effect, which decides what fits.
     */
    record RowTopic(String topic, int maxMessageBytes, KafkaRowLimits limits) {
        static RowTopic prepare(String brokers, String topic, String rejectedTopic, int partitions,
                                KafkaRowLimits limits) throws InterruptedException {
            Map<String, Map<String, String>> topics = new LinkedHashMap<>();
            topics.put(topic, limits.rowTopicConfigs());
            topics.put(rejectedTopic, limits.deadLetterTopicConfigs());
            try {
                TopicSetup.ensureTopics(brokers, partitions, topics);
                try (Admin admin = TopicSetup.admin(brokers)) {
                    return new RowTopic(topic, TopicSetup.maxMessageBytes(admin, topic), limits);
                }
            } catch (IllegalStateException | ExecutionException | TimeoutException e) {
                throw new UnavailableException("Kafka at " + brokers + " did not set up topic " + topic + ": "
                        + (e.getCause() == null ? e.getMessage() : e.getCause().getMessage()));
            }
        }

        /** The widest row value the topic takes, with room for its record. */
        int largestRowBytes() {
            return KafkaRowLimits.largestValueFor(maxMessageBytes);
        }

        /** What the producer must let through: a widest row, or a dead letter of a line. */
        int largestRecordBytes() {
            return Math.max(maxMessageBytes, limits.deadLetterRecordBytes());
        }

        /** One line: what is too wide, its size, and the limit it is over. */
        String refusal(String what, long bytes) {
            return String.format(Locale.ROOT, "%s is %,d bytes, more than topic %s takes: rows of at most %,d bytes"
                    + " (its max.message.bytes %,d less %,d for the record; ingest.maxPoints %d allows rows of up to"
                    + " %,d bytes)", what, bytes, topic, largestRowBytes(), maxMessageBytes,
                    KafkaRowLimits.RECORD_OVERHEAD_BYTES, limits.maxPoints(), limits.widestRowBytes());
        }
    }

    /** What a re-run gives to resume after the first row Kafka did not take. */
    record Resume(String file, int n) {
        static final Resume STDIN = new Resume(null, 0);

        String row(int id, long line) {
            return file == null ? "stdin line " + line + " (row " + id + ")" : "row " + id + " of " + file;
        }

        String howToResume(int id, long line, String topic) {
            return file == null ? "every line before it is in topic " + topic + ": resend from stdin line " + line
                    : "every row before it is in topic " + topic + ": resume with ./meridian feed --distances " + file
                    + " --n " + n + " --from " + id;
        }
    }

    /**
     * A rate-limited Kafka producer that counts what the broker acknowledged. While the broker is down or unreachable
     * it keeps every row and retries for up to the delivery timeout (Kafka's {@code delivery.timeout.ms}, and
     * {@code max.block.ms} for a full buffer or missing metadata: 15 s before, and feed gave up after a 15 s outage);
     * the idempotent producer keeps a retried row from landing twice. A watcher thread says when no row has been
     * acknowledged for {@link #WAIT_NOTICE_S} seconds while rows wait, and when Kafka takes them again. Past the
     * timeout, the first row it did not take (in the order sent) and the {@code --from} that resumes are named.
     */
    private static final class Publisher implements AutoCloseable {
        private final KafkaProducer<String, byte[]> producer;
        private final String brokers;
        private final String topic;
        private final long nanosPerRow;
        private final int deadLetterValueBytes;
        private final int deliveryTimeoutSeconds;
        private final Resume resume;
        private final long start = System.nanoTime();
        /** Guarded by {@code this}: what became of each record, by the order sent, and what it was. */
        private final BitSet delivered = new BitSet();
        private int[] ids = new int[1024];
        private long[] lines = new long[1024];
        private long acked;
        private long ackedRows;
        private Exception error;
        private volatile long sent;
        private volatile long lastProgressNanos = System.nanoTime();
        private final Thread watcher;
        private long waitingSince; // the watcher's notice of a wait: when it began, 0 when none (guarded by this)
        private long ackedBefore; // acknowledged when the wait was noticed (guarded by this)
        private long rowsSent;
        private long bytes;
        private int firstId = -1;
        private int lastId = -1;

        Publisher(String brokers, String topic, double rate, RowTopic target, int deliveryTimeoutSeconds,
                  Resume resume) {
            Properties p = new Properties();
            p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, brokers);
            p.put(ProducerConfig.ACKS_CONFIG, "all");
            p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
            int lingerMs = 5;
            p.put(ProducerConfig.LINGER_MS_CONFIG, lingerMs);
            // a row is KBs: the 16 KB default batch holds only a few and caps the publish rate far below Kafka's
            p.put(ProducerConfig.BATCH_SIZE_CONFIG, 1 << 20);
            int timeoutMs = deliveryTimeoutSeconds * 1000;
            p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, timeoutMs);
            p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, timeoutMs);
            // Kafka requires delivery.timeout.ms >= linger.ms + request.timeout.ms (30 s by default)
            p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, Math.min(30_000, timeoutMs - lingerMs));
            KafkaRowLimits.producerProperties(p, target.largestRecordBytes());
            this.deadLetterValueBytes = target.limits().deadLetterValueBytes();
            this.producer = new KafkaProducer<>(p, new StringSerializer(), new ByteArraySerializer());
            this.brokers = brokers;
            this.topic = topic;
            this.nanosPerRow = rate > 0 ? (long) (1e9 / rate) : 0;
            this.deliveryTimeoutSeconds = deliveryTimeoutSeconds;
            this.resume = resume;
            this.watcher = new Thread(this::watch, "meridian-feed-watcher");
            watcher.setDaemon(true);
            watcher.start();
        }

        /** Rows handed to the producer (dead letters of stdin lines not counted). */
        long sent() {
            return rowsSent;
        }

        void send(int id, long line, byte[] value) throws InterruptedException {
            failIfRefused();
            if (nanosPerRow > 0) {
                long due = start + sent * nanosPerRow;
                long wait = due - System.nanoTime();
                if (wait > 0) {
                    TimeUnit.NANOSECONDS.sleep(wait);
                }
            }
            ProducerRecord<String, byte[]> record =
                    new ProducerRecord<>(topic, null, System.currentTimeMillis(), Integer.toString(id), value);
            producer.send(record, track(id, line));
            rowsSent++;
            bytes += value.length;
            if (firstId < 0) {
                firstId = id;
            }
            lastId = id;
        }

        /** Numbers the next record and returns the callback that records what became of it. */
        private Callback track(int id, long line) {
            int seq;
            synchronized (this) {
                seq = (int) sent;
                if (seq == ids.length) {
                    ids = Arrays.copyOf(ids, 2 * seq);
                    lines = Arrays.copyOf(lines, 2 * seq);
                }
                ids[seq] = id;
                lines[seq] = line;
                if (acked + (error == null ? 0 : 1) >= sent) {
                    lastProgressNanos = System.nanoTime(); // nothing was waiting: the wait starts now
                }
            }
            sent = seq + 1L;
            return (meta, e) -> {
                synchronized (this) {
                    if (e == null) {
                        delivered.set(seq);
                        acked++;
                        ackedRows += id >= 0 ? 1 : 0;
                        lastProgressNanos = System.nanoTime();
                    } else if (error == null) {
                        error = e;
                    }
                }
            };
        }

        /** Every half second: says once when rows have waited {@link #WAIT_NOTICE_S} s, and when Kafka is back. */
        private void watch() {
            try {
                while (true) {
                    Thread.sleep(500);
                    long now = System.nanoTime();
                    synchronized (this) {
                        if (error != null) {
                            return;
                        }
                        long waiting = sent - acked;
                        if (waitingSince == 0 && waiting > 0
                                && now - lastProgressNanos > TimeUnit.SECONDS.toNanos(WAIT_NOTICE_S)) {
                            waitingSince = lastProgressNanos;
                            ackedBefore = acked;
                            System.err.printf(Locale.ROOT, "meridian feed: waiting for Kafka at %s: no row"
                                    + " acknowledged for %d s, %d waiting (is the broker up? ./meridian cluster"
                                    + " status); retrying until %s UTC (--delivery-timeout %d s)%n", brokers,
                                    WAIT_NOTICE_S, waiting, LocalTime.now(ZoneOffset.UTC)
                                            .plusSeconds(deliveryTimeoutSeconds - WAIT_NOTICE_S)
                                            .truncatedTo(ChronoUnit.SECONDS), deliveryTimeoutSeconds);
                        } else {
                            sayBackIfWaiting(now);
                        }
                    }
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }

        /**
         * Says that Kafka takes rows again, once, if the watcher said it waited and a row was acknowledged since. Also
         * from {@link #finish}: when the broker comes back after the last row was sent, every waiting row can be
         * acknowledged and flushed within the watcher's half second (FeedOutageTest saw no such line once in CI).
         */
        private synchronized void sayBackIfWaiting(long now) {
            if (waitingSince != 0 && acked > ackedBefore) {
                System.err.printf(Locale.ROOT, "meridian feed: Kafka at %s takes rows again after %.0f s; feeding on%n",
                        brokers, (now - waitingSince) / 1e9);
                waitingSince = 0;
            }
        }

        /**
         * A line that is not a row, to the dead-letter topic as the topology writes its dead letters: key and header
         * {@code reason} = malformed, {@code detail} = what is wrong, {@code source} = where it came from, the value
         * the line's text.
         */
        void deadLetter(String rejectedTopic, String line, long lineNo, String detail) {
            failIfRefused();
            String reason = RejectReason.MALFORMED.code();
            byte[] text = line.getBytes(StandardCharsets.UTF_8);
            boolean whole = text.length <= deadLetterValueBytes;
            ProducerRecord<String, byte[]> record = new ProducerRecord<>(rejectedTopic, null, System.currentTimeMillis(),
                    reason, whole ? text : Arrays.copyOf(text, deadLetterValueBytes));
            record.headers().add("reason", reason.getBytes(StandardCharsets.UTF_8));
            record.headers().add("detail", KafkaRowLimits.detailHeader(detail));
            record.headers().add("source", ("feed stdin line " + lineNo).getBytes(StandardCharsets.UTF_8));
            if (!whole) {
                record.headers().add("truncated", Integer.toString(text.length).getBytes(StandardCharsets.UTF_8));
            }
            producer.send(record, track(-1, lineNo));
            System.err.println("meridian feed: stdin line " + lineNo + ": " + detail + "; sent to " + rejectedTopic
                    + " as malformed");
        }

        void finish() {
            producer.flush();
            failIfRefused();
            sayBackIfWaiting(System.nanoTime());
            double secs = (System.nanoTime() - start) / 1e9;
            long acknowledged;
            synchronized (this) {
                acknowledged = ackedRows;
            }
            System.out.printf(Locale.ROOT, "published %d rows (ids %d..%d, %.1f MB) to %s in %.1f s: %.0f rows/s, %.1f MB/s%n",
                    acknowledged, firstId, lastId, bytes / 1e6, topic, secs, rowsSent / secs, bytes / 1e6 / secs);
        }

        /**
         * Once a record has failed: waits for the others sent (each gets its own delivery timeout at most), then
         * throws naming the first record in the order sent that Kafka did not take.
         */
        private void failIfRefused() {
            synchronized (this) {
                if (error == null) {
                    return;
                }
            }
            producer.flush();
            int first;
            Exception cause;
            long acknowledged;
            synchronized (this) {
                first = delivered.nextClearBit(0);
                cause = error;
                acknowledged = acked;
            }
            int id = ids[first];
            long line = lines[first];
            String what = id < 0 ? "stdin line " + line + " (a dead letter)" : resume.row(id, line);
            String verdict = cause instanceof org.apache.kafka.common.errors.TimeoutException
                    ? "did not take " + what + " within --delivery-timeout " + deliveryTimeoutSeconds + " s"
                    : "refused " + what;
            throw new UnavailableException("Kafka at " + brokers + " " + verdict + " (" + cause.getMessage() + "); "
                    + acknowledged + " of " + sent + " records were acknowledged, "
                    + resume.howToResume(Math.max(id, 0), line, topic));
        }

        @Override
        public void close() {
            watcher.interrupt();
            producer.close(Duration.ofSeconds(5));
        }
    }
}
