package io.meridian.perf.soak;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Stream;

/**
 * The files a process maps and holds open, by kind: each path with its digits as {@code #}
 * ({@code /dev/shm/meridian-soak-#/transport/#/#.cq4}), so that the soak says what the mappings and open files it
 * counts grew by, not only how many.
 */
final class FileUse {
    private FileUse() {
    }

    /** Mappings by kind of file (lines of /proc/PID/maps that name a file); empty when the process is gone. */
    static Map<String, Integer> mapped(long pid) {
        Map<String, Integer> out = new TreeMap<>();
        try {
            Path maps = Path.of("/proc", Long.toString(pid), "maps");
            for (String line : Files.readAllLines(maps, StandardCharsets.UTF_8)) {
                String[] fields = line.split("\\s+", 6);
                if (fields.length == 6 && fields[5].startsWith("/")) {
                    out.merge(kind(fields[5]), 1, Integer::sum);
                }
            }
        } catch (IOException e) {
            // gone: nothing mapped
        }
        return out;
    }

    /** Open descriptors by kind of target (files, {@code socket:[#]}, {@code pipe:[#]}, ...). */
    static Map<String, Integer> open(long pid) {
        Map<String, Integer> out = new TreeMap<>();
        try (Stream<Path> fds = Files.list(Path.of("/proc", Long.toString(pid), "fd"))) {
            for (Path fd : (Iterable<Path>) fds::iterator) {
                try {
                    out.merge(kind(Files.readSymbolicLink(fd).toString()), 1, Integer::sum);
                } catch (IOException e) {
                    // closed meanwhile
                }
            }
        } catch (IOException e) {
            // gone
        }
        return out;
    }

    static String kind(String path) {
        return path.replaceAll("[0-9]+", "#");
    }

    /** The kinds that grew from {@code early} to {@code late}, most first, as one line ("+4 /a/#.cq4; +1 ..."). */
    static String growth(Map<String, Integer> early, Map<String, Integer> late, int count) {
        Set<String> kinds = new HashSet<>(early.keySet());
        kinds.addAll(late.keySet());
        List<Map.Entry<String, Integer>> grew = new ArrayList<>();
        for (String k : kinds) {
            int d = late.getOrDefault(k, 0) - early.getOrDefault(k, 0);
            if (d != 0) {
                grew.add(Map.entry(k, d));
            }
        }
        grew.sort((a, b) -> Integer.compare(b.getValue(), a.getValue()));
        StringBuilder s = new StringBuilder();
        for (int i = 0; i < Math.min(count, grew.size()); i++) {
            s.append(i == 0 ? "" : "; ").append(String.format("%+d %s", grew.get(i).getValue(), grew.get(i).getKey()));
        }
        return s.length() == 0 ? "none" : s.toString();
    }
}
