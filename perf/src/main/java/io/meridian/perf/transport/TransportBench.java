package io.meridian.perf.transport;

import io.meridian.config.CommandLine;
import io.meridian.perf.Benchmark;
import io.meridian.perf.Figures;
import io.meridian.topology.probe.BenchTopology;
import io.meridian.topology.probe.LatencyHistogram;
import io.meridian.transport.mmap.MmapTransport;
import java.lang.management.ManagementFactory;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import org.apache.storm.Config;
import org.apache.storm.LocalCluster;
import org.apache.storm.generated.KillOptions;
import org.apache.storm.generated.StormTopology;

/**
 * {@code ./meridian bench transport}: Storm's Netty transport against the mmap (Chronicle Queue) transport, spout and
 * bolt in two workers of this host, in one run. Part 1 moves Storm task messages straight through each transport's
 * {@code IConnection}s (no topology) to show the medium; part 2 runs the topology on the real single-host cluster
 * ({@code ./meridian cluster}, two worker processes; started and stopped here under the cluster lock if it is not
 * running), or with {@code --local} in a LocalCluster with {@code storm.local.mode.zmq: true}, where each worker makes
 * the configured transport exactly as on a cluster but the two workers are threads of this JVM.
 */
public final class TransportBench implements Benchmark {
    private static final String NETTY = "netty";
    private static final String MMAP = "mmap";
    private int seconds;
    private int warmup;
    private final Figures figures = new Figures("transport");

    @Override
    public String description() {
        return "Netty vs the mmap (Chronicle Queue) transport: throughput, p99 latency at half Netty's max, 40 KB tuples, CPU per tuple";
    }

    @Override
    public String usage() {
        return "./meridian bench transport [--seconds 10] [--warmup 15] [--small-bytes 100] [--big-bytes 40000]"
                + " [--cases ack_off,latency,ack_on,big,tuned] [--heap-mb 1024] [--storm-conf K=V,...] [--repeats 1]"
                + " [--skip-raw] [--skip-storm] [--threads] [--local]";
    }

