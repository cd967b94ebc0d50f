package io.meridian.topology.probe;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.storm.generated.StormTopology;
import org.apache.storm.spout.SpoutOutputCollector;
import org.apache.storm.task.OutputCollector;
import org.apache.storm.task.TopologyContext;
import org.apache.storm.topology.OutputFieldsDeclarer;
import org.apache.storm.topology.TopologyBuilder;
import org.apache.storm.topology.base.BaseRichBolt;
import org.apache.storm.topology.base.BaseRichSpout;
import org.apache.storm.tuple.Fields;
import org.apache.storm.tuple.Tuple;
import org.apache.storm.tuple.Values;

/**
 * The transport benchmark's topology ({@code ./meridian bench transport}): one spout, one bolt, in two workers. The
 * spout stamps each tuple with {@code System.nanoTime()} (one clock for every process of the host) and emits either as
 * fast as Storm lets it or at a fixed rate; the bolt records the one-way latency and counts. In a LocalCluster the
 * results are read from {@link #STATS} (same JVM); on a real cluster (conf {@link #REPORT_DIR} set) each side also
 * writes them to a file every 200 ms: {@code <dir>/<run>.bolt} (count, pid, histogram) and {@code <dir>/<run>.spout}
 * (pid).
 */
public final class BenchTopology {
    public static final String REPORT_DIR = "meridian.bench.dir";
    public static final Map<String, Stats> STATS = new ConcurrentHashMap<>();

    public static final class Stats {
        public final AtomicLong received = new AtomicLong();
        public final LatencyHistogram latency = new LatencyHistogram();
        public volatile int spoutPort = -1;
        public volatile int boltPort = -1;
        public volatile long boltPid = -1;
    }

    private BenchTopology() {
    }

    public static StormTopology build(String run, int payloadBytes, double ratePerSecond, boolean acking) {
        STATS.put(run, new Stats());
        TopologyBuilder b = new TopologyBuilder();
        b.setSpout("src", new Source(run, payloadBytes, ratePerSecond, acking), 1);
        b.setBolt("sink", new Sink(run), 1).shuffleGrouping("src");
        return b.createTopology();
    }

    /** What a real-cluster bolt last reported, or null before its first report. */
    public static Report readReport(Path dir, String run) {
        Path f = dir.resolve(run + ".bolt");
        if (!Files.exists(f)) {
            return null;
        }
        try (DataInputStream in = new DataInputStream(new java.io.BufferedInputStream(Files.newInputStream(f)))) {
            Report r = new Report();
            r.received = in.readLong();
            r.boltPid = in.readLong();
            r.boltPort = in.readInt();
            int n = in.readInt();
            r.histogram = new long[n];
            for (int i = 0; i < n; i++) {
                r.histogram[i] = in.readLong();
            }
            String[] spout = Files.readString(dir.resolve(run + ".spout")).trim().split(" ");
            r.spoutPid = Long.parseLong(spout[0]);
            r.spoutPort = Integer.parseInt(spout[1]);
            return r;
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    public static final class Report {
        public long received;
        public long boltPid;
        public int boltPort;
        public long spoutPid;
        public int spoutPort;
        public long[] histogram;
    }

    private static Path reportDir(Map<String, Object> conf) {
        Object d = conf.get(REPORT_DIR);
        return d == null ? null : Paths.get(d.toString());
    }

    private static ScheduledExecutorService every200ms(String name, Runnable task) {
        ScheduledExecutorService s = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, name);
            t.setDaemon(true);
            return t;
        });
        s.scheduleAtFixedRate(task, 0, 200, TimeUnit.MILLISECONDS);
        return s;
    }

    private static void atomicWrite(Path file, byte[] bytes) {
        try {
            Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
            Files.write(tmp, bytes);
            Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static final class Source extends BaseRichSpout {
        private static final int MAX_BURST = 256;
        private final String run;
        private final int payloadBytes;
        private final double ratePerSecond;
        private final boolean acking;
        private SpoutOutputCollector out;
        private byte[] payload;
        private long start;
        private long emitted;

        Source(String run, int payloadBytes, double ratePerSecond, boolean acking) {
            this.run = run;
            this.payloadBytes = payloadBytes;
            this.ratePerSecond = ratePerSecond;
            this.acking = acking;
        }

        @Override
        public void open(Map<String, Object> conf, TopologyContext context, SpoutOutputCollector collector) {
            out = collector;
            payload = new byte[payloadBytes];
            Stats s = STATS.computeIfAbsent(run, k -> new Stats());
            s.spoutPort = context.getThisWorkerPort();
            Path dir = reportDir(conf);
            if (dir != null) {
                atomicWrite(dir.resolve(run + ".spout"),
                    (ProcessHandle.current().pid() + " " + context.getThisWorkerPort() + "\n").getBytes());
            }
        }

        @Override
        public void nextTuple() {
            long now = System.nanoTime();
            if (start == 0) {
                start = now;
            }
            long n = 1;
            if (ratePerSecond > 0) {
                long due = (long) ((now - start) * ratePerSecond / 1e9);
                n = Math.min(due - emitted, MAX_BURST);
                if (due - emitted > 10L * MAX_BURST) {
                    emitted = due - MAX_BURST; // fell behind (a pause): do not burst to catch up
                }
            }
            for (long i = 0; i < n; i++) {
                // the payload array is shared: Storm serializes it on the way out and never changes it
                if (acking) {
                    out.emit(new Values(System.nanoTime(), payload), emitted);
                } else {
                    out.emit(new Values(System.nanoTime(), payload));
                }
                emitted++;
            }
        }

        @Override
        public void declareOutputFields(OutputFieldsDeclarer d) {
            d.declare(new Fields("sent", "payload"));
        }
    }

    static final class Sink extends BaseRichBolt {
        private final String run;
        private OutputCollector out;
        private Stats stats;
        private transient ScheduledExecutorService reporter;

        Sink(String run) {
            this.run = run;
        }

        @Override
        public void prepare(Map<String, Object> conf, TopologyContext context, OutputCollector collector) {
            out = collector;
            stats = STATS.computeIfAbsent(run, k -> new Stats());
            stats.boltPort = context.getThisWorkerPort();
            stats.boltPid = ProcessHandle.current().pid();
            Path dir = reportDir(conf);
            if (dir != null) {
                Path file = dir.resolve(run + ".bolt");
                reporter = every200ms("bench-bolt-report", () -> writeReport(file));
            }
        }

        private void writeReport(Path file) {
            long[] h = stats.latency.snapshot();
            java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream(16 + 8 * h.length);
            try (DataOutputStream o = new DataOutputStream(bytes)) {
                o.writeLong(stats.received.get());
                o.writeLong(stats.boltPid);
                o.writeInt(stats.boltPort);
                o.writeInt(h.length);
                for (long v : h) {
                    o.writeLong(v);
                }
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            atomicWrite(file, bytes.toByteArray());
        }

        @Override
        public void execute(Tuple t) {
            stats.latency.record(System.nanoTime() - t.getLong(0));
            stats.received.lazySet(stats.received.get() + 1);
            out.ack(t);
        }

        @Override
        public void cleanup() {
            if (reporter != null) {
                reporter.shutdownNow();
            }
        }

        @Override
        public void declareOutputFields(OutputFieldsDeclarer d) {
        }
    }
}
