package io.meridian.stream.metrics;

import com.codahale.metrics.Counter;
import com.codahale.metrics.Gauge;
import com.codahale.metrics.Histogram;
import com.codahale.metrics.Meter;
import com.codahale.metrics.Metric;
import com.codahale.metrics.Timer;
import io.prometheus.metrics.model.registry.MultiCollector;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.prometheus.metrics.model.snapshots.CounterSnapshot;
import io.prometheus.metrics.model.snapshots.DataPointSnapshot;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot;
import io.prometheus.metrics.model.snapshots.HistogramSnapshot;
import io.prometheus.metrics.model.snapshots.Labels;
import io.prometheus.metrics.model.snapshots.MetricMetadata;
import io.prometheus.metrics.model.snapshots.MetricSnapshot;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.storm.metrics2.MetricRegistryProvider;
import org.apache.storm.metrics2.TaskMetricDimensions;
import org.apache.storm.metrics2.TaskMetricRepo;

/**
 * Turns the Storm metrics v2 of this JVM's workers into Prometheus samples at each scrape (one instance per JVM,
 * registered in {@link PrometheusRegistry#defaultRegistry}): every task's metrics, walked through
 * {@link MetricRegistryProvider#getTaskMetrics()} with their dimensions as labels ({@code topology},
 * {@code topology_id}, {@code component}, {@code task}, {@code host}, {@code port}, and {@code stream} where Storm
 * set one), named by {@link PrometheusNames}; and the workers' own Meridian metrics (the transport's links) from
 * their registries. A LocalCluster's workers all share it, so one endpoint serves them all.
 */
final class StormMetricsCollector implements MultiCollector {
    private static final StormMetricsCollector INSTANCE = new StormMetricsCollector();
    private static boolean registered;

    /** A worker: its registry and the labels of its worker-level metrics. */
    record Worker(MetricRegistryProvider provider, String topologyId, String host, String port) {
    }

    private final List<Worker> workers = new CopyOnWriteArrayList<>();
    private final Map<String, PrometheusNames.Mapped> names = new ConcurrentHashMap<>();

    private StormMetricsCollector() {
    }

    static synchronized StormMetricsCollector register() {
        if (!registered) {
            PrometheusRegistry.defaultRegistry.register(INSTANCE);
            registered = true;
        }
        return INSTANCE;
    }

    void add(Worker worker) {
        workers.add(worker);
    }

    void remove(Worker worker) {
        workers.remove(worker);
    }

    int workers() {
        return workers.size();
    }

    private enum Kind { COUNTER, GAUGE, HISTOGRAM }

    /** One Prometheus family being assembled: its kind, help, and points by label set (first one wins). */
    private static final class Family {
        final Kind kind;
        final String help;
        final Map<Labels, DataPointSnapshot> points = new LinkedHashMap<>();

        Family(Kind kind, String help) {
            this.kind = kind;
            this.help = help;
        }
    }

    @Override
    public synchronized MetricSnapshots collect() {
        Map<String, Family> families = new LinkedHashMap<>();
        Map<String, Metric> metrics = new LinkedHashMap<>();
        for (Worker w : workers) {
            for (Map.Entry<TaskMetricDimensions, TaskMetricRepo> e : w.provider().getTaskMetrics().entrySet()) {
                Map<String, String> dims = e.getKey().getDimensions();
                metrics.clear();
                sink.into = metrics;
                e.getValue().report(sink, null);
                for (Map.Entry<String, Metric> m : metrics.entrySet()) {
                    PrometheusNames.Mapped mapped = names.computeIfAbsent(m.getKey(), PrometheusNames::map);
                    if (mapped != null) {
                        add(families, mapped, taskLabels(dims, w.host(), mapped), m.getKey(), m.getValue());
                    }
                }
            }
            for (Map.Entry<String, Metric> m : w.provider().getRegistry().getMetrics().entrySet()) {
                if (!m.getKey().startsWith("meridian.")) {
                    continue;
                }
                PrometheusNames.Mapped mapped = PrometheusNames.mapWorker(m.getKey());
                if (mapped != null) {
                    add(families, mapped, labels(new String[] {"topology", "topology_id", "host", "port"},
                            new String[] {topologyName(w.topologyId()), w.topologyId(), w.host(), w.port()}, mapped),
                            m.getKey(), m.getValue());
                }
            }
        }
        List<MetricSnapshot> out = new ArrayList<>(families.size());
        families.forEach((name, f) -> out.add(snapshot(name, f)));
        return new MetricSnapshots(out);
    }

    /**
     * A task metric's labels: its dimensions, but the host as Nimbus and the scrape targets name it ({@code host}; the
     * dimension has its dots turned into underscores).
     */
    private static Labels taskLabels(Map<String, String> dims, String host, PrometheusNames.Mapped mapped) {
        String topologyId = dims.getOrDefault("topologyId", "");
        String stream = dims.get("streamId");
        boolean withStream = stream != null && !mapped.has("stream") && !mapped.has("source_stream");
        String[] n = withStream
                ? new String[] {"topology", "topology_id", "component", "task", "host", "port", "stream"}
                : new String[] {"topology", "topology_id", "component", "task", "host", "port"};
        String[] v = withStream
                ? new String[] {topologyName(topologyId), topologyId, dims.getOrDefault("componentId", ""),
                    dims.getOrDefault("taskid", ""), host, dims.getOrDefault("port", ""), stream}
                : new String[] {topologyName(topologyId), topologyId, dims.getOrDefault("componentId", ""),
                    dims.getOrDefault("taskid", ""), host, dims.getOrDefault("port", "")};
        return labels(n, v, mapped);
    }

