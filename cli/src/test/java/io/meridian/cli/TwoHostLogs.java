package io.meridian.cli;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;
import java.util.stream.Stream;

/** Keeping a two-host test's logs: the testbed's {@code stop} removes the hosts' files. */
final class TwoHostLogs {
    private TwoHostLogs() {
    }

    /**
     * Copies the hosts' daemon and worker logs, and the leader daemons' logs under {@code snapshots} (a path inside a
     * host), to {@code work}: what a failure is read from afterwards.
     */
    static void keep(Path home, Testbed testbed, Path work, Path snapshots) {
        for (String host : List.of(Testbed.HOST_1, Testbed.HOST_2)) {
            for (Path from : List.of(home.resolve(".meridian/testbed").resolve(host).resolve("logs"),
                    testbed.hostPath(host, snapshots))) {
                if (!Files.isDirectory(from)) {
                    continue;
                }
                try (Stream<Path> files = Files.walk(from)) {
                    for (Path f : files.toList()) {
                        String name = f.getFileName().toString();
                        if (name.endsWith(".log") || name.endsWith(".out")) {
                            Path to = work.resolve("logs-" + host).resolve(from.relativize(f).toString());
                            Files.createDirectories(to.getParent());
                            Files.copy(f, to, StandardCopyOption.REPLACE_EXISTING);
                        }
                    }
                } catch (IOException | UncheckedIOException e) {
                    System.out.println("testbed: could not keep the logs of " + from + ": " + e);
                }
            }
        }
        System.out.println("testbed: the hosts' logs are kept in " + work);
    }
}
