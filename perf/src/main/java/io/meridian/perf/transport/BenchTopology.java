package io.meridian.perf.transport;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.storm.spout.SpoutOutputCollector;
import org.apache.storm.task.OutputCollector;
import org.apache.storm.task.TopologyContext;
import org.apache.storm.topology.OutputFieldsDeclarer;
import org.apache.storm.topology.TopologyBuilder;
import org.apache.storm.generated.StormTopology;
import org.apache.storm.topology.base.BaseRichBolt;
import org.apache.storm.topology.base.BaseRichSpout;
import org.apache.storm.tuple.Fields;
import org.apache.storm.tuple.Tuple;
import org.apache.storm.tuple.Values;

/**
 * The benchmark topology: one spout, one bolt, in two workers. The spout stamps each tuple with
 * {@code System.nanoTime()} (one clock for all processes of the host) and either emits as fast as Storm lets it or at a
 * fixed rate; the bolt records the one-way latency and counts. Results go to {@link #STATS} (the workers of a
 * LocalCluster share this JVM).
 */
final class BenchTopology {
    static final Map<String, Stats> STATS = new ConcurrentHashMap<>();

    static final class Stats {
        final AtomicLong received = new AtomicLong();
        final LatencyHistogram latency = new LatencyHistogram();
        volatile int spoutPort = -1;
        volatile int boltPort = -1;
    }

    private BenchTopology() {
    }

    static StormTopology build(String run, int payloadBytes, double ratePerSecond, boolean acking) {
        STATS.put(run, new Stats());
        TopologyBuilder b = new TopologyBuilder();
        b.setSpout("src", new Source(run, payloadBytes, ratePerSecond, acking), 1);
        b.setBolt("sink", new Sink(run), 1).shuffleGrouping("src");
        return b.createTopology();
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
            STATS.get(run).spoutPort = context.getThisWorkerPort();
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

        Sink(String run) {
            this.run = run;
        }

        @Override
        public void prepare(Map<String, Object> conf, TopologyContext context, OutputCollector collector) {
            out = collector;
            stats = STATS.get(run);
            stats.boltPort = context.getThisWorkerPort();
        }

        @Override
        public void execute(Tuple t) {
            stats.latency.record(System.nanoTime() - t.getLong(0));
            stats.received.lazySet(stats.received.get() + 1);
            out.ack(t);
        }

        @Override
        public void declareOutputFields(OutputFieldsDeclarer d) {
        }
    }
}
