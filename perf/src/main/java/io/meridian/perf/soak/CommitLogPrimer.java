package io.meridian.perf.soak;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.storm.shade.org.apache.zookeeper.CreateMode;
import org.apache.storm.shade.org.apache.zookeeper.KeeperException;
import org.apache.storm.shade.org.apache.zookeeper.ZooDefs;
import org.apache.storm.shade.org.apache.zookeeper.ZooKeeper;
import org.apache.storm.shade.org.apache.zookeeper.data.Stat;

/**
 * Fills ZooKeeper's committed-proposal cache before the soak's early window, so that the live heap the soak compares
 * is ZooKeeper's steady state and not a bounded cache filling up.
 *
 * <p>Why: ZooKeeper keeps its last {@code zookeeper.commitLogCount} committed transactions in memory
 * ({@code ZKDatabase.committedLog}, 500, and it raises any lower setting to 500), in standalone mode too. The cluster
 * writes about 0.3 transactions/s to it (a bench's cluster read Zxid 0xe7 -> 0xfb in 60 s: the Supervisor's heartbeat
 * of 187 bytes every 5 s, each worker's heartbeat of 150-800 bytes once a minute, sessions), so from a fresh data
 * directory the cache takes about 30 minutes to fill: the whole soak. The 30-minute soak of 2026-11-29 read
 * ZooKeeper's live heap +5.5 % (0.36 MB of 6.6 MB: Request, TxnHeader, SetDataRequest, byte[]) and nothing else grew.
 *
 * <p>How: one soak-owned znode, {@link #PATH}, written {@code commitLogCount} times, then deleted: afterwards the
 * cache holds only this session's proposals, and each transaction of the cluster replaces one of them. Each write
 * carries the cluster's own mean bytes (path and data) per transaction, measured over the warm-up
 * ({@link #meanBytesPerTransaction}): then the cache's bytes stay what they are if the cluster's mix of writes holds,
 * and grow only if its writes grow. Measured on a standalone ZooKeeper 3.9.4 (256 MB heap, live heap from
 * {@code jcmd GC.class_histogram} every 100 transactions) under the cluster's mix (of each 20 transactions 12 writes of
 * 187 bytes to a 64-character path, one of 750 and one of 527 bytes to 115-character paths, as a bench's cluster
 * wrote them in a minute, and the other 6 taken as 3 sessions opened and closed):
 * <ul>
 *   <li>unprimed, the cache held 110, 210, ... 500 proposals and the live heap grew 12.660 -> 13.149 MB (1.25 KB a
 *       proposal), then stayed within 0.02 MB for 500 more transactions: a bounded cache filling, no leak;
 *   <li>primed with the mean (226 bytes a transaction, 201 of them data), 13.061 -> 13.153 MB as the mix's
 *       transactions replaced the priming's: +0.09 MB, all of it the sessions, which count as no bytes here but keep
 *       about 600 bytes more each (the closed connection their proposals' requests still reference:
 *       {@code NIOServerCnxn} 2 -> 76 instances); with writes only (mean 311 bytes), 13.124 -> 13.117-13.123 MB. So
 *       the mean errs towards reading growth, and does not hide it;
 *   <li>primed with the largest znode (750 bytes), 13.594 -> 13.143 MB: -0.45 MB, which on the cluster's 6.6 MB
 *       ZooKeeper heap is -6.8 %, enough to hide a leak of that size. Hence the mean, not the largest znode.
 * </ul>
 * 502 pipelined writes took 0.13-0.34 s there ({@code CommitLogCacheExperiment} in perf's tests repeats it).
 */
final class CommitLogPrimer implements AutoCloseable {
    /** The soak's own znode: created, written and deleted by the priming. */
    static final String PATH = "/meridian-soak-commit-log";
    /** ZooKeeper's {@code ZKDatabase.COMMIT_LOG_COUNT} system property, and its default, which is also its least. */
    static final String COMMIT_LOG_COUNT_PROPERTY = "zookeeper.commitLogCount";
    static final int DEFAULT_COMMIT_LOG_COUNT = 500;
    /**
     * Writes in flight at once: ZooKeeper then syncs its log once for many (500 writes one at a time, each waiting
     * for its fsync, took seconds on the shared machine; CI's 3-minute soak can spare only a few).
     */
    private static final int IN_FLIGHT = 64;
    private static final int SESSION_TIMEOUT_MS = 30_000;

    /** One znode of a census: what its {@link Stat} says. */
    record Node(long czxid, int version, int dataLength) {
    }

