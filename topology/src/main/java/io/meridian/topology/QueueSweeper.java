package io.meridian.topology;

import io.meridian.collective.CollectiveOptions;
import io.meridian.collective.TwoLevelCollectives;
import io.meridian.transport.mmap.KilledTopologies;
import io.meridian.transport.mmap.TransportConfig;
import java.util.HashSet;
import java.util.Set;
import org.apache.storm.generated.TopologySummary;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The cluster's {@code sweeper} daemon, one on every Supervisor host (deploy/bin/meridian-cluster, role supervisor):
 * deletes this host's mmap-transport queues of topologies Nimbus no longer lists, and the live map's collective
 * regions (under /dev/shm) whose leaders are gone. Storm halts a killed topology's
 * workers before the transport can remove them ({@link KilledTopologies}), and on a host where no worker starts
 * afterwards nothing else would; the queues live in tmpfs, so they hold memory until then.
 *
 * <pre>
 * QueueSweeper --state FILE [--interval SECONDS] [--nimbus HOST:PORT]
 *   FILE  one line, rewritten after every poll: "ok EPOCH_MS TOPOLOGIES DELETED ROOT REGIONS" (topologies Nimbus
 *         lists, receivers' queues deleted since start, the transport root swept, collective regions removed since
 *         start) or "error EPOCH_MS WHY"
 * </pre>
 * The transport root is the cluster's ({@code meridian.transport.dir} in storm.yaml, else the default); a topology
 * that sets its own root in its configuration is swept by its workers' stale sweep only.
 */
public final class QueueSweeper {
    private static final Logger LOG = LoggerFactory.getLogger(QueueSweeper.class);

    private final NimbusPoller.Options options;
    private long deleted;
    private long regionsRemoved;

    private QueueSweeper(NimbusPoller.Options options) {
        this.options = options;
    }

    public static void main(String[] args) {
        new QueueSweeper(NimbusPoller.Options.parseOrExit("sweeper", args, "--state", false)).run();
    }

    private void run() {
        LOG.info("polling Nimbus every {} ms; deleting the mmap-transport queues of topologies it no longer lists",
                options.intervalMillis());
        new NimbusPoller(LOG, options, options.path()).run((client, conf) -> {
            Set<String> running = new HashSet<>();
            for (TopologySummary t : client.getClusterInfo().get_topologies()) {
                running.add(t.get_id()); // a topology being killed is still listed: its workers may still write
            }
            int now = KilledTopologies.sweep(conf, running);
            if (now > 0) {
                LOG.info("deleted the mmap-transport queues of {} receivers of killed topologies", now);
            }
            deleted += now;
            // a live map's regions: removed by their leaders, and a re-forming group removes its old generations'
            // on task 0's host; a leader daemon on another host that died after the next generation began left its
            // region there (TwoHostClusterIT, host loss: one run in five)
            int regions = TwoLevelCollectives.sweepStaleRegions(CollectiveOptions.DEFAULT_REGION_ROOT);
            if (regions > 0) {
                LOG.info("removed {} collective regions whose leaders are gone", regions);
            }
            regionsRemoved += regions;
            return running.size() + " " + deleted + " " + TransportConfig.from(conf).root() + " " + regionsRemoved;
        });
    }
}
