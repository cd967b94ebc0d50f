package io.meridian.topology;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.meridian.metrics.MetricsEndpoint;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The targets daemon's probe of the cluster's daemons against a real ZooKeeper that the test SIGKILLs and starts
 * again: the gauge served on the probe's metrics endpoint reads 1, 0, then 1; a ZooKeeper that refuses ruok counts
 * as up by its port; a Supervisor Nimbus once listed is probed from then on and down once Nimbus no longer lists it.
 */
class DaemonProbeTest {
    private static final int TIMEOUT_MS = 1000;

    @TempDir
    Path dir;

    @Test
    void aKilledZooKeeperReadsZeroOnTheEndpointAndOneOnceItIsBack() throws Exception {
        try (ChildZooKeeper zk = ChildZooKeeper.start(dir.resolve("zk"), "ruok,srvr");
                DaemonProbe probe = new DaemonProbe(List.of(zookeeper(zk)), closedPort(), TIMEOUT_MS)) {
            PrometheusRegistry registry = new PrometheusRegistry();
            probe.register(registry);
            try (MetricsEndpoint endpoint = MetricsEndpoint.start("127.0.0.1", 0, registry)) {
                String series = "meridian_daemon_up{daemon=\"zookeeper\",host=\"127.0.0.1\",port=\"" + zk.port()
                        + "\"}";
                DaemonProbe.State up = only(probe.probe());
                assertEquals("127.0.0.1:" + zk.port() + ": ruok: imok", up.detail());
                assertEquals(1.0, scrape(endpoint).get(series), "scraped " + endpoint.url());

                long killed = System.nanoTime();
                zk.kill();
                DaemonProbe.State down = only(probe.probe());
                assertTrue(!down.up() && down.detail().startsWith("127.0.0.1:" + zk.port() + ": ConnectException"),
                        down.detail());
                assertEquals(0.0, scrape(endpoint).get(series), "scraped " + endpoint.url());
                System.out.printf("probe: ZooKeeper SIGKILLed, seen down by the next probe in %.3f s (check %.4f s)%n",
                        (System.nanoTime() - killed) / 1e9, down.seconds());

                zk.launch();
                // a ZooKeeper whose port accepts may not serve yet: the probe says so until it does
                DaemonProbe.State back = only(probe.probe());
                long deadline = System.nanoTime() + 30_000_000_000L;
                while (!back.up() && System.nanoTime() < deadline) {
                    System.out.println("probe: not up yet: " + back.detail());
                    Thread.sleep(200);
                    back = only(probe.probe());
                }
                assertTrue(back.up(), "ZooKeeper on 127.0.0.1:" + zk.port() + " 30 s after its restart: "
                        + back.detail());
                assertEquals(1.0, scrape(endpoint).get(series), "scraped " + endpoint.url());
                Double seconds = scrape(endpoint).get(series.replace("_up{", "_probe_seconds{"));
                assertTrue(seconds != null && seconds > 0 && seconds < TIMEOUT_MS / 1000.0, "probe seconds " + seconds);
            }
        }
    }

    @Test
    void aZooKeeperThatRefusesRuokIsUpByItsPort() throws Exception {
        try (ChildZooKeeper zk = ChildZooKeeper.start(dir.resolve("zk"), null);
                DaemonProbe probe = new DaemonProbe(List.of(zookeeper(zk)), closedPort(), TIMEOUT_MS)) {
            DaemonProbe.State s = only(probe.probe());
            assertTrue(s.up(), s.detail());
            assertEquals("127.0.0.1:" + zk.port() + ": client port answers (ruok is not in 4lw.commands.whitelist)",
                    s.detail());
        }
    }

    @Test
    void aSupervisorOnceListedIsProbedFromThenOnAndDownWhenNoLongerListed() throws Exception {
        int port = closedPort();
        try (DaemonProbe probe = new DaemonProbe(List.of(), port, TIMEOUT_MS)) {
            assertEquals(List.of(), probe.probe(), "no Supervisor before Nimbus lists one");
            probe.supervisorsListed(List.of("127.0.0.1"));
            DaemonProbe.State listed = only(probe.probe());
            assertEquals(new ClusterDaemon(ClusterDaemon.Kind.SUPERVISOR, "127.0.0.1", port), listed.daemon());
            assertTrue(!listed.up() && listed.detail().startsWith("127.0.0.1:" + port + ": ConnectException"),
                    listed.detail());
            probe.supervisorsListed(List.of());
            DaemonProbe.State dropped = only(probe.probe());
            assertEquals("Nimbus no longer lists a Supervisor on 127.0.0.1 (its port does not)", dropped.detail());
            assertEquals("supervisor 127.0.0.1:" + port + " down " + dropped.atMillis() + " " + dropped.detail() + "\n",
                    DaemonProbe.stateLines(List.of(dropped)));
        }
    }

    @Test
    void theConfiguredDaemonsComeFromStormsConfigAndTheKafkaList() {
        List<ClusterDaemon> daemons = ClusterDaemon.configured(Map.of("storm.zookeeper.servers", List.of("z1", "z2"),
                "storm.zookeeper.port", 2181, "nimbus.seeds", List.of("n1"), "nimbus.thrift.port", 6627),
                List.of("k1:9092", "k2:9092"));
        assertEquals(List.of("zookeeper z1:2181", "zookeeper z2:2181", "nimbus n1:6627", "kafka k1:9092",
                "kafka k2:9092"),
                daemons.stream().map(d -> d.kind().label() + " " + d.address()).toList());
    }

    private static ClusterDaemon zookeeper(ChildZooKeeper zk) {
        return new ClusterDaemon(ClusterDaemon.Kind.ZOOKEEPER, "127.0.0.1", zk.port());
    }

    private static DaemonProbe.State only(List<DaemonProbe.State> states) {
        assertEquals(1, states.size(), states.toString());
        return states.get(0);
    }

    /** A loopback port nothing listens on (taken and given back). */
    private static int closedPort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    private static final Pattern SAMPLE = Pattern.compile("^(meridian_daemon_\\w+\\{[^}]*\\}) (\\S+)$",
            Pattern.MULTILINE);

    /** The endpoint's meridian_daemon_* samples, series text (labels as served) to value. */
    private static Map<String, Double> scrape(MetricsEndpoint endpoint) throws Exception {
        HttpResponse<InputStream> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(endpoint.url()))
                .build(), HttpResponse.BodyHandlers.ofInputStream());
        assertEquals(200, r.statusCode(), endpoint.url());
        String body;
        try (InputStream in = r.body()) {
            body = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        Map<String, Double> out = new TreeMap<>();
        Matcher m = SAMPLE.matcher(body);
        while (m.find()) {
            out.put(m.group(1), Double.parseDouble(m.group(2)));
        }
        return out;
    }
}
