package io.meridian.stream.live;

import io.meridian.live.Arrivals;
import io.meridian.live.Frame;
import io.meridian.live.FrameListener;
import io.meridian.mds.GrowingArrays;
import java.util.Arrays;
import java.util.Properties;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.errors.InterruptException;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * Publishes the live map's changed points to a Kafka topic, keyed by point id (a compacted topic then holds the whole
 * map): value {@code id<TAB>x<TAB>y<TAB>z<TAB>cluster<TAB>frame<TAB>outlier} (outlier 1 or 0, DA-VS's sponge:
 * {@code io.meridian.live.MapOutliers}; last, so a reader of the first six fields reads the value as before).
 * Which points, and when: {@link PointUpdates} (new
 * points at once, moved ones at most every {@code map.updatesIntervalMs}). One thread (the map's publisher).
 */
final class KafkaFramePublisher implements FrameListener, AutoCloseable {
    private final KafkaProducer<String, String> producer;
    private final String topic;
    private final StringBuilder value = new StringBuilder(96);
    /** The most points: the keys grow with the ids sent up to it. */
    private final int capacity;
    /** Record keys (the point ids), made once per id. */
    private String[] keys = new String[0];
    private final PointUpdates updates;

    KafkaFramePublisher(String brokers, String topic, int capacity, String clientId, long intervalMillis) {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, brokers);
        p.put(ProducerConfig.ACKS_CONFIG, "1");
        p.put(ProducerConfig.LINGER_MS_CONFIG, 5);
        p.put(ProducerConfig.CLIENT_ID_CONFIG, clientId);
        this.producer = new KafkaProducer<>(p, new StringSerializer(), new StringSerializer());
        this.topic = topic;
        this.capacity = capacity;
        this.updates = new PointUpdates(capacity, intervalMillis * 1_000_000L, System::nanoTime, this::send);
    }

    @Override
    public void onFrame(Frame f) {
        updates.frame(f);
    }

    @Override
    public void onArrivals(Arrivals a) {
        updates.arrivals(a);
    }

    @Override
    public void onIdle() {
        updates.idle();
    }

    private void send(int id, double[] p, int offset, int label, boolean outlier, long frame) {
        value.setLength(0);
        value.append(id).append('\t').append(p[offset]).append('\t').append(p[offset + 1]).append('\t')
                .append(p[offset + 2]).append('\t').append(label).append('\t').append(frame).append('\t')
                .append(outlier ? '1' : '0');
        if (id >= keys.length) {
            keys = Arrays.copyOf(keys, GrowingArrays.grownLength(keys.length, id + 1, capacity));
        }
        String key = keys[id];
        if (key == null) {
            key = Integer.toString(id);
            keys[id] = key;
        }
        producer.send(new ProducerRecord<>(topic, key, value.toString()));
    }

    @Override
    public void close() {
        updates.flush();
        try {
            producer.close(java.time.Duration.ofSeconds(5));
        } catch (InterruptException e) {
            // the worker is shutting down and interrupted the rounds: close without waiting (it escaped the rounds
            // thread and Storm's handler logged 'terminating worker' for an orderly kill). That close joins the
            // producer's I/O thread too, so the interrupt is cleared for it and kept after it
            Thread.interrupted();
            producer.close(java.time.Duration.ZERO);
            Thread.currentThread().interrupt();
        }
    }
}
