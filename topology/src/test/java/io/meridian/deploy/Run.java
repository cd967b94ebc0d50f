package io.meridian.deploy;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/** A command of the deploy tree run to its end (stderr with stdout), for the tests of what deploy/ ships. */
record Run(int code, String output) {

    /** The checkout: MERIDIAN_HOME (set for failsafe), else the parent of the module directory surefire runs in. */
    static Path home() {
        String env = System.getenv("MERIDIAN_HOME");
        return Path.of(env != null ? env : "..").toAbsolutePath().normalize();
    }

    static Run of(Path dir, Map<String, String> env, Duration timeout, List<String> command) {
        try {
            Path out = Files.createTempFile("meridian-deploy-test", ".out");
            try {
                ProcessBuilder pb = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true)
                        .redirectOutput(out.toFile());
                // a null value removes the variable (the caller's shell may have set it)
                env.forEach((k, v) -> {
                    if (v == null) {
                        pb.environment().remove(k);
                    } else {
                        pb.environment().put(k, v);
                    }
                });
                Process p = pb.start();
                if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                    p.descendants().forEach(ProcessHandle::destroyForcibly);
                    p.destroyForcibly();
                    throw new IllegalStateException(String.join(" ", command) + " did not end within "
                            + timeout.toSeconds() + " s:\n" + Files.readString(out, StandardCharsets.UTF_8));
                }
                return new Run(p.exitValue(), Files.readString(out, StandardCharsets.UTF_8));
            } finally {
                Files.deleteIfExists(out);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(String.join(" ", command) + ": " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** A tool the deploy tree installs (deploy/install/): its absolute path, or a failure saying how to get it. */
    static String tool(String name, String installedBy) {
        for (String dir : System.getenv().getOrDefault("PATH", "/usr/bin:/bin").split(":")) {
            Path p = Path.of(dir, name);
            if (Files.isExecutable(p)) {
                return p.toString();
            }
        }
        throw new AssertionError(name + " is not installed: " + installedBy + " installs it (./meridian test runs"
                + " every deploy/install/NN-*.sh first)");
    }
}
