package io.meridian.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.Reader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.Yaml;

/**
 * The alert rules Prometheus loads (deploy/prometheus/alerts.yml): {@code promtool check rules} accepts them, each says
 * how bad it is and what to do, and each has a {@code promtool test rules} unit test (deploy/prometheus/tests/) that
 * fires it and one that checks it stays quiet; the unit tests pass.
 */
class AlertRulesTest {
    private static final Path HOME = Run.home();
    private static final Path ALERTS = HOME.resolve("deploy/prometheus/alerts.yml");
    private static final Path TESTS = HOME.resolve("deploy/prometheus/tests");
    private static final String PROMTOOL_FROM = "deploy/install/40-prometheus.sh";

    @Test
    void promtoolAcceptsEveryRule() {
        Run check = Run.of(HOME, Map.of(), Duration.ofMinutes(1),
                List.of(Run.tool("promtool", PROMTOOL_FROM), "check", "rules", ALERTS.toString()));
        assertEquals(0, check.code(), check.output());
        assertTrue(check.output().contains("SUCCESS: " + alerts().size() + " rules found"), check.output());
    }

    @Test
    void everyAlertSaysHowBadItIsAndWhatToDo() {
        for (Map.Entry<String, Map<String, Object>> e : alerts().entrySet()) {
            Map<String, Object> rule = e.getValue();
            assertTrue(e.getKey().startsWith("Meridian"), "alert names start with Meridian: " + e.getKey());
            Map<String, Object> labels = map(rule.get("labels"));
            assertTrue(Set.of("critical", "warning", "info").contains(String.valueOf(labels.get("severity"))),
                    e.getKey() + ": severity critical, warning or info, not " + labels.get("severity"));
            Map<String, Object> annotations = map(rule.get("annotations"));
            assertFalse(String.valueOf(annotations.getOrDefault("summary", "")).isBlank(), e.getKey() + ": summary");
            assertTrue(String.valueOf(annotations.getOrDefault("description", "")).length() > 100,
                    e.getKey() + ": a description that says what to look at first");
        }
    }

    @Test
    void everyAlertHasAUnitTestThatFiresItAndOneThatDoesNotAndTheyPass() throws IOException {
        List<Path> files;
        try (Stream<Path> list = Files.list(TESTS)) {
            files = list.filter(p -> p.toString().endsWith(".yml")).sorted().toList();
        }
        assertFalse(files.isEmpty(), "unit tests in " + TESTS);
        Set<String> fired = new TreeSet<>();
        Set<String> quiet = new TreeSet<>();
        for (Path file : files) {
            Map<String, Object> doc = yaml(file);
            for (Object t : (List<?>) doc.get("tests")) {
                for (Object c : (List<?>) map(t).get("alert_rule_test")) {
                    Map<String, Object> check = map(c);
                    List<?> expected = (List<?>) check.get("exp_alerts");
                    (expected == null || expected.isEmpty() ? quiet : fired).add(String.valueOf(check.get("alertname")));
                }
            }
        }
        for (String alert : alerts().keySet()) {
            assertTrue(fired.contains(alert), alert + " has no unit test that fires it (" + TESTS + ")");
            assertTrue(quiet.contains(alert), alert + " has no unit test that checks it stays quiet (" + TESTS + ")");
        }
        List<String> command = new ArrayList<>(List.of(Run.tool("promtool", PROMTOOL_FROM), "test", "rules"));
        files.forEach(f -> command.add(f.getFileName().toString()));
        Run run = Run.of(TESTS, Map.of(), Duration.ofMinutes(2), command);
        System.out.println(run.output());
        assertEquals(0, run.code(), "promtool test rules:\n" + run.output());
        assertFalse(run.output().contains("FAILED"), run.output());
    }

    /** alert name -> rule, in file order. */
    static Map<String, Map<String, Object>> alerts() {
        Map<String, Map<String, Object>> out = new LinkedHashMap<>();
        for (Object g : (List<?>) yaml(ALERTS).get("groups")) {
            for (Object r : (List<?>) map(g).get("rules")) {
                Map<String, Object> rule = map(r);
                if (rule.containsKey("alert")) {
                    assertEquals(null, out.put(String.valueOf(rule.get("alert")), rule), "alert names are unique");
                }
            }
        }
        assertFalse(out.isEmpty(), "alerts in " + ALERTS);
        return out;
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> map(Object o) {
        return o == null ? Map.of() : (Map<String, Object>) o;
    }

    static Map<String, Object> yaml(Path file) {
        try (Reader in = Files.newBufferedReader(file)) {
            return new Yaml().load(in);
        } catch (IOException e) {
            throw new AssertionError("cannot read " + file + ": " + e.getMessage(), e);
        }
    }
}
