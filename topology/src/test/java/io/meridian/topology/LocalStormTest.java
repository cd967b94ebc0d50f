package io.meridian.topology;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.meridian.config.MeridianConfig;
import java.io.IOException;
import java.net.ConnectException;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;
import java.net.Socket;
import java.util.Collections;
import org.apache.storm.Config;
import org.junit.jupiter.api.Test;

/** What Meridian's own Storm runs expose: ZooKeeper on loopback only; no Java serialization in what it submits. */
class LocalStormTest {
    @Test
    void theLocalClustersZookeeperListensOnLoopbackOnly() throws Exception {
        InetAddress external = null;
        for (NetworkInterface nic : Collections.list(NetworkInterface.getNetworkInterfaces())) {
            for (InetAddress a : Collections.list(nic.getInetAddresses())) {
                if (nic.isUp() && !a.isLoopbackAddress() && a instanceof Inet4Address) {
                    external = a;
                }
            }
        }
        try (LocalStorm storm = LocalStorm.start()) {
            int port = storm.zookeeperPort();
            try (Socket s = new Socket()) {
                s.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 2000);
            }
            assertTrue(storm.cluster().getClusterInfo().get_supervisors_size() > 0, "the cluster runs on it");
            if (external != null) {
                InetAddress other = external;
                assertThrows(ConnectException.class, () -> {
                    try (Socket s = new Socket()) {
                        s.connect(new InetSocketAddress(other, port), 2000);
                    }
                }, "ZooKeeper must not answer on " + other + ":" + port);
            }
        }
    }

    @Test
    void theSubmittedTopologyNeverFallsBackOnJavaSerialization() throws IOException {
        Config conf = IngestTopology.stormConfig(MeridianConfig.loadResource(MeridianConfig.CLUSTER_DEFAULTS));
        assertEquals(false, conf.get(Config.TOPOLOGY_FALL_BACK_ON_JAVA_SERIALIZATION));
    }
}
