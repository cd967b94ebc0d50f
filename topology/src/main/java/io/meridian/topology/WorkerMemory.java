package io.meridian.topology;

import io.meridian.metrics.MetricSamples;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * One worker's memory as its endpoint reports it: the heap in use and its limit, and the resident set by kind
 * ({@code meridian_process_resident_bytes}: anonymous, file-backed (the mapped row stores), shared memory), so that
 * {@code ./meridian status} shows a live map's triangle in the page cache apart from its heap.
 */
public record WorkerMemory(String worker, long heapUsed, long heapMax, long anonymous, long file, long shmem,
                           String error) {

    /** Each worker's figures; a worker whose endpoint does not answer is listed with the reason. */
    public static List<WorkerMemory> scrape(List<ScrapeTargets.Target> workers, Duration timeout) {
        List<WorkerMemory> out = new ArrayList<>();
        for (ScrapeTargets.Target t : workers) {
            String name = t.host() + ":" + t.slotPort();
            try {
                out.add(of(name, MetricSamples.scrape(t.url(), timeout)));
            } catch (RuntimeException e) {
                out.add(new WorkerMemory(name, 0, 0, 0, 0, 0, t.url() + ": " + e.getMessage()));
            }
        }
        return out;
    }

    static WorkerMemory of(String worker, MetricSamples samples) {
        return new WorkerMemory(worker,
                (long) samples.sum("jvm_memory_used_bytes", s -> s.label("area").equals("heap")),
                (long) samples.sum("jvm_memory_max_bytes", s -> s.label("area").equals("heap")),
                resident(samples, "anonymous"), resident(samples, "file"), resident(samples, "shmem"), null);
    }

    private static long resident(MetricSamples samples, String kind) {
        return (long) samples.sum("meridian_process_resident_bytes", s -> s.label("kind").equals(kind));
    }

    /** One line: the worker, heap used / max, resident anonymous, file-backed, shared memory (MB). */
    public String toText() {
        if (error != null) {
            return worker + ": no figures (" + error + ")";
        }
        return String.format(Locale.ROOT, "%s: heap %.0f / %.0f MB, resident anonymous %.0f MB, file-backed %.0f MB,"
                + " shared memory %.0f MB", worker, heapUsed / 1e6, heapMax / 1e6, anonymous / 1e6, file / 1e6,
                shmem / 1e6);
    }

    public String toJson() {
        if (error != null) {
            return "{\"worker\":\"" + worker + "\",\"error\":\"" + error.replace("\\", "\\\\").replace("\"", "\\\"")
                    + "\"}";
        }
        return String.format(Locale.ROOT, "{\"worker\":\"%s\",\"heapUsedBytes\":%d,\"heapMaxBytes\":%d,"
                + "\"residentAnonymousBytes\":%d,\"residentFileBytes\":%d,\"residentShmemBytes\":%d}", worker, heapUsed,
                heapMax, anonymous, file, shmem);
    }
}
