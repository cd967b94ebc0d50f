package io.meridian.cli;

import io.meridian.config.CommandLine;
import io.meridian.config.MeridianConfig;
import io.meridian.live.SnapshotSummary;
import io.meridian.stream.live.LiveMapBolt;
import io.meridian.stream.live.MapFailures;
import io.meridian.topology.PrometheusApi;
import io.meridian.topology.RowCounts;
import io.meridian.topology.ScrapeTargets;
import io.meridian.topology.WorkerMemory;
import io.meridian.topology.TopicSetup;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.storm.Config;
import org.apache.storm.generated.ClusterSummary;
import org.apache.storm.generated.SupervisorSummary;
import org.apache.storm.generated.TopologySummary;
import org.apache.storm.utils.NimbusClient;
import org.apache.storm.utils.Utils;
import org.yaml.snakeyaml.Yaml;

/**
 * {@code ./meridian status [--json] [--config FILE]}: which daemons answer (ZooKeeper {@code srvr}, a Kafka metadata
 * request, Nimbus thrift, registered Supervisors), the running topologies, and for Meridian's topology
 * ({@code topology.name}) the rows received, stored and rejected by reason from Prometheus ({@code metrics.prometheus},
 * counters summed across worker restarts) or, when it does not answer, from the workers' own endpoints (what they
 * counted since they started), and the live map's frame, N, stress and clusters from its
 * snapshot directory. Exits 1 when a daemon other than Prometheus is down ({@link #allUp}). Addresses come from the
 * local cluster's {@code storm.yaml}
 * ({@code $MERIDIAN_CLUSTER_DIR/runtime/storm-home/conf}, default under {@code .meridian/cluster}) and the Meridian config's brokers.
 */
final class StatusCommand implements Command {
    private static final int TIMEOUT_MS = 3000;
    private static final int KAFKA_TIMEOUT_MS = 10_000;

    @Override
    public String usage() {
        return "status [--json] [--config FILE]\n"
                + "  daemons, topologies and the topology's row counts; exits 1 when ZooKeeper, Kafka, Nimbus or every"
                + " Supervisor is down (Prometheus is optional: without it the figures come from the workers)";
    }

