package io.meridian.topology;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;

/** Runs Prometheus's own linter, {@code promtool check metrics}, on what an endpoint served. */
final class PromtoolCheck {
    private PromtoolCheck() {
    }

    /** Fails with promtool's findings unless it finds no error and no naming problem. */
    static void metrics(String text) throws IOException, InterruptedException {
        Process p = new ProcessBuilder("promtool", "check", "metrics").redirectErrorStream(true).start();
        try (OutputStream in = p.getOutputStream()) {
            in.write(text.getBytes(StandardCharsets.UTF_8));
        }
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(true, p.waitFor(60, TimeUnit.SECONDS), "promtool check metrics finished");
        assertEquals(0, p.exitValue(), "promtool check metrics: " + out);
        assertEquals("", out.strip(), "promtool check metrics found problems");
    }
}
