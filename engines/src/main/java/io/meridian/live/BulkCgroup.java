package io.meridian.live;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Map;

/**
 * The cgroup (Linux cgroup v1, cpu controller) that the live map's bulk threads join: the rounds, DA-PWC and the
 * outlier search. {@code meridian cluster start} makes it with {@code cpu.idle = 1}: the kernel then runs its threads
 * only on CPU nothing else wants and preempts them as soon as anything else wakes, across sessions. A thread's nice
 * value orders it only inside its session's autogroup: at N = 100,000 the rounds keep both cores busy all the time,
 * and at nice 10 inside the Supervisor's autogroup they left the Kafka broker 2 % of a core (rows acknowledged 41 s
 * p99 after they were published, bench scale --part published); lowering the whole autogroup instead starved the
 * ingest executors beside them (bench ingest paced p99 2.4 s -> 15 s).
 *
 * <p>Which cgroup: the directory in {@value #ENV}, which {@code meridian cluster start} gives the Supervisor and so
 * its workers ({@link #DEFAULT} unless configured); unset or empty: none. Not the default directory merely because it
 * exists: a LocalCluster's map there (LocalScaleIT, N = 20,000) took 629 s instead of 162 s, its rounds getting only
 * what its own ingest executors, polling at nice 0, left. A thread moves alone (v1's {@code tasks} file takes thread
 * ids) and the threads it starts afterwards are born in it. Best effort, like the nice value: without the cgroup a
 * thread runs on where it is and the reason is returned.
 */
public final class BulkCgroup {
    public static final String ENV = "MERIDIAN_BULK_CGROUP";
    public static final Path DEFAULT = Path.of("/sys/fs/cgroup/cpu/meridian-bulk");
    private static final Path THREAD_SELF_CGROUP = Path.of("/proc/thread-self/cgroup");

    private BulkCgroup() {
    }

    /** The cgroup directory bulk threads join here ({@value #ENV}), or null for none. */
    public static Path configured() {
        return configured(System.getenv());
    }

    static Path configured(Map<String, String> env) {
        String dir = env.get(ENV);
        return dir == null || dir.isBlank() ? null : Path.of(dir.trim());
    }

    /** Moves thread {@code tid} into {@code dir}; returns null when done, else why not. */
    public static String join(Path dir, long tid) {
        Path tasks = dir.resolve("tasks");
        if (!Files.isRegularFile(tasks)) {
            return "no cgroup at " + dir + " (no " + tasks + "; ./meridian cluster start makes it where the cgroup v1"
                    + " cpu controller is mounted)";
        }
        try {
            Files.writeString(tasks, Long.toString(tid));
            return null;
        } catch (IOException e) {
            return "could not move thread " + tid + " into " + dir + ": " + e.getMessage();
        }
    }

    /**
     * The calling thread's cgroup under the cpu controller (the path after the hierarchy's mount point, "/" for the
     * root), from {@code /proc/thread-self/cgroup}; null where no v1 hierarchy has the cpu controller.
     */
    public static String currentThreadCpuCgroup() throws IOException {
        return cpuCgroup(THREAD_SELF_CGROUP);
    }

    /** The same, from a {@code /proc/PID/task/TID/cgroup} file of any thread. */
    public static String cpuCgroup(Path procCgroupFile) throws IOException {
        for (String line : Files.readAllLines(procCgroupFile)) {
            // "4:cpu:/meridian-bulk" or "3:cpu,cpuacct:/"; cgroup v2's line is "0::/..."
            String[] fields = line.split(":", 3);
            if (fields.length == 3 && Arrays.asList(fields[1].split(",")).contains("cpu")) {
                return fields[2];
            }
        }
        return null;
    }
}
