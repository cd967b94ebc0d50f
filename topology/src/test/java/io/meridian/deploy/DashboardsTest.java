package io.meridian.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The Grafana dashboards (deploy/grafana/dashboards/) as files: the six dashboards, template variables for topology,
 * host and component that the queries use, every panel with a unit, a description that says what to do and queries;
 * no rate() over a gauge and no deriv() over a counter; the panels marked required exist; the provisioning files
 * point at them. Their types are checked by {@link DashboardSchemaTest}, their queries against a real Prometheus by
 * io.meridian.cli.PrometheusClusterIT.
 */
class DashboardsTest {
    static final Path GRAFANA = Run.home().resolve("deploy/grafana");
    private static final List<String> UIDS = List.of("meridian-overview", "meridian-storm", "meridian-transport",
            "meridian-collectives", "meridian-live-map", "meridian-jvm");
    /** Counters, and the cumulative parts of histograms and summaries: what rate() and increase() are for. */
    private static final Pattern COUNTER = Pattern.compile(".*(_total|_count|_sum|_bucket)");
    private static final Pattern COUNTER_FUNCTION = Pattern.compile("\\b(rate|irate|increase|resets)\\s*\\(");
    private static final Pattern GAUGE_FUNCTION = Pattern.compile("\\b(deriv|delta|idelta|predict_linear)\\s*\\(");
    private static final Pattern METRIC_ARGUMENT = Pattern.compile("\\s*([a-zA-Z_:][a-zA-Z0-9_:]*)\\s*[{\\[]");
    private static final Pattern VARIABLE = Pattern.compile("\\$\\{?([a-zA-Z_][a-zA-Z0-9_]*)");

    @Test
    void theSixDashboardsWithTheirVariables() throws IOException {
        Map<String, JsonNode> all = dashboards();
        assertEquals(new TreeSet<>(UIDS), new TreeSet<>(all.keySet()));
        for (JsonNode d : all.values()) {
            String uid = d.path("uid").asText();
            assertTrue(d.path("title").asText().startsWith("Meridian / "), uid + ": title " + d.path("title"));
            assertTrue(d.path("tags").toString().contains("\"meridian\""), uid + ": tag meridian (the dashboards' links)");
            Map<String, JsonNode> vars = variables(d);
            assertEquals("datasource", vars.get("datasource").path("type").asText(), uid + ": a datasource variable");
            assertTrue(vars.containsKey("topology"), uid + ": a topology variable");
            if (!uid.equals("meridian-live-map")) {
                assertTrue(vars.containsKey("host"), uid + ": a host variable");
            }
            if (uid.equals("meridian-storm")) {
                assertTrue(vars.containsKey("component"), uid + ": a component variable");
            }
            Set<String> used = new HashSet<>();
            for (String expr : exprs(d)) {
                Matcher m = VARIABLE.matcher(expr);
                while (m.find()) {
                    used.add(m.group(1));
                    assertTrue(vars.containsKey(m.group(1)), uid + ": $" + m.group(1) + " is not a variable: " + expr);
                }
            }
            for (Map.Entry<String, JsonNode> v : vars.entrySet()) {
                if (v.getValue().path("type").asText().equals("query")) {
                    assertTrue(v.getValue().path("query").asText().matches("label_values\\(.+, *" + v.getKey() + "\\)"),
                            uid + ": $" + v.getKey() + " from Prometheus's label values: " + v.getValue().path("query"));
                    assertTrue(used.contains(v.getKey()), uid + ": $" + v.getKey() + " is used by no query");
                }
            }
        }
    }

