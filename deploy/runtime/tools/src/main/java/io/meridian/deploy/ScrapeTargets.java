package io.meridian.deploy;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import org.apache.storm.generated.ExecutorSummary;
import org.apache.storm.generated.GetInfoOptions;
import org.apache.storm.generated.Nimbus;
import org.apache.storm.generated.NotAliveException;
import org.apache.storm.generated.NumErrorsChoice;
import org.apache.storm.generated.TopologyInfo;
import org.apache.storm.generated.TopologySummary;
import org.apache.storm.utils.NimbusClient;
import org.apache.storm.utils.Utils;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The cluster's {@code targets} daemon: keeps Prometheus's scrape targets equal to what runs. Every few seconds it
 * reads each topology's assignment from Nimbus and writes two {@code file_sd} target files, which Prometheus re-reads
 * when they change, so targets follow submissions, kills, rebalances and workers restarted in another slot with no
 * step by hand.
 *
 * <pre>
 * ScrapeTargets --out DIR [--interval SECONDS] [--nimbus HOST:PORT]
 *   DIR/workers.json  one target per worker: HOST:(slot port + the topology's meridian.metrics.port.offset, 1000 by
 *                     default), labels topology, topology_id, host, port (the slot)
 *   DIR/leaders.json  one target per host of a live map spread over several hosts (only then does map task 0 start
 *                     leader daemons): HOST:(the lowest slot port of the map's workers on that host +
 *                     meridian.metrics.leader.port.offset, 1100 by default), labels topology, topology_id, host
 *   DIR/targets.state one line, rewritten after every poll: "ok EPOCH_MS WORKERS LEADERS TOPOLOGIES" or
 *                     "error EPOCH_MS WHY" (deploy/bin/meridian-cluster status reads it)
 * </pre>
 * Without {@code --nimbus} the Nimbus leader is found from {@code nimbus.seeds} in storm.yaml (on the classpath).
 * Files are written to a temporary name and renamed over the old one, and only when their content changed, so
 * Prometheus never reads half a file. When Nimbus does not answer, the last targets stay: the workers may well run on,
 * and Prometheus's {@code up} says whether they do.
 */
public final class ScrapeTargets {
    /** The worker endpoint's offset from its slot port, in the topology's conf (the exporter reads the same key). */
    static final String WORKER_OFFSET_KEY = "meridian.metrics.port.offset";
    static final int WORKER_OFFSET_DEFAULT = 1000;
    /** The leader daemon endpoint's offset from the lowest slot port of the map's workers on its host. */
    static final String LEADER_OFFSET_KEY = "meridian.metrics.leader.port.offset";
    static final int LEADER_OFFSET_DEFAULT = 1100;
    /** The live map's component id (io.meridian.stream.live.MapStreams.MAP, which this runtime does not depend on). */
    static final String MAP_COMPONENT = "live-map";

    private static final Logger LOG = LoggerFactory.getLogger(ScrapeTargets.class);
    private static final int ANSWER_TIMEOUT_MS = 5000;

    private final Path out;
    private final long intervalMillis;
    private final String nimbus;
    private String lastWorkers;
    private String lastLeaders;
    /** The last poll's failure, logged once (not every interval while Nimbus is down); null after a good poll. */
    private String lastError;

    private ScrapeTargets(Path out, long intervalMillis, String nimbus) {
        this.out = out;
        this.intervalMillis = intervalMillis;
        this.nimbus = nimbus;
    }

    public static void main(String[] args) {
        ScrapeTargets daemon;
        try {
            daemon = parse(args);
            Files.createDirectories(daemon.out);
        } catch (IllegalArgumentException | IOException e) {
            System.err.println("scrape targets: " + e.getMessage());
            System.exit(2);
            return;
        }
        daemon.run();
    }