    private static Labels labels(String[] names, String[] values, PrometheusNames.Mapped mapped) {
        String[] n = new String[names.length + mapped.labelNames().length];
        String[] v = new String[n.length];
        System.arraycopy(names, 0, n, 0, names.length);
        System.arraycopy(values, 0, v, 0, values.length);
        System.arraycopy(mapped.labelNames(), 0, n, names.length, mapped.labelNames().length);
        System.arraycopy(mapped.labelValues(), 0, v, names.length, mapped.labelValues().length);
        return Labels.of(n, v);
    }

    /** Storm's topology id is {@code NAME-COUNTER-SECONDS}: the name is what a dashboard selects by. */
    static String topologyName(String topologyId) {
        int last = topologyId.lastIndexOf('-');
        int before = last > 0 ? topologyId.lastIndexOf('-', last - 1) : -1;
        return before > 0 ? topologyId.substring(0, before) : topologyId;
    }

    private static void add(Map<String, Family> families, PrometheusNames.Mapped mapped, Labels labels, String stormName,
                            Metric metric) {
        if (metric instanceof TimeHistogram h) {
            put(families, mapped.name() + "_seconds", Kind.HISTOGRAM, "Storm metric " + stormName + " (seconds)",
                    labels, h.buckets().snapshot(labels));
        } else if (metric instanceof Counter c) {
            put(families, mapped.name(), Kind.COUNTER, "Storm metric " + stormName, labels,
                    new CounterSnapshot.CounterDataPointSnapshot(c.getCount() * mapped.scale(), labels, null, 0));
        } else if (metric instanceof Meter m) {
            put(families, mapped.name(), Kind.COUNTER, "Storm metric " + stormName, labels,
                    new CounterSnapshot.CounterDataPointSnapshot(m.getCount() * mapped.scale(), labels, null, 0));
        } else if (metric instanceof Gauge<?> g) {
            Double value = gaugeValue(g);
            if (value != null) {
                put(families, mapped.name(), Kind.GAUGE, "Storm metric " + stormName, labels,
                        new GaugeSnapshot.GaugeDataPointSnapshot(value * mapped.scale(), labels, null));
            }
        }
        // other Dropwizard histograms and timers: reservoir quantiles cannot be combined across tasks; not exported
    }

    /** A gauge's value as a number, or null when it has none (not a number, or its source failed). */
    private static Double gaugeValue(Gauge<?> g) {
        Object v;
        try {
            v = g.getValue();
        } catch (RuntimeException e) {
            return null; // a gauge whose source is gone (a closed consumer): no value this scrape
        }
        if (v instanceof Number n) {
            return n.doubleValue();
        }
        if (v instanceof Boolean b) {
            return b ? 1.0 : 0.0;
        }
        return null;
    }

    private static void put(Map<String, Family> families, String name, Kind kind, String help, Labels labels,
                            DataPointSnapshot point) {
        Family f = families.computeIfAbsent(name, k -> new Family(kind, help));
        if (f.kind == kind) {
            f.points.putIfAbsent(labels, point); // a name Storm registered twice for a task: the first one
        }
    }

    private static MetricSnapshot snapshot(String name, Family f) {
        MetricMetadata meta = new MetricMetadata(name, f.help);
        List<DataPointSnapshot> points = new ArrayList<>(f.points.values());
        return switch (f.kind) {
            case COUNTER -> new CounterSnapshot(meta, cast(points));
            case GAUGE -> new GaugeSnapshot(meta, cast(points));
            case HISTOGRAM -> new HistogramSnapshot(meta, cast(points));
        };
    }

    @SuppressWarnings("unchecked")
    private static <T> List<T> cast(List<DataPointSnapshot> points) {
        return (List<T>) (List<?>) points;
    }

    /**
     * Collects what {@link TaskMetricRepo#report} hands a reporter, by name. One per JVM: a Dropwizard reporter owns a
     * scheduler thread even when never started.
     */
    private final MetricSink sink = new MetricSink();

    private static final class MetricSink extends com.codahale.metrics.ScheduledReporter {
        private Map<String, Metric> into;

        MetricSink() {
            super(new com.codahale.metrics.MetricRegistry(), "meridian-prometheus-sink", com.codahale.metrics.MetricFilter.ALL,
                    java.util.concurrent.TimeUnit.SECONDS, java.util.concurrent.TimeUnit.SECONDS,
                    java.util.concurrent.Executors.newSingleThreadScheduledExecutor(r -> {
                        Thread t = new Thread(r, "meridian-prometheus-sink");
                        t.setDaemon(true);
                        return t;
                    }), true, Set.of());
        }

        @Override
        @SuppressWarnings("rawtypes")
        public void report(java.util.SortedMap<String, Gauge> gauges, java.util.SortedMap<String, Counter> counters,
                           java.util.SortedMap<String, Histogram> histograms, java.util.SortedMap<String, Meter> meters,
                           java.util.SortedMap<String, Timer> timers) {
            into.putAll(gauges);
            into.putAll(counters);
            into.putAll(histograms);
            into.putAll(meters);
        }
    }

}