    /**
     * The tree at one moment and ZooKeeper's last transaction then ({@code srvr}'s Zxid).
     *
     * @param nodes by path; {@code /zookeeper} (ZooKeeper's own) left out
     */
    record Census(long zxid, long nanos, Map<String, Node> nodes) {
    }

    /**
     * What the cluster wrote between two censuses.
     *
     * @param transactions    every transaction (Zxid difference): writes, creates, deletes, sessions
     * @param bytes           path and data bytes of the writes and creates among them (each write counted with the
     *                        znode's data at the second census; deletes and sessions carry none)
     * @param meanBytes       {@code bytes / transactions}, rounded up (0 with no transactions)
     * @param maxDataLength   the largest znode data at the second census
     */
    record Sizing(long transactions, long bytes, int meanBytes, int maxDataLength, double seconds) {
    }

    /**
     * What the priming did.
     *
     * @param proposals       transactions written (the create, every write, the delete)
     * @param payloadBytes    data bytes of each write and of the create
     * @param seconds         from the create to the delete's answer
     */
    record Priming(int commitLogCount, int proposals, int payloadBytes, double seconds, Sizing sizing) {
    }

    private final String address;
    private final ZooKeeper zk;

    private CommitLogPrimer(String address, ZooKeeper zk) {
        this.address = address;
        this.zk = zk;
    }

    /** A session with ZooKeeper at {@code host:port}, waited for at most 30 s. */
    static CommitLogPrimer connect(String address) throws IOException, InterruptedException {
        ZooKeeper zk = new ZooKeeper(address, SESSION_TIMEOUT_MS, event -> { });
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (zk.getState() != ZooKeeper.States.CONNECTED) {
            if (System.nanoTime() > deadline || !zk.getState().isAlive()) {
                zk.close();
                throw new IOException("no session with ZooKeeper at " + address + " within 30 s (state "
                        + zk.getState() + ")");
            }
            Thread.sleep(20);
        }
        return new CommitLogPrimer(address, zk);
    }

    /** The tree's znodes with their versions and data lengths, and ZooKeeper's last Zxid before the walk. */
    Census census() throws IOException, KeeperException, InterruptedException {
        long zxid = lastZxid(address);
        long nanos = System.nanoTime();
        Map<String, Node> nodes = new HashMap<>();
        Deque<String> todo = new ArrayDeque<>(List.of("/"));
        while (!todo.isEmpty()) {
            String path = todo.pop();
            Stat stat = new Stat();
            List<String> children;
            try {
                children = zk.getChildren(path, false, stat);
            } catch (KeeperException.NoNodeException e) {
                continue; // deleted since its parent was listed
            }
            nodes.put(path, new Node(stat.getCzxid(), stat.getVersion(), stat.getDataLength()));
            for (String child : children) {
                String c = path.equals("/") ? "/" + child : path + "/" + child;
                if (!c.equals("/zookeeper")) {
                    todo.push(c);
                }
            }
        }
        return new Census(zxid, nanos, nodes);
    }

    /**
     * What the cluster wrote from {@code before} to {@code after}: each znode's new versions (setData) and each znode
     * created meanwhile (its create and its versions), with its path and its data at {@code after}; every other
     * transaction (deletes, sessions, znodes created and deleted in between) as none. The znodes' data at
     * {@code after} stand for their earlier writes: Storm's heartbeats grow while their statistics fill up (a worker's
     * 176 -> 750 bytes in its first minute), so this errs towards the larger.
     */
    static Sizing meanBytesPerTransaction(Census before, Census after) {
        long transactions = Math.max(0, transactionsBetween(before.zxid(), after.zxid()));
        long bytes = 0;
        int max = 0;
        for (Map.Entry<String, Node> e : after.nodes().entrySet()) {
            Node now = e.getValue();
            max = Math.max(max, now.dataLength());
            Node then = before.nodes().get(e.getKey());
            long writes;
            if (then != null && then.czxid() == now.czxid()) {
                writes = Math.max(0, now.version() - then.version());
            } else if (now.czxid() > before.zxid()) {
                writes = 1 + now.version(); // created since: the create and its setData calls
            } else {
                writes = 0; // there before the first census yet not walked then: nothing known of its writes
            }
            bytes += writes * (e.getKey().getBytes(StandardCharsets.UTF_8).length + (long) now.dataLength());
        }
        int mean = transactions == 0 ? 0 : (int) Math.min(Integer.MAX_VALUE, (bytes + transactions - 1) / transactions);
        return new Sizing(transactions, bytes, mean, max, (after.nanos() - before.nanos()) / 1e9);
    }

