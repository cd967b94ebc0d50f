package io.meridian.topology;

import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The targets daemon's probe of the cluster's own daemons (issue 33): ZooKeeper servers and Nimbus seeds from the
 * Storm config and Kafka brokers from the cluster's config ({@link ClusterDaemon#configured}), and every Supervisor
 * Nimbus has ever listed, on {@code supervisor.thrift.port}. Every interval each is checked at once
 * ({@link DaemonCheck}, in parallel, so one host that does not answer delays no other check); a Supervisor that Nimbus
 * no longer lists is down whatever its port says. While Nimbus does not answer, the last list it gave stands: Nimbus
 * down is its own alert, and no Supervisor is called down for it.
 *
 * <p>Serves {@code meridian_daemon_up{daemon,host,port}} (1/0) and {@code meridian_daemon_probe_seconds{daemon,host,
 * port}} (how long the last check took) and writes {@code daemons.state}, one line per daemon,
 * "DAEMON HOST:PORT up|down EPOCH_MS DETAIL", which {@code ./meridian cluster status} prints.
 */
public final class DaemonProbe implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(DaemonProbe.class);

    /** What the last probe found of one daemon. */
    public record State(ClusterDaemon daemon, boolean up, double seconds, String detail, long atMillis) {
    }

    private final List<ClusterDaemon> configured;
    private final int supervisorPort;
    private final int timeoutMillis;
    private final ExecutorService checks;
    // written by the Nimbus poll's thread, read by the probe's
    private final Set<String> supervisorsEverListed = new TreeSet<>();
    private Set<String> supervisorsListed = Set.of();
    // written by the probe's thread, read by scrapes
    private volatile List<State> last = List.of();
    // the probe's thread only: for logging changes once
    private final Map<ClusterDaemon, Boolean> lastUp = new LinkedHashMap<>();

    /**
     * @param configured the daemons known from the configs
     * @param supervisorPort {@code supervisor.thrift.port}, where every listed Supervisor is checked
     * @param timeoutMillis the longest one check waits for a connection and for ZooKeeper's answer
     */
    public DaemonProbe(List<ClusterDaemon> configured, int supervisorPort, int timeoutMillis) {
        this.configured = List.copyOf(configured);
        this.supervisorPort = supervisorPort;
        this.timeoutMillis = timeoutMillis;
        this.checks = Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "daemon-check");
            t.setDaemon(true);
            return t;
        });
    }

    /** The Supervisors' hosts Nimbus lists now: each is probed from now on, and down while it is not listed. */
    public synchronized void supervisorsListed(Collection<String> hosts) {
        supervisorsListed = Set.copyOf(hosts);
        supervisorsEverListed.addAll(hosts);
    }

    /** Checks every known daemon once, all at once, and keeps what it found for the gauges and {@link #states()}. */
    public List<State> probe() throws InterruptedException {
        List<ClusterDaemon> daemons = new ArrayList<>(configured);
        Set<String> listed;
        synchronized (this) {
            listed = supervisorsListed;
            for (String host : supervisorsEverListed) {
                daemons.add(new ClusterDaemon(ClusterDaemon.Kind.SUPERVISOR, host, supervisorPort));
            }
        }
        List<Future<DaemonCheck.Answer>> answers = new ArrayList<>();
        for (ClusterDaemon d : daemons) {
            answers.add(checks.submit(() -> DaemonCheck.check(d, timeoutMillis)));
        }
        List<State> states = new ArrayList<>();
        for (int i = 0; i < daemons.size(); i++) {
            ClusterDaemon d = daemons.get(i);
            DaemonCheck.Answer a = answer(answers.get(i), d);
            boolean unlisted = d.kind() == ClusterDaemon.Kind.SUPERVISOR && !listed.contains(d.host());
            states.add(unlisted
                    ? new State(d, false, a.seconds(), "Nimbus no longer lists a Supervisor on " + d.host()
                            + " (its port " + (a.up() ? "answers" : "does not") + ")", System.currentTimeMillis())
                    : new State(d, a.up(), a.seconds(), a.detail(), System.currentTimeMillis()));
        }
        last = List.copyOf(states);
        logChanges(states);
        return last;
    }

    private DaemonCheck.Answer answer(Future<DaemonCheck.Answer> answer, ClusterDaemon d) throws InterruptedException {
        try {
            return answer.get(2L * timeoutMillis + 1000, TimeUnit.MILLISECONDS);
        } catch (ExecutionException | TimeoutException e) {
            answer.cancel(true);
            return new DaemonCheck.Answer(false, 2.0 * timeoutMillis / 1000, d.address() + ": no answer in time ("
                    + e.getClass().getSimpleName() + ")");
        }
    }

    private void logChanges(List<State> states) {
        for (State s : states) {
            Boolean was = lastUp.put(s.daemon(), s.up());
            if (was == null ? !s.up() : was != s.up()) {
                LOG.info("{} {} {}: {}", s.daemon().kind().label(), s.daemon().address(), s.up() ? "up" : "DOWN",
                        s.detail());
            }
        }
    }

    /** What the last {@link #probe()} found, in probe order: configured daemons, then Supervisors by host. */
    public List<State> states() {
        return last;
    }

    /** {@code meridian_daemon_up} and {@code meridian_daemon_probe_seconds}: each scrape reads the last probe. */
    public void register(PrometheusRegistry registry) {
        String[] labels = {"daemon", "host", "port"};
        GaugeWithCallback.builder().name("meridian_daemon_up")
                .help("1 if the cluster daemon answered the targets daemon's last check, 0 if not").labelNames(labels)
                .callback(cb -> last.forEach(s -> cb.call(s.up() ? 1 : 0, labelValues(s))))
                .register(registry);
        GaugeWithCallback.builder().name("meridian_daemon_probe_seconds")
                .help("Seconds the last check of the cluster daemon took").labelNames(labels)
                .callback(cb -> last.forEach(s -> cb.call(s.seconds(), labelValues(s))))
                .register(registry);
    }

    private static String[] labelValues(State s) {
        return new String[] {s.daemon().kind().label(), s.daemon().host(), Integer.toString(s.daemon().port())};
    }

    /** The last probe as {@code daemons.state} lines: "DAEMON HOST:PORT up|down EPOCH_MS DETAIL". */
    public static String stateLines(List<State> states) {
        StringBuilder s = new StringBuilder();
        for (State st : states) {
            s.append(st.daemon().kind().label()).append(' ').append(st.daemon().address()).append(' ')
                    .append(st.up() ? "up" : "down").append(' ').append(st.atMillis()).append(' ')
                    .append(st.detail().replace('\n', ' ')).append('\n');
        }
        return s.toString();
    }

    /** Probes every {@code intervalMillis} until interrupted, rewriting {@code stateFile} after each probe. */
    void run(long intervalMillis, Path stateFile) {
        while (true) {
            long started = System.nanoTime();
            try {
                NimbusPoller.replace(stateFile, stateLines(probe()));
            } catch (InterruptedException e) {
                return;
            } catch (IOException | RuntimeException e) {
                LOG.warn("probe of the cluster's daemons failed: {}", e.toString());
            }
            long left = intervalMillis - TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
            try {
                Thread.sleep(Math.max(left, 0));
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    @Override
    public void close() {
        checks.shutdownNow();
    }
}
