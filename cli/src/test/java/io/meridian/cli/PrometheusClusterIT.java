package io.meridian.cli;

import static io.meridian.cli.ClusterWait.waitFor;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.meridian.synthetic.SyntheticDataset;
import io.meridian.topology.ClusterControl;
import java.io.IOException;
import java.io.OutputStream;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;

/**
 * Issue 12 end to end on the real cluster: {@code ./meridian cluster start} runs Prometheus with the targets daemon;
 * a topology (2 workers, the live map) is submitted and fed 3000 rows through Kafka (and a few bad ones); Prometheus
 * finds the workers with no step by hand; then every query of every panel of every dashboard
 * (deploy/grafana/dashboards, template variables resolved through Prometheus's label values API) runs through
 * Prometheus's HTTP API: none may fail, and the panels of deploy/grafana/required-panels.json must return series for
 * the topology. A worker is SIGKILLed: the Supervisor restarts it, its target answers again, and the expression of the
 * alert MeridianWorkerRestarted, as Prometheus loaded it, returns the restarted worker; a rebalance onto three workers
 * gives Prometheus three targets, all answering. Per dashboard the panels and
 * their series counts, and each worker's scrape size, are printed (and written to the test's directory) for the
 * issue's closing note. The topology is killed and the cluster (Prometheus included) stopped whatever happens.
 */
class PrometheusClusterIT {
    private static final String NAME = "meridian-prom-it";
    private static final int N = 3000;
    private static final int WIDTH = 4096;
    private static final String BROKERS = "localhost:9092";
    private static final String PROMETHEUS = "http://127.0.0.1:9090";
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private static final Pattern LABEL_VALUES = Pattern.compile("label_values\\((.*), *([a-zA-Z_][a-zA-Z0-9_]*)\\)");
    /** Grafana's restart alert: a worker whose JVM started 90 s after the first of its submission (alerts.yml). */
    private static final long RESTART_AFTER_SECS = 90;

