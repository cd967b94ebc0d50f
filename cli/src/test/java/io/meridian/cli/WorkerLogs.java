package io.meridian.cli;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/**
 * What a failed cluster test prints of its topology's worker logs: CI keeps a test's output, not the cluster's files,
 * and a worker that died (ShmFullIT in CI: "worker pid 1167 is gone") says why only in its own log or crash file.
 */
final class WorkerLogs {
    /** Lines kept after an error line: its exception and the first frames or causes. */
    private static final int CONTEXT = 6;
    private static final int MAX_LINES = 120;

    private WorkerLogs() {
    }

    /**
     * Prints, to standard output, every error line of {@code topology}'s worker logs under {@code workersArtifacts}
     * with the {@value #CONTEXT} lines after it, Storm's lines about a worker halting, and the head of any JVM crash
     * file ({@code hs_err_pid*.log}), of its submissions since {@code sinceMillis}; at most {@value #MAX_LINES} lines.
     */
    static void printErrors(Path workersArtifacts, String topology, long sinceMillis) {
        List<String> out = new ArrayList<>();
        try {
            for (Path f : files(workersArtifacts, topology, sinceMillis)) {
                String name = f.getFileName().toString();
                List<String> lines = Files.readAllLines(f, StandardCharsets.ISO_8859_1);
                out.add("== " + f);
                if (name.startsWith("hs_err")) {
                    out.addAll(lines.subList(0, Math.min(lines.size(), 20)));
                    continue;
                }
                for (int i = 0; i < lines.size(); i++) {
                    String line = lines.get(i);
                    if (line.contains("[ERROR]") || line.contains("Halting") || line.contains("terminating worker")) {
                        out.add(line);
                        for (int k = i + 1; k < Math.min(lines.size(), i + 1 + CONTEXT); k++) {
                            if (lines.get(k).startsWith("20")) {
                                break; // the next log line
                            }
                            out.add(lines.get(k));
                        }
                    }
                }
            }
        } catch (IOException | UncheckedIOException e) {
            out.add("could not read the worker logs under " + workersArtifacts + ": " + e);
        }
        int from = Math.max(0, out.size() - MAX_LINES);
        System.out.println("worker logs of " + topology + " (errors" + (from > 0 ? ", the last " + MAX_LINES + " lines"
                : "") + "):");
        out.subList(from, out.size()).forEach(l -> System.out.println("  " + l));
    }

    private static List<Path> files(Path workersArtifacts, String topology, long sinceMillis) throws IOException {
        return files(workersArtifacts, topology, sinceMillis, true);
    }

    /** The {@code worker.log} files of {@code topology}'s submissions since {@code sinceMillis}, in path order. */
    static List<Path> workerLogs(Path workersArtifacts, String topology, long sinceMillis) throws IOException {
        return files(workersArtifacts, topology, sinceMillis, false);
    }

    private static List<Path> files(Path workersArtifacts, String topology, long sinceMillis, boolean crashFiles)
            throws IOException {
        if (!Files.isDirectory(workersArtifacts)) {
            return List.of();
        }
        try (Stream<Path> walk = Files.walk(workersArtifacts)) {
            return walk.filter(f -> !f.equals(workersArtifacts)
                            && submittedSince(workersArtifacts, f, topology, sinceMillis))
                    .filter(f -> {
                        String name = f.getFileName().toString();
                        return name.equals("worker.log") || crashFiles && name.startsWith("hs_err");
                    })
                    .sorted().toList();
        }
    }

    /**
     * Whether {@code file}, under {@code workersArtifacts}, belongs to a submission of {@code topology} made at or
     * after {@code sinceMillis}: Storm names a topology's directory {@code NAME-COUNTER-SECONDS} (its submission time),
     * and an earlier run of a test left its own logs (their files' times move as late as their workers' shutdown).
     */
    static boolean submittedSince(Path workersArtifacts, Path file, String topology, long sinceMillis) {
        String id = workersArtifacts.relativize(file).getName(0).toString();
        if (!id.startsWith(topology + "-")) {
            return false;
        }
        try {
            return Long.parseLong(id.substring(id.lastIndexOf('-') + 1)) * 1000 >= sinceMillis - 1000;
        } catch (NumberFormatException e) {
            return false;
        }
    }
}
