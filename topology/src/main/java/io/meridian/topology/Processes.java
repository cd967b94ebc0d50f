package io.meridian.topology;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** Running a command to its end, with a bound, for tools and tests that need its output. */
public final class Processes {
    private Processes() {
    }

    /**
     * Runs {@code command} (stderr merged into stdout) and returns its output. Fails, quoting the output, when it
     * exits non-zero or does not end within {@code timeout} (it is then killed with its descendants). The output goes
     * to a file, not a pipe: a daemon the command leaves running may hold a pipe open past the command's end.
     */
    public static String output(List<String> command, Duration timeout) throws IOException, InterruptedException {
        Path out = Files.createTempFile("meridian-process", ".out");
        try {
            Process p = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(out.toFile()).start();
            boolean ended = p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS);
            if (!ended) {
                p.descendants().forEach(ProcessHandle::destroyForcibly);
                p.destroyForcibly();
            }
            String text = Files.readString(out, StandardCharsets.UTF_8);
            if (!ended) {
                throw new IOException(String.join(" ", command) + ": no end within " + timeout.toSeconds() + " s:\n"
                        + text);
            }
            if (p.exitValue() != 0) {
                throw new IOException(String.join(" ", command) + ": exit " + p.exitValue() + ":\n" + text);
            }
            return text;
        } finally {
            Files.deleteIfExists(out);
        }
    }
}