    @Test
    void everyPanelHasAUnitADescriptionThatSaysWhatToDoAndQueries() throws IOException {
        for (JsonNode d : dashboards().values()) {
            String uid = d.path("uid").asText();
            Set<String> titles = new HashSet<>();
            assertTrue(d.path("panels").size() >= 6, uid + ": panels");
            for (JsonNode p : d.path("panels")) {
                String where = uid + " / " + p.path("title").asText();
                assertTrue(titles.add(p.path("title").asText()), where + ": titles are unique");
                assertFalse(p.path("fieldConfig").path("defaults").path("unit").asText().isBlank(), where + ": a unit");
                assertTrue(p.path("description").asText().length() > 80, where + ": a description of what to do");
                assertEquals("${datasource}", p.path("datasource").path("uid").asText(), where + ": the datasource variable");
                assertTrue(p.path("targets").size() > 0, where + ": queries");
                Set<String> refs = new HashSet<>();
                for (JsonNode t : p.path("targets")) {
                    assertFalse(t.path("expr").asText().isBlank(), where + ": an expression");
                    assertTrue(refs.add(t.path("refId").asText()), where + ": refIds are unique");
                }
            }
        }
    }

    @Test
    void noRateOverAGaugeAndNoDerivOverACounter() throws IOException {
        int checked = 0;
        for (JsonNode d : dashboards().values()) {
            for (String expr : exprs(d)) {
                checked += check(expr, COUNTER_FUNCTION, true) + check(expr, GAUGE_FUNCTION, false);
                Matcher quantile = Pattern.compile("histogram_quantile\\(([^,]+), *sum by \\(([^)]*)\\) \\(rate\\("
                        + "([a-z_:]+)\\{").matcher(expr);
                int quantiles = expr.split("histogram_quantile\\(", -1).length - 1;
                for (int i = 0; i < quantiles; i++) {
                    assertTrue(quantile.find(), "histogram_quantile over a sum of bucket rates: " + expr);
                    assertTrue(List.of(quantile.group(2).split(", *")).contains("le"), "summed by le: " + expr);
                    assertTrue(quantile.group(3).endsWith("_bucket"), "over _bucket series: " + expr);
                }
            }
        }
        for (Map<String, Object> rule : AlertRulesTest.alerts().values()) {
            String expr = String.valueOf(rule.get("expr"));
            checked += check(expr, COUNTER_FUNCTION, true) + check(expr, GAUGE_FUNCTION, false);
        }
        assertTrue(checked > 50, "function calls checked: " + checked);
    }

    @Test
    void everyMetricQueriedIsInTheCatalogueOrProposed() throws IOException {
        String catalogue = Files.readString(Run.home().resolve("docs/metrics.md"));
        Set<String> listed = new TreeSet<>();
        Matcher names = Pattern.compile("`((meridian|storm|jvm|process)_[a-z0-9_]+)").matcher(catalogue);
        while (names.find()) {
            listed.add(names.group(1));
        }
        List<String> exprs = new ArrayList<>();
        for (JsonNode d : dashboards().values()) {
            exprs.addAll(exprs(d));
        }
        AlertRulesTest.alerts().values().forEach(r -> exprs.add(String.valueOf(r.get("expr"))));
        Set<String> unknown = new TreeSet<>();
        for (String expr : exprs) {
            Matcher used = Pattern.compile("\\b((meridian|storm|jvm|process)_[a-z0-9_]+)").matcher(expr);
            while (used.find()) {
                String name = used.group(1);
                String base = name.replaceAll("_(bucket|sum|count)$", "");
                // the JVM's and the process's are the Prometheus client's own (docs/metrics.md names a few)
                if (!listed.contains(name) && !listed.contains(base) && !PROPOSED.contains(name)
                        && !name.startsWith("jvm_") && !name.startsWith("process_")) {
                    unknown.add(name);
                }
            }
        }
        assertEquals(Set.of(), unknown, "metrics queried but not in docs/metrics.md (or proposed here)");
    }

    /**
     * Names the dashboards and alerts use before the exporter has them (proposed in the issue's report): the free
     * and total bytes of the tmpfs the transport's queues and the collectives' regions live in, per worker.
     */
    private static final Set<String> PROPOSED = Set.of("meridian_shm_available_bytes", "meridian_shm_size_bytes");

