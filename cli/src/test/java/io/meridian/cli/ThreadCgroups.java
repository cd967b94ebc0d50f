package io.meridian.cli;

import io.meridian.live.BulkCgroup;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Which cpu cgroup each named Java thread of a running JVM is in: the thread names and native ids from
 * {@code jcmd PID Thread.print} ({@code nid} is the Linux thread id), each thread's cgroup from
 * {@code /proc/PID/task/TID/cgroup}. For tests of where the live map's threads run ({@code io.meridian.live.BulkCgroup}).
 */
final class ThreadCgroups {
    private static final Pattern THREAD = Pattern.compile("^\"(.+?)\" .*\\bnid=(0x[0-9a-f]+|[0-9]+)\\b");

    private ThreadCgroups() {
    }

    /** Thread name -> its cgroup under the cpu controller ("/" for the root); threads that ended meanwhile are left out. */
    static Map<String, String> of(long pid) throws IOException, InterruptedException {
        Path jcmd = Path.of(System.getProperty("java.home"), "bin", "jcmd");
        Process p = new ProcessBuilder(jcmd.toString(), Long.toString(pid), "Thread.print").redirectErrorStream(true)
                .start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new IOException("jcmd " + pid + " Thread.print failed: " + out);
        }
        Map<String, String> cgroups = new LinkedHashMap<>();
        for (String line : out.split("\n")) {
            Matcher m = THREAD.matcher(line);
            if (m.find()) {
                String nid = m.group(2);
                long tid = nid.startsWith("0x") ? Long.parseLong(nid.substring(2), 16) : Long.parseLong(nid);
                String cgroup = cpuCgroup(Path.of("/proc", Long.toString(pid), "task", Long.toString(tid), "cgroup"));
                if (cgroup != null) {
                    cgroups.put(m.group(1), cgroup);
                }
            }
        }
        return cgroups;
    }

    private static String cpuCgroup(Path file) {
        try {
            return BulkCgroup.cpuCgroup(file);
        } catch (IOException gone) {
            return null;
        }
    }
}
