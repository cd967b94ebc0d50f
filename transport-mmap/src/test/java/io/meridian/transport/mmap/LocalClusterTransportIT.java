package io.meridian.transport.mmap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.apache.storm.Config;
import org.apache.storm.LocalCluster;
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
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Storm's LocalCluster with {@code storm.local.mode.zmq: true} (every in-process worker makes the configured
 * transport): a spout and a bolt in two workers, once over Netty and once over the mmap transport, acking on.
 * Both must deliver every tuple exactly once, and the mmap run must really have gone through queue files.
 */
class LocalClusterTransportIT {
    private static final int TUPLES = 20_000;
    static final Map<String, AtomicLong> RECEIVED = new ConcurrentHashMap<>();
    static final Map<String, AtomicLong> ACKED = new ConcurrentHashMap<>();
    static final Map<String, Integer> SPOUT_PORT = new ConcurrentHashMap<>();
    static final Map<String, Integer> BOLT_PORT = new ConcurrentHashMap<>();

    @TempDir
    Path queues;

    @Test
    void sameCountsOverNettyAndOverMmap() throws Exception {
        Map<String, Object> daemon = new HashMap<>();
        daemon.put("storm.local.mode.zmq", true);
        int basePort = 21000 + (int) (ProcessHandle.current().pid() % 2000) * 4;
        try (LocalCluster cluster = new LocalCluster.Builder().withDaemonConf(daemon)
                 .withSupervisors(1).withPortsPerSupervisor(2).withSupervisorSlotPortMin(basePort).build()) {
            run(cluster, "netty", null);
            boolean[] sawQueue = new boolean[1];
            run(cluster, "mmap", () -> sawQueue[0] |= hasQueueFiles(queues));
            assertTrue(sawQueue[0], "the mmap run wrote Chronicle queue files under " + queues);
            assertEquals(RECEIVED.get("netty").get(), RECEIVED.get("mmap").get());
        }
    }

    private void run(LocalCluster cluster, String name, Runnable probe) throws Exception {
        RECEIVED.put(name, new AtomicLong());
        ACKED.put(name, new AtomicLong());
        TopologyBuilder b = new TopologyBuilder();
        b.setSpout("src", new CountingSpout(name), 1);
        b.setBolt("sink", new CountingBolt(name), 1).shuffleGrouping("src");
        Config conf = new Config();
        conf.setNumWorkers(2);
        conf.setNumAckers(1);
        conf.setMaxSpoutPending(2000);
        if (name.equals("mmap")) {
            conf.put(Config.STORM_MESSAGING_TRANSPORT, MmapContext.class.getName());
            conf.put(TransportConfig.DIR, queues.toString());
        }
        cluster.submitTopology(name, conf, b.createTopology());
        long deadline = System.nanoTime() + 120_000_000_000L;
        while (ACKED.get(name).get() < TUPLES && System.nanoTime() < deadline) {
            if (probe != null) {
                probe.run();
            }
            Thread.sleep(100);
        }
        Thread.sleep(500);
        cluster.killTopology(name);
        assertEquals(TUPLES, ACKED.get(name).get(), name + ": every tuple acked");
        assertEquals(TUPLES, RECEIVED.get(name).get(), name + ": every tuple received once");
        assertNotEquals(SPOUT_PORT.get(name), BOLT_PORT.get(name), name + ": spout and bolt in different workers");
        Thread.sleep(3000); // let the workers of the killed topology go before the next one starts
    }

    private static boolean hasQueueFiles(Path root) {
        try (Stream<Path> s = Files.walk(root)) {
            return s.anyMatch(p -> p.toString().endsWith(".cq4") && p.toString().contains("/from-"));
        } catch (Exception e) {
            return false;
        }
    }

    static final class CountingSpout extends BaseRichSpout {
        private final String run;
        private SpoutOutputCollector out;
        private long next;

        CountingSpout(String run) {
            this.run = run;
        }

        @Override
        public void open(Map<String, Object> conf, TopologyContext context, SpoutOutputCollector collector) {
            out = collector;
            SPOUT_PORT.put(run, context.getThisWorkerPort());
        }

        @Override
        public void nextTuple() {
            if (next < TUPLES) {
                out.emit(new Values(next, new byte[84]), next);
                next++;
            }
        }

        @Override
        public void ack(Object msgId) {
            ACKED.get(run).incrementAndGet();
        }

        @Override
        public void declareOutputFields(OutputFieldsDeclarer d) {
            d.declare(new Fields("seq", "payload"));
        }
    }

    static final class CountingBolt extends BaseRichBolt {
        private final String run;
        private OutputCollector out;

        CountingBolt(String run) {
            this.run = run;
        }

        @Override
        public void prepare(Map<String, Object> conf, TopologyContext context, OutputCollector collector) {
            out = collector;
            BOLT_PORT.put(run, context.getThisWorkerPort());
        }

        @Override
        public void execute(Tuple t) {
            RECEIVED.get(run).incrementAndGet();
            out.ack(t);
        }

        @Override
        public void declareOutputFields(OutputFieldsDeclarer d) {
        }
    }
}
