package io.meridian.topology;

import io.meridian.metrics.MetricSamples;
import io.meridian.stream.ingest.RejectReason;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.BitSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;

/**
 * The topology's own row counts, from its workers' Prometheus metrics (docs/metrics.md): read from the Prometheus
 * server, which keeps what restarted workers had counted (see {@link PrometheusApi#countersOver}), or straight from
 * the running workers' endpoints ({@code source} says which).
 */
public final class RowCounts {
    public final long received;
    public final long stored;
    public final long duplicates;
    public final long deadLettered;
    public final Map<String, Long> rejected;
    public final long latencySamples;
    public final double latencyP50Ms;
    public final double latencyP99Ms;
    /** Writes to the row stores that failed (a full disk), by the worker ({@code host:port}) they failed on. */
    public final Map<String, Long> storeWriteFailures;
    /**
     * Failures for want of tmpfs pages (/dev/shm full), by the worker ({@code host:port}): the live map's generations
     * that failed ({@code meridian_map_shm_failures_total}) and transport links that went on through Netty
     * ({@code meridian_transport_shm_failures_total}), as "map N, transport M".
     */
    public final Map<String, String> shmFailures;
    /** Where the figures came from: "prometheus" or "N worker endpoints". */
    public final String source;

    private RowCounts(long received, long stored, long duplicates, long deadLettered, Map<String, Long> rejected,
                      Map<String, Long> storeWriteFailures, Map<String, String> shmFailures, long latencySamples,
                      double p50, double p99, String source) {
        this.storeWriteFailures = storeWriteFailures;
        this.shmFailures = shmFailures;
        this.received = received;
        this.stored = stored;
        this.duplicates = duplicates;
        this.deadLettered = deadLettered;
        this.rejected = rejected;
        this.latencySamples = latencySamples;
        this.latencyP50Ms = p50;
        this.latencyP99Ms = p99;
        this.source = source;
    }

    public long rejectedTotal() {
        return rejected.values().stream().mapToLong(Long::longValue).sum();
    }

    /** The counts of topology {@code topologyId} among {@code samples} (an endpoint's, several merged, or Prometheus's). */
    public static RowCounts of(MetricSamples samples, String topologyId, String source) {
        Predicate<MetricSamples.Sample> mine = s -> s.label("topology_id").equals(topologyId);
        Map<String, Double> byReason = samples.sumBy("meridian_rows_rejected_total", "reason", mine);
        Map<String, Long> rejected = new LinkedHashMap<>();
        for (RejectReason r : RejectReason.values()) {
            rejected.put(r.code(), Math.round(byReason.getOrDefault(r.code(), 0.0)));
        }
        Map<String, Long> writeFailures = new java.util.TreeMap<>();
        for (MetricSamples.Sample f : samples.get("meridian_rows_store_write_failures_total", mine)) {
            long failures = Math.round(f.value());
            if (failures > 0) {
                writeFailures.merge(f.label("host") + ":" + f.label("port"), failures, Long::sum);
            }
        }
        Map<String, Long> mapShm = byWorker(samples, "meridian_map_shm_failures_total", mine);
        Map<String, Long> linkShm = byWorker(samples, "meridian_transport_shm_failures_total", mine);
        Map<String, String> shmFailures = new java.util.TreeMap<>();
        java.util.Set<String> shmWorkers = new java.util.TreeSet<>(mapShm.keySet());
        shmWorkers.addAll(linkShm.keySet());
        for (String w : shmWorkers) {
            shmFailures.put(w, "map " + mapShm.getOrDefault(w, 0L) + ", transport " + linkShm.getOrDefault(w, 0L));
        }
        String latency = "meridian_rows_publish_to_stored_seconds";
        return new RowCounts(count(samples, "meridian_rows_received_total", mine),
                count(samples, "meridian_rows_stored_total", mine), count(samples, "meridian_rows_duplicate_total", mine),
                count(samples, "meridian_rows_dead_lettered_total", mine), rejected, writeFailures, shmFailures,
                count(samples, latency + "_count", mine), samples.quantile(latency, 0.5, mine) * 1000,
                samples.quantile(latency, 0.99, mine) * 1000, source);
    }

    /** A counter's positive sums by the worker ({@code host:port}) that counted. */
    private static Map<String, Long> byWorker(MetricSamples samples, String name,
                                              Predicate<MetricSamples.Sample> mine) {
        Map<String, Long> out = new java.util.TreeMap<>();
        for (MetricSamples.Sample f : samples.get(name, mine)) {
            long n = Math.round(f.value());
            if (n > 0) {
                out.merge(f.label("host") + ":" + f.label("port"), n, Long::sum);
            }
        }
        return out;
    }

    /** The counts from the workers' endpoints of a running topology (what they counted since they started). */
    public static RowCounts scrape(List<ScrapeTargets.Target> workers, String topologyId, Duration timeout) {
        List<MetricSamples> parts = new java.util.ArrayList<>();
        for (ScrapeTargets.Target t : workers) {
            parts.add(MetricSamples.scrape(t.url(), timeout));
        }
        return of(MetricSamples.merge(parts), topologyId, workers.size() + " worker endpoint" + (workers.size() == 1 ? "" : "s"));
    }

