package io.meridian.topology;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.meridian.config.MeridianConfig;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.storm.Config;
import org.apache.storm.generated.ExecutorInfo;
import org.apache.storm.generated.ExecutorSummary;
import org.apache.storm.generated.TopologyInfo;
import org.junit.jupiter.api.Test;

/**
 * Where Prometheus finds a topology's workers and leader daemons, from the configuration the topology is submitted
 * with (IngestTopology.stormConfig, as JSON, as Nimbus hands it back) and an assignment as Nimbus reports it
 * (executors with host and slot), and the file_sd text the targets daemon writes of them.
 */
class ScrapeTargetsTest {
    private static final String ID = "meridian-7-1700000000";

    @Test
    void everyWorkerOnEveryHostAtItsSlotPlusTheReportersOffset() throws Exception {
        String conf = conf("metrics: {portOffset: 2000}\nmap: {tasks: 2}\n");
        TopologyInfo info = assignment(List.of(
                executor(1, 1, "rows-in", "h1", 6700), executor(2, 3, "validate", "h1", 6701),
                executor(4, 5, "row-store", "h2", 6700), executor(6, 7, "live-map", "h2", 6700),
                executor(8, 8, "__acker", "h1", 6700)));
        List<ScrapeTargets.Target> workers = ScrapeTargets.workers(ID, conf, info);
        assertEquals(List.of("h1:6700->8700", "h1:6701->8701", "h2:6700->8700"),
                workers.stream().map(t -> t.host() + ":" + t.slotPort() + "->" + t.metricsPort()).toList());
        workers.forEach(t -> assertEquals(ID, t.topologyId()));
    }

    @Test
    void aTopologyWithoutThePrometheusReporterHasNoWorkerTargets() throws Exception {
        Map<String, Object> stormConf = IngestTopology.stormConfig(MeridianConfig.parse("map: {tasks: 1}\n", "test"));
        stormConf.remove(Config.TOPOLOGY_METRICS_REPORTERS);
        String conf = new ObjectMapper().writeValueAsString(stormConf);
        assertEquals(List.of(), ScrapeTargets.workers(ID, conf, assignment(List.of(executor(1, 1, "rows-in", "h1", 6700)))));
    }

    @Test
    void leaderDaemonsOnlyForAMapOverSeveralHostsAtTheLowestMapSlotThereAndTheOffset() throws Exception {
        String conf = conf("map: {tasks: 3}\n");
        // the map on one host: task 0 leads in-process, no daemons
        TopologyInfo oneHost = assignment(List.of(executor(1, 1, "rows-in", "h1", 6700),
                executor(2, 2, "row-store", "h1", 6700), executor(3, 5, "live-map", "h1", 6701)));
        assertEquals(List.of(), ScrapeTargets.leaders(ID, conf, oneHost));
        // over two hosts: one daemon each, on the lowest slot of the map's workers there + 1100
        TopologyInfo twoHosts = assignment(List.of(executor(1, 1, "rows-in", "h1", 6700),
                executor(2, 2, "row-store", "h1", 6700), executor(3, 3, "row-store", "h2", 6702),
                executor(4, 4, "live-map", "h1", 6703), executor(5, 5, "live-map", "h1", 6701),
                executor(6, 6, "live-map", "h2", 6702)));
        List<ScrapeTargets.Target> leaders = ScrapeTargets.leaders(ID, conf, twoHosts);
        Map<String, Integer> byHost = new TreeMap<>();
        leaders.forEach(t -> byHost.put(t.host(), t.metricsPort()));
        assertEquals(Map.of("h1", 7801, "h2", 7802), byHost);
        // another offset, and no map at all
        assertEquals(List.of(7851, 7852), ScrapeTargets.leaders(ID, conf("map: {tasks: 3}\nmetrics: {leaderPortOffset: 1150}\n"),
                twoHosts).stream().map(ScrapeTargets.Target::metricsPort).sorted().toList());
        assertEquals(List.of(), ScrapeTargets.leaders(ID, conf("map: {enabled: false}\n"), twoHosts));
    }

    @Test
    void theTargetFileIsFileSdJsonWithTheLabels() throws Exception {
        List<TargetsDaemon.Group> groups = new ArrayList<>();
        groups.add(new TargetsDaemon.Group("h1:7700", new TreeMap<>(Map.of("topology", "a \"quoted\" name",
                "topology_id", ID, "host", "h1", "port", "6700"))));
        groups.add(new TargetsDaemon.Group("h2:7701", new TreeMap<>(Map.of("topology", "b\\c", "topology_id", ID,
                "host", "h2", "port", "6701"))));
        JsonNode file = new ObjectMapper().readTree(TargetsDaemon.fileSd(groups));
        assertEquals(2, file.size());
        assertEquals("h1:7700", file.get(0).path("targets").get(0).asText());
        assertEquals("a \"quoted\" name", file.get(0).path("labels").path("topology").asText());
        assertEquals("b\\c", file.get(1).path("labels").path("topology").asText());
        assertEquals("6701", file.get(1).path("labels").path("port").asText());
        assertTrue(new ObjectMapper().readTree(TargetsDaemon.fileSd(List.of())).isArray(), "no targets: []");
    }

    /** The topology configuration Nimbus hands back for a Meridian config (JSON of IngestTopology.stormConfig). */
    private static String conf(String yaml) throws Exception {
        return new ObjectMapper().writeValueAsString(IngestTopology.stormConfig(MeridianConfig.parse(yaml, "test")));
    }

    private static ExecutorSummary executor(int first, int last, String component, String host, int port) {
        return new ExecutorSummary(new ExecutorInfo(first, last), component, host, port, 10);
    }

    private static TopologyInfo assignment(List<ExecutorSummary> executors) {
        TopologyInfo info = new TopologyInfo();
        info.set_id(ID);
        info.set_executors(executors);
        return info;
    }
}
