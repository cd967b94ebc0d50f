package io.meridian.stream.live;

import io.meridian.live.Arrivals;
import io.meridian.live.Frame;
import io.meridian.live.FrameListener;
import java.util.Properties;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * Publishes each frame's changed points to a Kafka topic, keyed by point id (a compacted topic then holds the whole
 * map): value {@code id<TAB>x<TAB>y<TAB>z<TAB>cluster<TAB>frame}. A point counts as changed when it is new, its
 * cluster changed, or it moved by more than {@link #MOVE_FRACTION} of the map's RMS radius since it was last sent.
 * A point shown ahead of the rounds ({@link Arrivals}) is sent with the frame it was placed against, unless a frame
 * sent already holds it; the first frame that holds it sends it again.
 */
final class KafkaFramePublisher implements FrameListener, AutoCloseable {
    static final double MOVE_FRACTION = 1e-3;

    private final KafkaProducer<String, String> producer;
    private final String topic;
    private final double[] sent;
    private final int[] sentLabels;
    private final StringBuilder value = new StringBuilder(96);
    /** Record keys (the point ids), made once per id. */
    private final String[] keys;
    private int sentPoints;

    KafkaFramePublisher(String brokers, String topic, int capacity, String clientId) {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, brokers);
        p.put(ProducerConfig.ACKS_CONFIG, "1");
        p.put(ProducerConfig.LINGER_MS_CONFIG, 5);
        p.put(ProducerConfig.CLIENT_ID_CONFIG, clientId);
        this.producer = new KafkaProducer<>(p, new StringSerializer(), new StringSerializer());
        this.topic = topic;
        this.sent = new double[3 * capacity];
        this.sentLabels = new int[capacity];
        this.keys = new String[capacity];
    }

    @Override
    public void onFrame(Frame f) {
        double[] p = f.points();
        double radius = radius(p, f.n());
        double limit = MOVE_FRACTION * radius;
        for (int i = 0; i < f.n(); i++) {
            double dx = p[3 * i] - sent[3 * i];
            double dy = p[3 * i + 1] - sent[3 * i + 1];
            double dz = p[3 * i + 2] - sent[3 * i + 2];
            boolean changed = i >= sentPoints || f.labels()[i] != sentLabels[i]
                    || dx * dx + dy * dy + dz * dz > limit * limit;
            if (changed) {
                send(i, p, 3 * i, f.labels()[i], f.frame());
                System.arraycopy(p, 3 * i, sent, 3 * i, 3);
                sentLabels[i] = f.labels()[i];
            }
        }
        sentPoints = Math.max(sentPoints, f.n());
    }

    @Override
    public void onArrivals(Arrivals a) {
        for (int k = 0; k < a.count(); k++) {
            int id = a.ids()[k];
            if (id >= sentPoints) {
                send(id, a.points(), 3 * k, a.labels()[k], a.frame());
            }
        }
    }

    private void send(int id, double[] p, int offset, int label, long frame) {
        value.setLength(0);
        value.append(id).append('\t').append(p[offset]).append('\t').append(p[offset + 1]).append('\t')
                .append(p[offset + 2]).append('\t').append(label).append('\t').append(frame);
        String key = keys[id];
        if (key == null) {
            key = Integer.toString(id);
            keys[id] = key;
        }
        producer.send(new ProducerRecord<>(topic, key, value.toString()));
    }

    static double radius(double[] p, int n) {
        double cx = 0;
        double cy = 0;
        double cz = 0;
        for (int i = 0; i < n; i++) {
            cx += p[3 * i];
            cy += p[3 * i + 1];
            cz += p[3 * i + 2];
        }
        cx /= Math.max(1, n);
        cy /= Math.max(1, n);
        cz /= Math.max(1, n);
        double s = 0;
        for (int i = 0; i < n; i++) {
            double dx = p[3 * i] - cx;
            double dy = p[3 * i + 1] - cy;
            double dz = p[3 * i + 2] - cz;
            s += dx * dx + dy * dy + dz * dz;
        }
        return Math.sqrt(s / Math.max(1, n));
    }

    @Override
    public void close() {
        producer.close(java.time.Duration.ofSeconds(5));
    }
}
