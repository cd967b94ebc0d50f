package io.meridian.perf;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * CPU time of processes and their threads from {@code /proc} (utime + stime, in clock ticks of 10 ms), and the Java
 * names of a JVM's threads from {@code jcmd PID Thread.print} (Linux keeps only 15 characters of a thread's name, which
 * cuts Storm's executor names to {@code Thread-16-valid}). Threads are grouped by their name with every run of digits
 * folded to {@code #}, so the two tasks of a bolt, or the same thread in two workers, add up.
 */
public final class ProcCpu {
    private static final long TICK_NANOS = 10_000_000L; // USER_HZ = 100 on Linux
    private static final Pattern JCMD_THREAD = Pattern.compile("^\"(.*)\" .*nid=0x([0-9a-f]+)");

    private ProcCpu() {
    }

    /** CPU nanoseconds process {@code pid} has used (all its threads, live and ended), 0 when it is gone. */
    public static long processNanos(long pid) {
        return statNanos(Path.of("/proc", Long.toString(pid), "stat"));
    }

    /** The 1-minute load average. */
    public static double loadAverage() {
        try {
            return Double.parseDouble(Files.readString(Path.of("/proc/loadavg")).trim().split(" ")[0]);
        } catch (IOException | RuntimeException e) {
            return Double.NaN;
        }
    }

    /** Per-thread CPU of some processes at one instant: thread id -> (the kernel's name for it, CPU nanoseconds). */
    public static final class Threads {
        private final Map<Long, String> comm = new HashMap<>();
        private final Map<Long, Long> nanos = new HashMap<>();

        /** Reads every thread of {@code pids}. */
        public static Threads read(List<Long> pids) {
            Threads t = new Threads();
            for (long pid : pids) {
                try (Stream<Path> tasks = Files.list(Path.of("/proc", Long.toString(pid), "task"))) {
                    tasks.forEach(task -> {
                        long tid = Long.parseLong(task.getFileName().toString());
                        try {
                            String stat = Files.readString(task.resolve("stat"));
                            t.comm.put(tid, stat.substring(stat.indexOf('(') + 1, stat.lastIndexOf(')')));
                            t.nanos.put(tid, ticks(stat));
                        } catch (IOException | RuntimeException gone) {
                            // the thread ended between the listing and the read
                        }
                    });
                } catch (IOException | RuntimeException gone) {
                    // the process ended
                }
            }
            return t;
        }

        /** CPU nanoseconds per thread id spent between {@code earlier} and this reading (new threads from zero). */
        public Map<Long, Long> since(Threads earlier) {
            Map<Long, Long> out = new HashMap<>();
            nanos.forEach((tid, n) -> out.put(tid, n - earlier.nanos.getOrDefault(tid, 0L)));
            return out;
        }

        /** The kernel's (15-character) name of thread {@code tid}, or "?". */
        public String comm(long tid) {
            return comm.getOrDefault(tid, "?");
        }
    }

    /**
     * CPU nanoseconds per thread id -> per thread name, digits folded ({@link #fold}), largest first: the Java name
     * where {@code javaNames} knows the thread, else the kernel's from {@code threads}.
     */
    public static Map<String, Long> byName(Map<Long, Long> cpu, Map<Long, String> javaNames, Threads threads) {
        Map<String, Long> by = new HashMap<>();
        cpu.forEach((tid, n) -> by.merge(fold(javaNames.getOrDefault(tid, threads.comm(tid))), n, Long::sum));
        List<Map.Entry<String, Long>> sorted = new ArrayList<>(by.entrySet());
        sorted.sort(Map.Entry.<String, Long>comparingByValue().reversed());
        Map<String, Long> out = new LinkedHashMap<>();
        for (Map.Entry<String, Long> e : sorted) {
            out.put(e.getKey(), e.getValue());
        }
        return out;
    }

    /**
     * Thread id -> Java thread name of JVM {@code pid}, from {@code jcmd PID Thread.print} (the {@code nid} of each
     * thread is its Linux thread id); empty when jcmd is missing or the JVM does not answer within 20 s.
     */
    public static Map<Long, String> javaThreadNames(long pid) {
        Map<Long, String> out = new HashMap<>();
        try {
            Process p = new ProcessBuilder("jcmd", Long.toString(pid), "Thread.print").redirectErrorStream(true).start();
            String text = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!p.waitFor(20, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                return out;
            }
            for (String line : text.split("\n")) {
                Matcher m = JCMD_THREAD.matcher(line);
                if (m.find()) {
                    out.put(Long.parseLong(m.group(2), 16), m.group(1));
                }
            }
        } catch (IOException e) {
            return out;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return out;
    }

    /** {@code name} with every run of digits as {@code #}. */
    public static String fold(String name) {
        return name.replaceAll("[0-9]+", "#");
    }

    private static long statNanos(Path stat) {
        try {
            return ticks(Files.readString(stat));
        } catch (IOException | RuntimeException e) {
            return 0;
        }
    }

    private static long ticks(String stat) {
        String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
        return (Long.parseLong(f[11]) + Long.parseLong(f[12])) * TICK_NANOS; // utime, stime
    }
}
