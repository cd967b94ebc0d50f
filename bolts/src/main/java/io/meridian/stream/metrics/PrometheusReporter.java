package io.meridian.stream.metrics;

import com.codahale.metrics.MetricRegistry;
import io.meridian.metrics.MetricsEndpoint;
import java.util.Map;
import org.apache.storm.Config;
import org.apache.storm.metrics2.MetricRegistryProvider;
import org.apache.storm.metrics2.reporters.StormReporter;
import org.apache.storm.utils.Utils;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A Storm metrics v2 reporter that serves the worker's metrics to Prometheus (docs/metrics.md): every task's metrics
 * with their dimensions as labels, the worker's transport links, the collectives and the JVM, on one HTTP endpoint per
 * worker JVM, {@code http://HOST:(worker port + port.offset)/metrics}, HOST being the name the worker's Supervisor
 * registered with ({@code storm.local.hostname}; on a single host {@code localhost}, so loopback only). Prometheus
 * pulls, so there is no report period. In a LocalCluster all workers share one JVM and one endpoint, on
 * {@code local.port}.
 *
 * <p>Configured under {@code topology.metrics.reporters} with {@code class}, {@code port.offset} (default 1000) and
 * {@code local.port} (default 7699). A port that is taken is logged and the worker runs on without the endpoint: a
 * worker never dies of its metrics.
 */
public final class PrometheusReporter implements StormReporter {
    public static final String PORT_OFFSET = "port.offset";
    public static final int DEFAULT_PORT_OFFSET = 1000;
    public static final String LOCAL_PORT = "local.port";
    public static final int DEFAULT_LOCAL_PORT = 7699;
    private static final Logger LOG = LoggerFactory.getLogger(PrometheusReporter.class);

    private static MetricsEndpoint endpoint;
    private static int users;

    private StormMetricsCollector.Worker worker;
    private String host;
    private int port;

    @Override
    public void prepare(MetricRegistryProvider provider, Map<String, Object> topoConf, Map<String, Object> reporterConf) {
        boolean local = "local".equals(topoConf.get(Config.STORM_CLUSTER_MODE));
        String workerPort = System.getProperty("worker.port", "");
        try {
            host = Utils.localHostname();
        } catch (java.net.UnknownHostException e) {
            host = "localhost";
        }
        if (local || workerPort.isEmpty()) {
            port = intValue(reporterConf.get(LOCAL_PORT), DEFAULT_LOCAL_PORT);
            host = "localhost";
        } else {
            port = Integer.parseInt(workerPort) + intValue(reporterConf.get(PORT_OFFSET), DEFAULT_PORT_OFFSET);
        }
        String topologyId = String.valueOf(topoConf.get(Config.STORM_ID));
        worker = new StormMetricsCollector.Worker(provider, topologyId, host, workerPort);
    }

    @Override
    public void prepare(MetricRegistry metricsRegistry, Map<String, Object> topoConf, Map<String, Object> reporterConf) {
        throw new UnsupportedOperationException("needs Storm 2.6 or later (MetricRegistryProvider)");
    }

    @Override
    public void start() {
        synchronized (PrometheusReporter.class) {
            StormMetricsCollector.register().add(worker);
            users++;
            if (endpoint == null) {
                try {
                    endpoint = MetricsEndpoint.start(host, port);
                    LOG.info("Prometheus metrics of this worker at {}", endpoint.url());
                } catch (RuntimeException e) {
                    LOG.error("no Prometheus endpoint for this worker: {}", e.getMessage());
                }
            }
        }
    }

    @Override
    public void stop() {
        synchronized (PrometheusReporter.class) {
            if (worker == null) {
                return;
            }
            StormMetricsCollector.register().remove(worker);
            worker = null;
            if (--users == 0 && endpoint != null) {
                endpoint.close();
                endpoint = null;
            }
        }
    }

    @Override
    public void close() {
        stop();
    }

    /** The endpoint this JVM serves, or null (a LocalCluster's, for the tests and {@code ./meridian local}). */
    public static synchronized String endpointUrl() {
        return endpoint == null ? null : endpoint.url();
    }

    private static int intValue(Object o, int dflt) {
        if (o == null) {
            return dflt;
        }
        return o instanceof Number n ? n.intValue() : Integer.parseInt(o.toString().trim());
    }
}
