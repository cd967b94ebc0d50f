package io.meridian.perf.transport;

import java.util.Map;
import org.apache.storm.generated.StormTopology;

/** Where the benchmark topology runs: a LocalCluster in this JVM or the real cluster. */
interface Backend extends AutoCloseable {
    void submit(String name, Map<String, Object> conf, StormTopology topology) throws Exception;

    /** The bolt's counters now, or null before its first report. */
    Sample sample(String name) throws Exception;

    void kill(String name) throws Exception;

    /** Counters of a run at one moment: tuples the bolt received, its latency histogram, CPU time of the workers. */
    final class Sample {
        long received;
        long[] histogram;
        long cpuNanos;
        int spoutPort;
        int boltPort;
    }
}
