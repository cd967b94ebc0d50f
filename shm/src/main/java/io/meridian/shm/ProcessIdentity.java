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

    public static String describe(long pid, long startMillis) {
        if (pid <= 0) {
            return "not attached";
        }
        return "pid " + pid + (alive(pid, startMillis) ? ", alive" : ", gone");
    }
}