    /**
     * The counts from Prometheus over the topology's {@code uptimeSecs}: counters summed across worker restarts, the
     * latency from the running workers' histograms.
     */
    public static RowCounts fromPrometheus(PrometheusApi prometheus, String topologyId, long uptimeSecs)
            throws IOException, InterruptedException {
        String id = "topology_id=\"" + topologyId + "\"";
        MetricSamples counters = prometheus.countersOver(
                "{__name__=~\"meridian_(rows_.*|map_shm_failures|transport_shm_failures)_total\"," + id + "}",
                uptimeSecs + 60);
        MetricSamples latency = prometheus.instant("{__name__=~\"meridian_rows_publish_to_stored_seconds_(bucket|count)\","
                + id + "}");
        List<MetricSamples.Sample> all = new java.util.ArrayList<>(counters.all());
        all.addAll(latency.all());
        return of(MetricSamples.of(all), topologyId, "prometheus " + prometheus.base());
    }

    private static long count(MetricSamples samples, String name, Predicate<MetricSamples.Sample> filter) {
        return Math.round(samples.sum(name, filter));
    }

    /** Rows marked stored in the row-store files of {@code directory} (what is really on disk). */
    public static long storedOnDisk(Path directory) throws IOException {
        return storedOnDisk(List.of(directory));
    }

    /**
     * The distinct rows marked stored in the row-store files of {@code directories} (each host's, across hosts): a
     * row kept on two hosts (its block's own store, and a mirror copy on the publishing task's host) counts once. A
     * store may drop a mirror block while this reads (TwoHostClusterIT's count met one deleted between the listing and
     * its read): what is on disk at that moment is counted.
     */
    public static long storedOnDisk(List<Path> directories) throws IOException {
        BitSet stored = new BitSet();
        for (Path directory : directories) {
            if (!Files.isDirectory(directory)) {
                continue;
            }
            try (DirectoryStream<Path> stream = Files.newDirectoryStream(directory, "block-*.rows")) {
                for (Path f : stream) {
                    String name = f.getFileName().toString();
                    int block = Integer.parseInt(name.substring("block-".length(), name.length() - ".rows".length()));
                    byte[] markers; // one byte per row of the block
                    try {
                        markers = Files.readAllBytes(f);
                    } catch (NoSuchFileException dropped) {
                        continue; // a mirror block dropped since the listing: none of its rows is here any more
                    }
                    for (int i = 0; i < markers.length; i++) {
                        if (markers[i] == 1) {
                            stored.set(block * markers.length + i);
                        }
                    }
                }
            }
        }
        return stored.cardinality();
    }

    public String toJson() {
        StringBuilder b = new StringBuilder("{\"received\":").append(received).append(",\"stored\":").append(stored)
                .append(",\"duplicates\":").append(duplicates).append(",\"deadLettered\":").append(deadLettered)
                .append(",\"rejected\":{");
        boolean first = true;
        for (Map.Entry<String, Long> e : rejected.entrySet()) {
            b.append(first ? "" : ",").append('"').append(e.getKey()).append("\":").append(e.getValue());
            first = false;
        }
        b.append("},\"storeWriteFailures\":{");
        first = true;
        for (Map.Entry<String, Long> e : storeWriteFailures.entrySet()) {
            b.append(first ? "" : ",").append('"').append(e.getKey()).append("\":").append(e.getValue());
            first = false;
        }
        b.append("},\"shmFailures\":{");
        first = true;
        for (Map.Entry<String, String> e : shmFailures.entrySet()) {
            b.append(first ? "" : ",").append('"').append(e.getKey()).append("\":\"").append(e.getValue()).append('"');
            first = false;
        }
        return b.append("},\"rejectedTotal\":").append(rejectedTotal()).append(",\"latencyMs\":{\"p50\":").append(json(latencyP50Ms))
                .append(",\"p99\":").append(json(latencyP99Ms)).append(",\"samples\":").append(latencySamples)
                .append("},\"source\":\"").append(source.replace("\"", "'")).append("\"}").toString();
    }

    private static String json(double v) {
        return Double.isFinite(v) ? Double.toString(v) : "null";
    }

    public String toText() {
        StringBuilder b = new StringBuilder();
        b.append("rows received ").append(received).append(", stored ").append(stored).append(", duplicates (replays) ")
                .append(duplicates).append(", rejected ").append(rejectedTotal());
        rejected.forEach((k, v) -> {
            if (v > 0) {
                b.append("\n  rejected ").append(k).append(": ").append(v);
            }
        });
        storeWriteFailures.forEach((worker, failures) -> b.append("\n  row-store writes FAILED on ").append(worker)
                .append(": ").append(failures).append(" (a full disk? the worker log names the file; the rows are not"
                        + " acked and Kafka replays them until they are stored)"));
        shmFailures.forEach((worker, failures) -> b.append("\n  /dev/shm FULL on ").append(worker).append(": ")
                .append(failures).append(" failures (the worker log names the file and the free bytes; the map re-forms"
                        + " and the transport's links go through Netty once there is room)"));
        if (latencySamples > 0) {
            b.append(String.format(java.util.Locale.ROOT, "%npublish -> stored: p50 %.1f ms, p99 %.1f ms (histogram)",
                    latencyP50Ms, latencyP99Ms));
        }
        return b.append("\n(from ").append(source).append(')').toString();
    }
}