    @Override
    public int run(String[] args) throws Exception {
        CommandLine cl = CommandLine.parse("status", args, Set.of("config"), Set.of("json"));
        cl.requireNoPositional();
        MeridianConfig config = cl.has("config") ? MeridianConfig.load(Path.of(cl.requiredString("config")))
                : MeridianConfig.loadResource(MeridianConfig.CLUSTER_DEFAULTS);
        Map<String, Object> storm = stormYaml();
        String zkHost = first(storm.get(Config.STORM_ZOOKEEPER_SERVERS), "localhost");
        int zkPort = number(storm.get(Config.STORM_ZOOKEEPER_PORT), 2181);
        String nimbusHost = first(storm.get(Config.NIMBUS_SEEDS), "localhost");
        int nimbusPort = number(storm.get(Config.NIMBUS_THRIFT_PORT), 6627);
        String brokers = config.ingest().kafka().brokers();

        Map<String, String> daemons = new LinkedHashMap<>();
        daemons.put("zookeeper", zookeeper(zkHost, zkPort));
        daemons.put("kafka", kafka(brokers));
        ClusterSummary cluster = null;
        NimbusClient nimbus = null;
        String nimbusDown = Endpoints.connect(nimbusHost + ":" + nimbusPort, Endpoints.CONNECT_TIMEOUT);
        try {
            if (nimbusDown != null) {
                // Storm's client would retry, then log a trace per seed host
                throw new UnavailableException(nimbusDown);
            }
            nimbus = nimbus(nimbusHost, nimbusPort);
            cluster = nimbus.getClient().getClusterInfo();
            daemons.put("nimbus", "up (" + nimbusHost + ":" + nimbusPort + ", " + cluster.get_nimbuses_size() + " nimbus)");
            List<SupervisorSummary> sups = cluster.get_supervisors();
            int slots = 0;
            int used = 0;
            for (SupervisorSummary s : sups) {
                slots += s.get_num_workers();
                used += s.get_num_used_workers();
            }
            daemons.put("supervisors", sups.isEmpty() ? "down (none registered)"
                    : "up (" + sups.size() + " registered, " + used + "/" + slots + " worker slots used)");
        } catch (Exception e) {
            daemons.put("nimbus", "down (" + (nimbusDown != null ? nimbusDown
                    : nimbusHost + ":" + nimbusPort + ": " + oneLine(e)) + ")");
            daemons.put("supervisors", "unknown (Nimbus does not answer)");
        }
        List<Map<String, Object>> topologies = new ArrayList<>();
        RowCounts counts = null;
        String countsError = null;
        List<WorkerMemory> memory = List.of();
        String memoryError = null;
        String meridianId = null;
        PrometheusApi prometheus = new PrometheusApi(config.metrics().prometheus(), Duration.ofMillis(TIMEOUT_MS));
        boolean prometheusUp = prometheus.ready();
        daemons.put("prometheus", prometheusUp ? "up (" + prometheus.base() + ")"
                : "down (" + prometheus.base() + " does not answer; figures from the workers' endpoints)");
        if (cluster != null) {
            for (TopologySummary t : cluster.get_topologies()) {
                Map<String, Object> m = new LinkedHashMap<>();
                m.put("name", t.get_name());
                m.put("id", t.get_id());
                m.put("status", t.get_status());
                m.put("workers", t.get_num_workers());
                m.put("executors", t.get_num_executors());
                m.put("uptimeSecs", t.get_uptime_secs());
                topologies.add(m);
                if (t.get_name().equals(config.topology().name())) {
                    meridianId = t.get_id();
                    try {
                        counts = prometheusUp ? RowCounts.fromPrometheus(prometheus, meridianId, t.get_uptime_secs())
                                : RowCounts.scrape(ScrapeTargets.workers(nimbus.getClient(), meridianId), meridianId,
                                        Duration.ofMillis(TIMEOUT_MS));
                    } catch (Exception e) {
                        countsError = oneLine(e);
                    }
                    try {
                        memory = WorkerMemory.scrape(ScrapeTargets.workers(nimbus.getClient(), meridianId),
                                Duration.ofMillis(TIMEOUT_MS));
                    } catch (Exception e) {
                        memoryError = oneLine(e);
                    }
                }
            }
        }
        if (nimbus != null) {
            nimbus.close();
        }
        SnapshotSummary map = meridianId != null && config.map().enabled()
                ? SnapshotSummary.readCurrent(config.map().snapshotDirectory()) : null;
        if (map != null && !map.job().equals(LiveMapBolt.jobId(meridianId))) {
            map = null; // a frame of an earlier run of the topology
        }
        MapFailures.Last mapFailure = null;
        if (meridianId != null && config.map().enabled()) {
            try {
                mapFailure = MapFailures.read(config.map().snapshotDirectory(), LiveMapBolt.jobId(meridianId));
            } catch (RuntimeException e) {
                // unreadable: shown as none, the worker log has it
            }
        }
        if (cl.flag("json")) {
            StringBuilder b = new StringBuilder("{\"daemons\":{");
            boolean first = true;
            for (Map.Entry<String, String> e : daemons.entrySet()) {
                b.append(first ? "" : ",").append(json(e.getKey())).append(":{\"up\":").append(e.getValue().startsWith("up"))
                        .append(",\"detail\":").append(json(e.getValue())).append('}');
                first = false;
            }
            b.append("},\"topologies\":[");
            first = true;
            for (Map<String, Object> t : topologies) {
                b.append(first ? "{" : ",{");
                boolean f2 = true;
                for (Map.Entry<String, Object> e : t.entrySet()) {
                    b.append(f2 ? "" : ",").append(json(e.getKey())).append(':')
                            .append(e.getValue() instanceof Number ? e.getValue().toString() : json(String.valueOf(e.getValue())));
                    f2 = false;
                }
                b.append('}');
                first = false;
            }
            b.append("],\"meridian\":");
            if (meridianId == null) {
                b.append("null");
            } else {
                b.append("{\"topology\":").append(json(config.topology().name())).append(",\"id\":").append(json(meridianId))
                        .append(",\"rows\":").append(counts == null ? "null" : counts.toJson());
                if (countsError != null) {
                    b.append(",\"rowsError\":").append(json(countsError));
                }
                b.append(",\"workers\":[").append(String.join(",", memory.stream().map(WorkerMemory::toJson).toList()))
                        .append(']');
                if (memoryError != null) {
                    b.append(",\"workersError\":").append(json(memoryError));
                }
                b.append(",\"map\":");
                if (map == null) {
                    b.append("null");
                } else {
                    b.append(String.format(Locale.ROOT, "{\"frame\":%d,\"points\":%d,\"stress\":%s,\"clusters\":%d,"
                                    + "\"temperature\":%s,\"staleness\":%d,\"publishedAtMs\":%d,\"settled\":%b}",
                            map.frame(), map.points(), jsonNumber(map.stress()), map.clusters(),
                            jsonNumber(map.temperature()), map.staleness(), map.publishedAtMillis(), map.settled()));
                }
                b.append(",\"mapLastFailure\":");
                if (mapFailure == null) {
                    b.append("null");
                } else {
                    b.append(String.format(Locale.ROOT, "{\"generation\":%d,\"failedAtMs\":%d,\"part\":%s,"
                                    + "\"host\":%s,\"reason\":%s,\"resumedGeneration\":%d,\"resumedAtMs\":%d}",
                            mapFailure.generation(), mapFailure.failedAtMillis(), json(mapFailure.part()),
                            json(mapFailure.host()), json(mapFailure.reason()), mapFailure.resumedGeneration(),
                            mapFailure.resumedAtMillis()));
                }
                b.append('}');
            }
            System.out.println(b.append('}'));
        } else {
            System.out.println("daemons:");
            daemons.forEach((k, v) -> System.out.printf(Locale.ROOT, "  %-12s %s%n", k, v));
            System.out.println(topologies.isEmpty() ? "topologies: none running" : "topologies:");
            for (Map<String, Object> t : topologies) {
                System.out.printf(Locale.ROOT, "  %s (%s) %s, %s workers, up %s s%n", t.get("name"), t.get("id"), t.get("status"),
                        t.get("workers"), t.get("uptimeSecs"));
            }
            if (meridianId != null) {
                System.out.println("meridian topology " + config.topology().name() + ":");
                System.out.println("  " + (counts != null ? counts.toText().replace("\n", "\n  ")
                        : "row counts unavailable: " + countsError));
                System.out.println(memoryError != null ? "  workers' memory unavailable: " + memoryError
                        : "  workers' memory:");
                memory.forEach(w -> System.out.println("    " + w.toText()));
                if (config.map().enabled()) {
                    System.out.println(map == null ? "  live map: no frame yet (" + config.map().snapshotDirectory() + ")"
                            : String.format(Locale.ROOT, "  live map: frame %d, N = %d, stress %.5f, %d clusters, %d rows"
                                    + " stored but not yet in the map, published %.1f s ago%s", map.frame(), map.points(),
                            map.stress(), map.clusters(), map.staleness(),
                            (System.currentTimeMillis() - map.publishedAtMillis()) / 1000.0,
                            map.settled() ? ", settled" : ", refining"));
                    if (mapFailure != null) {
                        System.out.println("  live map's last failure: "
                                + mapFailure.toText(System.currentTimeMillis()));
                    }
                }
            } else {
                System.out.println("meridian topology " + config.topology().name() + ": not running");
            }
        }
        if (allUp(daemons)) {
            return 0;
        }
        List<String> down = new ArrayList<>();
        daemons.forEach((k, v) -> {
            if (!"prometheus".equals(k) && !v.startsWith("up")) {
                down.add(k);
            }
        });
        System.err.println("meridian status: not answering: " + String.join(", ", down)
                + " (./meridian cluster start starts this host's cluster)");
        return 1;
    }

