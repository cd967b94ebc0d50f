package io.meridian.topology;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.storm.generated.Nimbus;
import org.apache.storm.utils.NimbusClient;
import org.apache.storm.utils.Utils;
import org.slf4j.Logger;

/**
 * The loop of the cluster's daemons that follow Nimbus ({@link TargetsDaemon}, {@link QueueSweeper}): every interval
 * one poll, and after it one state line in a file, "ok EPOCH_MS DETAIL" or "error EPOCH_MS WHY", which
 * {@code ./meridian cluster status} reads. A Nimbus that does not answer (restarting, a leader change) is asked again
 * at the next poll over a new connection, and its failure is logged once, not every interval.
 */
final class NimbusPoller {
    /** One poll: what to do with what Nimbus says; returns the DETAIL of the "ok" state line. */
    interface Poll {
        String poll(Nimbus.Iface nimbus, Map<String, Object> stormConf) throws Exception;
    }

    private static final int ANSWER_TIMEOUT_MS = 5000;

    private final Logger log;
    private final long intervalMillis;
    private final String nimbus;
    private final Path stateFile;

    /** Nimbus is {@code options.nimbus()}, or else the leader among {@code nimbus.seeds} in storm.yaml (on the class path). */
    NimbusPoller(Logger log, Options options, Path stateFile) {
        this.log = log;
        this.intervalMillis = options.intervalMillis();
        this.nimbus = options.nimbus();
        this.stateFile = stateFile;
    }

    /** Polls until the thread is interrupted. */
    void run(Poll poll) {
        Map<String, Object> conf = Utils.readStormConfig();
        NimbusClient client = null;
        String lastError = null;
        while (true) {
            long started = System.nanoTime();
            try {
                if (client == null) {
                    client = connect(conf);
                }
                String detail = poll.poll(client.getClient(), conf);
                writeState("ok " + System.currentTimeMillis() + " " + detail);
                if (lastError != null) {
                    log.info("Nimbus answers again");
                    lastError = null;
                }
            } catch (Exception e) {
                if (client != null) {
                    client.close();
                    client = null;
                }
                String why = "Nimbus " + (nimbus == null ? "(nimbus.seeds)" : nimbus) + " did not answer: " + rootMessage(e);
                writeState("error " + System.currentTimeMillis() + " " + why);
                if (!why.equals(lastError)) {
                    log.warn("{} (trying again every {} ms)", why, intervalMillis);
                }
                lastError = why;
            }
            long left = intervalMillis - TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
            if (left > 0) {
                try {
                    Thread.sleep(left);
                } catch (InterruptedException e) {
                    return;
                }
            }
        }
    }

    private NimbusClient connect(Map<String, Object> conf) throws Exception {
        if (nimbus == null) {
            return NimbusClient.getConfiguredClient(conf, ANSWER_TIMEOUT_MS);
        }
        int colon = nimbus.lastIndexOf(':');
        return new NimbusClient(conf, nimbus.substring(0, colon), Integer.parseInt(nimbus.substring(colon + 1)),
                ANSWER_TIMEOUT_MS);
    }

    private void writeState(String line) {
        try {
            replace(stateFile, line + "\n");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Temporary file in the same directory, then a rename over the old one: readers see the old or the new file. */
    static void replace(Path file, String text) throws IOException {
        Path tmp = file.resolveSibling("." + file.getFileName() + ".tmp");
        Files.writeString(tmp, text, StandardCharsets.UTF_8);
        try {
            Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (AtomicMoveNotSupportedException e) {
            Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING);
        }
    }

    /**
     * The command line both daemons take: {@code FILE_OPTION PATH [--interval SECONDS] [--nimbus HOST:PORT]}; the
     * directory PATH names (or, for a file, its parent) is created.
     *
     * @param intervalMillis 5 s unless given, at least 0.1 s
     * @param nimbus HOST:PORT, or null for the leader among {@code nimbus.seeds}
     */
    record Options(Path path, long intervalMillis, String nimbus) {
        /** Parses {@code args}; exits with status 2 and a line naming the problem on a bad one. */
        static Options parseOrExit(String daemon, String[] args, String pathOption, boolean pathIsDirectory) {
            String usage = "usage: " + daemon + " " + pathOption + (pathIsDirectory ? " DIR" : " FILE")
                    + " [--interval SECONDS] [--nimbus HOST:PORT]";
            try {
                Options options = parse(args, pathOption, usage);
                Files.createDirectories(pathIsDirectory ? options.path : options.path.toAbsolutePath().getParent());
                return options;
            } catch (IllegalArgumentException | IOException e) {
                System.err.println("meridian " + daemon + ": " + e.getMessage());
                System.exit(2);
                return null;
            }
        }

        static Options parse(String[] args, String pathOption, String usage) {
            Path path = null;
            long interval = 5000;
            String nimbus = null;
            for (int i = 0; i < args.length; i += 2) {
                if (i + 1 >= args.length) {
                    throw new IllegalArgumentException("option " + args[i] + " needs a value (" + usage + ")");
                }
                String value = args[i + 1];
                if (args[i].equals(pathOption)) {
                    path = Path.of(value);
                } else if (args[i].equals("--interval")) {
                    interval = NimbusPoller.intervalMillis(value);
                } else if (args[i].equals("--nimbus")) {
                    nimbus = NimbusPoller.nimbus(value);
                } else {
                    throw new IllegalArgumentException("unknown option " + args[i] + " (" + usage + ")");
                }
            }
            if (path == null) {
                throw new IllegalArgumentException(pathOption + " is missing (" + usage + ")");
            }
            return new Options(path, interval, nimbus);
        }
    }

    /** "--interval SECONDS" as milliseconds, checked. */
    static long intervalMillis(String seconds) {
        long interval;
        try {
            interval = Math.round(Double.parseDouble(seconds) * 1000);
        } catch (NumberFormatException e) {
            interval = -1;
        }
        if (interval < 100 || interval > 3_600_000) {
            throw new IllegalArgumentException("--interval wants seconds in [0.1, 3600], not '" + seconds + "'");
        }
        return interval;
    }

    /** "--nimbus HOST:PORT", checked. */
    static String nimbus(String hostPort) {
        if (!hostPort.matches("[^:]+:\\d{1,5}")) {
            throw new IllegalArgumentException("--nimbus wants HOST:PORT, not '" + hostPort + "'");
        }
        return hostPort;
    }

    private static String rootMessage(Throwable e) {
        Throwable root = e;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        String message = root.getMessage();
        return root.getClass().getSimpleName() + (message == null ? "" : ": " + message.lines().findFirst().orElse(""));
    }
}
