package io.meridian.perf.soak;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;

/**
 * What /proc says about one process at one moment: resident memory (all of it, and the anonymous part: heap, stacks,
 * direct buffers), threads, open file descriptors and file-backed memory mappings
 * (lines of /proc/PID/maps that name a file).
 */
record ProcStats(long rssBytes, long rssAnonBytes, int threads, int openFiles, int mappings) {

    /** The process's figures, or null when it is gone (or /proc does not show it to this user). */
    static ProcStats of(long pid) {
        Path proc = Path.of("/proc", Long.toString(pid));
        try {
            long rss = -1;
            long anon = -1;
            int threads = -1;
            for (String line : Files.readAllLines(proc.resolve("status"), StandardCharsets.UTF_8)) {
                if (line.startsWith("VmRSS:")) {
                    rss = kilobytes(line);
                } else if (line.startsWith("RssAnon:")) {
                    anon = kilobytes(line);
                } else if (line.startsWith("Threads:")) {
                    threads = Integer.parseInt(line.substring("Threads:".length()).strip());
                }
            }
            int files;
            try (Stream<Path> fds = Files.list(proc.resolve("fd"))) {
                files = (int) fds.count();
            }
            // file-backed mappings only (a path in the sixth field): the anonymous regions come and go with malloc
            // arenas, thread stacks and the JIT (+6.5 lines in 2.5 minutes of one worker with no file added) and are
            // in RSS; a leaked mapping of a row file or of a deleted queue file shows here
            int mappings = 0;
            for (String line : Files.readAllLines(proc.resolve("maps"), StandardCharsets.UTF_8)) {
                String[] fields = line.split("\\s+", 6);
                mappings += fields.length == 6 && fields[5].startsWith("/") ? 1 : 0;
            }
            return new ProcStats(rss, anon, threads, files, mappings);
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    private static long kilobytes(String statusLine) {
        String v = statusLine.substring(statusLine.indexOf(':') + 1).strip();
        return Long.parseLong(v.substring(0, v.indexOf(' '))) * 1024;
    }
}