    /**
     * Whether the cluster's daemons answer: ZooKeeper, Kafka, Nimbus and at least one Supervisor. Prometheus is left
     * out: a cluster runs without it (the figures then come from the workers' own endpoints), and its line says so.
     */
    static boolean allUp(Map<String, String> daemons) {
        for (Map.Entry<String, String> e : daemons.entrySet()) {
            if (!"prometheus".equals(e.getKey()) && !e.getValue().startsWith("up")) {
                return false;
            }
        }
        return true;
    }

    private static String jsonNumber(double v) {
        return Double.isFinite(v) ? String.format(Locale.ROOT, "%.6g", v) : "null";
    }

    private static Map<String, Object> stormYaml() {
        String dir = System.getenv("MERIDIAN_CLUSTER_DIR");
        Path clusterDir = dir != null ? Path.of(dir) : SubmitCommand.home().resolve(".meridian/cluster");
        Path file = clusterDir.resolve("runtime/storm-home/conf/storm.yaml");
        if (!Files.isReadable(file)) {
            file = clusterDir.resolve("conf/storm.yaml");
        }
        if (!Files.isReadable(file)) {
            return Map.of();
        }
        try {
            Object o = new Yaml().load(Files.readString(file));
            if (o instanceof Map<?, ?> m) {
                Map<String, Object> out = new HashMap<>();
                m.forEach((k, v) -> out.put(String.valueOf(k), v));
                return out;
            }
        } catch (Exception e) {
            System.err.println("meridian status: cannot read " + file + ": " + oneLine(e));
        }
        return Map.of();
    }