    /** Transactions from one Zxid to another: the counters' difference within an epoch, the later counter across. */
    static long transactionsBetween(long from, long to) {
        return (from >>> 32) == (to >>> 32) ? to - from : to & 0xffffffffL;
    }

    /**
     * The data bytes of each priming write so that, with its path, it carries {@code meanBytes}: the cluster's mean
     * per transaction, which counts the path (Storm's are 60-130 characters, kept in each proposal) and the data.
     */
    static int payloadFor(int meanBytes) {
        return Math.max(0, meanBytes - PATH.getBytes(StandardCharsets.UTF_8).length);
    }

    /**
     * The committed-log capacity a ZooKeeper JVM started with {@code args} uses: its {@code -Dzookeeper.commitLogCount}
     * (ZooKeeper raises a value below 500 to 500), else 500.
     */
    static int commitLogCount(List<String> args) {
        String prefix = "-D" + COMMIT_LOG_COUNT_PROPERTY + "=";
        int count = DEFAULT_COMMIT_LOG_COUNT;
        for (String a : args) {
            if (a.startsWith(prefix)) {
                try {
                    count = Math.max(DEFAULT_COMMIT_LOG_COUNT, Integer.parseInt(a.substring(prefix.length()).trim()));
                } catch (NumberFormatException e) {
                    count = DEFAULT_COMMIT_LOG_COUNT; // ZooKeeper's Integer.getInteger reads it as unset
                }
            }
        }
        return count;
    }

    /**
     * {@link #PATH} created with {@code payloadBytes} of data, written {@code writes} times with as many, then
     * deleted; the writes pipelined, at most {@link #IN_FLIGHT} unanswered.
     */
    Priming prime(int commitLogCount, int writes, int payloadBytes, Sizing sizing)
            throws KeeperException, InterruptedException {
        byte[] payload = new byte[payloadBytes];
        Arrays.fill(payload, (byte) 'm');
        long start = System.nanoTime();
        try {
            zk.create(PATH, payload, ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
        } catch (KeeperException.NodeExistsException e) {
            zk.setData(PATH, payload, -1); // left by a soak that was killed while priming: written over, deleted below
        }
        Semaphore window = new Semaphore(IN_FLIGHT);
        AtomicInteger answered = new AtomicInteger();
        AtomicReference<KeeperException.Code> failure = new AtomicReference<>();
        for (int i = 0; i < writes; i++) {
            window.acquire();
            zk.setData(PATH, payload, -1, (rc, path, ctx, stat) -> {
                if (rc != KeeperException.Code.OK.intValue()) {
                    failure.compareAndSet(null, KeeperException.Code.get(rc));
                }
                answered.incrementAndGet();
                window.release();
            }, null);
        }
        if (!window.tryAcquire(IN_FLIGHT, 120, TimeUnit.SECONDS)) {
            throw new IllegalStateException("ZooKeeper at " + address + " answered " + answered.get() + " of "
                    + writes + " priming writes to " + PATH + " within 120 s");
        }
        window.release(IN_FLIGHT);
        zk.delete(PATH, -1);
        double seconds = (System.nanoTime() - start) / 1e9;
        if (failure.get() != null) {
            throw KeeperException.create(failure.get(), PATH);
        }
        return new Priming(commitLogCount, writes + 2, payloadBytes, seconds, sizing);
    }

    @Override
    public void close() throws InterruptedException {
        zk.close();
    }

    /** ZooKeeper's last processed Zxid, from its {@code srvr} four-letter command (the cluster's zoo.cfg allows it). */
    static long lastZxid(String address) throws IOException {
        int colon = address.lastIndexOf(':');
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress(address.substring(0, colon),
                    Integer.parseInt(address.substring(colon + 1))), 5000);
            s.setSoTimeout(5000);
            OutputStream out = s.getOutputStream();
            out.write("srvr".getBytes(StandardCharsets.US_ASCII));
            out.flush();
            InputStream in = s.getInputStream();
            String answer = new String(in.readAllBytes(), StandardCharsets.US_ASCII);
            for (String line : answer.split("\n")) {
                if (line.startsWith("Zxid:")) {
                    return Long.decode(line.substring(5).strip());
                }
            }
            throw new IOException("ZooKeeper at " + address + " answered srvr without a Zxid line (is srvr in"
                    + " 4lw.commands.whitelist?): " + answer.strip());
        }
    }
}