    static ScrapeTargets parse(String[] args) {
        Path out = null;
        long interval = 5000;
        String nimbus = null;
        for (int i = 0; i < args.length; i += 2) {
            if (i + 1 >= args.length) {
                throw new IllegalArgumentException("option " + args[i] + " needs a value"
                        + " (usage: ScrapeTargets --out DIR [--interval SECONDS] [--nimbus HOST:PORT])");
            }
            String value = args[i + 1];
            switch (args[i]) {
                case "--out" -> out = Path.of(value);
                case "--interval" -> {
                    try {
                        interval = Math.round(Double.parseDouble(value) * 1000);
                    } catch (NumberFormatException e) {
                        interval = -1;
                    }
                    if (interval < 100 || interval > 3_600_000) {
                        throw new IllegalArgumentException("--interval wants seconds in [0.1, 3600], not '" + value + "'");
                    }
                }
                case "--nimbus" -> nimbus = value;
                default -> throw new IllegalArgumentException("unknown option " + args[i]
                        + " (usage: ScrapeTargets --out DIR [--interval SECONDS] [--nimbus HOST:PORT])");
            }
        }
        if (out == null) {
            throw new IllegalArgumentException("--out DIR is missing (where workers.json and leaders.json go)");
        }
        if (nimbus != null && !nimbus.matches("[^:]+:\\d{1,5}")) {
            throw new IllegalArgumentException("--nimbus wants HOST:PORT, not '" + nimbus + "'");
        }
        return new ScrapeTargets(out, interval, nimbus);
    }

    private void run() {
        Map<String, Object> conf = Utils.readStormConfig();
        NimbusClient client = null;
        log("polling Nimbus every " + intervalMillis + " ms, targets in " + out);
        while (true) {
            long started = System.nanoTime();
            try {
                if (client == null) {
                    client = connect(conf);
                }
                Targets targets = read(client.getClient());
                write(targets);
                writeState("ok " + System.currentTimeMillis() + " " + targets.workers.size() + " "
                        + targets.leaders.size() + " " + targets.topologies);
                if (lastError != null) {
                    log("Nimbus answers again");
                    lastError = null;
                }
            } catch (Exception e) {
                // a Nimbus restarting, a leader change: connect again at the next poll, keep the last targets
                if (client != null) {
                    client.close();
                    client = null;
                }
                String why = "Nimbus " + (nimbus == null ? "(nimbus.seeds)" : nimbus) + " did not answer: " + rootMessage(e);
                writeState("error " + System.currentTimeMillis() + " " + why);
                if (!why.equals(lastError)) {
                    log(why + " (the last targets stay; trying again every " + intervalMillis + " ms)");
                }
                lastError = why;
            }
            long left = intervalMillis - TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
            if (left > 0) {
                try {
                    Thread.sleep(left);
                } catch (InterruptedException e) {
                    return;
                }
            }
        }
    }

    private NimbusClient connect(Map<String, Object> conf) throws Exception {
        if (nimbus == null) {
            return NimbusClient.getConfiguredClient(conf, ANSWER_TIMEOUT_MS);
        }
        int colon = nimbus.lastIndexOf(':');
        return new NimbusClient(conf, nimbus.substring(0, colon), Integer.parseInt(nimbus.substring(colon + 1)),
                ANSWER_TIMEOUT_MS);
    }

    /** One file_sd target group: a target address and its labels (sorted, so that equal content is equal text). */
    record Group(String target, Map<String, String> labels) {
    }

    record Targets(List<Group> workers, List<Group> leaders, int topologies) {
    }

    static Targets read(Nimbus.Iface nimbus) throws Exception {
        List<Group> workers = new ArrayList<>();
        List<Group> leaders = new ArrayList<>();
        List<TopologySummary> topologies = new ArrayList<>(nimbus.getClusterInfo().get_topologies());
        topologies.sort((a, b) -> a.get_id().compareTo(b.get_id()));
        GetInfoOptions noErrors = new GetInfoOptions();
        noErrors.set_num_err_choice(NumErrorsChoice.NONE);
        int listed = 0;
        for (TopologySummary t : topologies) {
            TopologyInfo info;
            Map<String, Object> topoConf;
            try {
                info = nimbus.getTopologyInfoWithOpts(t.get_id(), noErrors);
                topoConf = Utils.parseJson(nimbus.getTopologyConf(t.get_id()));
            } catch (NotAliveException e) {
                continue; // killed between the two calls
            }
            listed++;
            add(t.get_name(), t.get_id(), info.get_executors(), topoConf, workers, leaders);
        }
        return new Targets(workers, leaders, listed);
    }

