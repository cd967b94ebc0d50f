package io.meridian.collective;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/** Real child processes for the integration tests (mpirun, member JVMs, the leaders script), never left behind. */
final class Processes implements AutoCloseable {
    static final String LIBDIR = "/usr/lib/x86_64-linux-gnu";
    private final List<Running> started = new ArrayList<>();

    static String testClasspath() {
        String cp = System.getProperty("surefire.test.class.path");
        return cp != null && !cp.isBlank() ? cp : System.getProperty("java.class.path");
    }

    static Path home() {
        String home = System.getenv("MERIDIAN_HOME");
        return home != null ? Path.of(home) : Path.of("").toAbsolutePath().getParent();
    }

    static List<String> mpirun(int np, String mainClass, String... args) {
        List<String> cmd = new ArrayList<>(List.of("mpirun", "--oversubscribe", "--mca", "mpi_yield_when_idle", "1"));
        if ("root".equals(System.getProperty("user.name"))) {
            cmd.add("--allow-run-as-root");
        }
        cmd.addAll(List.of("-np", String.valueOf(np)));
        cmd.addAll(java(mainClass, args));
        return cmd;
    }

    static List<String> java(String mainClass, String... args) {
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx256m", "-XX:TieredStopAtLevel=1", "-Djava.library.path=" + LIBDIR, "-cp", testClasspath(), mainClass));
        cmd.addAll(List.of(args));
        return cmd;
    }

    Running start(List<String> command, Map<String, String> env) throws IOException {
        ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true);
        pb.environment().putAll(env);
        Running r = new Running(pb.start());
        started.add(r);
        return r;
    }

    private final java.util.Set<Path> shmBefore = shmSegments();

    @Override
    public void close() {
        for (Running r : started) {
            r.process.descendants().forEach(ProcessHandle::destroyForcibly);
            r.process.destroyForcibly();
            try {
                r.process.onExit().get(10, TimeUnit.SECONDS);
            } catch (Exception e) {
                // reported by the test itself
            }
        }
        removeOrphanedSegments();
    }

    /**
     * Open MPI's shared-memory segments of a rank that was killed stay in /dev/shm: remove the ones that appeared
     * while this test ran and that no process maps any more.
     */
    private void removeOrphanedSegments() {
        java.util.Set<Path> fresh = shmSegments();
        fresh.removeAll(shmBefore);
        if (fresh.isEmpty()) {
            return;
        }
        StringBuilder maps = new StringBuilder();
        try (var procs = java.nio.file.Files.newDirectoryStream(Path.of("/proc"), "[0-9]*")) {
            for (Path proc : procs) {
                try {
                    maps.append(java.nio.file.Files.readString(proc.resolve("maps")));
                } catch (IOException | RuntimeException e) {
                    // gone, or not ours to read
                }
            }
        } catch (IOException e) {
            return;
        }
        for (Path segment : fresh) {
            if (maps.indexOf(segment.toString()) < 0) {
                try {
                    java.nio.file.Files.deleteIfExists(segment);
                } catch (IOException e) {
                    // best effort
                }
            }
        }
    }

    private static java.util.Set<Path> shmSegments() {
        java.util.Set<Path> segments = new java.util.HashSet<>();
        try (var files = java.nio.file.Files.newDirectoryStream(Path.of("/dev/shm"), "vader_segment.*")) {
            files.forEach(segments::add);
        } catch (IOException e) {
            // no /dev/shm: nothing to clean
        }
        return segments;
    }

    static final class Running {
        final Process process;
        final List<String> lines = new CopyOnWriteArrayList<>();

        Running(Process process) {
            this.process = process;
            Thread reader = new Thread(() -> {
                try (BufferedReader in = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                    for (String line; (line = in.readLine()) != null; ) {
                        lines.add(line);
                    }
                } catch (IOException e) {
                    lines.add("<output lost: " + e + ">");
                }
            }, "output-of-" + process.pid());
            reader.setDaemon(true);
            reader.start();
        }

        /** Exit status, or throws when still running after {@code seconds} (the process is then killed). */
        int await(long seconds) throws InterruptedException {
            if (!process.waitFor(seconds, TimeUnit.SECONDS)) {
                process.descendants().forEach(ProcessHandle::destroyForcibly);
                process.destroyForcibly();
                throw new AssertionError("still running after " + seconds + " s (killed); output:\n" + output());
            }
            Thread.sleep(100); // let the reader drain the last lines
            return process.exitValue();
        }

        String awaitLine(Predicate<String> match, long seconds) throws InterruptedException {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
            while (System.nanoTime() < deadline) {
                for (String line : lines) {
                    if (match.test(line)) {
                        return line;
                    }
                }
                if (!process.isAlive() && process.exitValue() != 0) {
                    break;
                }
                Thread.sleep(50);
            }
            throw new AssertionError("no matching line within " + seconds + " s; output:\n" + output());
        }

        String output() {
            return String.join("\n", lines);
        }
    }
}
