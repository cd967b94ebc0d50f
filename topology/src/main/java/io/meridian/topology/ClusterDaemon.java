package io.meridian.topology;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.apache.storm.Config;
import org.apache.storm.utils.ObjectReader;

/** A daemon of the cluster that the targets daemon probes ({@link DaemonProbe}): what it is and where it listens. */
public record ClusterDaemon(Kind kind, String host, int port) {
    /** The daemons a probe knows; {@link #label()} is the role's name in MERIDIAN_CLUSTER_ROLES. */
    public enum Kind {
        ZOOKEEPER, KAFKA, NIMBUS, SUPERVISOR;

        public String label() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    public String address() {
        return host + ":" + port;
    }

    /**
     * The ZooKeeper servers ({@code storm.zookeeper.servers} on {@code storm.zookeeper.port}) and the Nimbus seeds
     * ({@code nimbus.seeds} on {@code nimbus.thrift.port}) of a Storm config, then the Kafka brokers given.
     */
    public static List<ClusterDaemon> configured(Map<String, Object> stormConf, List<String> kafkaBrokers) {
        List<ClusterDaemon> out = new ArrayList<>();
        int zkPort = ObjectReader.getInt(stormConf.get(Config.STORM_ZOOKEEPER_PORT), 2181);
        for (String host : ObjectReader.getStrings(stormConf.get(Config.STORM_ZOOKEEPER_SERVERS))) {
            out.add(new ClusterDaemon(Kind.ZOOKEEPER, host, zkPort));
        }
        int nimbusPort = ObjectReader.getInt(stormConf.get(Config.NIMBUS_THRIFT_PORT), 6627);
        for (String host : ObjectReader.getStrings(stormConf.get(Config.NIMBUS_SEEDS))) {
            out.add(new ClusterDaemon(Kind.NIMBUS, host, nimbusPort));
        }
        for (String broker : kafkaBrokers) {
            out.add(of(Kind.KAFKA, broker));
        }
        return out;
    }

    /** {@code HOST:PORT} as a daemon of that kind; a bad one fails naming it. */
    public static ClusterDaemon of(Kind kind, String hostPort) {
        int colon = hostPort.lastIndexOf(':');
        if (colon <= 0 || !hostPort.substring(colon + 1).matches("\\d{1,5}")) {
            throw new IllegalArgumentException(kind.label() + " address wants HOST:PORT, not '" + hostPort + "'");
        }
        return new ClusterDaemon(kind, hostPort.substring(0, colon), Integer.parseInt(hostPort.substring(colon + 1)));
    }
}
