package io.meridian.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The dashboards' JSON type-checked against Grafana's schema: npm installs {@code @grafana/schema} and TypeScript at
 * the versions pinned in deploy/grafana/schema-check/package-lock.json into target/, this test writes one
 * {@code const NAME: MeridianDashboard = <the JSON>;} per dashboard and {@code tsc --noEmit} must accept them all
 * (types in deploy/grafana/schema-check/dashboard-types.ts: Grafana's Dashboard, its time series and stat panels'
 * options, Prometheus queries). A copy with one wrong option value must be refused, so the check is known to bite.
 */
class DashboardSchemaTest {
    private static final Path SOURCE = DashboardsTest.GRAFANA.resolve("schema-check");
    private static final Path WORK = Path.of("target/grafana-schema-check").toAbsolutePath();

    @BeforeAll
    static void installTheSchema() throws IOException {
        Files.createDirectories(WORK);
        for (String f : List.of("package.json", "package-lock.json", "tsconfig.json", "dashboard-types.ts")) {
            Files.copy(SOURCE.resolve(f), WORK.resolve(f), StandardCopyOption.REPLACE_EXISTING);
        }
        try (Stream<Path> old = Files.list(WORK)) {
            for (Path p : old.filter(p -> p.toString().endsWith(".gen.ts")).toList()) {
                Files.delete(p);
            }
        }
        Run ci = Run.of(WORK, Map.of(), Duration.ofMinutes(10), List.of(Run.tool("npm", "Node.js (apt-get install -y npm)"),
                "ci", "--no-audit", "--no-fund", "--loglevel=error"));
        assertEquals(0, ci.code(), "npm ci of " + SOURCE + "/package-lock.json:\n" + ci.output());
    }

    @Test
    void everyDashboardIsADashboardOfGrafanasSchema() throws IOException {
        StringBuilder ts = new StringBuilder("import type { MeridianDashboard } from './dashboard-types';\n");
        int n = 0;
        try (Stream<Path> files = Files.list(DashboardsTest.GRAFANA.resolve("dashboards"))) {
            for (Path f : files.sorted().toList()) {
                ts.append("\n// ").append(f.getFileName()).append("\nexport const ")
                        .append(f.getFileName().toString().replace(".json", "").replace('-', '_'))
                        .append(": MeridianDashboard = ").append(Files.readString(f, StandardCharsets.UTF_8).strip())
                        .append(";\n");
                n++;
            }
        }
        assertEquals(6, n, "dashboards");
        Files.writeString(WORK.resolve("dashboards.gen.ts"), ts, StandardCharsets.UTF_8);
        Run tsc = tsc();
        assertEquals(0, tsc.code(), "tsc --noEmit over the dashboards (" + WORK + "/dashboards.gen.ts):\n" + tsc.output());
    }

    @Test
    void aWrongOptionValueIsRefused() throws IOException {
        String json = Files.readString(DashboardsTest.GRAFANA.resolve("dashboards/meridian-overview.json"));
        assertTrue(json.contains("\"mode\": \"multi\""), "the overview has a tooltip in mode multi");
        Files.writeString(WORK.resolve("wrong.gen.ts"), "import type { MeridianDashboard } from './dashboard-types';\n"
                + "export const wrong: MeridianDashboard = " + json.replaceFirst("\"mode\": \"multi\"", "\"mode\": \"multiple\"")
                + ";\n", StandardCharsets.UTF_8);
        try {
            Run tsc = tsc();
            assertNotEquals(0, tsc.code(), "tsc accepted a tooltip mode 'multiple':\n" + tsc.output());
            assertTrue(tsc.output().contains("wrong.gen.ts") && tsc.output().contains("\"multiple\""), tsc.output());
        } finally {
            Files.delete(WORK.resolve("wrong.gen.ts"));
        }
    }

    private static Run tsc() {
        return Run.of(WORK, Map.of(), Duration.ofMinutes(3), List.of(Run.tool("node", "Node.js (apt-get install -y nodejs)"),
                WORK.resolve("node_modules/typescript/bin/tsc").toString(), "--noEmit", "-p", WORK.toString()));
    }
}
