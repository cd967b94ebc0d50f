package io.meridian.topology;

import io.meridian.metrics.MetricsEndpoint;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.storm.Config;
import org.apache.storm.generated.ClusterSummary;
import org.apache.storm.generated.Nimbus;
import org.apache.storm.generated.NotAliveException;
import org.apache.storm.generated.SupervisorSummary;
import org.apache.storm.generated.TopologySummary;
import org.apache.storm.utils.ObjectReader;
import org.apache.storm.utils.Utils;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The cluster's {@code targets} daemon (deploy/bin/meridian-cluster, role prometheus): keeps Prometheus's scrape
 * targets equal to what runs. Every few seconds it reads each topology's assignment from Nimbus
 * ({@link ScrapeTargets}) and writes two {@code file_sd} target files, which Prometheus re-reads when they change, so
 * targets follow submissions, kills, rebalances and workers restarted in another slot with no step by hand.
 *
 * <p>Beside it runs the {@link DaemonProbe} of the cluster's own daemons (ZooKeeper, Kafka, Nimbus, every Supervisor
 * Nimbus has listed), on a thread of its own so that a Nimbus that does not answer delays no check; it serves
 * {@code meridian_daemon_up} and {@code meridian_daemon_probe_seconds} on {@code --metrics}, Prometheus's job
 * meridian-daemons. It lives here because this daemon already runs beside Prometheus on its host and already asks
 * Nimbus for the Supervisors it lists.
 *
 * <pre>
 * TargetsDaemon --out DIR [--interval SECONDS] [--nimbus HOST:PORT] [--metrics HOST:PORT] [--kafka HOST:PORT,...]
 *   DIR/workers.json  one target per worker of a topology with the Prometheus reporter: HOST:(slot port + the
 *                     reporter's port.offset), labels topology, topology_id, host, port (the slot)
 *   DIR/leaders.json  one target per host of a live map spread over several hosts: HOST:(the lowest slot port of the
 *                     map's workers there + metrics.leaderPortOffset), labels topology, topology_id, host
 *   DIR/targets.state one line, rewritten after every poll: "ok EPOCH_MS WORKERS LEADERS TOPOLOGIES" or
 *                     "error EPOCH_MS WHY" (`./meridian cluster status` reads it)
 *   DIR/daemons.state one line per probed daemon, rewritten after every probe (DaemonProbe#stateLines)
 *   --metrics         where the probe's metrics are served (no probe without it)
 *   --kafka           the Kafka brokers to probe (the cluster's MERIDIAN_KAFKA_BOOTSTRAP)
 * </pre>
 * Without {@code --nimbus} the Nimbus leader is found from {@code nimbus.seeds} in storm.yaml (on the class path).
 * A file is written to a temporary name and renamed over the old one, and only when its content changed, so Prometheus
 * never reads half a file. When Nimbus does not answer, the last targets stay: the workers may well run on, and
 * Prometheus's {@code up} says whether they do.
 */
public final class TargetsDaemon {
    private static final Logger LOG = LoggerFactory.getLogger(TargetsDaemon.class);

    private static final int CHECK_TIMEOUT_MS = 2000;

    private final Path out;
    private final NimbusPoller.Options options;
    private final ProbeOptions probeOptions;
    private String lastWorkers;
    private String lastLeaders;

    private TargetsDaemon(NimbusPoller.Options options, ProbeOptions probeOptions) {
        this.out = options.path();
        this.options = options;
        this.probeOptions = probeOptions;
    }

    /** The probe's options, taken out of the command line before the Nimbus poller's own. */
    record ProbeOptions(String metricsHost, int metricsPort, List<String> kafka, String[] rest) {
        static ProbeOptions parse(String[] args) {
            String metrics = null;
            List<String> kafka = List.of();
            List<String> rest = new ArrayList<>();
            for (int i = 0; i < args.length; i++) {
                boolean ours = args[i].equals("--metrics") || args[i].equals("--kafka");
                if (ours && i + 1 >= args.length) {
                    throw new IllegalArgumentException("option " + args[i] + " needs a value");
                } else if (args[i].equals("--metrics")) {
                    metrics = args[++i];
                    // an IPv6 address in brackets, as meridian-cluster allows it ([::]:9098)
                    if (!metrics.matches("(\\[[0-9A-Fa-f:.]+]|[^:\\[\\]]+):\\d{1,5}")) {
                        throw new IllegalArgumentException("--metrics wants HOST:PORT ([IPV6]:PORT for an IPv6 address),"
                                + " not '" + metrics + "'");
                    }
                } else if (args[i].equals("--kafka")) {
                    kafka = List.of(args[++i].split(","));
                    kafka.forEach(b -> ClusterDaemon.of(ClusterDaemon.Kind.KAFKA, b));
                } else {
                    rest.add(args[i]);
                }
            }
            if (metrics == null) {
                return new ProbeOptions(null, 0, kafka, rest.toArray(String[]::new));
            }
            int colon = metrics.lastIndexOf(':');
            String host = metrics.substring(0, colon);
            if (host.startsWith("[")) {
                host = host.substring(1, host.length() - 1); // the address the endpoint binds, without the brackets
            }
            return new ProbeOptions(host, Integer.parseInt(metrics.substring(colon + 1)), kafka,
                    rest.toArray(String[]::new));
        }
    }

    public static void main(String[] args) {
        ProbeOptions probe;
        try {
            probe = ProbeOptions.parse(args);
        } catch (IllegalArgumentException e) {
            System.err.println("meridian targets: " + e.getMessage());
            System.exit(2);
            return;
        }
        new TargetsDaemon(NimbusPoller.Options.parseOrExit("targets", probe.rest(), "--out", true), probe).run();
    }

    private void run() {
        LOG.info("polling Nimbus every {} ms, targets in {}", options.intervalMillis(), out);
        DaemonProbe probe = null;
        if (probeOptions.metricsHost() != null) {
            try {
                probe = startProbe();
            } catch (UncheckedIOException e) {
                // the endpoint's port is taken: one line, as for a bad option, not a stack trace
                System.err.println("meridian targets: " + e.getMessage());
                System.exit(2);
            }
        }
        DaemonProbe supervisors = probe;
        // when Nimbus does not answer, the last targets stay
        new NimbusPoller(LOG, options, out.resolve("targets.state")).run((client, conf) -> {
            ClusterSummary cluster = client.getClusterInfo();
            if (supervisors != null) {
                supervisors.supervisorsListed(cluster.get_supervisors().stream().map(SupervisorSummary::get_host)
                        .toList());
            }
            Targets targets = read(client, cluster);
            write(targets);
            return targets.workers.size() + " " + targets.leaders.size() + " " + targets.topologies;
        });
    }

    private DaemonProbe startProbe() {
        Map<String, Object> conf = Utils.readStormConfig();
        DaemonProbe probe = new DaemonProbe(ClusterDaemon.configured(conf, probeOptions.kafka()),
                ObjectReader.getInt(conf.get(Config.SUPERVISOR_THRIFT_PORT), 6628), CHECK_TIMEOUT_MS);
        probe.register(PrometheusRegistry.defaultRegistry);
        MetricsEndpoint endpoint = MetricsEndpoint.start(probeOptions.metricsHost(), probeOptions.metricsPort());
        LOG.info("probing the cluster's daemons every {} ms, metrics at {}", options.intervalMillis(), endpoint.url());
        Thread thread = new Thread(() -> probe.run(options.intervalMillis(), out.resolve("daemons.state")),
                "daemon-probe");
        thread.setDaemon(true);
        thread.start();
        return probe;
    }

    /** One file_sd target group: a target address and its labels (sorted, so that equal content is equal text). */
    public record Group(String target, Map<String, String> labels) {
    }

    /** What one poll found: worker and leader daemon targets, and how many topologies were read. */
    public record Targets(List<Group> workers, List<Group> leaders, int topologies) {
    }

    /** The targets of every topology Nimbus lists, in topology id order. */
    public static Targets read(Nimbus.Iface nimbus) throws Exception {
        return read(nimbus, nimbus.getClusterInfo());
    }

    private static Targets read(Nimbus.Iface nimbus, ClusterSummary cluster) throws Exception {
        List<Group> workers = new ArrayList<>();
        List<Group> leaders = new ArrayList<>();
        List<TopologySummary> topologies = new ArrayList<>(cluster.get_topologies());
        topologies.sort((a, b) -> a.get_id().compareTo(b.get_id()));
        int read = 0;
        for (TopologySummary t : topologies) {
            ScrapeTargets.Endpoints endpoints;
            try {
                endpoints = ScrapeTargets.endpoints(nimbus, t.get_id());
            } catch (NotAliveException e) {
                continue; // killed since getClusterInfo
            }
            read++;
            for (ScrapeTargets.Target w : endpoints.workers()) {
                workers.add(group(w, t.get_name(), true));
            }
            for (ScrapeTargets.Target l : endpoints.leaders()) {
                leaders.add(group(l, t.get_name(), false));
            }
        }
        return new Targets(workers, leaders, read);
    }

    private static Group group(ScrapeTargets.Target t, String name, boolean worker) {
        Map<String, String> labels = new TreeMap<>();
        labels.put("topology", name);
        labels.put("topology_id", t.topologyId());
        labels.put("host", t.host());
        if (worker) {
            labels.put("port", Integer.toString(t.slotPort()));
        }
        return new Group(t.host() + ":" + t.metricsPort(), labels);
    }

    /** file_sd JSON: [{"targets": ["HOST:PORT"], "labels": {...}}, ...], one group per line. */
    public static String fileSd(List<Group> groups) {
        StringBuilder s = new StringBuilder("[");
        for (int i = 0; i < groups.size(); i++) {
            Group g = groups.get(i);
            s.append(i == 0 ? "\n  " : ",\n  ").append("{\"targets\": [").append(quote(g.target)).append("], \"labels\": {");
            int j = 0;
            for (Map.Entry<String, String> l : g.labels.entrySet()) {
                s.append(j++ == 0 ? "" : ", ").append(quote(l.getKey())).append(": ").append(quote(l.getValue()));
            }
            s.append("}}");
        }
        return s.append(groups.isEmpty() ? "]\n" : "\n]\n").toString();
    }

    static String quote(String text) {
        StringBuilder s = new StringBuilder("\"");
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            switch (c) {
                case '"' -> s.append("\\\"");
                case '\\' -> s.append("\\\\");
                default -> {
                    if (c < 0x20) {
                        s.append(String.format("\\u%04x", (int) c));
                    } else {
                        s.append(c);
                    }
                }
            }
        }
        return s.append('"').toString();
    }

    private void write(Targets targets) throws IOException {
        String workers = fileSd(targets.workers);
        String leaders = fileSd(targets.leaders);
        if (!workers.equals(lastWorkers) || !Files.exists(out.resolve("workers.json"))) {
            NimbusPoller.replace(out.resolve("workers.json"), workers);
            LOG.info("workers: {}", targets.workers.stream().map(Group::target).toList());
            lastWorkers = workers;
        }
        if (!leaders.equals(lastLeaders) || !Files.exists(out.resolve("leaders.json"))) {
            NimbusPoller.replace(out.resolve("leaders.json"), leaders);
            LOG.info("leader daemons: {}", targets.leaders.stream().map(Group::target).toList());
            lastLeaders = leaders;
        }
    }
}
