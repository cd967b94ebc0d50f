package io.meridian.topology;

import io.meridian.config.MeridianConfig;
import io.meridian.stream.ingest.IngestStreams;
import io.meridian.stream.live.MapLayout;
import io.meridian.stream.live.MapStreams;
import io.meridian.stream.metrics.PrometheusReporter;
import java.util.ArrayList;
import java.util.HashMap;
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
 * port plus the {@code port.offset} of the topology's {@link PrometheusReporter} (docs/metrics.md); and where its live
 * map's leader daemons serve theirs. What Prometheus's target files ({@link TargetsDaemon}) and
 * {@code ./meridian status} follow, so that both survive rebalances and worker restarts.
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

    /** A topology's endpoints: its workers' and its live map's leader daemons'. */
    public record Endpoints(List<Target> workers, List<Target> leaders) {
    }

    /** The endpoints of topology {@code topologyId}'s workers; none when it has no Prometheus reporter. */
    public static List<Target> workers(Nimbus.Iface nimbus, String topologyId) throws Exception {
        return workers(topologyId, nimbus.getTopologyConf(topologyId), nimbus.getTopologyInfo(topologyId));
    }

    /** Workers and leader daemons of {@code topologyId}, from one read of its configuration and its assignment. */
    public static Endpoints endpoints(Nimbus.Iface nimbus, String topologyId) throws Exception {
        String conf = nimbus.getTopologyConf(topologyId);
        TopologyInfo info = nimbus.getTopologyInfo(topologyId);
        return new Endpoints(workers(topologyId, conf, info), leaders(topologyId, conf, info));
    }

    static List<Target> workers(String topologyId, String topologyConfJson, TopologyInfo info) {
        int offset = portOffset(topologyConfJson);
        if (offset < 0) {
            return List.of();
        }
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

    /**
     * The endpoints of the live map's leader daemons: one per host when the map's tasks run on several hosts (only then
     * does map task 0 start daemons, {@code LiveMapBolt}), each on the port {@link MapLayout#leaderMetricsPorts} gives
     * task 0 for them (the lowest slot port of the map's workers on the host + {@code metrics.leaderPortOffset}).
     * {@code slotPort} of such a target is that lowest slot.
     */
    static List<Target> leaders(String topologyId, String topologyConfJson, TopologyInfo info) {
        if (!(Utils.parseJson(topologyConfJson).get(IngestStreams.CONFIG_KEY) instanceof String yaml)) {
            return List.of();
        }
        MeridianConfig config = MeridianConfig.parse(yaml, "the configuration of topology " + topologyId);
        if (!config.map().enabled()) {
            return List.of();
        }
        Map<Integer, String> hostOfTask = new HashMap<>();
        Map<Integer, Integer> portOfTask = new HashMap<>();
        TreeSet<Integer> mapTasks = new TreeSet<>();
        TreeSet<Integer> storeTasks = new TreeSet<>();
        for (ExecutorSummary e : info.get_executors()) {
            for (int t = e.get_executor_info().get_task_start(); t <= e.get_executor_info().get_task_end(); t++) {
                hostOfTask.put(t, e.get_host());
                portOfTask.put(t, e.get_port());
                if (MapStreams.MAP.equals(e.get_component_id())) {
                    mapTasks.add(t);
                } else if (IngestStreams.STORE.equals(e.get_component_id())) {
                    storeTasks.add(t);
                }
            }
        }
        MapLayout layout = MapLayout.of(hostOfTask, portOfTask, List.copyOf(mapTasks), List.copyOf(storeTasks));
        if (layout.groups() < 2) {
            return List.of();
        }
        int offset = config.metrics().leaderPortOffset();
        List<Target> out = new ArrayList<>();
        for (String hostPort : layout.leaderMetricsPorts(offset).split(",")) {
            int eq = hostPort.lastIndexOf('=');
            if (eq > 0) {
                int port = Integer.parseInt(hostPort.substring(eq + 1));
                out.add(new Target(hostPort.substring(0, eq), port - offset, port, topologyId));
            }
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
