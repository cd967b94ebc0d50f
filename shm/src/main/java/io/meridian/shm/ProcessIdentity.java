package io.meridian.shm;

import java.time.Instant;
import java.util.Optional;

/** Identity of a local process as stored in a region (pid + start time, so a reused pid is not taken for alive). */
public final class ProcessIdentity {
    public static final long SELF_PID = ProcessHandle.current().pid();
    public static final long SELF_START = startMillis(ProcessHandle.current());

    private ProcessIdentity() {
    }

    public static long startMillis(ProcessHandle handle) {
        return handle.info().startInstant().map(Instant::toEpochMilli).orElse(0L);
    }

    /** Whether the process {@code pid} started at {@code startMillis} (0: unknown) still runs; slow path only. */
    public static boolean alive(long pid, long startMillis) {
        if (pid <= 0) {
            return false;
        }
        Optional<ProcessHandle> handle = ProcessHandle.of(pid);
        if (handle.isEmpty() || !handle.get().isAlive()) {
            return false;
        }
        long start = startMillis(handle.get());
        // start times are read from /proc with coarse resolution: a small difference is the same process
        return startMillis == 0 || start == 0 || Math.abs(start - startMillis) < 2_000;
    }

    /**
     * The start time of process {@code pid} in clock ticks since boot (field 22 of /proc/PID/stat, as {@code ps -o
     * lstart} reads it), or -1 if there is no such process: with the pid, what a pid file records so that a reused pid
     * is never signalled. Field 2, the command name, may hold spaces and parentheses: fields are counted after its
     * last ')'.
     */
    public static long startTicks(long pid) {
        try {
            String stat = java.nio.file.Files.readString(java.nio.file.Path.of("/proc", Long.toString(pid), "stat"));
            String[] after = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            return Long.parseLong(after[19]); // field 22 = the 20th after the command name
        } catch (java.io.IOException | RuntimeException gone) {
            return -1;
        }
    }

    public static String describe(long pid, long startMillis) {
        if (pid <= 0) {
            return "not attached";
        }
        return "pid " + pid + (alive(pid, startMillis) ? ", alive" : ", gone");
    }
}
