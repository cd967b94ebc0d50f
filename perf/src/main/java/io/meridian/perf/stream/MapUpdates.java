package io.meridian.perf.stream;

import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Properties;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;

/**
 * Reads the live map's {@code map.topic} (one partition, from the beginning) on a thread of its own and keeps, per
 * point id, what its first record says: the record's timestamp (CreateTime: when the map's publisher handed it to its
 * producer, right after the frame's snapshot was written), the wall time this consumer got it, and its frame number.
 * Value format ({@code KafkaFramePublisher}): {@code id<TAB>x<TAB>y<TAB>z<TAB>cluster<TAB>frame<TAB>outlier}; a value
 * of six fields (written before the outlier flag) reads as not flagged.
 */
final class MapUpdates implements AutoCloseable {
    private final KafkaConsumer<String, String> consumer;
    private final Thread thread;
    private final long[] recordMs;
    private final long[] arrivedMs;
    private final long[] frame;
    /** Per point, whether its latest record flags it as an outlier. */
    private final boolean[] outlier;
    private volatile boolean stopping;
    private volatile RuntimeException failure;
    /** Written by the consumer thread only; read after {@link #close()} or as a progress figure. */
    private volatile long records;
    private volatile int distinct;

    MapUpdates(String brokers, String topic, int n) {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, brokers);
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        // the map publishes in bursts of one record per changed point: no reason to wait for a fuller fetch
        p.put(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, 10);
        this.consumer = new KafkaConsumer<>(p, new StringDeserializer(), new StringDeserializer());
        TopicPartition partition = new TopicPartition(topic, 0);
        consumer.assign(List.of(partition));
        consumer.seekToBeginning(List.of(partition));
        this.recordMs = new long[n];
        this.arrivedMs = new long[n];
        this.frame = new long[n];
        this.outlier = new boolean[n];
        Arrays.fill(frame, -1);
        this.thread = new Thread(this::run, "bench-map-updates");
        thread.setDaemon(true);
        thread.start();
    }

    private void run() {
        try {
            while (!stopping) {
                for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(50))) {
                    long now = System.currentTimeMillis();
                    records++;
                    String v = r.value();
                    int id = Integer.parseInt(field(v, 0));
                    if (id < 0 || id >= frame.length) {
                        continue;
                    }
                    outlier[id] = outlier(v);
                    if (frame[id] < 0) {
                        frame[id] = frame(v);
                        recordMs[id] = r.timestamp();
                        arrivedMs[id] = now;
                        distinct++;
                    }
                }
            }
        } catch (org.apache.kafka.common.errors.WakeupException e) {
            // close()
        } catch (RuntimeException e) {
            failure = e;
        }
    }

    /** Field {@code index} (0-based) of a record value, or null when it has fewer fields. */
    static String field(String value, int index) {
        int start = 0;
        for (int k = 0; k < index; k++) {
            start = value.indexOf('\t', start) + 1;
            if (start == 0) {
                return null;
            }
        }
        int end = value.indexOf('\t', start);
        return value.substring(start, end < 0 ? value.length() : end);
    }

    /** The frame number of a record value (its sixth field). */
    static long frame(String value) {
        return Long.parseLong(field(value, 5));
    }

    /** Whether a record value flags its point as an outlier (its seventh field is 1; absent: not). */
    static boolean outlier(String value) {
        return "1".equals(field(value, 6));
    }

    /** Points whose latest record seen flags them as outliers. */
    int outliers() {
        int count = 0;
        for (boolean b : outlier) {
            count += b ? 1 : 0;
        }
        return count;
    }

    /** Points seen so far. */
    int distinct() {
        return distinct;
    }

    long records() {
        return records;
    }

    long recordMs(int id) {
        return recordMs[id];
    }

    long arrivedMs(int id) {
        return arrivedMs[id];
    }

    /** The frame of the point's first record, or -1 if none came. */
    long frame(int id) {
        return frame[id];
    }

    RuntimeException failure() {
        return failure;
    }

    @Override
    public void close() throws InterruptedException {
        if (stopping) {
            return;
        }
        stopping = true;
        consumer.wakeup();
        thread.join(5000);
        consumer.close(Duration.ofSeconds(2));
    }
}
