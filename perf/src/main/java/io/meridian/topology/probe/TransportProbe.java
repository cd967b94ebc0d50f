package io.meridian.topology.probe;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.util.ArrayDeque;
import java.util.BitSet;
import java.util.Map;
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
 * A topology that checks a worker-to-worker transport on a real cluster: a spout of numbered tuples and a bolt, meant
 * for two workers. Both report to small files in a directory of this host (the workers are separate processes):
 * {@code <dir>/spout} holds "emitted acked-distinct failed pid port", {@code <dir>/bolt-<pid>} "received pid port".
 * With {@code total > 0} and acking on, the spout replays failed tuples until every number is acked once.
 */
public final class TransportProbe {
    public static final String DIR = "meridian.probe.dir";

    private TransportProbe() {
    }

    /**
     * @param total       numbers to emit (0: unbounded, no acking)
     * @param sleepMicros per-tuple delay of the bolt (0: none), to force backpressure
     */
    public static StormTopology build(long total, long sleepMicros) {
        TopologyBuilder b = new TopologyBuilder();
        b.setSpout("numbers", new Numbers(total), 1);
        b.setBolt("sink", new Sink(sleepMicros), 1).shuffleGrouping("numbers");
        return b.createTopology();
    }

    static void report(Path file, String line) {
        try {
            Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
            Files.writeString(tmp, line + "\n", StandardCharsets.UTF_8);
            Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write probe report " + file, e);
        }
    }

    static final class Numbers extends BaseRichSpout {
        private final long total;
        private SpoutOutputCollector out;
        private Path file;
        private String where;
        private long next;
        private volatile long emitted;
        private volatile long failed;
        private volatile int ackedCount;
        private final BitSet acked = new BitSet();
        private final ArrayDeque<Long> replay = new ArrayDeque<>();
        private transient java.util.concurrent.ScheduledExecutorService reporter;
        private final byte[] payload = new byte[84];

        Numbers(long total) {
            this.total = total;
        }

        @Override
        public void open(Map<String, Object> conf, TopologyContext context, SpoutOutputCollector collector) {
            out = collector;
            file = Paths.get(String.valueOf(conf.get(DIR))).resolve("spout");
            where = ProcessHandle.current().pid() + " " + context.getThisWorkerPort();
            // reported from a timer: under backpressure Storm stops calling nextTuple, and the report must not stall
            reporter = java.util.concurrent.Executors.newSingleThreadScheduledExecutor(r -> {
                Thread t = new Thread(r, "probe-spout-report");
                t.setDaemon(true);
                return t;
            });
            reporter.scheduleAtFixedRate(this::reportNow, 0, 200, java.util.concurrent.TimeUnit.MILLISECONDS);
        }

        private void reportNow() {
            report(file, emitted + " " + ackedCount + " " + failed + " " + where);
        }

        @Override
        public void nextTuple() {
            if (total == 0) {
                for (int i = 0; i < 64; i++) {
                    out.emit(new Values(next++, payload));
                    emitted++;
                }
                return;
            }
            Long seq = replay.poll();
            if (seq == null && next < total) {
                seq = next++;
            }
            if (seq != null) {
                out.emit(new Values(seq, payload), seq);
                emitted++;
            }
        }

        @Override
        public void ack(Object id) {
            int seq = (int) (long) (Long) id;
            if (!acked.get(seq)) {
                acked.set(seq);
                ackedCount++;
            }
        }

        @Override
        public void fail(Object id) {
            failed++;
            replay.add((Long) id);
        }

        @Override
        public void close() {
            reporter.shutdownNow();
            reportNow();
        }

        @Override
        public void declareOutputFields(OutputFieldsDeclarer d) {
            d.declare(new Fields("seq", "payload"));
        }
    }

    static final class Sink extends BaseRichBolt {
        private final long sleepMicros;
        private OutputCollector out;
        private Path file;
        private String where;
        private long received;
        private long lastReport;

        Sink(long sleepMicros) {
            this.sleepMicros = sleepMicros;
        }

        @Override
        public void prepare(Map<String, Object> conf, TopologyContext context, OutputCollector collector) {
            out = collector;
            long pid = ProcessHandle.current().pid();
            file = Paths.get(String.valueOf(conf.get(DIR))).resolve("bolt-" + pid);
            where = pid + " " + context.getThisWorkerPort();
            report(file, "0 " + where);
        }

        @Override
        public Map<String, Object> getComponentConfiguration() {
            return Map.of(org.apache.storm.Config.TOPOLOGY_TICK_TUPLE_FREQ_SECS, 1);
        }

        @Override
        public void execute(Tuple t) {
            if (org.apache.storm.utils.TupleUtils.isTick(t)) {
                report(file, received + " " + where);
                return;
            }
            received++;
            if (sleepMicros > 0) {
                java.util.concurrent.locks.LockSupport.parkNanos(sleepMicros * 1000);
            }
            out.ack(t);
            long now = System.currentTimeMillis();
            if (now - lastReport > 200) {
                lastReport = now;
                report(file, received + " " + where);
            }
        }

        @Override
        public void declareOutputFields(OutputFieldsDeclarer d) {
        }
    }
}