    @Test
    void prometheusScrapesTheWorkersEveryPanelQueryRunsAndAKilledWorkerFiresTheRestartAlert() throws Exception {
        Path home = Path.of(System.getenv().getOrDefault("MERIDIAN_HOME", "..")).toAbsolutePath().normalize();
        long stamp = System.currentTimeMillis();
        Path work = home.resolve("cli/target/prom-it-" + stamp);
        Files.createDirectories(work);
        SyntheticDataset blobs = SyntheticDataset.blobs(N, 8, 5, 2.0, 3);
        blobs.write(work.resolve("data"), ByteOrder.LITTLE_ENDIAN);
        Path matrix = work.resolve("data").resolve(SyntheticDataset.DISTANCES_FILE);
        String topic = "distance-rows-prom-it-" + stamp;
        Path config = work.resolve("meridian-prom-it.yaml");
        Files.writeString(config, String.format("""
                topology: {name: %s, workers: 2, ackers: 1, maxSpoutPending: 500, messageTimeoutSecs: 30, workerHeapMb: 384}
                ingest:
                  maxPoints: %d
                  kafka: {brokers: "%s", topic: %s, rejectedTopic: %s-rejected, consumerGroup: prom-it-%d, partitions: 2}
                  validation: {maxIdAhead: 1024}
                  rowStore: {directory: %s, blockRows: 64, parallelism: 2}
                map: {tasks: 2, initialPoints: 300, maxClusters: 5, snapshotDirectory: %s, topic: map-updates-prom-it-%d,
                      collectiveTimeoutMs: 10000}
                """, NAME, WIDTH, BROKERS, topic, topic, stamp, work.resolve("rowstore"), work.resolve("map"), stamp),
                StandardCharsets.UTF_8);

        Map<String, Object> report = new LinkedHashMap<>();
        try (ClusterControl cluster = ClusterControl.acquire(home, work.resolve("cluster.log"), 1800)) {
            boolean submitted = false;
            try {
                long t0 = System.nanoTime();
                cluster.start();
                report.put("cluster_start_seconds", seconds(t0));
                assertEquals(200, get(PROMETHEUS + "/-/ready").statusCode(), "Prometheus is ready after cluster start");
                JsonNode rules = api("/api/v1/rules", Map.of()).path("groups");
                assertTrue(rules.size() >= 5, "the alert rules are loaded: " + rules);

                long submittedAt = System.nanoTime();
                cluster.storm(180, "jar", SubmitCommand.topologyJar(home).toString(), SubmitCommand.MAIN,
                        "--config", config.toString());
                submitted = true;
                waitFor(Duration.ofSeconds(120), "two workers of " + NAME, () -> ClusterControl.workers(NAME).size() == 2);
                waitFor(Duration.ofSeconds(120), "Prometheus scraping both workers of " + NAME,
                        () -> value("sum(up{job=\"meridian-worker\", topology=\"" + NAME + "\"})") == 2);
                report.put("submit_to_both_targets_up_seconds", seconds(submittedAt));
                long firstStart = System.nanoTime();
                promtoolCheckConfig(home);

                CompletableFuture<Integer> feed = CompletableFuture.supplyAsync(() -> Main.run(new String[] {
                    "feed", "--distances", matrix.toString(), "--n", Integer.toString(N), "--rate", "300",
                    "--brokers", BROKERS, "--topic", topic}));
                sendBadRows(topic);
                assertEquals(0, feed.get(300, TimeUnit.SECONDS), "feed exit status");
                waitFor(Duration.ofSeconds(300), "all " + N + " rows stored (in Prometheus)", () -> value(
                        "sum(meridian_rows_stored_total{topology=\"" + NAME + "\"})") >= N);
                waitFor(Duration.ofSeconds(300), "a map frame of every row (in Prometheus)", () -> value(
                        "max(meridian_map_points{topology=\"" + NAME + "\"})") >= N);
                Thread.sleep(20_000); // four more scrapes: every rate() window of the panels holds samples of the load

                List<String> alerts = new ArrayList<>();
                for (JsonNode s : series(instant("ALERTS"))) {
                    alerts.add(s.path("metric").path("alertname").asText() + " " + s.path("metric").path("alertstate").asText()
                            + " " + s.path("metric").path("reason").asText(""));
                }
                System.out.println("IT: alerts pending or firing before the kill: " + alerts);
                report.put("alerts_before_the_kill", alerts);
                Map<String, Object> dashboards = runEveryPanel(home, submittedAt);
                report.put("dashboards", dashboards);
                report.put("scrapes", scrapeSizes());

                // a worker SIGKILLed well after its submission's first start: the restart alert must see it
                long waitMore = TimeUnit.SECONDS.toNanos(RESTART_AFTER_SECS + 15) - (System.nanoTime() - firstStart);
                if (waitMore > 0) {
                    Thread.sleep(TimeUnit.NANOSECONDS.toMillis(waitMore));
                }
                String restartExpr = ruleQuery(rules, "MeridianWorkerRestarted");
                assertTrue(series(instant(restartExpr + " and on (topology) up{topology=\"" + NAME + "\"}")).isEmpty(),
                        "no restart before the kill");
                ProcessHandle victim = ClusterControl.workers(NAME).get(0);
                int victimPort = workerPort(victim);
                long killedAt = System.nanoTime();
                assertTrue(victim.destroyForcibly(), "SIGKILL worker " + victim.pid());
                System.out.println("IT: killed worker " + victim.pid() + " (slot " + victimPort + ") with SIGKILL");
                waitFor(Duration.ofSeconds(120), "the killed worker restarted by the Supervisor",
                        () -> ClusterControl.workers(NAME).size() == 2
                                && ClusterControl.workers(NAME).stream().noneMatch(p -> p.pid() == victim.pid()));
                List<JsonNode> fired = new ArrayList<>();
                waitFor(Duration.ofSeconds(120), "the restart alert's expression returning the restarted worker", () -> {
                    fired.clear();
                    fired.addAll(series(instant(restartExpr)));
                    return fired.stream().anyMatch(s -> s.path("metric").path("topology").asText().equals(NAME));
                });
                report.put("kill_to_restart_alert_expression_seconds", seconds(killedAt));
                JsonNode restarted = fired.get(0).path("metric");
                System.out.println("IT: MeridianWorkerRestarted's expression returns " + restarted);
                waitFor(Duration.ofSeconds(60), "the alert firing in Prometheus", () -> !series(instant(
                        "ALERTS{alertname=\"MeridianWorkerRestarted\", alertstate=\"firing\", topology=\"" + NAME + "\"}"))
                        .isEmpty());
                report.put("kill_to_alert_firing_seconds", seconds(killedAt));
                waitFor(Duration.ofSeconds(120), "both targets of " + NAME + " up again",
                        () -> value("sum(up{job=\"meridian-worker\", topology=\"" + NAME + "\"})") == 2);
                report.put("kill_to_both_targets_up_seconds", seconds(killedAt));

                // a rebalance onto three workers: the targets follow Nimbus's new assignment by themselves
                long rebalancedAt = System.nanoTime();
                cluster.storm(120, "rebalance", NAME, "-w", "5", "-n", "3");
                waitFor(Duration.ofSeconds(180), "Prometheus scraping the three workers of " + NAME + " after the rebalance",
                        () -> value("sum(up{job=\"meridian-worker\", topology=\"" + NAME + "\"})") == 3
                                && value("count(up{job=\"meridian-worker\", topology=\"" + NAME + "\"})") == 3);
                report.put("rebalance_to_three_targets_up_seconds", seconds(rebalancedAt));
            } finally {
                Path out = work.resolve("prometheus-it-report.json");
                Files.writeString(out, JSON.writerWithDefaultPrettyPrinter().writeValueAsString(report));
                System.out.println("IT: report in " + out);
                if (submitted) {
                    ClusterControl.killAndAwait(NAME, Duration.ofSeconds(120), 3000);
                }
            }
        }
        assertTrue(ClusterControl.workers(NAME).isEmpty(), "no worker left behind");
        assertTrue(prometheusPids(home).isEmpty(), "no Prometheus of this cluster left: " + prometheusPids(home));
    }

