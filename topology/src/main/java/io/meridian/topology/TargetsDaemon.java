package io.meridian.topology;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.storm.generated.Nimbus;
import org.apache.storm.generated.NotAliveException;
import org.apache.storm.generated.TopologySummary;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The cluster's {@code targets} daemon (deploy/bin/meridian-cluster, role prometheus): keeps Prometheus's scrape
 * targets equal to what runs. Every few seconds it reads each topology's assignment from Nimbus
 * ({@link ScrapeTargets}) and writes two {@code file_sd} target files, which Prometheus re-reads when they change, so
 * targets follow submissions, kills, rebalances and workers restarted in another slot with no step by hand.
 *
 * <pre>
 * TargetsDaemon --out DIR [--interval SECONDS] [--nimbus HOST:PORT]
 *   DIR/workers.json  one target per worker of a topology with the Prometheus reporter: HOST:(slot port + the
 *                     reporter's port.offset), labels topology, topology_id, host, port (the slot)
 *   DIR/leaders.json  one target per host of a live map spread over several hosts: HOST:(the lowest slot port of the
 *                     map's workers there + metrics.leaderPortOffset), labels topology, topology_id, host
 *   DIR/targets.state one line, rewritten after every poll: "ok EPOCH_MS WORKERS LEADERS TOPOLOGIES" or
 *                     "error EPOCH_MS WHY" (`./meridian cluster status` reads it)
 * </pre>
 * Without {@code --nimbus} the Nimbus leader is found from {@code nimbus.seeds} in storm.yaml (on the class path).
 * A file is written to a temporary name and renamed over the old one, and only when its content changed, so Prometheus
 * never reads half a file. When Nimbus does not answer, the last targets stay: the workers may well run on, and
 * Prometheus's {@code up} says whether they do.
 */
public final class TargetsDaemon {
    private static final Logger LOG = LoggerFactory.getLogger(TargetsDaemon.class);

    private final Path out;
    private final NimbusPoller.Options options;
    private String lastWorkers;
    private String lastLeaders;

    private TargetsDaemon(NimbusPoller.Options options) {
        this.out = options.path();
        this.options = options;
    }

    public static void main(String[] args) {
        new TargetsDaemon(NimbusPoller.Options.parseOrExit("targets", args, "--out", true)).run();
    }

    private void run() {
        LOG.info("polling Nimbus every {} ms, targets in {}", options.intervalMillis(), out);
        // when Nimbus does not answer, the last targets stay
        new NimbusPoller(LOG, options, out.resolve("targets.state")).run((client, conf) -> {
            Targets targets = read(client);
            write(targets);
            return targets.workers.size() + " " + targets.leaders.size() + " " + targets.topologies;
        });
    }

    /** One file_sd target group: a target address and its labels (sorted, so that equal content is equal text). */
    public record Group(String target, Map<String, String> labels) {
    }

    /** What one poll found: worker and leader daemon targets, and how many topologies were read. */
    public record Targets(List<Group> workers, List<Group> leaders, int topologies) {
    }

    /** The targets of every topology Nimbus lists, in topology id order. */
    public static Targets read(Nimbus.Iface nimbus) throws Exception {
        List<Group> workers = new ArrayList<>();
        List<Group> leaders = new ArrayList<>();
        List<TopologySummary> topologies = new ArrayList<>(nimbus.getClusterInfo().get_topologies());
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
