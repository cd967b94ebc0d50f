package io.meridian.cli;

import io.meridian.config.CommandLine;
import io.meridian.config.MeridianConfig;
import io.meridian.config.UsageException;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * {@code ./meridian submit [--config FILE]}: validates the configuration here (so a bad key fails before anything is
 * uploaded) and checks that a Kafka broker answers, then runs
 * {@code deploy/bin/storm jar <topology jar> io.meridian.topology.MeridianTopology [--config FILE]}, which checks that
 * Nimbus answers. Either not answering is one line and exit status 1.
 */
final class SubmitCommand implements Command {
    static final String MAIN = "io.meridian.topology.MeridianTopology";

    @Override
    public String usage() {
        return "submit [--config FILE]\n"
                + "  validate the configuration, check that Nimbus and Kafka answer, and submit the topology with"
                + " deploy/bin/storm jar; default configuration: meridian-cluster.yaml";
    }

    @Override
    public int run(String[] args) throws Exception {
        CommandLine cl = CommandLine.parse("submit", args, Set.of("config"), Set.of());
        cl.requireNoPositional();
        Path configFile = cl.has("config") ? Path.of(cl.requiredString("config")).toAbsolutePath() : null;
        MeridianConfig config = configFile != null ? MeridianConfig.load(configFile)
                : MeridianConfig.loadResource(MeridianConfig.CLUSTER_DEFAULTS);
        if (!"kafka".equals(config.ingest().source())) {
            throw new UsageException((configFile == null ? "config" : configFile.toString())
                    + ": key ingest.source: a cluster topology reads Kafka; 'file' is for ./meridian local");
        }
        // the topology's main creates the topics first: without a broker it fails only after its client's retries
        FeedCommand.requireBroker(config.ingest().kafka().brokers(), "ingest.kafka.brokers in "
                + (configFile == null ? MeridianConfig.CLUSTER_DEFAULTS : configFile.toString()));
        Path home = home();
        Path storm = home.resolve("deploy/bin/storm");
        if (!Files.isExecutable(storm)) {
            throw new UsageException(storm + " is not available in this build (the cluster scripts are missing)");
        }
        Path jar = topologyJar(home);
        // deploy/bin/storm checks that Nimbus answers (at the address the cluster's settings give) before it submits
        List<String> command = new ArrayList<>(List.of(storm.toString(), "jar", jar.toString(), MAIN));
        if (configFile != null) {
            command.add("--config");
            command.add(configFile.toString());
        }
        return new ProcessBuilder(command).inheritIO().start().waitFor();
    }

    static Path home() {
        String home = System.getenv("MERIDIAN_HOME");
        return Path.of(home == null ? "." : home).toAbsolutePath().normalize();
    }

    /** The shaded jar the build made: topology/target/meridian-topology-*-topology.jar. */
    static Path topologyJar(Path home) throws IOException {
        Path target = home.resolve("topology/target");
        if (Files.isDirectory(target)) {
            try (DirectoryStream<Path> jars = Files.newDirectoryStream(target, "meridian-topology-*-topology.jar")) {
                for (Path jar : jars) {
                    return jar;
                }
            }
        }
        throw new UsageException("no topology jar in " + target + " (run ./meridian build)");
    }
}