    /** Every call of {@code functions} in {@code expr} takes a metric whose name is (or is not) a counter's. */
    private static int check(String expr, Pattern functions, boolean counter) {
        int n = 0;
        Matcher f = functions.matcher(expr);
        while (f.find()) {
            Matcher arg = METRIC_ARGUMENT.matcher(expr).region(f.end(), expr.length());
            assertTrue(arg.lookingAt(), f.group(1) + "() over something other than a metric selector: " + expr);
            assertEquals(counter, COUNTER.matcher(arg.group(1)).matches(), f.group(1) + "() over "
                    + (counter ? "a gauge" : "a counter") + " (" + arg.group(1) + "): " + expr);
            n++;
        }
        return n;
    }

    @Test
    void thePanelsMarkedRequiredExistAndEveryDashboardHasSome() throws IOException {
        Map<String, JsonNode> all = dashboards();
        JsonNode required = new ObjectMapper().readTree(GRAFANA.resolve("required-panels.json").toFile()).path("required");
        assertEquals(new TreeSet<>(all.keySet()), fieldNames(required));
        for (Map.Entry<String, JsonNode> d : all.entrySet()) {
            Set<String> titles = new HashSet<>();
            d.getValue().path("panels").forEach(p -> titles.add(p.path("title").asText()));
            assertTrue(required.path(d.getKey()).size() > 0, d.getKey() + ": required panels");
            for (JsonNode t : required.path(d.getKey())) {
                assertTrue(titles.contains(t.asText()), d.getKey() + " has no panel '" + t.asText() + "'");
            }
        }
    }

    @Test
    void theProvisioningFilesPointAtTheDashboardsAndTheirDatasource() throws IOException {
        Map<String, Object> ds = AlertRulesTest.yaml(GRAFANA.resolve("provisioning/datasources/meridian.yml"));
        Map<String, Object> source = AlertRulesTest.map(((List<?>) ds.get("datasources")).get(0));
        assertEquals("prometheus", source.get("type"));
        assertEquals("http://127.0.0.1:9090", source.get("url"), "the cluster's default MERIDIAN_PROMETHEUS_LISTEN");
        for (JsonNode d : dashboards().values()) {
            assertEquals(source.get("uid"), variables(d).get("datasource").path("current").path("value").asText(),
                    d.path("uid") + ": its datasource defaults to the provisioned one");
        }
        Map<String, Object> dash = AlertRulesTest.yaml(GRAFANA.resolve("provisioning/dashboards/meridian.yml"));
        Map<String, Object> provider = AlertRulesTest.map(((List<?>) dash.get("providers")).get(0));
        assertEquals("file", provider.get("type"));
        assertEquals("$MERIDIAN_HOME/deploy/grafana/dashboards", AlertRulesTest.map(provider.get("options")).get("path"));
    }

    /** uid -> dashboard, from deploy/grafana/dashboards/UID.json. */
    static Map<String, JsonNode> dashboards() throws IOException {
        Map<String, JsonNode> out = new LinkedHashMap<>();
        try (Stream<Path> files = Files.list(GRAFANA.resolve("dashboards"))) {
            for (Path f : files.sorted().toList()) {
                JsonNode d = new ObjectMapper().readTree(f.toFile());
                String uid = d.path("uid").asText();
                assertEquals(f.getFileName().toString(), uid + ".json", "a dashboard's file is named by its uid");
                out.put(uid, d);
            }
        }
        return out;
    }

    static Map<String, JsonNode> variables(JsonNode dashboard) {
        Map<String, JsonNode> out = new LinkedHashMap<>();
        dashboard.path("templating").path("list").forEach(v -> out.put(v.path("name").asText(), v));
        assertNotNull(out.get("datasource"), dashboard.path("uid") + ": a datasource variable");
        return out;
    }

    static List<String> exprs(JsonNode dashboard) {
        List<String> out = new ArrayList<>();
        for (JsonNode p : dashboard.path("panels")) {
            p.path("targets").forEach(t -> out.add(t.path("expr").asText()));
        }
        return out;
    }

    private static Set<String> fieldNames(JsonNode node) {
        Set<String> out = new TreeSet<>();
        node.fieldNames().forEachRemaining(out::add);
        return out;
    }
}