    /** The targets of one topology from its executors (each names its worker's host and slot port). */
    static void add(String name, String id, List<ExecutorSummary> executors, Map<String, Object> topoConf,
                    List<Group> workers, List<Group> leaders) {
        int workerOffset = offset(topoConf, WORKER_OFFSET_KEY, WORKER_OFFSET_DEFAULT);
        int leaderOffset = offset(topoConf, LEADER_OFFSET_KEY, LEADER_OFFSET_DEFAULT);
        Map<String, TreeSet<Integer>> slots = new TreeMap<>();
        Map<String, TreeSet<Integer>> mapSlots = new TreeMap<>();
        for (ExecutorSummary e : executors) {
            slots.computeIfAbsent(e.get_host(), h -> new TreeSet<>()).add(e.get_port());
            if (MAP_COMPONENT.equals(e.get_component_id())) {
                mapSlots.computeIfAbsent(e.get_host(), h -> new TreeSet<>()).add(e.get_port());
            }
        }
        for (Map.Entry<String, TreeSet<Integer>> host : slots.entrySet()) {
            for (int port : host.getValue()) {
                Map<String, String> labels = new TreeMap<>();
                labels.put("topology", name);
                labels.put("topology_id", id);
                labels.put("host", host.getKey());
                labels.put("port", Integer.toString(port));
                workers.add(new Group(host.getKey() + ":" + (port + workerOffset), labels));
            }
        }
        if (mapSlots.size() > 1) {
            for (Map.Entry<String, TreeSet<Integer>> host : mapSlots.entrySet()) {
                Map<String, String> labels = new TreeMap<>();
                labels.put("topology", name);
                labels.put("topology_id", id);
                labels.put("host", host.getKey());
                leaders.add(new Group(host.getKey() + ":" + (host.getValue().first() + leaderOffset), labels));
            }
        }
    }

    /** A port offset from the topology's conf: a number, or a string of one (a YAML config may give either). */
    static int offset(Map<String, Object> topoConf, String key, int fallback) {
        Object value = topoConf.get(key);
        if (value == null) {
            return fallback;
        }
        try {
            int offset = value instanceof Number n ? n.intValue() : Integer.parseInt(value.toString().trim());
            return offset > 0 && offset < 65536 ? offset : fallback;
        } catch (NumberFormatException e) {
            return fallback;
        }
    }

    /** file_sd JSON: [{"targets": ["HOST:PORT"], "labels": {...}}, ...], one group per line. */
    static String json(List<Group> groups) {
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
        String workers = json(targets.workers);
        String leaders = json(targets.leaders);
        if (!workers.equals(lastWorkers) || !Files.exists(out.resolve("workers.json"))) {
            replace(out.resolve("workers.json"), workers);
            log("workers: " + targets.workers.stream().map(Group::target).toList());
            lastWorkers = workers;
        }
        if (!leaders.equals(lastLeaders) || !Files.exists(out.resolve("leaders.json"))) {
            replace(out.resolve("leaders.json"), leaders);
            log("leader daemons: " + targets.leaders.stream().map(Group::target).toList());
            lastLeaders = leaders;
        }
    }

    private void writeState(String line) {
        try {
            replace(out.resolve("targets.state"), line + "\n");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Temporary file in the same directory, then a rename over the old one: readers see the old or the new file. */
    static void replace(Path file, String text) throws IOException {
        Path tmp = file.resolveSibling("." + file.getFileName() + ".tmp");
        Files.writeString(tmp, text, StandardCharsets.UTF_8);
        try {
            Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (AtomicMoveNotSupportedException e) {
            Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING);
        }
    }

    private static void log(String line) {
        LOG.info(line);
    }

    private static String rootMessage(Throwable e) {
        Throwable root = e;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        String message = root.getMessage();
        return root.getClass().getSimpleName() + (message == null ? "" : ": " + message.lines().findFirst().orElse(""));
    }
}
