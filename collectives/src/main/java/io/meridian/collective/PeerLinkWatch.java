package io.meridian.collective;

import java.nio.DoubleBuffer;
import java.nio.LongBuffer;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * The leaders' MPI exchange, watched: while a call waits in MPI longer than {@link #PROBE_AFTER_NANOS}, a thread of its
 * own opens a TCP connection to every other host's leader daemon once a {@link #PROBE_INTERVAL_NANOS}, and when one
 * host has not answered {@link #MISSES} times in a row it reports the link to that host as down. Open MPI's TCP
 * transport never fails a call whose peer went silent (the kernel retransmits for minutes), so without this a link
 * down was found only when the members' call timed out ({@code map.collectiveTimeoutMs}, 30 s by default). A refused
 * connection is an answer: the host is there. The calls themselves only store a volatile long before and after,
 * allocation-free.
 *
 * <p>Links are per host, not per communicator: a daemon that serves a second group on a communicator of its own
 * watches that group's exchange with the same watch ({@link #alsoWatch}), one probing thread for both. The watch
 * follows the call that has waited longest, whichever group's; its misses count while that call lasts.
 */
final class PeerLinkWatch implements LeaderExchange {
    static final long PROBE_AFTER_NANOS = TimeUnit.SECONDS.toNanos(1);
    static final long PROBE_INTERVAL_NANOS = TimeUnit.MILLISECONDS.toNanos(500);
    static final int CONNECT_TIMEOUT_MS = 1000;
    static final int MISSES = 2;

    /** Another host's leader daemon: its group (MPI rank), host and a TCP port it answers on. */
    record Peer(int group, String host, int port) {
    }

    private final List<Peer> peers;
    /** The first exchange watched (this object's calls) and any added by {@link #alsoWatch}; read by the watcher. */
    private final List<Watched> watched = new CopyOnWriteArrayList<>();
    private final Watched first;
    private final Thread watcher;

    /**
     * Watches {@code inner}'s calls; {@code onLinkDown} gets the one-line reason (it is expected not to return: the
     * daemon fails its region and exits).
     */
    PeerLinkWatch(LeaderExchange inner, List<Peer> peers, Consumer<String> onLinkDown) {
        this.peers = List.copyOf(peers);
        this.first = new Watched(inner, "");
        watched.add(first);
        this.watcher = new Thread(() -> watch(onLinkDown), "meridian-leader-link-watch");
        watcher.setDaemon(true);
        if (!this.peers.isEmpty()) {
            watcher.start();
        }
    }

    /**
     * Watches another exchange between the same daemons (a second group's communicator) with this watch's thread and
     * peers; {@code label} names it in the reason ("allreduce of job J2"). Closing it closes {@code inner} only.
     */
    LeaderExchange alsoWatch(LeaderExchange inner, String label) {
        Watched w = new Watched(inner, label);
        watched.add(w);
        return w;
    }

    private void watch(Consumer<String> onLinkDown) {
        int[] misses = new int[peers.size()];
        String[] lastError = new String[peers.size()];
        Watched watchedBy = null;
        long watchedCall = 0;
        while (true) {
            // the call that has waited longest, of any group
            Watched oldest = null;
            long entered = 0;
            for (int w = 0; w < watched.size(); w++) {
                Watched c = watched.get(w);
                long at = c.enteredAt;
                if (at != 0 && (oldest == null || at - entered < 0)) {
                    oldest = c;
                    entered = at;
                }
            }
            long now = System.nanoTime();
            if (oldest != watchedBy || entered != watchedCall) {
                Arrays.fill(misses, 0); // misses count within one MPI call only
                watchedBy = oldest;
                watchedCall = entered;
            }
            if (oldest == null || now - entered < PROBE_AFTER_NANOS) {
                Arrays.fill(misses, 0);
            } else {
                for (int i = 0; i < peers.size(); i++) {
                    Peer p = peers.get(i);
                    String error = probe(p);
                    misses[i] = error == null ? 0 : misses[i] + 1;
                    lastError[i] = error;
                    if (misses[i] >= MISSES && oldest.enteredAt == entered) {
                        onLinkDown.accept(String.format(Locale.ROOT, "the link to group %d on %s is down: %d"
                                + " connections to %s:%d in a row failed (%s) while MPI %s%s waited %.1f s for it",
                                p.group(), p.host(), misses[i], p.host(), p.port(), lastError[i], oldest.call,
                                oldest.label.isEmpty() ? "" : " of " + oldest.label,
                                (System.nanoTime() - entered) / 1e9));
                        return;
                    }
                }
            }
            try {
                TimeUnit.NANOSECONDS.sleep(PROBE_INTERVAL_NANOS);
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    /** Null when {@code p}'s host answered (accepted or refused the connection), else what went wrong. */
    static String probe(Peer p) {
        return HostProbe.unanswered(p.host(), p.port(), CONNECT_TIMEOUT_MS);
    }

    @Override
    public void allgatherv(DoubleBuffer area, int[] groupCounts, int[] groupDispls) {
        first.allgatherv(area, groupCounts, groupDispls);
    }

    @Override
    public void allreduce(DoubleBuffer area, int count, ReduceOp op) {
        first.allreduce(area, count, op);
    }

    @Override
    public void allreduce(LongBuffer area, int count, ReduceOp op) {
        first.allreduce(area, count, op);
    }

    @Override
    public void broadcast(DoubleBuffer area, int count, int rootGroup) {
        first.broadcast(area, count, rootGroup);
    }

    @Override
    public void barrier() {
        first.barrier();
    }

    @Override
    public void startAllgatherv(DoubleBuffer area, int[] groupCounts, int[] groupDispls) {
        first.startAllgatherv(area, groupCounts, groupDispls);
    }

    @Override
    public void startAllreduce(DoubleBuffer area, int count, ReduceOp op) {
        first.startAllreduce(area, count, op);
    }

    @Override
    public void startAllreduce(LongBuffer area, int count, ReduceOp op) {
        first.startAllreduce(area, count, op);
    }

    @Override
    public void startBroadcast(DoubleBuffer area, int count, int rootGroup) {
        first.startBroadcast(area, count, rootGroup);
    }

    @Override
    public void startBarrier() {
        first.startBarrier();
    }

    @Override
    public boolean complete() {
        return first.complete();
    }

    /** Stops the watch and closes the first exchange (one added by {@link #alsoWatch} is closed by its owner). */
    @Override
    public void close() {
        watcher.interrupt();
        first.close();
    }

    /** One exchange's calls as the watcher sees them: when the current one began, and which it is. */
    private static final class Watched implements LeaderExchange {
        private final LeaderExchange inner;
        private final String label;
        /** {@code System.nanoTime()} when the current exchange began; 0 while none runs. Written by the calling thread. */
        private volatile long enteredAt;
        private volatile String call = "";

        Watched(LeaderExchange inner, String label) {
            this.inner = inner;
            this.label = label;
        }

        private void enter(String what) {
            call = what;
            long now = System.nanoTime();
            enteredAt = now == 0 ? 1 : now;
        }

        private void leave() {
            enteredAt = 0;
        }

        @Override
        public void allgatherv(DoubleBuffer area, int[] groupCounts, int[] groupDispls) {
            enter("allgatherv");
            try {
                inner.allgatherv(area, groupCounts, groupDispls);
            } finally {
                leave();
            }
        }

        @Override
        public void allreduce(DoubleBuffer area, int count, ReduceOp op) {
            enter("allreduce");
            try {
                inner.allreduce(area, count, op);
            } finally {
                leave();
            }
        }

        @Override
        public void allreduce(LongBuffer area, int count, ReduceOp op) {
            enter("allreduce");
            try {
                inner.allreduce(area, count, op);
            } finally {
                leave();
            }
        }

        @Override
        public void broadcast(DoubleBuffer area, int count, int rootGroup) {
            enter("broadcast");
            try {
                inner.broadcast(area, count, rootGroup);
            } finally {
                leave();
            }
        }

        @Override
        public void barrier() {
            enter("barrier");
            try {
                inner.barrier();
            } finally {
                leave();
            }
        }

        /* a started call is watched from its start until complete() sees it done (or it fails) */

        @Override
        public void startAllgatherv(DoubleBuffer area, int[] groupCounts, int[] groupDispls) {
            enter("allgatherv");
            inner.startAllgatherv(area, groupCounts, groupDispls);
        }

        @Override
        public void startAllreduce(DoubleBuffer area, int count, ReduceOp op) {
            enter("allreduce");
            inner.startAllreduce(area, count, op);
        }

        @Override
        public void startAllreduce(LongBuffer area, int count, ReduceOp op) {
            enter("allreduce");
            inner.startAllreduce(area, count, op);
        }

        @Override
        public void startBroadcast(DoubleBuffer area, int count, int rootGroup) {
            enter("broadcast");
            inner.startBroadcast(area, count, rootGroup);
        }

        @Override
        public void startBarrier() {
            enter("barrier");
            inner.startBarrier();
        }

        @Override
        public boolean complete() {
            boolean done = true;
            try {
                done = inner.complete();
            } finally {
                if (done) {
                    leave();
                }
            }
            return done;
        }

        @Override
        public void close() {
            inner.close();
        }
    }
}
