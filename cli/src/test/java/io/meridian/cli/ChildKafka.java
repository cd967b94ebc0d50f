package io.meridian.cli;

import io.meridian.topology.TopicSetup;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.common.Uuid;

/**
 * A real single-node Kafka broker (KRaft, kafka_2.13 from the test classpath) in a child JVM on free ports, for
 * unit-level tests of the Kafka path that must not touch the shared cluster's ports.
 */
final class ChildKafka implements AutoCloseable {
    private Process process;
    private final String brokers;
    private final Path dir;
    private final int port;

    private ChildKafka(Process process, String brokers, Path dir, int port) {
        this.process = process;
        this.brokers = brokers;
        this.dir = dir;
        this.port = port;
    }

    String brokers() {
        return brokers;
    }

    static ChildKafka start(Path dir) throws Exception {
        int port = freePort();
        int controller = freePort();
        Files.createDirectories(dir);
        Path props = dir.resolve("server.properties");
        Files.writeString(props, String.join("\n",
                "process.roles=broker,controller", "node.id=1",
                "controller.quorum.voters=1@localhost:" + controller,
                "listeners=PLAINTEXT://localhost:" + port + ",CONTROLLER://localhost:" + controller,
                "advertised.listeners=PLAINTEXT://localhost:" + port,
                "controller.listener.names=CONTROLLER", "inter.broker.listener.name=PLAINTEXT",
                "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
                "log.dirs=" + dir.resolve("data"), "num.partitions=2",
                "offsets.topic.replication.factor=1", "offsets.topic.num.partitions=2",
                "transaction.state.log.replication.factor=1", "transaction.state.log.min.isr=1",
                "share.coordinator.state.topic.replication.factor=1", "share.coordinator.state.topic.min.isr=1",
                "group.initial.rebalance.delay.ms=0", "") );
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        String cp = System.getProperty("java.class.path");
        Process format = new ProcessBuilder(java, "-cp", cp, "kafka.tools.StorageTool", "format", "-t",
                Uuid.randomUuid().toString(), "-c", props.toString())
                .redirectErrorStream(true).redirectOutput(dir.resolve("format.log").toFile()).start();
        if (!format.waitFor(120, TimeUnit.SECONDS) || format.exitValue() != 0) {
            format.destroyForcibly();
            throw new IllegalStateException("kafka storage format failed: " + Files.readString(dir.resolve("format.log")));
        }
        ChildKafka kafka = new ChildKafka(launch(dir), "localhost:" + port, dir, port);
        kafka.awaitUp();
        return kafka;
    }

    private static Process launch(Path dir) throws IOException {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        return new ProcessBuilder(java, "-Xmx384m", "-cp", System.getProperty("java.class.path"), "kafka.Kafka",
                dir.resolve("server.properties").toString()).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(dir.resolve("kafka.log").toFile())).start();
    }

    /** SIGKILLs the broker, as a crash would: no controlled shutdown, the log recovered on the next start. */
    void kill() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor(30, TimeUnit.SECONDS);
    }

    /** Starts the broker again on the same ports and log directory, and waits until it serves. */
    void restart() throws Exception {
        if (process.isAlive()) {
            throw new IllegalStateException("the broker at " + brokers + " is still running");
        }
        process = launch(dir);
        awaitUp();
    }

    private void awaitUp() throws Exception {
        Process broker = process;
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        while (!portOpen(port)) {
            if (!broker.isAlive() || System.nanoTime() > deadline) {
                close();
                throw new IllegalStateException("Kafka did not open port " + port + ": see " + dir.resolve("kafka.log"));
            }
            Thread.sleep(200);
        }
        while (true) {
            try (Admin admin = TopicSetup.admin(brokers)) {
                admin.describeCluster().nodes().get(5, TimeUnit.SECONDS);
                return;
            } catch (Exception e) {
                if (!broker.isAlive() || System.nanoTime() > deadline) {
                    close();
                    List<String> log = Files.readAllLines(dir.resolve("kafka.log"));
                    throw new IllegalStateException("Kafka did not start: " + log.subList(Math.max(0, log.size() - 20), log.size()));
                }
                Thread.sleep(500);
            }
        }
    }

    private static boolean portOpen(int port) {
        try (java.net.Socket s = new java.net.Socket()) {
            s.connect(new java.net.InetSocketAddress("localhost", port), 500);
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    @Override
    public void close() throws InterruptedException {
        process.destroy();
        if (!process.waitFor(20, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            process.waitFor(10, TimeUnit.SECONDS);
        }
    }
}
