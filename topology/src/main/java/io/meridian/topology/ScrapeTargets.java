package io.meridian.topology;

import io.meridian.stream.metrics.PrometheusReporter;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import org.apache.storm.Config;
import org.apache.storm.generated.ExecutorSummary;
import org.apache.storm.generated.Nimbus;
import org.apache.storm.generated.TopologyInfo;
import org.apache.storm.utils.Utils;

/**
 * Where a topology's workers serve their Prometheus metrics, from Nimbus's assignment: each worker's host and slot
 * port plus the {@code port.offset} of the topology's {@link PrometheusReporter} (docs/metrics.md). What Prometheus's
 * target file and {@code ./meridian status} follow, so that both survive rebalances and worker restarts.
 */
public final class ScrapeTargets {
    /** One worker's endpoint. */
    public record Target(String host, int slotPort, int metricsPort, String topologyId) {
        public String url() {
            return "http://" + host + ":" + metricsPort + "/metrics";
        }
    }

    private ScrapeTargets() {
    }

    /** The endpoints of topology {@code topologyId}'s workers; none when it has no Prometheus reporter. */
    public static List<Target> workers(Nimbus.Iface nimbus, String topologyId) throws Exception {
        int offset = portOffset(nimbus.getTopologyConf(topologyId));
        if (offset < 0) {
            return List.of();
        }
        TopologyInfo info = nimbus.getTopologyInfo(topologyId);
        TreeSet<String> slots = new TreeSet<>();
        for (ExecutorSummary e : info.get_executors()) {
            slots.add(e.get_host() + "\t" + e.get_port());
        }
        List<Target> out = new ArrayList<>();
        for (String slot : slots) {
            String[] f = slot.split("\t");
            int port = Integer.parseInt(f[1]);
            out.add(new Target(f[0], port, port + offset, topologyId));
        }
        return out;
    }

    /** The port offset of the topology's Prometheus reporter in its configuration (JSON), or -1 when it has none. */
    static int portOffset(String topologyConfJson) {
        Map<String, Object> conf = Utils.parseJson(topologyConfJson);
        if (!(conf.get(Config.TOPOLOGY_METRICS_REPORTERS) instanceof List<?> list)) {
            return -1;
        }
        for (Object r : list) {
            if (r instanceof Map<?, ?> reporter && PrometheusReporter.class.getName().equals(reporter.get("class"))) {
                Object offset = reporter.get(PrometheusReporter.PORT_OFFSET);
                return offset == null ? PrometheusReporter.DEFAULT_PORT_OFFSET : Integer.parseInt(offset.toString());
            }
        }
        return -1;
    }
}
