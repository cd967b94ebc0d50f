package io.meridian.topology;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A real standalone ZooKeeper server (Storm's shaded ZooKeeperServerMain, the one LocalCluster runs) in a child JVM on
 * a free loopback port, which a test can SIGKILL and start again on the same port and data directory.
 */
final class ChildZooKeeper implements AutoCloseable {
    private static final String MAIN = "org.apache.storm.shade.org.apache.zookeeper.server.ZooKeeperServerMain";
    private final Path dir;
    private final int port;
    private Process process;

    private ChildZooKeeper(Path dir, int port) {
        this.dir = dir;
        this.port = port;
    }

    /** @param fourLetterWords the value of 4lw.commands.whitelist, or null for ZooKeeper's default (srvr only) */
    static ChildZooKeeper start(Path dir, String fourLetterWords) throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = s.getLocalPort();
        }
        Files.createDirectories(dir.resolve("data"));
        Files.writeString(dir.resolve("zoo.cfg"), String.join("\n", "tickTime=2000", "dataDir=" + dir.resolve("data"),
                "clientPort=" + port, "clientPortAddress=127.0.0.1", "admin.enableServer=false",
                fourLetterWords == null ? "" : "4lw.commands.whitelist=" + fourLetterWords, ""));
        ChildZooKeeper zk = new ChildZooKeeper(dir, port);
        zk.launch();
        return zk;
    }

    int port() {
        return port;
    }

    /** SIGKILLs the server, as a crash would. */
    void kill() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor(30, TimeUnit.SECONDS);
    }

    /** Starts it again on the same port and data directory, and waits until its client port answers. */
    void launch() throws Exception {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        process = new ProcessBuilder(java, "-Xmx64m", "-XX:+UseSerialGC", "-cp", System.getProperty("java.class.path"),
                MAIN, dir.resolve("zoo.cfg").toString()).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(dir.resolve("zk.log").toFile())).start();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (true) {
            try (Socket s = new Socket()) {
                s.connect(new InetSocketAddress("127.0.0.1", port), 500);
                return;
            } catch (IOException e) {
                if (!process.isAlive() || System.nanoTime() > deadline) {
                    List<String> log = Files.readAllLines(dir.resolve("zk.log"));
                    throw new IllegalStateException("ZooKeeper did not answer on 127.0.0.1:" + port + " within 60 s"
                            + (process.isAlive() ? "" : " (it exited " + process.exitValue() + ")") + "; the end of "
                            + dir.resolve("zk.log") + ": " + log.subList(Math.max(0, log.size() - 5), log.size()));
                }
                Thread.sleep(100);
            }
        }
    }

    @Override
    public void close() throws InterruptedException {
        kill();
    }
}
