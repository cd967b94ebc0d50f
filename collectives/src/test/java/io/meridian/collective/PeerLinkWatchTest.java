package io.meridian.collective;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.DoubleBuffer;
import java.nio.LongBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The watch over the leaders' MPI calls: a peer whose host does not answer TCP while a call waits for it is reported
 * within seconds, naming its group and host; one that answers (accepting or refusing the connection) is not, however
 * long the call waits.
 */
class PeerLinkWatchTest {
    /** An MPI exchange stand-in that waits, as MPI does for a silent peer, until it is let go. */
    private static final class Waiting implements LeaderExchange {
        final CountDownLatch release = new CountDownLatch(1);

        private void await() {
            try {
                release.await(30, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }

        @Override
        public void allgatherv(DoubleBuffer area, int[] groupCounts, int[] groupDispls) {
            await();
        }

        @Override
        public void allreduce(DoubleBuffer area, int count, ReduceOp op) {
            await();
        }

        @Override
        public void allreduce(LongBuffer area, int count, ReduceOp op) {
            await();
        }

        @Override
        public void broadcast(DoubleBuffer area, int count, int rootGroup) {
            await();
        }

        @Override
        public void barrier() {
            await();
        }

        @Override
        public void close() {
        }
    }

    @Test
    void aPeerThatDoesNotAnswerIsReportedWithinSecondsNamingItsGroupAndHost() throws Exception {
        // a peer that drops connection requests, as one behind a link that is down: a listening socket whose accept
        // queue is full (Linux drops the SYNs then; no address here is unrouted: this machine's gateway answers all)
        InetAddress loopback = InetAddress.getLoopbackAddress();
        List<Socket> queued = new ArrayList<>();
        try (ServerSocket full = new ServerSocket(0, 1, loopback)) {
            for (int i = 0; i < 4; i++) {
                Socket s = new Socket();
                queued.add(s);
                try {
                    s.connect(new InetSocketAddress(loopback, full.getLocalPort()), 200);
                } catch (IOException e) {
                    break; // the queue is full
                }
            }
            assertTrue(PeerLinkWatch.probe(new PeerLinkWatch.Peer(1, loopback.getHostAddress(), full.getLocalPort()))
                    != null, "a connection to a full accept queue is not answered");
            aSilentPeerIsReported(new PeerLinkWatch.Peer(1, loopback.getHostAddress(), full.getLocalPort()));
        } finally {
            for (Socket s : queued) {
                s.close();
            }
        }
    }

    private static void aSilentPeerIsReported(PeerLinkWatch.Peer silent) throws Exception {
        String where = silent.host() + ":" + silent.port();
        BlockingQueue<String> reported = new ArrayBlockingQueue<>(1);
        Waiting mpi = new Waiting();
        PeerLinkWatch watch = new PeerLinkWatch(mpi, List.of(silent), reported::add);
        long t0 = System.nanoTime();
        Thread call = new Thread(() -> watch.allreduce(DoubleBuffer.allocate(1), 1, ReduceOp.SUM));
        call.start();
        String reason = reported.poll(15, TimeUnit.SECONDS);
        double seconds = (System.nanoTime() - t0) / 1e9;
        mpi.release.countDown();
        call.join();
        watch.close();
        System.out.printf("PeerLinkWatchTest: reported after %.1f s: %s%n", seconds, reason);
        assertTrue(reason != null && reason.startsWith("the link to group 1 on " + silent.host() + " is down: 2"
                + " connections to " + where + " in a row failed"), String.valueOf(reason));
        assertTrue(reason.contains("while MPI allreduce waited"), reason);
        // 1 s before the first probe, two probes of at most 1 s each, 0.5 s apart
        assertTrue(seconds < 6, "reported within 6 s: " + seconds);
    }

    /**
     * A daemon serving two groups watches both exchanges with one watch: a second group's call that waits is reported
     * naming its job, although the first group's calls keep coming and going meanwhile.
     */
    @Test
    void aSecondExchangeWaitingIsReportedNamingItsJobWhileTheFirstKeepsCalling() throws Exception {
        InetAddress loopback = InetAddress.getLoopbackAddress();
        List<Socket> queued = new ArrayList<>();
        try (ServerSocket full = new ServerSocket(0, 1, loopback)) {
            for (int i = 0; i < 4; i++) {
                Socket s = new Socket();
                queued.add(s);
                try {
                    s.connect(new InetSocketAddress(loopback, full.getLocalPort()), 200);
                } catch (IOException e) {
                    break;
                }
            }
            BlockingQueue<String> reported = new ArrayBlockingQueue<>(1);
            Waiting quick = new Waiting();
            quick.release.countDown(); // the first group's calls return at once
            Waiting stuck = new Waiting();
            PeerLinkWatch watch = new PeerLinkWatch(quick, List.of(new PeerLinkWatch.Peer(1,
                    loopback.getHostAddress(), full.getLocalPort())), reported::add);
            LeaderExchange second = watch.alsoWatch(stuck, "job cluster-7");
            java.util.concurrent.atomic.AtomicBoolean done = new java.util.concurrent.atomic.AtomicBoolean();
            Thread firstCalls = new Thread(() -> {
                while (!done.get()) {
                    watch.barrier();
                    java.util.concurrent.locks.LockSupport.parkNanos(1_000_000);
                }
            });
            firstCalls.start();
            long t0 = System.nanoTime();
            Thread call = new Thread(() -> second.allgatherv(DoubleBuffer.allocate(2), new int[] {1, 1},
                    new int[] {0, 1}));
            call.start();
            String reason = reported.poll(15, TimeUnit.SECONDS);
            double seconds = (System.nanoTime() - t0) / 1e9;
            stuck.release.countDown();
            done.set(true);
            call.join();
            firstCalls.join();
            watch.close();
            second.close();
            assertTrue(reason != null && reason.startsWith("the link to group 1 on " + loopback.getHostAddress()
                    + " is down: 2 connections"), String.valueOf(reason));
            assertTrue(reason.contains("while MPI allgatherv of job cluster-7 waited"), reason);
            assertTrue(seconds < 6, "reported within 6 s: " + seconds);
        } finally {
            for (Socket s : queued) {
                s.close();
            }
        }
    }

    @Test
    void peersThatAcceptOrRefuseAreThereHoweverLongTheCallWaits() throws Exception {
        InetAddress loopback = InetAddress.getLoopbackAddress();
        try (ServerSocket listening = new ServerSocket(0, 50, loopback)) {
            int closedPort;
            try (ServerSocket closed = new ServerSocket(0, 50, loopback)) {
                closedPort = closed.getLocalPort();
            }
            assertNull(PeerLinkWatch.probe(new PeerLinkWatch.Peer(1, loopback.getHostAddress(), closedPort)),
                    "a refused connection is an answer");
            BlockingQueue<String> reported = new ArrayBlockingQueue<>(1);
            Waiting mpi = new Waiting();
            PeerLinkWatch watch = new PeerLinkWatch(mpi, List.of(
                    new PeerLinkWatch.Peer(1, loopback.getHostAddress(), listening.getLocalPort()),
                    new PeerLinkWatch.Peer(2, loopback.getHostAddress(), closedPort)), reported::add);
            Thread call = new Thread(watch::barrier);
            call.start();
            assertNull(reported.poll(4, TimeUnit.SECONDS), "nothing reported while both answer");
            mpi.release.countDown();
            call.join();
            watch.close();
            assertEquals(0, reported.size());
        }
    }
}
