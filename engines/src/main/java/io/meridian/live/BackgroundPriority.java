package io.meridian.live;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * Lowers the calling thread's scheduling priority to the lowest nice value (Linux: a thread has its own nice value,
 * set through its thread id). For work that should use only the CPU the rounds leave: DA-PWC in the background takes
 * 16 s of a core at N = 4000, and on a host with fewer cores than busy threads the kernel otherwise shares them
 * equally with the rounds that new points wait for. Raising a nice value needs no privilege. A nice value orders a
 * thread only inside its session's autogroup, so the thread also joins the bulk threads' cgroup where there is one
 * ({@link BulkCgroup}). Best effort: where there is no {@code /proc/thread-self}, no {@code renice} or no cgroup to
 * join, the thread runs on at its priority and the reason is returned.
 */
public final class BackgroundPriority {
    private static final Path THREAD_SELF = Path.of("/proc/thread-self");
    private static final int LOWEST = 19;

    private BackgroundPriority() {
    }

    /** Lowers the calling thread's priority to the lowest; returns null when done, else why not. */
    public static String lowerCurrentThread() {
        return lowerCurrentThread(LOWEST);
    }

    /**
     * Lowers the calling thread's priority to nice {@code nice} (1..19) unless it is that low already, and moves it into
     * the bulk threads' cgroup where there is one ({@link BulkCgroup}); returns null when done, else why not. Threads
     * the caller starts afterwards inherit both.
     */
    public static String lowerCurrentThread(int nice) {
        if (nice < 1 || nice > LOWEST) {
            throw new IllegalArgumentException("a thread's nice value to lower to must be 1.." + LOWEST + ", got " + nice);
        }
        long tid;
        try {
            // "/proc/thread-self" links to "<pid>/task/<tid>"
            tid = Long.parseLong(Files.readSymbolicLink(THREAD_SELF).getFileName().toString());
        } catch (IOException | UnsupportedOperationException | NumberFormatException e) {
            return "no thread id from " + THREAD_SELF + ": " + e.getMessage();
        }
        String niceFailure = lowerNice(tid, nice);
        Path cgroup = BulkCgroup.configured();
        String cgroupFailure = cgroup == null ? null : BulkCgroup.join(cgroup, tid);
        if (niceFailure == null || cgroupFailure == null) {
            return niceFailure == null ? cgroupFailure : niceFailure;
        }
        return niceFailure + "; " + cgroupFailure;
    }

    private static String lowerNice(long tid, int nice) {
        try {
            if (currentNice() >= nice) {
                return null;
            }
        } catch (IOException | RuntimeException e) {
            return "no nice value from " + THREAD_SELF + ": " + e.getMessage();
        }
        try {
            Process p = new ProcessBuilder("renice", "-n", Integer.toString(nice), "-p", Long.toString(tid))
                    .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
            if (!p.waitFor(5, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                return "renice of thread " + tid + " did not end within 5 s";
            }
            return p.exitValue() == 0 ? null : "renice of thread " + tid + " exited " + p.exitValue();
        } catch (IOException e) {
            return "renice of thread " + tid + " failed: " + e.getMessage();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "interrupted while lowering thread " + tid;
        }
    }

    /** The calling thread's nice value, from {@code /proc/thread-self/stat} (field 19). */
    public static int currentNice() throws IOException {
        String stat = Files.readString(THREAD_SELF.resolve("stat"));
        // the command name (field 2) is in parentheses and may hold spaces: count fields after its closing one
        String[] fields = stat.substring(stat.lastIndexOf(')') + 2).trim().split(" ");
        return Integer.parseInt(fields[16]); // field 19 of the whole line; this array starts at field 3
    }
}
