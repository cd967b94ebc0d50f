package io.meridian.perf.soak;

import io.meridian.perf.ingest.RowUniverse;
import java.nio.charset.StandardCharsets;
import java.util.Properties;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import org.apache.kafka.clients.producer.Callback;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * The soak's stream: {@code rate} records/s for {@code seconds}, on its own thread. Three kinds, so that every path a
 * row takes is exercised the whole time: new points, replays of points already sent (the row store checks them
 * against the stored row and counts a duplicate: the bulk of the rate) and, every {@link #BAD_EVERY}th record, a
 * malformed record that the topology must dead-letter with a reason. New points: all but {@code latePoints} in the
 * first half of the warm-up (the first {@code initialPoints} at once), the late ones spread evenly from the end of the
 * warm-up to 98 % of the run, so that the map places points in every window while its size, and with it what it
 * rightly holds (row store blocks, their mappings, the triangle's pages), changes little between the windows. What the
 * broker acknowledged is counted per kind (the producer's callbacks, acks=all, idempotent): that is what was offered.
 */
final class SoakFeeder implements Runnable {
    static final int BAD_EVERY = 1000;
    static final byte[] BAD_ROW = "not a row".getBytes(StandardCharsets.UTF_8);
    /** The feeder sends what is due, then parks this long: 2 ms keeps the schedule within a few records of the rate. */
    private static final long PACING_NANOS = 2_000_000;

    private final String brokers;
    private final String topic;
    private final RowUniverse universe;
    private final int initialPoints;
    private final int latePoints;
    private final double warmupSeconds;
    private final double rate;
    private final double seconds;
    private final SplittableRandom random;
    /** Per point: 1 once the broker acknowledged a record of it (its first, or a replay). */
    final AtomicIntegerArray ackedPoint;
    final AtomicLong ackedNew = new AtomicLong();
    final AtomicLong ackedReplays = new AtomicLong();
    final AtomicLong ackedBad = new AtomicLong();
    final AtomicLong failed = new AtomicLong();
    final AtomicReference<Exception> firstFailure = new AtomicReference<>();
    private volatile long sent;
    private volatile boolean stop;

    private final KafkaProducer<String, byte[]> producer;
    private final Callback[] onNew;
    private final Callback[] onReplay;
    private int nextNew;

    SoakFeeder(String brokers, String topic, RowUniverse universe, int initialPoints, int latePoints,
               double warmupSeconds, double rate, double seconds, long seed) {
        this.brokers = brokers;
        this.topic = topic;
        this.universe = universe;
        this.initialPoints = initialPoints;
        this.latePoints = latePoints;
        this.warmupSeconds = warmupSeconds;
        this.rate = rate;
        this.seconds = seconds;
        this.random = new SplittableRandom(seed);
        this.ackedPoint = new AtomicIntegerArray(universe.n());
        int n = universe.n();
        onNew = new Callback[n];
        onReplay = new Callback[n];
        for (int i = 0; i < n; i++) {
            int point = i;
            onNew[i] = (meta, e) -> acked(e, point, ackedNew);
            onReplay[i] = (meta, e) -> acked(e, point, ackedReplays);
        }
        this.producer = producer();
    }

    /** Point 0 alone, waiting for the broker: the clock starts once the topology has stored it. */
    void prime() throws Exception {
        producer.send(new ProducerRecord<>(topic, universe.key(0), universe.row(0)), onNew[0])
                .get(60, TimeUnit.SECONDS);
        nextNew = 1;
    }

    /** Records the broker acknowledged. */
    long offered() {
        return ackedNew.get() + ackedReplays.get() + ackedBad.get();
    }

    /** Distinct points among them. */
    long offeredPoints() {
        long n = 0;
        for (int i = 0; i < ackedPoint.length(); i++) {
            n += ackedPoint.get(i);
        }
        return n;
    }

    long sent() {
        return sent;
    }

    void stop() {
        stop = true;
    }

    @Override
    public void run() {
        int n = universe.n();
        Callback onBad = (meta, e) -> acked(e, -1, ackedBad);
        try (producer) {
            long start = System.nanoTime();
            long records = 0;
            while (!stop) {
                double elapsed = (System.nanoTime() - start) / 1e9;
                if (elapsed >= seconds) {
                    break;
                }
                long due = (long) (elapsed * rate);
                while (records < due && !stop) {
                    if (nextNew < n && elapsed >= dueAt(nextNew)) {
                        producer.send(new ProducerRecord<>(topic, universe.key(nextNew), universe.row(nextNew)),
                                onNew[nextNew]);
                        nextNew++;
                    } else if (records % BAD_EVERY == BAD_EVERY - 1 || nextNew == 0) {
                        producer.send(new ProducerRecord<>(topic, "bad", BAD_ROW), onBad);
                    } else {
                        int point = random.nextInt(nextNew);
                        producer.send(new ProducerRecord<>(topic, universe.key(point), universe.row(point)),
                                onReplay[point]);
                    }
                    records++;
                    sent = records;
                }
                LockSupport.parkNanos(PACING_NANOS);
            }
            producer.flush();
        } catch (RuntimeException e) {
            firstFailure.compareAndSet(null, e);
        }
    }

    /** When point {@code i} goes out (seconds into the run). */
    private double dueAt(int i) {
        int early = universe.n() - latePoints;
        if (i < initialPoints) {
            return 0;
        }
        if (i < early) {
            return 0.5 * warmupSeconds * (i - initialPoints + 1) / Math.max(1, early - initialPoints);
        }
        return warmupSeconds + (0.98 * seconds - warmupSeconds) * (i - early + 1) / Math.max(1, latePoints);
    }

    private void acked(Exception e, int point, AtomicLong kind) {
        if (e != null) {
            failed.incrementAndGet();
            firstFailure.compareAndSet(null, e);
            return;
        }
        kind.incrementAndGet();
        if (point >= 0) {
            ackedPoint.set(point, 1);
        }
    }

    private KafkaProducer<String, byte[]> producer() {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, brokers);
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        p.put(ProducerConfig.LINGER_MS_CONFIG, 5);
        // the default 16 KB batches hold a few rows each and capped publishing at about 190 rows/s (docs/ingestion.md)
        p.put(ProducerConfig.BATCH_SIZE_CONFIG, 1 << 20);
        p.put(ProducerConfig.MAX_REQUEST_SIZE_CONFIG, 16 << 20);
        return new KafkaProducer<>(p, new StringSerializer(), new ByteArraySerializer());
    }
}
