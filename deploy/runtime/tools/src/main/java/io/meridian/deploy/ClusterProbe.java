package io.meridian.deploy;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.DescribeClusterOptions;
import org.apache.kafka.clients.admin.DescribeClusterResult;
import org.apache.storm.generated.ClusterSummary;
import org.apache.storm.generated.KillOptions;
import org.apache.storm.generated.NimbusSummary;
import org.apache.storm.generated.SupervisorSummary;
import org.apache.storm.generated.TopologySummary;
import org.apache.storm.utils.NimbusClient;
import org.apache.storm.utils.Utils;

/**
 * Asks the cluster's daemons whether they really answer, for deploy/bin/meridian-cluster.
 *
 * <pre>
 * ClusterProbe check [--kafka HOST:PORT] [--nimbus HOST:PORT] [--supervisor HOST] [--wait SECONDS]
 *     a Kafka metadata request (DescribeCluster), Nimbus thrift getClusterInfo, the Supervisor of HOST registered
 *     with that Nimbus; retries until all answer or SECONDS pass; one line per daemon: "NAME up: ..." or
 *     "NAME down: why"; exit 0 only if all are up
 * ClusterProbe kill-topologies --nimbus HOST:PORT [--wait SECONDS]
 *     kills every topology (kill wait 0) and waits until Nimbus lists none; exit 0 when none is left
 * </pre>
 * Storm settings come from storm.yaml on the classpath (STORM_HOME/conf).
 */
public final class ClusterProbe {
    private static final int ANSWER_TIMEOUT_MS = 3000;
    private static final long POLL_MS = 500;

    private String kafka;
    private String nimbus;
    private String supervisor;
    private int waitSeconds;

    public static void main(String[] args) {
        int code;
        try {
            code = new ClusterProbe().run(args);
        } catch (IllegalArgumentException e) {
            System.err.println("cluster probe: " + e.getMessage());
            code = 2;
        }
        System.out.flush();
        // client libraries leave non-daemon threads behind; the answer is already printed
        Runtime.getRuntime().halt(code);
    }

    private int run(String[] args) {
        if (args.length == 0) {
            throw new IllegalArgumentException("usage: ClusterProbe check|kill-topologies [options]");
        }
        for (int i = 1; i < args.length; i += 2) {
            if (i + 1 >= args.length) {
                throw new IllegalArgumentException("option " + args[i] + " needs a value");
            }
            String value = args[i + 1];
            switch (args[i]) {
                case "--kafka" -> kafka = value;
                case "--nimbus" -> nimbus = value;
                case "--supervisor" -> supervisor = value;
                case "--wait" -> waitSeconds = parseSeconds(value);
                default -> throw new IllegalArgumentException("unknown option " + args[i]);
            }
        }
        return switch (args[0]) {
            case "check" -> check();
            case "kill-topologies" -> killTopologies();
            default -> throw new IllegalArgumentException("unknown command " + args[0]);
        };
    }

    private static int parseSeconds(String value) {
        try {
            int seconds = Integer.parseInt(value);
            if (seconds < 0) {
                throw new NumberFormatException();
            }
            return seconds;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("--wait wants whole seconds >= 0, not '" + value + "'");
        }
    }

    private long deadline() {
        return System.nanoTime() + TimeUnit.SECONDS.toNanos(waitSeconds);
    }

    private int check() {
        if (supervisor != null && nimbus == null) {
            throw new IllegalArgumentException("--supervisor needs --nimbus (the Nimbus it registers with)");
        }
        long deadline = deadline();
        List<String> lines = new ArrayList<>();
        boolean allUp = true;
        if (kafka != null) {
            String[] answer = kafkaAnswer(deadline);
            allUp &= answer[0] != null;
            lines.add(answer[0] != null ? "kafka up: " + answer[0] : "kafka down: " + answer[1]);
        }
        if (nimbus != null) {
            String[] answer = nimbusAnswer(deadline);
            allUp &= answer[0] != null;
            lines.add(answer[0] != null ? "nimbus up: " + answer[0] : "nimbus down: " + answer[1]);
            if (supervisor != null) {
                allUp &= answer[2] != null;
                lines.add(answer[2] != null ? "supervisor up: " + answer[2] : "supervisor down: " + answer[3]);
            }
        }
        lines.forEach(System.out::println);
        return allUp ? 0 : 1;
    }

