package io.meridian.perf.transport;

import io.meridian.topology.probe.BenchTopology;
import java.lang.management.ManagementFactory;
import java.util.HashMap;
import java.util.Map;
import org.apache.storm.LocalCluster;
import org.apache.storm.generated.StormTopology;

/** A LocalCluster with {@code storm.local.mode.zmq: true}: each in-process worker makes the configured transport. */
final class LocalBackend implements Backend {
    private final LocalCluster cluster;

    LocalBackend() throws Exception {
        Map<String, Object> daemon = new HashMap<>();
        daemon.put("storm.local.mode.zmq", true);
        int basePort = 24000 + (int) (ProcessHandle.current().pid() % 1000) * 4;
        cluster = new LocalCluster.Builder().withDaemonConf(daemon).withSupervisors(1)
            .withPortsPerSupervisor(2).withSupervisorSlotPortMin(basePort).build();
    }

    @Override
    public void submit(String name, Map<String, Object> conf, StormTopology topology) throws Exception {
        cluster.submitTopology(name, conf, topology);
    }

    @Override
    public Sample sample(String name) {
        BenchTopology.Stats stats = BenchTopology.STATS.get(name);
        if (stats == null) {
            return null;
        }
        Sample s = new Sample();
        s.received = stats.received.get();
        s.histogram = stats.latency.snapshot();
        s.cpuNanos = ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime();
        s.spoutPort = stats.spoutPort;
        s.boltPort = stats.boltPort;
        return s;
    }

    @Override
    public void kill(String name) throws Exception {
        io.meridian.topology.ClusterControl.killAndAwait(cluster, name, 0, java.time.Duration.ofSeconds(60));
        Thread.sleep(2000); // the killed workers' threads wind down
    }

    @Override
    public void close() throws Exception {
        cluster.close();
    }
}
