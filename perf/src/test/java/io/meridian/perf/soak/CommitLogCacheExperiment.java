package io.meridian.perf.soak;

import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import org.apache.storm.shade.org.apache.zookeeper.CreateMode;
import org.apache.storm.shade.org.apache.zookeeper.ZooDefs;
import org.apache.storm.shade.org.apache.zookeeper.ZooKeeper;

/**
 * The measurement behind {@link CommitLogPrimer} (docs/reliability.md, Soak), by hand, not a test: a standalone
 * ZooKeeper 3.9.4 (Storm's shaded one, the cluster's version) with a 256 MB heap in a child JVM, written in the
 * cluster's mix of transactions, its committed proposals and live heap read by {@code jcmd GC.class_histogram} every
 * 100 transactions; before that, 100 transactions of the mix, then the cache primed as {@code MODE} says.
 *
 * <pre>
 * java -cp perf/target/test-classes:$(cat .meridian/classpath) io.meridian.perf.soak.CommitLogCacheExperiment \
 *     none|mean|max PORT TRANSACTIONS [--writes-only]
 * </pre>
 * {@code none}: not primed; {@code mean}: as the soak primes; {@code max}: with the largest znode's data.
 */
public final class CommitLogCacheExperiment {
    private static final String SUPERVISOR = "/storm/supervisors/f735d0cb-9dfe-43bb-aad6-4696d4b8bbc6-127.0.0.1";
    private static final String WORKER = "/storm/workerbeats/meridian-soak-123456-1-1795936580/"
            + "f735d0cb-9dfe-43bb-aad6-4696d4b8bbc6-127.0.0.1-670";

    private CommitLogCacheExperiment() {
    }

    public static void main(String[] args) throws Exception {
        String mode = args[0];
        int port = Integer.parseInt(args[1]);
        int total = Integer.parseInt(args[2]);
        boolean sessions = !(args.length > 3 && args[3].equals("--writes-only"));
        Path dir = Files.createTempDirectory("meridian-zk-cache-");
        Files.createDirectories(dir.resolve("data"));
        Files.writeString(dir.resolve("zoo.cfg"), String.join("\n", "tickTime=2000", "dataDir=" + dir.resolve("data"),
                "clientPort=" + port, "clientPortAddress=127.0.0.1", "admin.enableServer=false",
                "4lw.commands.whitelist=srvr", ""));
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Process server = new ProcessBuilder(java, "-Xms256m", "-Xmx256m", "-cp", System.getProperty("java.class.path"),
                "org.apache.storm.shade.org.apache.zookeeper.server.ZooKeeperServerMain",
                dir.resolve("zoo.cfg").toString())
                .redirectErrorStream(true).redirectOutput(dir.resolve("zk.log").toFile()).start();
        try {
            awaitPort(port);
            String address = "127.0.0.1:" + port;
            ZooKeeper zk = connect(address);
            for (String p : new String[] {"/storm", "/storm/supervisors", "/storm/workerbeats",
                    WORKER.substring(0, WORKER.lastIndexOf('/'))}) {
                zk.create(p, new byte[1], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
            }
            zk.create(SUPERVISOR, new byte[187], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
            zk.create(WORKER + "0", new byte[750], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
            zk.create(WORKER + "1", new byte[527], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
            int done;
            try (CommitLogPrimer primer = CommitLogPrimer.connect(address)) {
                CommitLogPrimer.Census before = primer.census();
                done = load(zk, address, 100, sessions);
                if (!mode.equals("none")) {
                    CommitLogPrimer.Sizing s = CommitLogPrimer.meanBytesPerTransaction(before, primer.census());
                    int payload = mode.equals("mean") ? CommitLogPrimer.payloadFor(s.meanBytes()) : s.maxDataLength();
                    CommitLogPrimer.Priming p = primer.prime(CommitLogPrimer.DEFAULT_COMMIT_LOG_COUNT,
                            CommitLogPrimer.DEFAULT_COMMIT_LOG_COUNT, payload, s);
                    System.out.printf(Locale.ROOT, "primed (%s): %d proposals of %d data bytes in %.2f s; the mix:"
                                    + " %d transactions, %d bytes each on average, largest znode %d bytes%n", mode,
                            p.proposals(), payload, p.seconds(), s.transactions(), s.meanBytes(), s.maxDataLength());
                }
            }
            report(server.pid(), done);
            while (done < total) {
                done += load(zk, address, 100, sessions);
                report(server.pid(), done);
            }
            zk.close();
        } finally {
            server.destroy();
            server.waitFor(30, TimeUnit.SECONDS);
        }
    }

    private static void report(long pid, int done) throws InterruptedException {
        HeapHistogram h = HeapHistogram.take(pid);
        System.out.printf(Locale.ROOT, "after %4d transactions of the mix: proposals %4d, live heap %.3f MB,"
                        + " NIOServerCnxn %d%n", done, h.instances("Leader$PureRequestProposal", "Leader$Proposal"),
                h.totalBytes() / 1e6, h.instances("NIOServerCnxn"));
    }

    private static ZooKeeper connect(String address) throws Exception {
        ZooKeeper z = new ZooKeeper(address, 30_000, e -> { });
        while (z.getState() != ZooKeeper.States.CONNECTED) {
            Thread.sleep(5);
        }
        return z;
    }

    private static void awaitPort(int port) throws Exception {
        for (int i = 0; ; i++) {
            try (Socket s = new Socket()) {
                s.connect(new InetSocketAddress("127.0.0.1", port), 500);
                return;
            } catch (java.io.IOException e) {
                if (i > 300) {
                    throw e;
                }
                Thread.sleep(100);
            }
        }
    }

    /**
     * {@code n} transactions in the mix a bench's cluster wrote in a minute: of each 20, 12 writes of the
     * Supervisor's heartbeat (187 bytes), one of each worker's (750 and 527 bytes), and 3 sessions opened and closed
     * (with {@code sessions} false, 3 more Supervisor writes instead: 17 of 20).
     */
    private static int load(ZooKeeper zk, String address, int n, boolean sessions) throws Exception {
        int written = 0;
        for (int i = 0; written < n; i++) {
            int r = i % 17;
            if (r < 12) {
                zk.setData(SUPERVISOR, new byte[187], -1);
                written++;
            } else if (r < 14) {
                zk.setData(WORKER + (r - 12), new byte[r == 12 ? 750 : 527], -1);
                written++;
            } else if (sessions) {
                connect(address).close();
                written += 2;
            } else {
                zk.setData(SUPERVISOR, new byte[187], -1);
                written++;
            }
        }
        return written;
    }
}