    private static String zookeeper(String host, int port) {
        String down = Endpoints.connect(host + ":" + port, Endpoints.CONNECT_TIMEOUT);
        if (down != null) {
            return "down (" + down + ")";
        }
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress(host, port), TIMEOUT_MS);
            s.setSoTimeout(TIMEOUT_MS);
            OutputStream out = s.getOutputStream();
            out.write("srvr".getBytes(StandardCharsets.US_ASCII));
            out.flush();
            InputStream in = s.getInputStream();
            String reply = new String(in.readAllBytes(), StandardCharsets.US_ASCII);
            if (reply.startsWith("Zookeeper version")) {
                String mode = reply.lines().filter(l -> l.startsWith("Mode:")).findFirst().orElse("Mode: ?");
                return "up (" + host + ":" + port + ", " + mode.substring(5).trim() + ")";
            }
            return "down (" + host + ":" + port + " answers srvr with '" + reply.lines().findFirst().orElse("") + "')";
        } catch (Exception e) {
            return "down (" + host + ":" + port + ": " + oneLine(e) + ")";
        }
    }

    private static String kafka(String brokers) {
        String down = Endpoints.noneAnswers(brokers, Endpoints.CONNECT_TIMEOUT);
        if (down != null) {
            return "down (" + down + ")"; // an admin client would retry for its whole API timeout
        }
        // something listens: now a broker has the time a loaded machine needs to answer (3 s said a running broker
        // was down while the cluster started on 2 busy cores: the admin client alone takes seconds to start there)
        try (Admin admin = TopicSetup.admin(brokers)) {
            int nodes = admin.describeCluster().nodes().get(KAFKA_TIMEOUT_MS, TimeUnit.MILLISECONDS).size();
            return "up (" + brokers + ", " + nodes + " broker" + (nodes == 1 ? "" : "s") + ")";
        } catch (TimeoutException e) {
            return "down (" + brokers + " accepts connections but does not answer a metadata request within "
                    + KAFKA_TIMEOUT_MS / 1000 + " s)";
        } catch (Exception e) {
            return "down (" + brokers + ": " + oneLine(e) + ")";
        }
    }

    private static NimbusClient nimbus(String host, int port) throws Exception {
        Map<String, Object> conf = Utils.readDefaultConfig();
        conf.put(Config.NIMBUS_SEEDS, List.of(host));
        conf.put(Config.NIMBUS_THRIFT_PORT, port);
        conf.put(Config.STORM_NIMBUS_RETRY_TIMES, 0);
        return NimbusClient.getConfiguredClient(conf, TIMEOUT_MS);
    }

    private static String first(Object list, String dflt) {
        if (list instanceof List<?> l && !l.isEmpty()) {
            return String.valueOf(l.get(0));
        }
        return list == null ? dflt : String.valueOf(list);
    }

    private static int number(Object o, int dflt) {
        return o instanceof Number n ? n.intValue() : dflt;
    }

    private static String oneLine(Throwable e) {
        Throwable t = e;
        while (t.getCause() != null && t.getMessage() == null) {
            t = t.getCause();
        }
        String m = t.getMessage() == null ? t.getClass().getSimpleName() : t.getMessage();
        return m.lines().findFirst().orElse(m);
    }

    private static String json(String s) {
        return "\"" + s.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n") + "\"";
    }
}
