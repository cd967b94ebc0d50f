package io.meridian.cli;

import static io.meridian.cli.ClusterWait.waitFor;

import io.meridian.metrics.MetricSamples;
import io.meridian.topology.PrometheusApi;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Locale;

/**
 * What the cluster's monitoring says of one daemon on a single-host cluster: the targets daemon's probe on its endpoint
 * ({@code meridian_daemon_up} at 127.0.0.1:9098), the same series through Prometheus (job meridian-daemons), and the
 * alert MeridianDaemonDown as Prometheus evaluates it. Each wait prints how long it took.
 */
final class ProbeWatch {
    static final String PROBE = "http://127.0.0.1:9098/metrics";
    private static final PrometheusApi PROMETHEUS = new PrometheusApi("http://127.0.0.1:9090", Duration.ofSeconds(5));
    private static final Duration WAIT = Duration.ofSeconds(60);

    private final String daemon;
    private final int port;

    ProbeWatch(String daemon, int port) {
        this.daemon = daemon;
        this.port = port;
    }

    private String selector() {
        return "meridian_daemon_up{job=\"meridian-daemons\",daemon=\"" + daemon + "\",host=\"localhost\",port=\"" + port
                + "\"}";
    }

    /** Waits until the probe's endpoint reads {@code up} (1 or 0) for the daemon. */
    void awaitEndpoint(int up, long sinceNanos) throws Exception {
        waitFor(WAIT, "the probe at " + PROBE + " reading " + daemon + " localhost:" + port + " " + up,
                () -> endpoint() == up, () -> "it reads " + endpoint());
        report("probe endpoint reads " + up, sinceNanos);
    }

    /** Waits until Prometheus holds {@code up} for the daemon (its scrape of the probe). */
    void awaitPrometheus(int up, long sinceNanos) throws Exception {
        waitFor(WAIT, "Prometheus at " + PROMETHEUS.base() + " reading " + selector() + " " + up,
                () -> prometheus() == up, () -> "it reads " + prometheus());
        report("Prometheus reads " + up, sinceNanos);
    }

    /** Waits until Prometheus has MeridianDaemonDown pending or firing for the daemon. */
    void awaitAlert(long sinceNanos) throws Exception {
        String alert = "ALERTS{alertname=\"MeridianDaemonDown\",daemon=\"" + daemon + "\",port=\"" + port + "\"}";
        waitFor(WAIT, "Prometheus at " + PROMETHEUS.base() + " evaluating " + alert + " (pending or firing)",
                () -> !PROMETHEUS.instant(alert).all().isEmpty());
        report("MeridianDaemonDown " + PROMETHEUS.instant(alert).all().get(0).label("alertstate"), sinceNanos);
    }

    /** The probe's value for the daemon, -1 when it serves none (or does not answer). */
    double endpoint() {
        try {
            List<MetricSamples.Sample> s = MetricSamples.scrape(PROBE, Duration.ofSeconds(5)).get("meridian_daemon_up",
                    x -> daemon.equals(x.label("daemon")) && Integer.toString(port).equals(x.label("port")));
            return s.isEmpty() ? -1 : s.get(0).value();
        } catch (RuntimeException e) {
            return -1;
        }
    }

    /** Prometheus's value for the daemon, -1 when it holds none (or does not answer). */
    private double prometheus() {
        try {
            List<MetricSamples.Sample> s = PROMETHEUS.instant(selector()).all();
            return s.isEmpty() ? -1 : s.get(0).value();
        } catch (IOException e) {
            return -1;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return -1;
        }
    }

    private void report(String what, long sinceNanos) {
        double seconds = (System.nanoTime() - sinceNanos) / 1e9;
        System.out.printf(Locale.ROOT, "IT: %s: %s after %.1f s%n", daemon, what, seconds);
    }
}
