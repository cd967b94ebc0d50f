package io.meridian.topology;

import io.meridian.stream.ingest.IngestMetrics;
import io.meridian.stream.ingest.RejectReason;
import java.io.IOException;
import java.io.Reader;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Properties;

/**
 * The topology's own row counts, summed over the files its workers' {@code RowCountsReporter}s wrote under
 * {@code <metrics.directory>/<topology-id>/} (one file per worker run, so restarts add up instead of resetting).
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
    public final int workerFiles;

    private RowCounts(long received, long stored, long duplicates, long deadLettered, Map<String, Long> rejected,
                      long latencySamples, double p50, double p99, int workerFiles) {
        this.received = received;
        this.stored = stored;
        this.duplicates = duplicates;
        this.deadLettered = deadLettered;
        this.rejected = rejected;
        this.latencySamples = latencySamples;
        this.latencyP50Ms = p50;
        this.latencyP99Ms = p99;
        this.workerFiles = workerFiles;
    }

    public long rejectedTotal() {
        return rejected.values().stream().mapToLong(Long::longValue).sum();
    }

    public static RowCounts read(Path metricsDirectory, String topologyId) throws IOException {
        Map<String, Long> sums = new LinkedHashMap<>();
        long samples = 0;
        double p50 = 0;
        double p99 = 0;
        int files = 0;
        Path dir = metricsDirectory.resolve(topologyId);
        if (Files.isDirectory(dir)) {
            try (DirectoryStream<Path> stream = Files.newDirectoryStream(dir, "*.properties")) {
                for (Path f : stream) {
                    Properties p = new Properties();
                    try (Reader r = Files.newBufferedReader(f)) {
                        p.load(r);
                    }
                    files++;
                    for (String k : p.stringPropertyNames()) {
                        if (k.startsWith(IngestMetrics.PREFIX) && !isHistogramKey(k)) {
                            sums.merge(k, Long.parseLong(p.getProperty(k)), Long::sum);
                        }
                    }
                    long n = Long.parseLong(p.getProperty(IngestMetrics.LATENCY_MS + ".count", "0"));
                    if (n > samples) {
                        samples = n;
                        p50 = Double.parseDouble(p.getProperty(IngestMetrics.LATENCY_MS + ".p50", "0"));
                        p99 = Double.parseDouble(p.getProperty(IngestMetrics.LATENCY_MS + ".p99", "0"));
                    }
                }
            }
        }
        Map<String, Long> rejected = new LinkedHashMap<>();
        for (RejectReason r : RejectReason.values()) {
            rejected.put(r.code(), sums.getOrDefault(IngestMetrics.REJECTED_PREFIX + r.code(), 0L));
        }
        return new RowCounts(sums.getOrDefault(IngestMetrics.RECEIVED, 0L), sums.getOrDefault(IngestMetrics.STORED, 0L),
                sums.getOrDefault(IngestMetrics.DUPLICATE, 0L), sums.getOrDefault(IngestMetrics.DEAD_LETTERED, 0L),
                rejected, samples, p50, p99, files);
    }

    /** A histogram's figure (NAME.count, .p50, .p99, .max), not a counter: the reporter writes these per histogram. */
    static boolean isHistogramKey(String key) {
        return key.endsWith(".count") || key.endsWith(".p50") || key.endsWith(".p99") || key.endsWith(".max");
    }

    /** Rows marked stored in the row-store files of {@code directory} (what is really on disk). */
    public static long storedOnDisk(Path directory) throws IOException {
        long n = 0;
        if (!Files.isDirectory(directory)) {
            return 0;
        }
        try (DirectoryStream<Path> stream = Files.newDirectoryStream(directory, "block-*.rows")) {
            for (Path f : stream) {
                for (byte b : Files.readAllBytes(f)) {
                    if (b == 1) {
                        n++;
                    }
                }
            }
        }
        return n;
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
        return b.append("},\"rejectedTotal\":").append(rejectedTotal()).append(",\"latencyMs\":{\"p50\":").append(latencyP50Ms)
                .append(",\"p99\":").append(latencyP99Ms).append(",\"samples\":").append(latencySamples)
                .append("},\"workerReports\":").append(workerFiles).append('}').toString();
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
        if (latencySamples > 0) {
            b.append(String.format(java.util.Locale.ROOT, "%npublish -> stored: p50 %.1f ms, p99 %.1f ms", latencyP50Ms, latencyP99Ms));
        }
        return b.toString();
    }
}