    /** {up detail, down reason}. */
    private String[] kafkaAnswer(long deadline) {
        Properties props = new Properties();
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, kafka);
        props.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, ANSWER_TIMEOUT_MS);
        props.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, ANSWER_TIMEOUT_MS);
        props.put(AdminClientConfig.RECONNECT_BACKOFF_MAX_MS_CONFIG, 500);
        String reason = "no answer to a metadata request at " + kafka;
        try (Admin admin = Admin.create(props)) {
            do {
                try {
                    DescribeClusterResult cluster = admin.describeCluster(
                            new DescribeClusterOptions().timeoutMs(ANSWER_TIMEOUT_MS));
                    int brokers = cluster.nodes().get().size();
                    String clusterId = cluster.clusterId().get();
                    var controller = cluster.controller().get();
                    return new String[] {brokers + " broker(s), cluster id " + clusterId
                            + (controller == null ? "" : ", controller " + controller.id()) + ", at " + kafka, null};
                } catch (Exception e) {
                    reason = "no answer to a metadata request at " + kafka + " (" + rootMessage(e) + ")";
                }
            } while (sleepUntil(deadline));
        }
        return new String[] {null, reason};
    }

    /** {nimbus up detail, nimbus down reason, supervisor up detail, supervisor down reason}. */
    private String[] nimbusAnswer(long deadline) {
        Map<String, Object> conf = Utils.readStormConfig();
        HostPort where = HostPort.parse(nimbus, "--nimbus");
        String nimbusReason = "no thrift answer at " + nimbus;
        String supervisorReason = "Nimbus did not answer, so its registration is unknown";
        do {
            try (NimbusClient client = new NimbusClient(conf, where.host, where.port, ANSWER_TIMEOUT_MS)) {
                ClusterSummary summary = client.getClient().getClusterInfo();
                String leader = "no leader yet";
                for (NimbusSummary n : summary.get_nimbuses()) {
                    if (n.is_isLeader()) {
                        leader = "leader " + n.get_host() + ":" + n.get_port();
                    }
                }
                String nimbusUp = "thrift answers at " + nimbus + ", " + leader + ", "
                        + summary.get_topologies_size() + " topolog" + (summary.get_topologies_size() == 1 ? "y" : "ies")
                        + ", " + summary.get_supervisors_size() + " supervisor(s)";
                if (supervisor == null) {
                    return new String[] {nimbusUp, null, null, null};
                }
                for (SupervisorSummary s : summary.get_supervisors()) {
                    if (s.get_host().equalsIgnoreCase(supervisor)) {
                        return new String[] {nimbusUp, null, "registered with Nimbus as " + s.get_host() + ", "
                                + s.get_num_workers() + " slot(s), " + s.get_num_used_workers() + " used", null};
                    }
                }
                nimbusReason = null;
                supervisorReason = "no supervisor on host " + supervisor + " registered with Nimbus at " + nimbus;
                if (!sleepUntil(deadline)) {
                    return new String[] {nimbusUp, null, null, supervisorReason};
                }
            } catch (Exception e) {
                nimbusReason = "no thrift answer at " + nimbus + " (" + rootMessage(e) + ")";
                supervisorReason = "Nimbus did not answer, so its registration is unknown";
                if (!sleepUntil(deadline)) {
                    break;
                }
            }
        } while (true);
        return new String[] {null, nimbusReason, null, supervisorReason};
    }

    private int killTopologies() {
        if (nimbus == null) {
            throw new IllegalArgumentException("kill-topologies needs --nimbus HOST:PORT");
        }
        Map<String, Object> conf = Utils.readStormConfig();
        HostPort where = HostPort.parse(nimbus, "--nimbus");
        long deadline = deadline();
        try (NimbusClient client = new NimbusClient(conf, where.host, where.port, ANSWER_TIMEOUT_MS)) {
            KillOptions now = new KillOptions();
            now.set_wait_secs(0);
            List<TopologySummary> running = client.getClient().getClusterInfo().get_topologies();
            for (TopologySummary t : running) {
                if (!"KILLED".equals(t.get_status())) {
                    client.getClient().killTopologyWithOpts(t.get_name(), now);
                    System.out.println("killed topology " + t.get_name());
                }
            }
            while (true) {
                int left = client.getClient().getClusterInfo().get_topologies_size();
                if (left == 0) {
                    return 0;
                }
                if (!sleepUntil(deadline)) {
                    System.out.println(left + " topolog" + (left == 1 ? "y is" : "ies are") + " still being removed");
                    return 1;
                }
            }
        } catch (Exception e) {
            System.out.println("cannot kill topologies: Nimbus at " + nimbus + " did not answer (" + rootMessage(e) + ")");
            return 1;
        }
    }

    private static boolean sleepUntil(long deadline) {
        if (System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(POLL_MS) > deadline) {
            return false;
        }
        try {
            Thread.sleep(POLL_MS);
            return true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    private static String rootMessage(Throwable e) {
        Throwable root = e;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        String message = root.getMessage();
        return root.getClass().getSimpleName() + (message == null ? "" : ": " + message.lines().findFirst().orElse(""));
    }

    private record HostPort(String host, int port) {
        static HostPort parse(String value, String option) {
            int colon = value.lastIndexOf(':');
            try {
                if (colon <= 0) {
                    throw new NumberFormatException();
                }
                return new HostPort(value.substring(0, colon), Integer.parseInt(value.substring(colon + 1)));
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException(option + " wants HOST:PORT, not '" + value + "'");
            }
        }
    }
}
