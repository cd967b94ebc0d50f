package io.meridian.metrics;

import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.exporter.httpserver.HTTPServer;
import io.prometheus.metrics.instrumentation.jvm.JvmMetrics;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.BindException;
import java.net.InetAddress;
import java.nio.file.FileStore;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * One Prometheus endpoint ({@code GET /metrics}, text format) serving {@link PrometheusRegistry#defaultRegistry}: the
 * JVM's own metrics (registered once per JVM) and whatever the process registered there (the collectives' metrics, a
 * Storm worker's task metrics). Binds one address: loopback on a single host, the host's own name when other hosts'
 * Prometheus must reach it.
 */
public final class MetricsEndpoint implements AutoCloseable {
    private static boolean jvmRegistered;
    private final HTTPServer server;
    private final String host;

    private MetricsEndpoint(HTTPServer server, String host) {
        this.server = server;
        this.host = host;
    }

    /**
     * Starts serving on {@code host:port} ({@code port} 0: any free port). Fails with the address in the message when
     * it is taken.
     */
    public static MetricsEndpoint start(String host, int port) {
        registerJvmMetrics();
        return start(host, port, PrometheusRegistry.defaultRegistry);
    }

    /** Starts serving {@code registry} alone on {@code host:port}, without the JVM's metrics (a test's registry). */
    public static MetricsEndpoint start(String host, int port, PrometheusRegistry registry) {
        try {
            HTTPServer server = HTTPServer.builder().inetAddress(InetAddress.getByName(host)).port(port)
                    .registry(registry).buildAndStart();
            return new MetricsEndpoint(server, host);
        } catch (BindException e) {
            throw new UncheckedIOException("cannot serve metrics on " + host + ":" + port + ": " + e.getMessage()
                    + " (is another process using the port?)", e);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot serve metrics on " + host + ":" + port + ": " + e.getMessage(), e);
        }
    }

    /**
     * The JVM's memory, GC, buffer pools (direct and mapped), threads, class loading and process figures, and the
     * tmpfs the collectives' regions and the transport's queues live in ({@code meridian_shm_available_bytes} and
     * {@code meridian_shm_size_bytes}, path {@code /dev/shm}): a full tmpfs fails both; the process's resident memory
     * by kind ({@code meridian_process_resident_bytes}, {@link ResidentMemory}).
     */
    public static synchronized void registerJvmMetrics() {
        if (!jvmRegistered) {
            JvmMetrics.builder().register(PrometheusRegistry.defaultRegistry);
            Path shm = Path.of("/dev/shm");
            tmpfsGauge("meridian_shm_available_bytes", "Bytes free for this process's user on the tmpfs of the"
                    + " regions and queues", shm, FileStoreSize.USABLE);
            tmpfsGauge("meridian_shm_size_bytes", "Size of the tmpfs of the regions and queues", shm, FileStoreSize.TOTAL);
            GaugeWithCallback.builder().name("meridian_process_resident_bytes").help("Resident memory of this process by"
                    + " kind: anonymous (heap, stacks, direct buffers), file (mapped row store files), shmem (/dev/shm"
                    + " regions and queues)").labelNames("kind").callback(cb -> {
                        ResidentMemory m = ResidentMemory.read();
                        cb.call(m.anonymousBytes(), "anonymous");
                        cb.call(m.fileBytes(), "file");
                        cb.call(m.sharedMemoryBytes(), "shmem");
                    }).register(PrometheusRegistry.defaultRegistry);
            jvmRegistered = true;
        }
    }

    private enum FileStoreSize { USABLE, TOTAL }

    private static void tmpfsGauge(String name, String help, Path path, FileStoreSize which) {
        GaugeWithCallback.builder().name(name).help(help).labelNames("path").callback(cb -> {
            try {
                FileStore store = Files.getFileStore(path);
                cb.call(which == FileStoreSize.USABLE ? store.getUsableSpace() : store.getTotalSpace(), path.toString());
            } catch (IOException e) {
                // no such file system here: no sample
            }
        }).register(PrometheusRegistry.defaultRegistry);
    }

    public int port() {
        return server.getPort();
    }

    /** {@code http://host:port/metrics}. */
    public String url() {
        return "http://" + (host.contains(":") ? "[" + host + "]" : host) + ":" + port() + "/metrics";
    }

    @Override
    public void close() {
        server.close();
    }
}
