package io.meridian.stream.ingest;

import com.codahale.metrics.Counter;
import com.codahale.metrics.Histogram;
import com.codahale.metrics.Metric;
import com.codahale.metrics.MetricRegistry;
import com.codahale.metrics.Snapshot;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.apache.storm.metrics2.reporters.StormReporter;

/**
 * A metrics v2 reporter (one per worker) that publishes the worker's {@code meridian.*} counters (the transport's
 * per-link counters among them), the row latency
 * histogram and the live map's histograms ({@code meridian.map.*}, each as NAME.count/.p50/.p99/.max) as a small
 * properties file, {@code <directory>/<topology-id>/<host>-<port>-<start-ms>.properties}, every
 * {@code report.period} seconds and when the worker stops. {@code ./meridian status} sums the files of a topology, so
 * counts survive worker restarts (a restarted worker writes a new file). Configure it under
 * {@code topology.metrics.reporters} with keys {@code class}, {@code directory}, {@code report.period}.
 *
 * <p>On several hosts each host holds its own workers' files; point {@code metrics.directory} at a shared file system
 * (or run {@code ./meridian status} on each host).
 */
public final class RowCountsReporter implements StormReporter {
    /** The live map's histograms ({@code meridian.map.*Ms}): written as NAME.count, .p50, .p99, .max like the latency. */
    static final String MAP_PREFIX = "meridian.map.";
    /** The mmap transport's worker-level link counters ({@code meridian.transport.mmap|netty.HOST_PORT.messages|bytes}). */
    static final String TRANSPORT_PREFIX = "meridian.transport.";
    private MetricRegistry registry;
    private Path directory;
    private long periodSecs;
    private final long startMs = System.currentTimeMillis();
    private ScheduledExecutorService timer;
    private Path file;

    @Override
    public void prepare(MetricRegistry metricsRegistry, Map<String, Object> topoConf, Map<String, Object> reporterConf) {
        this.registry = metricsRegistry;
        Object dir = reporterConf.get("directory");
        this.directory = Path.of(dir == null ? "/tmp/meridian/metrics" : dir.toString());
        Object period = reporterConf.get(REPORT_PERIOD);
        this.periodSecs = period == null ? 2 : Long.parseLong(period.toString());
    }

    @Override
    public void start() {
        timer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "meridian-row-counts-reporter");
            t.setDaemon(true);
            return t;
        });
        timer.scheduleAtFixedRate(this::reportQuietly, periodSecs, periodSecs, TimeUnit.SECONDS);
    }

    @Override
    public void stop() {
        if (timer != null) {
            timer.shutdownNow();
        }
        reportQuietly();
    }

    @Override
    public void close() {
        stop();
    }

    private void reportQuietly() {
        try {
            report();
        } catch (IOException | RuntimeException e) {
            // a missed report is repeated at the next period; the worker must not die of it
        }
    }

    /** Writes the current figures; public for tests. */
    public synchronized void report() throws IOException {
        Map<String, Long> counts = new TreeMap<>();
        Map<String, Snapshot> mapHistograms = new TreeMap<>();
        Map<String, Long> mapHistogramCounts = new TreeMap<>();
        long latencyCount = 0;
        double p50 = 0;
        double p99 = 0;
        double max = 0;
        String topologyId = null;
        String worker = null;
        for (Map.Entry<String, Metric> e : registry.getMetrics().entrySet()) {
            String name = e.getKey();
            if (name.startsWith(TRANSPORT_PREFIX) && e.getValue() instanceof Counter c) {
                counts.put(name, c.getCount()); // worker-level: the transport's links, by peer and way
                continue;
            }
            int at = name.indexOf('-' + IngestMetrics.PREFIX);
            if (at < 0) {
                continue;
            }
            if (topologyId == null && name.startsWith("storm.")) {
                // task metrics in Storm 2.8: storm.topology.{topologyId}.{host}.{component}.{task}.{port}-{name}
                // (dots inside the host become '_'; topology names here have no dots)
                String[] parts = name.substring(0, at).split("\\.");
                if (parts.length >= 5) {
                    topologyId = parts[2];
                    worker = parts[3] + "-" + parts[parts.length - 1];
                }
            }
            String shortName = name.substring(at + 1);
            Metric m = e.getValue();
            if (m instanceof Counter c) {
                counts.merge(shortName, c.getCount(), Long::sum);
            } else if (m instanceof Histogram h && shortName.equals(IngestMetrics.LATENCY_MS) && h.getCount() > latencyCount) {
                // one row-store task's view per worker; the busiest one stands for the worker
                Snapshot s = h.getSnapshot();
                latencyCount = h.getCount();
                p50 = s.getMedian();
                p99 = s.get99thPercentile();
                max = s.getMax();
            } else if (m instanceof Histogram h && shortName.startsWith(MAP_PREFIX)
                    && h.getCount() > mapHistogramCounts.getOrDefault(shortName, -1L)) {
                // placement: only the publishing map task (task 0) records it; round, compute and collective times:
                // every map task does, and the task with the most samples stands for the worker
                mapHistograms.put(shortName, h.getSnapshot());
                mapHistogramCounts.put(shortName, h.getCount());
            }
        }
        if (topologyId == null) {
            return;
        }
        if (file == null) {
            file = directory.resolve(topologyId).resolve(worker + "-" + startMs + ".properties");
            Files.createDirectories(file.getParent());
        }
        StringBuilder out = new StringBuilder();
        out.append("updatedMs=").append(System.currentTimeMillis()).append('\n');
        counts.forEach((k, v) -> out.append(k).append('=').append(v).append('\n'));
        out.append(IngestMetrics.LATENCY_MS).append(".count=").append(latencyCount).append('\n');
        out.append(IngestMetrics.LATENCY_MS).append(".p50=").append(p50).append('\n');
        out.append(IngestMetrics.LATENCY_MS).append(".p99=").append(p99).append('\n');
        out.append(IngestMetrics.LATENCY_MS).append(".max=").append(max).append('\n');
        mapHistograms.forEach((name, snapshot) -> {
            out.append(name).append(".count=").append(mapHistogramCounts.get(name)).append('\n');
            out.append(name).append(".p50=").append(snapshot.getMedian()).append('\n');
            out.append(name).append(".p99=").append(snapshot.getValue(0.99)).append('\n');
            out.append(name).append(".max=").append(snapshot.getMax()).append('\n');
        });
        Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
        Files.writeString(tmp, out, StandardCharsets.UTF_8);
        Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }
}
