package io.meridian.perf.ingest;

import io.meridian.stream.row.RowStoreReader;
import java.util.Arrays;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * Publish -> stored latency of single rows, measured from outside the topology the way a reader of the row store sees
 * it: the publishing thread notes {@link System#nanoTime()} just before it hands a new row to the Kafka producer
 * ({@link #published}), and a poller thread of this process watches the row's marker byte in the row store files
 * ({@link RowStoreReader#isStored}, mapped read-only), noting the time it finds it set. Exact to the polling period
 * (100 us plus the timer's slack); for rows new to the store only, since a replay of a stored row sets no marker.
 */
final class StoredLatency implements AutoCloseable {
    private static final long POLL_NANOS = 100_000;

    private final RowStoreReader reader;
    /** Written by the publishing thread before the id is queued; read by the poller after it took the id. */
    private final long[] sentAt;
    private final ConcurrentLinkedQueue<Integer> published = new ConcurrentLinkedQueue<>();
    private final Thread poller;
    /** Poller-owned until {@link #latenciesMs} (after {@link #close}). */
    private double[] latencyMs = new double[4096];
    private long[] sentOf = new long[4096];
    private int measured;
    /** Rows published (the publishing thread's) and rows found stored (the poller's). */
    private int sent;
    private volatile int found;
    private volatile boolean closing;

    StoredLatency(RowStoreReader reader) {
        this.reader = reader;
        this.sentAt = new long[reader.capacity()];
        this.poller = new Thread(this::poll, "stored-latency-poller");
        poller.setDaemon(true);
        poller.start();
    }

    /** Row {@code id}, not stored yet, is about to be published: call right before the producer's send. */
    void published(int id) {
        sentAt[id] = System.nanoTime();
        sent++;
        published.add(id);
    }

    /** Waits until every published row is found stored; false when {@code timeoutNanos} passed first. */
    boolean awaitAll(long timeoutNanos) throws InterruptedException {
        long deadline = System.nanoTime() + timeoutNanos;
        while (found < sent) {
            if (System.nanoTime() > deadline) {
                return false;
            }
            TimeUnit.MILLISECONDS.sleep(20);
        }
        return true;
    }

    /** Rows published but not found stored (yet); on the publishing thread. */
    int pending() {
        return sent - found;
    }

    /** The latencies in milliseconds of the rows found stored, sorted; after {@link #close}. */
    double[] latenciesMs() {
        double[] out = Arrays.copyOf(latencyMs, measured);
        Arrays.sort(out);
        return out;
    }

    /**
     * The latencies of the rows published in each {@code sliceNanos} from {@code startNanos}, as "p50/p99" per slice:
     * whether the tail is spread over the window or comes in bursts; after {@link #close}.
     */
    String slices(long startNanos, long sliceNanos) {
        int slices = 0;
        for (int i = 0; i < measured; i++) {
            slices = Math.max(slices, (int) ((sentOf[i] - startNanos) / sliceNanos) + 1);
        }
        StringBuilder b = new StringBuilder();
        for (int k = 0; k < slices; k++) {
            double[] in = new double[measured];
            int m = 0;
            for (int i = 0; i < measured; i++) {
                if ((sentOf[i] - startNanos) / sliceNanos == k) {
                    in[m++] = latencyMs[i];
                }
            }
            double[] sorted = Arrays.copyOf(in, m);
            Arrays.sort(sorted);
            b.append(String.format(java.util.Locale.ROOT, "%s%.0f/%.0f", k == 0 ? "" : " ", quantile(sorted, 0.5),
                    quantile(sorted, 0.99)));
        }
        return b.toString();
    }

    private void poll() {
        int[] ids = new int[1024];
        int count = 0;
        while (!closing) {
            for (Integer id; (id = published.poll()) != null; ) {
                if (count == ids.length) {
                    ids = Arrays.copyOf(ids, 2 * count);
                }
                ids[count++] = id;
            }
            long now = System.nanoTime();
            for (int i = 0; i < count; ) {
                if (reader.isStored(ids[i])) {
                    if (measured == latencyMs.length) {
                        latencyMs = Arrays.copyOf(latencyMs, 2 * measured);
                        sentOf = Arrays.copyOf(sentOf, 2 * measured);
                    }
                    sentOf[measured] = sentAt[ids[i]];
                    latencyMs[measured++] = (now - sentAt[ids[i]]) / 1e6;
                    found = measured;
                    ids[i] = ids[--count];
                } else {
                    i++;
                }
            }
            LockSupport.parkNanos(POLL_NANOS);
        }
    }

    /** The value at quantile {@code q} of {@code sorted} (nearest rank); NaN when empty. */
    static double quantile(double[] sorted, double q) {
        if (sorted.length == 0) {
            return Double.NaN;
        }
        int rank = (int) Math.ceil(q * sorted.length);
        return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))];
    }

    @Override
    public void close() throws InterruptedException {
        closing = true;
        poller.join(5000);
        reader.close();
    }
}
