package io.meridian.collective;

import java.nio.DoubleBuffer;
import java.nio.LongBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * A member of one or two groups served by the same leader daemons (the live map's rounds and clustering groups), run as
 * its own JVM by {@link LeaderDaemonIT}: {@code ROOT NODE_GROUP MEMBER TIMEOUT_MS MODE JOB [JOB2]}. Each job gets a
 * thread of its own calling collectives on it; the second job's thread runs the calls of a round in the opposite
 * order, and node group 1 starts it first, so the daemons' two MPI exchanges interleave differently on each side.
 * MODE {@code N}: N rounds, every result checked ("CHECKED"); {@code forever}: rounds until a call fails ("RUNNING" after
 * 10); {@code latency}: times 1-long allreduces on the first job with the second idle, then busy.
 */
public final class TwoGroupMemberCheck {
    private static final int OPS = 6;

    public static void main(String[] args) throws Exception {
        Path root = Path.of(args[0]);
        int nodeGroup = Integer.parseInt(args[1]);
        int member = Integer.parseInt(args[2]);
        Duration timeout = Duration.ofMillis(Long.parseLong(args[3]));
        String mode = args[4];
        List<String> jobs = Arrays.asList(args).subList(5, args.length);
        TwoLevelCollectives[] cs = new TwoLevelCollectives[jobs.size()];
        for (int j = 0; j < cs.length; j++) {
            cs[j] = TwoLevelCollectives.attach(jobs.get(j), nodeGroup, member, root, timeout);
        }
        if (mode.equals("latency")) {
            latency(cs[0], cs[1]);
            closeAll(cs);
            System.exit(0);
        }
        long rounds = mode.equals("forever") ? Long.MAX_VALUE : Long.parseLong(mode);
        String[] failures = new String[cs.length];
        AtomicLong done = new AtomicLong();
        Thread[] threads = new Thread[cs.length];
        for (int j = 0; j < cs.length; j++) {
            int jj = j;
            threads[j] = new Thread(() -> {
                try {
                    run(cs[jj], jj % 2 == 1, rounds, done);
                } catch (CollectiveException e) {
                    failures[jj] = e.getMessage();
                    System.out.println("COLLECTIVE FAILURE job " + jobs.get(jj) + ": " + e.getMessage());
                    System.out.flush();
                } catch (AssertionError e) {
                    failures[jj] = e.getMessage();
                    System.out.println("WRONG RESULT job " + jobs.get(jj) + ": " + e.getMessage());
                    System.out.flush();
                }
            }, "calls-" + jobs.get(j));
        }
        for (int j = 0; j < cs.length; j++) {
            threads[nodeGroup % 2 == 0 ? j : cs.length - 1 - j].start();
            Thread.sleep(5);
        }
        long reported = 0;
        while (Arrays.stream(threads).anyMatch(Thread::isAlive)) {
            if (reported == 0 && rounds == Long.MAX_VALUE && done.get() >= 10L * cs.length) {
                reported = 1;
                System.out.println("RUNNING block " + cs[0].rank() + " pid " + ProcessHandle.current().pid());
                System.out.flush();
            }
            Thread.sleep(20);
        }
        if (Arrays.stream(failures).anyMatch(f -> f != null)) {
            System.exit(3);
        }
        closeAll(cs); // detached: a member that exits attached is gone to its leader, which fails the job
        for (int j = 0; j < cs.length; j++) {
            System.out.println("CHECKED job " + jobs.get(j) + " block " + cs[j].rank() + " of " + cs[j].size() + ": "
                    + rounds + " rounds of " + OPS + " calls");
        }
        System.exit(0);
    }

    private static void closeAll(TwoLevelCollectives[] cs) {
        for (TwoLevelCollectives c : cs) {
            c.close();
        }
    }

    /** {@code rounds} rounds of every kind of call, each result checked; {@code reversed}: each round's calls backwards. */
    private static void run(TwoLevelCollectives c, boolean reversed, long rounds, AtomicLong done) {
        int p = c.size();
        int b = c.rank();
        int[] counts = new int[p];
        int[] displs = new int[p];
        for (int k = 0; k < p; k++) {
            counts[k] = 1 + k;
            displs[k] = k * (k + 1) / 2;
        }
        ThreadLocalRandom random = ThreadLocalRandom.current();
        for (long r = 0; r < rounds; r++) {
            for (int step = 0; step < OPS; step++) {
                int op = reversed ? OPS - 1 - step : step;
                call(c, op, r, p, b, counts, displs);
                if (random.nextInt(4) == 0) {
                    LockSupport.parkNanos(random.nextInt(200_000)); // vary the interleaving with the other group
                }
            }
            done.incrementAndGet();
        }
    }

    private static void call(TwoLevelCollectives c, int op, long r, int p, int b, int[] counts, int[] displs) {
        String what = c.regionPath().getParent().getFileName() + " round " + r + " ";
        switch (op) {
            case 0 -> {
                int n = 3 + (int) (r % 5);
                DoubleBuffer in = c.reduceInput();
                for (int i = 0; i < n; i++) {
                    in.put(i, (b + 1) * (r + 1) + i);
                }
                DoubleBuffer out = c.allreduce(n, ReduceOp.SUM);
                for (int i = 0; i < n; i++) {
                    expect(out.get(i), (double) p * (p + 1) / 2 * (r + 1) + (double) p * i, what + "allreduce [" + i + "]");
                }
            }
            case 1 -> {
                LongBuffer in = c.reduceInputLongs();
                in.put(0, 1);
                in.put(1, b + r);
                LongBuffer out = c.allreduceLongs(2, ReduceOp.MAX);
                expect(out.get(0), 1, what + "allreduce of longs (max of ones)");
                expect(out.get(1), p - 1 + r, what + "allreduce of longs (max)");
            }
            case 2 -> {
                DoubleBuffer in = c.allgathervInput();
                for (int i = 0; i < counts[b]; i++) {
                    in.put(displs[b] + i, b * 1000 + r + i * 0.5);
                }
                DoubleBuffer out = c.allgatherv(counts, displs);
                for (int k = 0; k < p; k++) {
                    for (int i = 0; i < counts[k]; i++) {
                        expect(out.get(displs[k] + i), k * 1000 + r + i * 0.5, what + "allgatherv block " + k);
                    }
                }
            }
            case 3 -> {
                DoubleBuffer in = c.allgathervInput();
                for (int i = 0; i < counts[b]; i++) {
                    in.put(displs[b] + i, -(b * 1000 + r + i));
                }
                DoubleBuffer partial = c.reduceInput();
                partial.put(0, b + 1);
                partial.put(1, r);
                DoubleBuffer out = c.allgathervSum(counts, displs, 2);
                for (int k = 0; k < p; k++) {
                    for (int i = 0; i < counts[k]; i++) {
                        expect(out.get(displs[k] + i), -(k * 1000 + r + i), what + "allgathervSum block " + k);
                    }
                }
                expect(c.sums().get(0), (double) p * (p + 1) / 2, what + "allgathervSum's sum [0]");
                expect(c.sums().get(1), (double) p * r, what + "allgathervSum's sum [1]");
            }
            case 4 -> {
                int rootBlock = (int) (r % p);
                if (b == rootBlock) {
                    c.broadcastInput().put(0, rootBlock * 7 + r);
                }
                expect(c.broadcast(1, rootBlock).get(0), rootBlock * 7 + r, what + "broadcast from " + rootBlock);
            }
            default -> c.barrier();
        }
    }

    private static void expect(double got, double want, String what) {
        if (got != want) {
            throw new AssertionError(what + ": got " + got + ", expected " + want);
        }
    }

    /**
     * 2000 one-long allreduces on {@code first} timed with {@code second} idle, then 2000 more while another thread
     * keeps calling allreduces on {@code second} (it stops at the round where every member has set its flag).
     */
    private static void latency(TwoLevelCollectives first, TwoLevelCollectives second) throws InterruptedException {
        int calls = 2000;
        long[] idle = time(first, calls);
        AtomicLong stop = new AtomicLong();
        AtomicLong busyCalls = new AtomicLong();
        Thread busy = new Thread(() -> {
            while (true) {
                second.reduceInputLongs().put(0, stop.get());
                busyCalls.incrementAndGet();
                if (second.allreduceLongs(1, ReduceOp.MIN).get(0) == 1) {
                    return;
                }
            }
        }, "busy-second-group");
        busy.start();
        while (busyCalls.get() < 50) {
            Thread.sleep(1);
        }
        long[] loaded = time(first, calls);
        stop.set(1);
        busy.join();
        System.out.println(String.format(Locale.ROOT, "LATENCY block %d: first group's allreduce, second idle: median"
                + " %.3f ms, p90 %.3f ms; second busy (%d calls meanwhile): median %.3f ms, p90 %.3f ms",
                first.rank(), idle[calls / 2] / 1e6, idle[calls * 9 / 10] / 1e6, busyCalls.get(),
                loaded[calls / 2] / 1e6, loaded[calls * 9 / 10] / 1e6));
    }

    private static long[] time(TwoLevelCollectives c, int calls) {
        long[] nanos = new long[calls];
        for (int i = 0; i < calls; i++) {
            long t0 = System.nanoTime();
            c.reduceInputLongs().put(0, 1);
            if (c.allreduceLongs(1, ReduceOp.SUM).get(0) != c.size()) {
                throw new AssertionError("allreduce of ones");
            }
            nanos[i] = System.nanoTime() - t0;
        }
        Arrays.sort(nanos);
        return nanos;
    }
}
