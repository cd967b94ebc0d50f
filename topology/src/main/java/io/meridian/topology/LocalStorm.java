package io.meridian.topology;

import io.meridian.shm.OwnerOnlyFiles;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import org.apache.storm.LocalCluster;
import org.apache.storm.shade.org.apache.zookeeper.server.NIOServerCnxnFactory;
import org.apache.storm.shade.org.apache.zookeeper.server.ZooKeeperServer;

/**
 * Storm's {@code LocalCluster} with its ZooKeeper on loopback. Left to itself, {@code LocalCluster} starts an
 * in-process ZooKeeper on every interface ({@code *:2000}, the next free port up), unauthenticated; given
 * {@code storm.zookeeper.servers} it uses that one instead, so this starts ZooKeeper the way Storm does
 * ({@code Zookeeper.mkInprocessZookeeper}) but bound to {@code 127.0.0.1} on a free port. Nothing else of a
 * {@code LocalCluster} listens: without {@code withNimbusDaemon} there is no Thrift server, and its workers pass tuples
 * in memory. Closing stops the cluster, then ZooKeeper, and deletes ZooKeeper's directory.
 */
public final class LocalStorm implements AutoCloseable {
    private static final int TICK_MS = 2000;

    private final Path zkDirectory;
    private final NIOServerCnxnFactory zookeeper;
    private final LocalCluster cluster;

    private LocalStorm(Path zkDirectory, NIOServerCnxnFactory zookeeper, LocalCluster cluster) {
        this.zkDirectory = zkDirectory;
        this.zookeeper = zookeeper;
        this.cluster = cluster;
    }

    public static LocalStorm start() throws Exception {
        // createTempDirectory makes it rwx------ on POSIX file systems
        Path dir = Files.createTempDirectory("meridian-local-zk-");
        NIOServerCnxnFactory factory = null;
        try {
            factory = new NIOServerCnxnFactory();
            factory.configure(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
            factory.startup(new ZooKeeperServer(dir.toFile(), dir.toFile(), TICK_MS));
            LocalCluster cluster = new LocalCluster(InetAddress.getLoopbackAddress().getHostAddress(),
                    (long) factory.getLocalPort());
            return new LocalStorm(dir, factory, cluster);
        } catch (Exception | Error e) {
            if (factory != null) {
                factory.shutdown();
            }
            OwnerOnlyFiles.deleteTree(dir);
            throw e;
        }
    }

    public LocalCluster cluster() {
        return cluster;
    }

    /** The loopback port ZooKeeper listens on. */
    public int zookeeperPort() {
        return zookeeper.getLocalPort();
    }

    @Override
    public void close() throws Exception {
        try {
            cluster.close();
        } finally {
            zookeeper.shutdown();
            OwnerOnlyFiles.deleteTree(zkDirectory);
        }
    }
}
