package io.meridian.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.meridian.topology.TargetsDaemon;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What {@code ./meridian cluster start} gives Prometheus, rendered by {@code ./meridian cluster config} (the same
 * render, nothing started) into a scratch cluster directory: a config promtool accepts with the alert rules, the
 * two file_sd jobs and the targets daemon's probe of the cluster's daemons, the same jobs on one host and on the
 * Prometheus host of three, bad settings refused in one line,
 * and a broken alert rule failing the render with promtool's reason.
 */
class PrometheusConfigTest {
    private static final Path HOME = Run.home();

    @TempDir
    Path dir;

    @Test
    void theSingleHostDefaultsRenderAConfigPromtoolAcceptsWithTargetsOnThreeHosts() throws IOException {
        Run config = config(HOME, Map.of());
        assertEquals(0, config.code(), config.output());
        Path yml = dir.resolve("conf/prometheus.yml");
        assertTrue(config.output().contains("### " + yml), "config prints prometheus.yml:\n" + config.output());
        Map<String, Object> prometheus = AlertRulesTest.yaml(yml);
        Map<String, Object> global = AlertRulesTest.map(prometheus.get("global"));
        assertEquals("5s", global.get("scrape_interval"));
        assertEquals("5s", global.get("evaluation_interval"));
        assertEquals(List.of(HOME.resolve("deploy/prometheus/alerts.yml").toString()), prometheus.get("rule_files"));
        Map<String, Map<String, Object>> jobs = jobs(prometheus);
        assertEquals(List.of("prometheus", "meridian-worker", "meridian-leader", "meridian-daemons"),
                List.copyOf(jobs.keySet()));
        assertEquals(List.of(Map.of("targets", List.of("127.0.0.1:9090"))), jobs.get("prometheus").get("static_configs"));
        assertEquals(List.of(Map.of("targets", List.of("127.0.0.1:9098"))),
                jobs.get("meridian-daemons").get("static_configs"), "the targets daemon's probe, on this host");
        assertEquals(true, jobs.get("meridian-worker").get("honor_labels"), "the exporter's own labels win");
        assertEquals(List.of(dir.resolve("conf/targets/workers.json").toString()), files(jobs.get("meridian-worker")));
        assertEquals(List.of(dir.resolve("conf/targets/leaders.json").toString()), files(jobs.get("meridian-leader")));
        for (String f : List.of("workers.json", "leaders.json")) {
            assertEquals("[]", Files.readString(dir.resolve("conf/targets/" + f)).strip(), "no targets before Nimbus is read");
        }

        // target files as the targets daemon writes them (TargetsDaemon.fileSd), for workers on three hosts
        List<TargetsDaemon.Group> workers = new ArrayList<>();
        for (int h = 1; h <= 3; h++) {
            for (int slot = 6700; slot <= 6701; slot++) {
                workers.add(new TargetsDaemon.Group("node" + h + ".example:" + (slot + 1000), new TreeMap<>(Map.of(
                        "topology", "meridian", "topology_id", "meridian-1-1700000000", "host", "node" + h + ".example",
                        "port", Integer.toString(slot)))));
            }
        }
        Files.writeString(dir.resolve("conf/targets/workers.json"), TargetsDaemon.fileSd(workers), StandardCharsets.UTF_8);
        Files.writeString(dir.resolve("conf/targets/leaders.json"), TargetsDaemon.fileSd(List.of(new TargetsDaemon.Group(
                "node1.example:7800", new TreeMap<>(Map.of("topology", "meridian", "topology_id", "meridian-1-1700000000",
                        "host", "node1.example"))))), StandardCharsets.UTF_8);
        Run check = Run.of(HOME, Map.of(), Duration.ofMinutes(1),
                List.of(Run.tool("promtool", "deploy/install/40-prometheus.sh"), "check", "config", yml.toString()));
        assertEquals(0, check.code(), check.output());
        assertFalse(check.output().contains("WARNING"), check.output());
        assertTrue(check.output().contains("SUCCESS: " + AlertRulesTest.alerts().size() + " rules found"), check.output());
    }

    @Test
    void thePrometheusHostOfThreeRendersTheSameJobsAndTheOtherHostsNone() throws IOException {
        Run one = config(HOME, Map.of());
        assertEquals(0, one.code(), one.output());
        Map<String, Map<String, Object>> single = jobs(AlertRulesTest.yaml(dir.resolve("conf/prometheus.yml")));
        Files.delete(dir.resolve("conf/prometheus.yml"));

        Run node1 = config(HOME, Map.of("MERIDIAN_CLUSTER_CONF", HOME.resolve("deploy/conf/multi-host/node1.conf").toString()));
        assertEquals(0, node1.code(), node1.output());
        Map<String, Map<String, Object>> three = jobs(AlertRulesTest.yaml(dir.resolve("conf/prometheus.yml")));
        assertEquals(single, three, "the same scrape jobs: the hosts come from Nimbus, not from the config");
        Files.delete(dir.resolve("conf/prometheus.yml"));

        Run node2 = config(HOME, Map.of("MERIDIAN_CLUSTER_CONF", HOME.resolve("deploy/conf/multi-host/node2.conf").toString()));
        assertEquals(0, node2.code(), node2.output());
        assertFalse(node2.output().contains("prometheus.yml"), "node2 has no prometheus role:\n" + node2.output());
        assertFalse(Files.exists(dir.resolve("conf/prometheus.yml")));
    }

