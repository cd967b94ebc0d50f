package io.meridian.topology;

import io.meridian.config.CommandLine;
import io.meridian.config.MeridianConfig;
import io.meridian.config.UsageException;
import java.nio.file.Path;
import java.util.Set;
import org.apache.storm.StormSubmitter;

/**
 * The {@code storm jar} entry point: {@code storm jar meridian-topology-*-topology.jar io.meridian.topology.MeridianTopology
 * [--config FILE]}. Validates the configuration (exit 2 with the key and the reason), creates the Kafka topics if
 * needed, and submits the topology named {@code topology.name}.
 */
public final class MeridianTopology {
    private MeridianTopology() {
    }

    public static void main(String[] args) throws Exception {
        MeridianConfig config;
        try {
            CommandLine cl = CommandLine.parse("storm jar", args, Set.of("config"), Set.of());
            cl.requireNoPositional();
            config = cl.has("config") ? MeridianConfig.load(Path.of(cl.requiredString("config")))
                    : MeridianConfig.loadResource(MeridianConfig.CLUSTER_DEFAULTS);
            if (!"kafka".equals(config.ingest().source())) {
                throw new UsageException("config: key ingest.source: a cluster topology reads Kafka; 'file' is for ./meridian local");
            }
        } catch (UsageException e) {
            System.err.println("meridian topology: " + e.getMessage());
            System.exit(2);
            return;
        }
        try {
            submit(config);
        } catch (Exception e) {
            // Kafka or Nimbus refused (a topology of that name runs already, the topics cannot be made): one line
            System.err.println("meridian topology: not submitted: " + oneLine(e));
            System.exit(1);
        }
    }

    private static void submit(MeridianConfig config) throws Exception {
        for (String topic : TopicSetup.ensureTopics(config)) {
            System.out.println("created Kafka topic " + topic);
        }
        org.apache.storm.Config conf = IngestTopology.stormConfig(config);
        // keep the cluster's own reporters (storm.yaml) next to Meridian's: a topology's list replaces the cluster's
        Object clusterReporters = org.apache.storm.utils.Utils.readStormConfig().get(org.apache.storm.Config.TOPOLOGY_METRICS_REPORTERS);
        if (clusterReporters instanceof java.util.List<?> list && !list.isEmpty()) {
            java.util.List<Object> all = new java.util.ArrayList<>(list);
            all.addAll((java.util.List<?>) conf.get(org.apache.storm.Config.TOPOLOGY_METRICS_REPORTERS));
            conf.put(org.apache.storm.Config.TOPOLOGY_METRICS_REPORTERS, all);
        }
        StormSubmitter.submitTopology(config.topology().name(), conf, IngestTopology.build(config));
        System.out.println("submitted topology " + config.topology().name());
    }

    /** The first line of {@code e}'s message, or of its innermost cause's; Thrift's exceptions keep theirs in toString. */
    static String oneLine(Throwable e) {
        Throwable t = e;
        while (t.getMessage() == null && t.getCause() != null) {
            t = t.getCause();
        }
        String m = t.getMessage() != null ? t.getMessage() : t.toString();
        return m.lines().findFirst().orElse(m);
    }
}
