package io.meridian.perf.soak;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * The live objects of a JVM by class: {@code jcmd PID GC.class_histogram}, which runs a full collection first. Two of
 * them, at the soak's warm-up end and at its last sample, say which classes a live heap's growth is made of, where the
 * pools' collection usage alone gives one number.
 */
final class HeapHistogram {
    /** Bytes and instances by class name. */
    private final Map<String, long[]> byClass;

    private HeapHistogram(Map<String, long[]> byClass) {
        this.byClass = byClass;
    }

    /** The histogram of {@code pid}, or null when jcmd fails (the process gone or not attachable). */
    static HeapHistogram take(long pid) throws InterruptedException {
        Path jcmd = Path.of(ProcessHandle.current().info().command().orElse("java")).resolveSibling("jcmd");
        try {
            Path out = Files.createTempFile("meridian-histogram-", ".txt");
            try {
                Process p = new ProcessBuilder(jcmd.toString(), Long.toString(pid), "GC.class_histogram")
                        .redirectErrorStream(true).redirectOutput(out.toFile()).start();
                if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
                    p.destroyForcibly(); // a hung attach must not stop the soak's sampling
                    return null;
                }
                return parse(Files.readString(out, StandardCharsets.UTF_8));
            } finally {
                Files.deleteIfExists(out);
            }
        } catch (IOException e) {
            return null;
        }
    }

    /** Lines {@code "   1:   instances   bytes  class-name (module)"}; the header and the Total line are skipped. */
    static HeapHistogram parse(String jcmdOutput) {
        Map<String, long[]> byClass = new HashMap<>();
        for (String line : jcmdOutput.split("\n")) {
            String[] f = line.strip().split("\\s+");
            if (f.length >= 4 && f[0].endsWith(":") && f[0].length() > 1) {
                try {
                    long instances = Long.parseLong(f[1]);
                    long bytes = Long.parseLong(f[2]);
                    byClass.merge(f[3], new long[] {bytes, instances}, (a, b) -> new long[] {a[0] + b[0], a[1] + b[1]});
                } catch (NumberFormatException e) {
                    // not a histogram row
                }
            }
        }
        return new HeapHistogram(byClass);
    }

    /**
     * Instances of the classes whose names end with one of {@code suffixes} ({@code "Leader$Proposal"} counts the
     * shaded ZooKeeper's too).
     */
    long instances(String... suffixes) {
        long n = 0;
        for (Map.Entry<String, long[]> e : byClass.entrySet()) {
            for (String suffix : suffixes) {
                if (e.getKey().endsWith(suffix)) {
                    n += e.getValue()[1];
                    break;
                }
            }
        }
        return n;
    }

    long totalBytes() {
        return byClass.values().stream().mapToLong(v -> v[0]).sum();
    }

    /**
     * The {@code count} classes whose live bytes grew most from {@code early} to {@code late}, as one line:
     * {@code "+1.2 MB [B (+300); +0.4 MB java.lang.String (+9000); ..."} (instances in brackets).
     */
    static String topGrowth(HeapHistogram early, HeapHistogram late, int count) {
        Set<String> names = new HashSet<>(early.byClass.keySet());
        names.addAll(late.byClass.keySet());
        List<Object[]> growth = new ArrayList<>();
        for (String name : names) {
            long[] e = early.byClass.getOrDefault(name, new long[2]);
            long[] l = late.byClass.getOrDefault(name, new long[2]);
            growth.add(new Object[] {name, l[0] - e[0], l[1] - e[1]});
        }
        growth.sort((a, b) -> Long.compare((long) b[1], (long) a[1]));
        StringBuilder s = new StringBuilder(String.format(Locale.ROOT, "total %+.2f MB:",
                (late.totalBytes() - early.totalBytes()) / 1e6));
        for (int i = 0; i < Math.min(count, growth.size()); i++) {
            Object[] g = growth.get(i);
            s.append(String.format(Locale.ROOT, "%s %+.3f MB %s (%+d)", i == 0 ? "" : ";", (long) g[1] / 1e6, g[0],
                    (long) g[2]));
        }
        return s.toString();
    }
}