    @Test
    void badSettingsAreRefusedInOneLineNamingTheSetting() {
        Map<String, String> cases = new LinkedHashMap<>();
        cases.put("MERIDIAN_PROMETHEUS_LISTEN", "9090");
        cases.put("MERIDIAN_PROMETHEUS_SCRAPE_INTERVAL", "5");
        cases.put("MERIDIAN_PROMETHEUS_RETENTION", "forever");
        cases.put("MERIDIAN_TARGETS_INTERVAL", "often");
        cases.put("MERIDIAN_TARGETS_METRICS_LISTEN", "9098");
        cases.put("MERIDIAN_CLUSTER_ROLES", "grafana");
        for (Map.Entry<String, String> c : cases.entrySet()) {
            Run run = config(HOME, Map.of(c.getKey(), c.getValue()));
            assertEquals(2, run.code(), c + ":\n" + run.output());
            List<String> lines = run.output().strip().lines().toList();
            assertEquals(1, lines.size(), c + ": one line:\n" + run.output());
            assertTrue(lines.get(0).startsWith("meridian cluster: " + c.getKey() + " ") && lines.get(0).contains(c.getValue()),
                    c + ": names the setting and its value: " + lines.get(0));
        }
    }

    @Test
    void aBrokenAlertRuleFailsTheRenderWithPromtoolsReason() throws IOException {
        // a copy of the deploy tree whose alerts.yml has an expression Prometheus cannot parse
        Path copy = dir.resolve("home");
        for (String d : List.of("deploy/bin", "deploy/conf", "deploy/prometheus")) {
            copyTree(HOME.resolve(d), copy.resolve(d));
        }
        Files.copy(HOME.resolve("pom.xml"), copy.resolve("pom.xml"));
        Path alerts = copy.resolve("deploy/prometheus/alerts.yml");
        String text = Files.readString(alerts);
        assertTrue(text.contains("expr: up{job=\"meridian-worker\"} == 0"));
        Files.writeString(alerts, text.replace("expr: up{job=\"meridian-worker\"} == 0", "expr: up{job=\"meridian-worker\"} == = 0"));
        Run run = config(copy, Map.of("MERIDIAN_HOME", copy.toString()));
        assertEquals(2, run.code(), run.output());
        String last = run.output().strip().lines().reduce((a, b) -> b).orElse("");
        assertTrue(last.startsWith("meridian cluster: ") && last.contains("fails 'promtool check config'")
                && last.contains("MeridianWorkerDown") && last.contains("parse error"), last);
    }

    /** {@code deploy/bin/meridian-cluster config} of checkout {@code home} into the scratch cluster directory. */
    private Run config(Path home, Map<String, String> settings) {
        Map<String, String> env = new HashMap<>();
        // only this test's settings: none of the caller's MERIDIAN_* (a cluster conf, a listen address) leaks in
        System.getenv().keySet().stream().filter(k -> k.startsWith("MERIDIAN_")).forEach(k -> env.put(k, null));
        env.put("MERIDIAN_HOME", home.toString());
        env.put("MERIDIAN_CLUSTER_DIR", dir.toString());
        env.putAll(settings);
        return Run.of(home, env, Duration.ofMinutes(1), List.of(home.resolve("deploy/bin/meridian-cluster").toString(), "config"));
    }

    private static Map<String, Map<String, Object>> jobs(Map<String, Object> prometheus) {
        Map<String, Map<String, Object>> out = new LinkedHashMap<>();
        for (Object job : (List<?>) prometheus.get("scrape_configs")) {
            Map<String, Object> j = AlertRulesTest.map(job);
            out.put(String.valueOf(j.get("job_name")), j);
        }
        return out;
    }

    private static List<?> files(Map<String, Object> job) {
        List<?> sd = (List<?>) job.get("file_sd_configs");
        assertEquals(1, sd.size(), "one file_sd config: " + job);
        return (List<?>) AlertRulesTest.map(sd.get(0)).get("files");
    }

    private static void copyTree(Path from, Path to) throws IOException {
        try (Stream<Path> walk = Files.walk(from)) {
            for (Path p : walk.toList()) {
                Path target = to.resolve(from.relativize(p).toString());
                if (Files.isDirectory(p)) {
                    Files.createDirectories(target);
                } else {
                    Files.copy(p, target, StandardCopyOption.COPY_ATTRIBUTES);
                }
            }
        }
    }
}