    /**
     * Runs every query of every panel of every dashboard over the time since the submission (a Grafana time range),
     * variables resolved through Prometheus's label values API. Returns, per dashboard, each panel's series count.
     */
    private static Map<String, Object> runEveryPanel(Path home, long since) throws Exception {
        JsonNode required = JSON.readTree(home.resolve("deploy/grafana/required-panels.json").toFile()).path("required");
        Map<String, Object> out = new TreeMap<>();
        List<String> missing = new ArrayList<>();
        // the topology's lifetime as the time range: a same-named topology of an earlier run (Prometheus keeps its
        // data across cluster restarts) stays out of the counts
        long end = System.currentTimeMillis() / 1000;
        long start = end - Math.max(60, TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - since));
        List<Path> files;
        try (Stream<Path> list = Files.list(home.resolve("deploy/grafana/dashboards"))) {
            files = list.sorted().toList();
        }
        assertEquals(6, files.size(), "dashboards");
        StringBuilder table = new StringBuilder();
        for (Path f : files) {
            JsonNode d = JSON.readTree(f.toFile());
            String uid = d.path("uid").asText();
            Map<String, String> vars = resolveVariables(d, start, end);
            Map<String, Integer> panels = new LinkedHashMap<>();
            table.append("\n").append(d.path("title").asText()).append(" (").append(uid).append(", variables ")
                    .append(vars).append(")\n");
            List<String> requiredTitles = new ArrayList<>();
            required.path(uid).forEach(t -> requiredTitles.add(t.asText()));
            for (JsonNode p : d.path("panels")) {
                String title = p.path("title").asText();
                int count = 0;
                for (JsonNode t : p.path("targets")) {
                    String expr = substitute(t.path("expr").asText(), vars);
                    JsonNode data = api("/api/v1/query_range", Map.of("query", expr, "start", Long.toString(start),
                            "end", Long.toString(end), "step", "15"));
                    count += data.path("result").size();
                }
                boolean isRequired = requiredTitles.contains(title);
                panels.put(title, count);
                table.append(String.format("  %-45s %4d series%s%n", title, count, isRequired ? "  (required)" : ""));
                if (isRequired && count == 0) {
                    missing.add(uid + " / " + title);
                }
            }
            out.put(uid, panels);
        }
        System.out.println("IT: series per panel over the last " + (end - start) + " s:" + table);
        assertTrue(missing.isEmpty(), "required panels without data: " + missing);
        return out;
    }

    /** Each query variable from Prometheus's label values; the topology is this test's, the others all values. */
    private static Map<String, String> resolveVariables(JsonNode dashboard, long start, long end) throws Exception {
        Map<String, String> vars = new LinkedHashMap<>();
        for (JsonNode v : dashboard.path("templating").path("list")) {
            if (!v.path("type").asText().equals("query")) {
                continue;
            }
            String name = v.path("name").asText();
            Matcher m = LABEL_VALUES.matcher(v.path("query").asText());
            assertTrue(m.matches(), dashboard.path("uid") + ": $" + name + " is a label_values query");
            JsonNode values = api("/api/v1/label/" + m.group(2) + "/values", Map.of("match[]",
                    substitute(m.group(1), vars), "start", Long.toString(start), "end", Long.toString(end)));
            List<String> all = new ArrayList<>();
            values.forEach(x -> all.add(x.asText()));
            assertFalse(all.isEmpty(), dashboard.path("uid") + ": $" + name + " has no values");
            if (name.equals("topology")) {
                assertTrue(all.contains(NAME), "$topology lists " + NAME + ": " + all);
                vars.put(name, NAME);
            } else {
                vars.put(name, "(" + String.join("|", all.stream().map(PrometheusClusterIT::regexQuote).toList()) + ")");
            }
        }
        return vars;
    }

    private static String substitute(String expr, Map<String, String> vars) {
        String out = expr;
        for (Map.Entry<String, String> v : vars.entrySet()) {
            out = out.replace("${" + v.getKey() + "}", v.getValue()).replace("$" + v.getKey(), v.getValue());
        }
        assertFalse(out.contains("$"), "a variable left unresolved in " + out);
        return out;
    }

    private static String regexQuote(String value) {
        return value.replaceAll("([\\\\.+*?()|\\[\\]{}^$])", "\\\\\\\\$1");
    }

    /** Per worker target: bytes and series of one scrape (fetched here), and what Prometheus counted. */
    private static Map<String, Object> scrapeSizes() throws Exception {
        Map<String, Object> out = new TreeMap<>();
        for (JsonNode t : api("/api/v1/targets", Map.of("state", "active")).path("activeTargets")) {
            if (!t.path("labels").path("job").asText().equals("meridian-worker")) {
                continue;
            }
            String url = t.path("scrapeUrl").asText();
            HttpResponse<String> r = get(url);
            assertEquals(200, r.statusCode(), url);
            String body = r.body();
            long series = body.lines().filter(l -> !l.isBlank() && !l.startsWith("#")).count();
            String instance = t.path("labels").path("instance").asText();
            double samples = value("scrape_samples_scraped{job=\"meridian-worker\", instance=\"" + instance + "\"}");
            double duration = value("scrape_duration_seconds{job=\"meridian-worker\", instance=\"" + instance + "\"}");
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("bytes", body.getBytes(StandardCharsets.UTF_8).length);
            m.put("series", series);
            m.put("prometheus_samples_scraped", samples);
            m.put("prometheus_scrape_seconds", duration);
            out.put(instance, m);
            Map<String, Integer> families = new TreeMap<>();
            body.lines().filter(l -> !l.isBlank() && !l.startsWith("#"))
                    .forEach(l -> families.merge(l.split("[{ ]", 2)[0].replaceAll("_(bucket|count|sum)$", ""), 1, Integer::sum));
            List<String> largest = families.entrySet().stream().sorted((x, y) -> y.getValue() - x.getValue()).limit(8)
                    .map(e -> e.getKey() + " " + e.getValue()).toList();
            m.put("largest_families", largest);
            System.out.printf("IT: scrape of %s: %d bytes, %d series (Prometheus: %.0f samples in %.3f s); %d families,"
                    + " the largest %s%n", url, body.getBytes(StandardCharsets.UTF_8).length, series, samples, duration,
                    families.size(), largest);
            promtoolCheckMetrics(body, url);
        }
        assertEquals(2, out.size(), "two worker targets: " + out);
        return out;
    }

    private static void promtoolCheckMetrics(String text, String url) throws IOException, InterruptedException {
        Process p = new ProcessBuilder("promtool", "check", "metrics").redirectErrorStream(true).start();
        try (OutputStream in = p.getOutputStream()) {
            in.write(text.getBytes(StandardCharsets.UTF_8));
        }
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "promtool check metrics finished");
        assertEquals(0, p.exitValue(), "promtool check metrics on " + url + ": " + out);
        assertEquals("", out.strip(), "promtool check metrics on " + url + " found problems");
    }

    /** promtool check config on what cluster start rendered, with the target files the targets daemon wrote. */
    private static void promtoolCheckConfig(Path home) throws Exception {
        String dir = System.getenv("MERIDIAN_CLUSTER_DIR");
        Path yml = (dir != null ? Path.of(dir) : home.resolve(".meridian/cluster")).resolve("conf/prometheus.yml");
        Process p = new ProcessBuilder("promtool", "check", "config", yml.toString()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS));
        assertEquals(0, p.exitValue(), out);
        assertFalse(out.contains("WARNING"), out);
        String workers = Files.readString(yml.resolveSibling("targets/workers.json"));
        assertTrue(workers.contains("\"topology\": \"" + NAME + "\""), "workers.json lists " + NAME + ":\n" + workers);
    }

    /** A few rows the validation refuses, for the dead-letter panels and the reject counters. */
    private static void sendBadRows(String topic) throws Exception {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, BROKERS);
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        try (KafkaProducer<String, byte[]> producer = new KafkaProducer<>(p, new StringSerializer(), new ByteArraySerializer())) {
            for (int i = 0; i < 5; i++) {
                producer.send(new ProducerRecord<>(topic, "bad", ("garbage " + i).getBytes(StandardCharsets.UTF_8)))
                        .get(30, TimeUnit.SECONDS);
            }
        }
    }

    /** The expression of alert {@code name} as Prometheus loaded it. */
    private static String ruleQuery(JsonNode groups, String name) {
        for (JsonNode g : groups) {
            for (JsonNode r : g.path("rules")) {
                if (r.path("name").asText().equals(name)) {
                    return r.path("query").asText();
                }
            }
        }
        return fail("Prometheus has no rule " + name);
    }

    private static JsonNode instant(String query) throws Exception {
        return api("/api/v1/query", Map.of("query", query));
    }

    private static List<JsonNode> series(JsonNode data) {
        List<JsonNode> out = new ArrayList<>();
        data.path("result").forEach(out::add);
        return out;
    }

    /** The first sample of an instant query, or NaN when it returns nothing. */
    private static double value(String query) throws Exception {
        JsonNode result = instant(query).path("result");
        return result.isEmpty() ? Double.NaN : Double.parseDouble(result.get(0).path("value").get(1).asText());
    }

    /** {@code data} of a Prometheus API call; fails with Prometheus's error (a query that does not parse, ...). */
    private static JsonNode api(String path, Map<String, String> params) throws Exception {
        StringBuilder body = new StringBuilder();
        params.forEach((k, v) -> body.append(body.length() == 0 ? "" : "&").append(URLEncoder.encode(k, StandardCharsets.UTF_8))
                .append('=').append(URLEncoder.encode(v, StandardCharsets.UTF_8)));
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(PROMETHEUS + path + (params.isEmpty() ? "" : "?" + body)))
                .timeout(Duration.ofSeconds(30));
        HttpResponse<String> r = HTTP.send(request.GET().build(), HttpResponse.BodyHandlers.ofString());
        JsonNode json = JSON.readTree(r.body());
        assertEquals("success", json.path("status").asText(), path + " " + params + " failed (HTTP " + r.statusCode()
                + "): " + json.path("errorType").asText() + ": " + json.path("error").asText());
        assertTrue(json.path("warnings").isMissingNode() || json.path("warnings").isEmpty(),
                path + " " + params + " warns: " + json.path("warnings"));
        return json.path("data");
    }

    private static HttpResponse<String> get(String url) throws Exception {
        return HTTP.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(30)).GET().build(),
                HttpResponse.BodyHandlers.ofString());
    }

    private static double seconds(long sinceNanos) {
        return Math.round((System.nanoTime() - sinceNanos) / 1e8) / 10.0;
    }

    /** A worker's slot port from its command line: Worker topology-id supervisor-id supervisor-port port worker-id. */
    private static int workerPort(ProcessHandle p) {
        List<String> args = ClusterControl.commandLine(p.pid());
        int main = args.indexOf("org.apache.storm.daemon.worker.Worker");
        return main >= 0 && main + 4 < args.size() ? Integer.parseInt(args.get(main + 4)) : -1;
    }

    /** Processes whose argv[0] is this cluster's Prometheus marker. */
    private static List<Long> prometheusPids(Path home) {
        String dir = System.getenv().getOrDefault("MERIDIAN_CLUSTER_DIR", home.resolve(".meridian/cluster").toString());
        String marker = "-Dmeridian.cluster.daemon=prometheus@" + dir;
        List<Long> out = new ArrayList<>();
        ProcessHandle.allProcesses().forEach(p -> {
            if (ClusterControl.commandLine(p.pid()).contains(marker)) {
                out.add(p.pid());
            }
        });
        return out;
    }
}