    @Override
    public void run(String[] args) throws Exception {
        CommandLine cl = CommandLine.parse("bench transport", args,
            Set.of("seconds", "warmup", "small-bytes", "big-bytes", "cases", "heap-mb", "storm-conf", "repeats", "repeat"), Set.of("skip-raw", "skip-storm", "threads", "local"));
        cl.requireNoPositional();
        seconds = cl.intValue("seconds", 10, 1, 3600);
        warmup = cl.intValue("warmup", 15, 0, 3600); // worker JVMs still JIT-compile at 5 s (a third of a core each)
        int small = cl.intValue("small-bytes", 100, 20, 1 << 20);
        int big = cl.intValue("big-bytes", 40_000, 20, 8 << 20);
        threads = cl.flag("threads");
        local = cl.flag("local") || !ClusterBackend.available();
        String cases = cl.string("cases", "ack_off,latency,ack_on,big,tuned");
        for (String c : cases.split(",")) {
            if (!Set.of("ack_off", "latency", "ack_on", "big", "tuned").contains(c.trim())) {
                throw new io.meridian.config.UsageException("--cases takes a comma-separated list of ack_off, latency, ack_on, big, tuned; got '" + c + "'");
            }
            this.cases.add(c.trim());
        }
        heapMb = cl.intValue("heap-mb", 1024, 128, 16384);
        if (cl.has("repeat") && cl.has("repeats")) {
            throw new io.meridian.config.UsageException("--repeat is the old name of --repeats: give one of them");
        }
        repeat = cl.has("repeat") ? cl.intValue("repeat", 1, 1, 9) : cl.intValue("repeats", 1, 1, 9);
        figures.put("runs_per_side", repeat);
        for (String kv : cl.string("storm-conf", "").split(",")) {
            if (kv.isBlank()) {
                continue;
            }
            int eq = kv.indexOf('=');
            if (eq <= 0) {
                throw new io.meridian.config.UsageException("--storm-conf takes key=value pairs separated by commas; got '" + kv + "'");
            }
            String v = kv.substring(eq + 1).trim();
            stormConf.put(kv.substring(0, eq).trim(), v.matches("-?[0-9]+") ? (Object) Long.valueOf(v) : v);
        }
        // every option is checked above, before anything runs
        System.out.printf(Locale.ROOT, "transport bench: %d s windows after %d s warm-up, %d B and %d B tuples, %d cores, load average %.2f%n",
            seconds, warmup, small, big, Runtime.getRuntime().availableProcessors(),
            ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
        figures.put("cores", Runtime.getRuntime().availableProcessors());
        figures.put("load_average_start", ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
        if (!cl.flag("skip-raw")) {
            RawTransportBench raw = new RawTransportBench(seconds);
            raw.run(small, big, figures);
        }
        if (!cl.flag("skip-storm")) {
            storm(small, big);
        }
        figures.put("load_average_end", ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
        figures.print();
    }

    private void storm(int small, int big) throws Exception {
        // Kryo adds about 16 B of tuple header, task and stream ids and the timestamp: the payload makes up the rest
        int smallPayload = Math.max(0, small - 16);
        int bigPayload = Math.max(0, big - 16);
        System.out.println();
        System.out.println(local
            ? "Storm topology (LocalCluster, zmq mode: two workers as threads of this JVM, each with its own transport instance)"
            : "Storm topology (real single-host cluster: spout and bolt in two worker processes)");
        figures.put("storm_mode", local ? "LocalCluster zmq (one JVM)" : "cluster (two worker JVMs)");
        try (Backend cluster = local ? new LocalBackend() : new ClusterBackend()) {
            Map<String, Object> out = new LinkedHashMap<>();
            for (boolean acking : new boolean[] {false, true}) {
                String a = acking ? "ack_on" : "ack_off";
                if (!cases.contains(a) && (acking || !cases.contains("latency"))) {
                    continue;
                }
                Trials max = pair(cluster, smallPayload, 0, acking, Map.of(), cases.contains(a));
                if (!max.mmap.isEmpty()) {
                    report("max throughput, " + small + " B, " + a.replace('_', ' '), max, true);
                    put(out, "max_" + a, max);
                }
                if (!acking && cases.contains("latency")) {
                    double rate = max.median(NETTY).rate / 2;
                    Trials at = pair(cluster, smallPayload, rate, false, Map.of(), true);
                    report(String.format(Locale.ROOT, "latency at %.0f tuples/s (half of Netty's max), %d B, ack off", rate, small), at, false);
                    out.put("latency_rate", rate);
                    put(out, "latency_half_max", at);
                }
            }
            if (cases.contains("tuned")) {
                // Storm's default transfer queue (1000 tuples, drained by a thread that sleeps 1 ms when it finds it
                // empty) caps both transports near 1000 tuples per ms; a larger one makes the pipeline CPU-bound
                Map<String, Object> tuned = Map.of("topology.transfer.buffer.size", 32768);
                Trials t = pair(cluster, smallPayload, 0, false, tuned, true);
                report("max throughput, " + small + " B, ack off, topology.transfer.buffer.size 32768", t, true);
                put(out, "max_ack_off_transfer_buffer_32k", t);
            }
            if (cases.contains("big")) {
                Trials b = pair(cluster, bigPayload, 0, false, Map.of(), true);
                report("max throughput, " + big + " B tuples, ack off", b, true);
                put(out, "max_40k", b);
            }
            figures.put("storm", out);
            System.out.println();
            goals(out);
        }
    }

    /**
     * Issue 35's goals: mmap's throughput at least Netty's and its p99 at most Netty's in every case, each as the
     * median of the per-pair ratios (a Netty run and the mmap run after it), so a disturbance that hits one pair does
     * not decide it.
     */
    @SuppressWarnings("unchecked")
    private void goals(Map<String, Object> out) {
        StringBuilder line = new StringBuilder("  goals (median of ").append(repeat).append(" pair").append(repeat > 1 ? "s" : "")
            .append("; throughput ratio >= 1, p99 ratio <= 1):");
        int met = 0;
        int total = 0;
        for (Map.Entry<String, Object> e : out.entrySet()) {
            if (!(e.getValue() instanceof Map)) {
                continue;
            }
            Map<String, Object> m = (Map<String, Object>) e.getValue();
            double throughput = (double) m.get("throughput_ratio");
            double p99 = (double) m.get("p99_ratio");
            boolean fixedRate = e.getKey().startsWith("latency");
            boolean ok = (fixedRate || throughput >= 1.0) && p99 <= 1.0;
            total++;
            met += ok ? 1 : 0;
            line.append(String.format(Locale.ROOT, " %s %s%s p99 %.2fx %s;", e.getKey(),
                fixedRate ? "" : String.format(Locale.ROOT, "throughput %.2fx", throughput), fixedRate ? "" : ",", p99,
                ok ? "met" : "NOT met"));
        }
        System.out.println(line.append(' ').append(met).append(" of ").append(total).append(" met"));
        figures.put("goals_met", met);
        figures.put("goals", total);
    }

    private static void put(Map<String, Object> out, String key, Trials t) {
        Run netty = t.median(NETTY);
        Run mmap = t.median(MMAP);
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("netty_tuples_per_s", netty.rate);
        m.put("mmap_tuples_per_s", mmap.rate);
        m.put("throughput_ratio", t.medianRatio(r -> r.rate));
        m.put("throughput_ratios", t.ratios(r -> r.rate));
        m.put("netty_p50_us", netty.p50 / 1e3);
        m.put("mmap_p50_us", mmap.p50 / 1e3);
        m.put("netty_p99_us", netty.p99 / 1e3);
        m.put("mmap_p99_us", mmap.p99 / 1e3);
        m.put("p99_ratio", t.medianRatio(r -> r.p99));
        m.put("p99_ratios", t.ratios(r -> r.p99));
        m.put("netty_cpu_s_per_M", netty.cpuPerMillion);
        m.put("mmap_cpu_s_per_M", mmap.cpuPerMillion);
        m.put("cpu_per_tuple_ratio", t.medianRatio(r -> r.cpuPerMillion));
        m.put("netty_executor_cpu_s_per_M", netty.executorCpuPerMillion);
        m.put("mmap_executor_cpu_s_per_M", mmap.executorCpuPerMillion);
        m.put("ceiling_ratio_at_equal_cpu", netty.cpuPerMillion / netty.executorCpuPerMillion);
        out.put(key, m);
    }

    private static void report(String what, Trials t, boolean throughput) {
        System.out.println("  " + what + ":");
        for (int i = 0; i < t.netty.size(); i++) {
            for (Run r : new Run[] {t.netty.get(i), t.mmap.get(i)}) {
                System.out.printf(Locale.ROOT, "    %d %-5s %,12.0f tuples/s  p50 %,9.1f us  p99 %,10.1f us  CPU %6.2f s per M tuples%s%s%n",
                    i + 1, r.transport, r.rate, r.p50 / 1e3, r.p99 / 1e3, r.cpuPerMillion,
                    r.sameWorker ? "  (WARNING: spout and bolt shared a worker)" : "", r.restarted ? "  (WARNING: a worker restarted)" : "");
            }
        }
        Run netty = t.median(NETTY);
        Run mmap = t.median(MMAP);
        String of = t.netty.size() > 1 ? String.format(Locale.ROOT, "median of %d pairs, ", t.netty.size()) : "";
        if (throughput) {
            System.out.printf(Locale.ROOT, "    mmap/netty (%sper pair %s) throughput %.2fx, p99 %.2fx, CPU per tuple %.2fx%n", of,
                t.ratios(r -> r.rate), t.medianRatio(r -> r.rate), t.medianRatio(r -> r.p99), t.medianRatio(r -> r.cpuPerMillion));
            System.out.printf(Locale.ROOT, "    the spout's and bolt's executor threads alone: %.2f of Netty's %.2f s per M tuples (mmap run: %.2f of %.2f);"
                + " a transport costing nothing would reach at most %.2fx Netty on the same CPU%n", netty.executorCpuPerMillion, netty.cpuPerMillion,
                mmap.executorCpuPerMillion, mmap.cpuPerMillion, netty.cpuPerMillion / netty.executorCpuPerMillion);
        } else {
            System.out.printf(Locale.ROOT, "    mmap/netty (%sper pair %s) p99 %.2fx, p50 %.2fx%n", of, t.ratios(r -> r.p99),
                t.medianRatio(r -> r.p99), t.medianRatio(r -> r.p50));
        }
    }

    /** The runs of one case, Netty's and mmap's taken in turn: run i of each is a pair. */
    private static final class Trials {
        final java.util.List<Run> netty = new java.util.ArrayList<>();
        final java.util.List<Run> mmap = new java.util.ArrayList<>();

        /** The median run of one side, by throughput (by p99 for a fixed rate, where throughput is the rate). */
        Run median(String transport) {
            java.util.List<Run> sorted = new java.util.ArrayList<>(transport.equals(NETTY) ? netty : mmap);
            boolean fixedRate = sorted.get(0).fixedRate;
            sorted.sort(fixedRate ? java.util.Comparator.comparingLong((Run r) -> r.p99) : java.util.Comparator.comparingDouble((Run r) -> r.rate));
            return sorted.get((sorted.size() - 1) / 2);
        }

        java.util.List<Double> ratios(java.util.function.ToDoubleFunction<Run> measure) {
            java.util.List<Double> r = new java.util.ArrayList<>();
            for (int i = 0; i < mmap.size(); i++) {
                r.add(Math.round(1000 * measure.applyAsDouble(mmap.get(i)) / measure.applyAsDouble(netty.get(i))) / 1000.0);
            }
            return r;
        }

        double medianRatio(java.util.function.ToDoubleFunction<Run> measure) {
            double[] r = new double[mmap.size()];
            for (int i = 0; i < r.length; i++) {
                r[i] = measure.applyAsDouble(mmap.get(i)) / measure.applyAsDouble(netty.get(i));
            }
            java.util.Arrays.sort(r);
            return r.length % 2 == 1 ? r[r.length / 2] : (r[r.length / 2 - 1] + r[r.length / 2]) / 2;
        }
    }

    private static final class Run {
        String transport;
        double rate;
        long p50;
        long p99;
        double cpuPerMillion;
        double executorCpuPerMillion;
        boolean sameWorker;
        boolean restarted;
        boolean fixedRate;
    }

    private int runs;
    private boolean local;
    private boolean threads;
    private final java.util.Set<String> cases = new java.util.LinkedHashSet<>();
    private int heapMb;
    private int repeat;
    private final Map<String, Object> stormConf = new LinkedHashMap<>();

    /** CPU nanoseconds per thread, by name with digits folded, so the same role in both workers adds up. */
    private static Map<String, Long> threadCpu() {
        java.lang.management.ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        Map<String, Long> m = new HashMap<>();
        for (java.lang.management.ThreadInfo ti : mx.getThreadInfo(mx.getAllThreadIds())) {
            if (ti != null) {
                long t = mx.getThreadCpuTime(ti.getThreadId());
                if (t > 0) {
                    m.merge(ti.getThreadName().replaceAll("[0-9]+", "#"), t, Long::sum);
                }
            }
        }
        return m;
    }

    private static void printThreads(Map<String, Long> before, Map<String, Long> after, double seconds) {
        Map<String, Long> d = new HashMap<>();
        after.forEach((k, v) -> d.put(k, v - before.getOrDefault(k, 0L)));
        d.entrySet().stream().sorted((x, y) -> Long.compare(y.getValue(), x.getValue())).limit(14).forEach(e ->
            System.out.printf(Locale.ROOT, "        %5.1f%% of a core  %s%n", 100.0 * e.getValue() / 1e9 / seconds, e.getKey()));
    }

    /** Netty then mmap, {@code --repeats} times in turn, so that a disturbance of the host hits both. */
    private Trials pair(Backend cluster, int payload, double rate, boolean acking, Map<String, Object> extra, boolean withMmap)
            throws Exception {
        Trials t = new Trials();
        for (int i = 0; i < repeat; i++) {
            t.netty.add(run(cluster, NETTY, payload, rate, acking, extra));
            if (withMmap) {
                t.mmap.add(run(cluster, MMAP, payload, rate, acking, extra));
            }
        }
        return t;
    }

    private Run run(Backend cluster, String transport, int payload, double rate, boolean acking, Map<String, Object> extra) throws Exception {
        String name = "bench-" + transport + "-" + (++runs);
        Config conf = new Config();
        conf.setNumWorkers(2);
        conf.setNumAckers(acking ? 1 : 0);
        if (acking) {
            conf.setMaxSpoutPending(5000);
        }
        // the same heap for both transports (the cluster's default is sized for small components, and Netty's client
        // buffers 40 KB tuples on the heap until it runs out); it comes after worker.childopts, so it wins
        conf.put(Config.TOPOLOGY_WORKER_CHILDOPTS, "-Xmx" + heapMb + "m");
        conf.putAll(extra);
        conf.putAll(stormConf);
        if (transport.equals(MMAP)) {
            MmapTransport.enable(conf);
        }
        cluster.submit(name, conf, BenchTopology.build(name, payload, rate, acking));
        long deadline = System.nanoTime() + 120_000_000_000L;
        while (cluster.sample(name) == null || cluster.sample(name).received == 0) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("topology " + name + " delivered nothing in 120 s");
            }
            Thread.sleep(100);
        }
        Thread.sleep(warmup * 1000L);
        Backend.Sample s0 = cluster.sample(name);
        Map<String, Long> th0 = local ? threadCpu() : ((ClusterBackend) cluster).threadCpu(name);
        long t0 = System.nanoTime();
        Thread.sleep(seconds * 1000L);
        Backend.Sample s1 = cluster.sample(name);
        long t1 = System.nanoTime();
        Map<String, Long> th1 = local ? threadCpu() : ((ClusterBackend) cluster).threadCpu(name);
        if (threads) {
            System.out.println("      threads of " + name + " (" + (acking ? "ack on" : "ack off") + "):");
            printThreads(th0, th1, seconds);
        }
        cluster.kill(name);
        long[] h = LatencyHistogram.minus(s1.histogram, s0.histogram);
        Run r = new Run();
        r.transport = transport;
        r.fixedRate = rate > 0;
        r.rate = (s1.received - s0.received) / ((t1 - t0) / 1e9);
        r.p50 = LatencyHistogram.quantile(h, 0.50);
        r.p99 = LatencyHistogram.quantile(h, 0.99);
        r.cpuPerMillion = (s1.cpuNanos - s0.cpuNanos) / 1e9 / Math.max(1e-9, (s1.received - s0.received) / 1e6);
        r.sameWorker = s1.spoutPort == s1.boltPort;
        long executorNanos = 0;
        for (Map.Entry<String, Long> e : th1.entrySet()) {
            // the spout's and the bolt's executor threads ("Thread-#-src-executor[..]", 15 characters in /proc)
            if (e.getKey().contains("-src-") || e.getKey().contains("-sink-")) {
                executorNanos += e.getValue() - th0.getOrDefault(e.getKey(), 0L);
            }
        }
        r.executorCpuPerMillion = executorNanos / 1e9 / Math.max(1e-9, (s1.received - s0.received) / 1e6);
        if (s1.cpuNanos < s0.cpuNanos || s1.received < s0.received) {
            System.out.println("      WARNING: a worker of " + name + " restarted during the window (see its worker.log): figures are not valid");
            r.restarted = true;
        }
        return r;
    }
}
