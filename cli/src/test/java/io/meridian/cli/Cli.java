package io.meridian.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * The command line as a user meets it, for the tables of bad and degenerate input: runs a JVM command in this process
 * ({@link Main#run}), in a JVM of its own started as the launcher starts it (its own environment; library logging to a
 * file, so stderr is what the user sees), or a script of {@code deploy/bin}, and checks what a refusal must look like.
 */
final class Cli {
    /** The checkout: the cli module's parent. */
    static final Path HOME = Path.of("").toAbsolutePath().getParent();

    private Cli() {
    }

    record Outcome(int status, String out, String err) {
        List<String> errLines() {
            return err.strip().isEmpty() ? List.of() : err.strip().lines().toList();
        }
    }

    /**
     * One row of a table: {@code args} given to {@code command} must end with {@code status}; on a refusal stderr's
     * first line is {@code <prefix>: ...} holding every one of {@code says} (the option or file, and the problem),
     * followed by the usage line when {@code usageLine}, and nothing else.
     */
    record Case(String name, List<String> args, int status, boolean usageLine, List<String> says) {
        static Case refused(String name, String... argsThenSays) {
            return split(name, 2, true, argsThenSays);
        }

        /** Refused, exit 2, but bad input rather than bad usage: no usage line follows. */
        static Case badInput(String name, String... argsThenSays) {
            return split(name, 2, false, argsThenSays);
        }

        /** A service does not answer: exit 1, one line, no usage line. */
        static Case down(String name, String... argsThenSays) {
            return split(name, 1, false, argsThenSays);
        }

        /** Valid (if degenerate) input: exit 0. */
        static Case works(String name, String... args) {
            return new Case(name, List.of(args), 0, false, List.of());
        }

        /** {@code args}, then {@code "--says"}, then the fragments the message must hold. */
        private static Case split(String name, int status, boolean usage, String... argsThenSays) {
            List<String> all = Arrays.asList(argsThenSays);
            int at = all.indexOf("--says");
            if (at < 0) {
                throw new IllegalArgumentException(name + ": no --says");
            }
            return new Case(name, all.subList(0, at), status, usage, all.subList(at + 1, all.size()));
        }

        String[] argv() {
            return args.toArray(String[]::new);
        }

        @Override
        public String toString() {
            return name;
        }
    }

    /** Runs {@code args} through {@link Main#run} here, with nothing on stdin. */
    static Outcome run(String... args) {
        PrintStream oldOut = System.out;
        PrintStream oldErr = System.err;
        InputStream oldIn = System.in;
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        try {
            System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
            System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
            System.setIn(new ByteArrayInputStream(new byte[0]));
            int status = Main.run(args);
            return new Outcome(status, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
        } finally {
            System.setOut(oldOut);
            System.setErr(oldErr);
            System.setIn(oldIn);
        }
    }

    /**
     * Runs {@code args} in a JVM of its own as {@code ./meridian} does: the test's class path, the launcher's logging
     * (to {@code log}, not the terminal), {@code env} added to the environment.
     */
    static Outcome jvm(Map<String, String> env, Path log, String... args) {
        String cp = classPath();
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx256m", "-Dlog4j2.configurationFile=" + HOME.resolve("deploy/conf/cli-log4j2.xml"),
                "-Dmeridian.log.file=" + log, "-cp", cp, Main.class.getName()));
        cmd.addAll(List.of(args));
        return process(cmd, env);
    }

    /** The test's class path (surefire's, not its booter jar's). */
    static String classPath() {
        return System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
    }

    /** Runs {@code script} (a path under the checkout) with {@code args} and {@code env} added. */
    static Outcome script(String script, Map<String, String> env, String... args) {
        List<String> cmd = new ArrayList<>(List.of(HOME.resolve(script).toString()));
        cmd.addAll(List.of(args));
        return process(cmd, env);
    }

    private static Outcome process(List<String> cmd, Map<String, String> env) {
        try {
            ProcessBuilder pb = new ProcessBuilder(cmd).redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
            pb.environment().remove("MERIDIAN_CLUSTER_CONF");
            pb.environment().putAll(env);
            Process p = pb.start();
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            ByteArrayOutputStream err = new ByteArrayOutputStream();
            Thread errReader = new Thread(() -> copy(p.getErrorStream(), err));
            errReader.start();
            copy(p.getInputStream(), out);
            if (!p.waitFor(120, TimeUnit.SECONDS)) {
                p.descendants().forEach(ProcessHandle::destroyForcibly);
                p.destroyForcibly();
                throw new AssertionError(String.join(" ", cmd) + " still runs after 120 s");
            }
            errReader.join();
            return new Outcome(p.exitValue(), out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8)
                    .lines().filter(l -> !l.equals("WARNING: Using incubator modules: jdk.incubator.vector"))
                    .reduce("", (a, b) -> a + b + "\n"));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    private static void copy(InputStream in, ByteArrayOutputStream out) {
        try (in) {
            in.transferTo(out);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Checks {@code r} against {@code c}: the exit status; for a refusal (status not 0) one line on stderr starting
     * with {@code prefix + ": "} and holding every fragment of {@code c.says()}, then the usage line starting with
     * {@code usagePrefix} if the case expects one, and nothing more; for exit 2 nothing on stdout; never a stack trace.
     */
    static void check(Case c, Outcome r, String prefix, String usagePrefix) {
        String what = c.name() + " (" + String.join(" ", c.args()) + ")\nstdout: " + r.out() + "\nstderr: " + r.err();
        assertEquals(c.status(), r.status(), "exit status of " + what);
        assertFalse(r.err().contains("Exception") || r.err().contains("\tat ") || r.err().contains("Caused by"),
                "no stack trace: " + what);
        if (c.status() == 0) {
            return;
        }
        List<String> lines = r.errLines();
        assertEquals(c.usageLine() ? 2 : 1, lines.size(), "one line" + (c.usageLine() ? ", then the usage line" : "")
                + ": " + what);
        assertTrue(lines.get(0).startsWith(prefix + ": "), "'" + prefix + ": ' first: " + what);
        for (String fragment : c.says()) {
            assertTrue(lines.get(0).contains(fragment), "'" + fragment + "' in the message: " + what);
        }
        if (c.usageLine()) {
            assertTrue(lines.get(1).startsWith(usagePrefix), "the usage line '" + usagePrefix + "...' last: " + what);
        }
        if (c.status() == 2) {
            assertEquals("", r.out(), "nothing on stdout: " + what);
        }
    }

    /** Every path below {@code dir} (not following links), for "nothing left behind". */
    static TreeSet<String> tree(Path dir) {
        TreeSet<String> all = new TreeSet<>();
        if (!Files.exists(dir, LinkOption.NOFOLLOW_LINKS)) {
            return all;
        }
        try (Stream<Path> walk = Files.walk(dir)) {
            walk.forEach(p -> all.add(dir.relativize(p).toString()));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return all;
    }

    /** A loopback port nothing listens on: one the kernel just handed out, closed again, checked to refuse. */
    static int closedPort() {
        int port;
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = s.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        assertTrue(Endpoints.connect("127.0.0.1:" + port, Endpoints.CONNECT_TIMEOUT) != null,
                "port " + port + " must refuse connections");
        return port;
    }
}
