package io.meridian.stream.metrics;

import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * How a Storm metric's short name becomes a Prometheus name and labels (docs/metrics.md): Storm's built-ins become
 * {@code storm_*}, with the stream, source component, queue, Kafka topic and partition that Storm writes into the
 * name as labels; Meridian's {@code meridian.*} names become {@code meridian_*} in snake case. Times become seconds.
 * Counters' names are given without {@code _total}, which the exposition appends.
 */
final class PrometheusNames {
    /** What a name maps to; {@code null} from {@link #map} when the metric is not exported. */
    record Mapped(String name, String[] labelNames, String[] labelValues, double scale) {
        boolean has(String label) {
            for (String l : labelNames) {
                if (l.equals(label)) {
                    return true;
                }
            }
            return false;
        }
    }

    private static final String[] NONE = new String[0];
    private static final double MS = 1e-3;
    private static final Pattern STREAM_COUNT =
            Pattern.compile("__(emit|transfer|ack|fail)-count-(.+)");
    private static final Pattern EXECUTE =
            Pattern.compile("__(execute-count|execute-latency|process-latency)-([^:]*):(.+)");
    private static final Pattern COMPLETE_LATENCY = Pattern.compile("__complete-latency-(.+)");
    private static final Pattern SKIPPED = Pattern.compile("__skipped-(backpressure|max-spout|inactive)-ms");
    private static final Pattern QUEUE = Pattern.compile(
            "(.+)-(capacity|population|pct_full|arrival_rate_secs|sojourn_time_ms|insert_failures|dropped_messages|overflow)");
    private static final Pattern KAFKA_PARTITION = Pattern.compile("kafkaOffset\\.(.+)/partition_(\\d+)/(\\w+)");
    private static final Pattern KAFKA_TOPIC = Pattern.compile("kafkaOffset\\.(.+)/(\\w+)");
    private static final Pattern NETTY_CLIENT =
            Pattern.compile("__send-iconnection-(sent|pending|lostOnSend|reconnects)-(.+)");
    private static final Pattern REJECTED = Pattern.compile("meridian\\.rows\\.rejected\\.(.+)");
    /** {@code meridian.transport.WAY.HOST_PORT.WHAT}: a worker's link counters (the transport's LinkMetrics). */
    private static final Pattern LINK = Pattern.compile("meridian\\.transport\\.(mmap|netty)\\.(.+)_(\\d+)\\.(\\w+)");

    private PrometheusNames() {
    }

    /** A task metric's name (the short name Storm registered), or null for one that is not exported. */
    static Mapped map(String shortName) {
        if (shortName.endsWith(".m1_rate")) {
            return null; // RateCounter's moving average: Prometheus computes rates from the counter itself
        }
        Matcher m;
        if ((m = REJECTED.matcher(shortName)).matches()) {
            return new Mapped("meridian_rows_rejected", new String[] {"reason"}, new String[] {m.group(1)}, 1);
        }
        if (shortName.startsWith("meridian.")) {
            return new Mapped(snake(shortName), NONE, NONE, 1);
        }
        if ((m = STREAM_COUNT.matcher(shortName)).matches()) {
            String verb = switch (m.group(1)) {
                case "emit" -> "emitted";
                case "transfer" -> "transferred";
                case "ack" -> "acked";
                default -> "failed";
            };
            return new Mapped("storm_" + verb, new String[] {"stream"}, new String[] {m.group(2)}, 1);
        }
        if ((m = EXECUTE.matcher(shortName)).matches()) {
            String[] names = {"source_component", "source_stream"};
            String[] values = {m.group(2), m.group(3)};
            return switch (m.group(1)) {
                case "execute-count" -> new Mapped("storm_executed", names, values, 1);
                case "execute-latency" -> new Mapped("storm_execute_latency_seconds", names, values, MS);
                default -> new Mapped("storm_process_latency_seconds", names, values, MS);
            };
        }
        if ((m = COMPLETE_LATENCY.matcher(shortName)).matches()) {
            return new Mapped("storm_complete_latency_seconds", new String[] {"stream"}, new String[] {m.group(1)}, MS);
        }
        if ((m = SKIPPED.matcher(shortName)).matches()) {
            return new Mapped("storm_skipped_" + m.group(1).replace('-', '_') + "_seconds", NONE, NONE, MS);
        }
        if ((m = NETTY_CLIENT.matcher(shortName)).matches()) {
            return new Mapped("storm_netty_client_" + snake(m.group(1)), new String[] {"peer"},
                    new String[] {m.group(2)}, 1);
        }
        if ((m = KAFKA_PARTITION.matcher(shortName)).matches()) {
            return new Mapped("storm_kafka_spout_" + kafkaField(m.group(3)), new String[] {"topic", "partition"},
                    new String[] {m.group(1), m.group(2)}, 1);
        }
        if ((m = KAFKA_TOPIC.matcher(shortName)).matches()) {
            String field = m.group(2).equals("totalSpoutLag") ? "total_lag" : snake(m.group(2));
            return new Mapped("storm_kafka_spout_" + field, new String[] {"topic"}, new String[] {m.group(1)}, 1);
        }
        switch (shortName) {
            case "__capacity":
                return new Mapped("storm_capacity", NONE, NONE, 1);
            case "__reported-error-count":
                return new Mapped("storm_reported_errors", NONE, NONE, 1);
            case "uptimeSecs":
                return new Mapped("storm_worker_uptime_seconds", NONE, NONE, 1);
            case "startTimeSecs":
                return new Mapped("storm_worker_start_time_seconds", NONE, NONE, 1);
            case "__backpressure-last-overflow-count":
                return new Mapped("storm_backpressure_last_overflow_tuples", NONE, NONE, 1);
            default:
                break;
        }
        if ((m = QUEUE.matcher(shortName)).matches()) {
            String queue = m.group(1).startsWith("__") ? m.group(1).substring(2) : m.group(1);
            return switch (m.group(2)) {
                case "pct_full" -> new Mapped("storm_queue_fill_ratio", new String[] {"queue"}, new String[] {queue}, 1);
                case "arrival_rate_secs" -> new Mapped("storm_queue_arrivals_per_second", new String[] {"queue"},
                        new String[] {queue}, 1);
                case "sojourn_time_ms" -> new Mapped("storm_queue_sojourn_seconds", new String[] {"queue"},
                        new String[] {queue}, MS);
                default -> new Mapped("storm_queue_" + m.group(2), new String[] {"queue"}, new String[] {queue}, 1);
            };
        }
        String name = "storm_" + snake(shortName);
        if (name.endsWith("_ms")) {
            return new Mapped(name.substring(0, name.length() - 3) + "_seconds", NONE, NONE, MS);
        }
        if (name.endsWith("_secs")) {
            return new Mapped(name.substring(0, name.length() - 5) + "_seconds", NONE, NONE, 1);
        }
        return new Mapped(unreserved(name), NONE, NONE, 1);
    }

    /** A name that does not end as a histogram's or counter's series does ({@code _count}, {@code _sum}, ...). */
    private static String unreserved(String name) {
        for (String suffix : new String[] {"_count", "_sum", "_bucket", "_total", "_created", "_info"}) {
            if (name.endsWith(suffix)) {
                return name + "_value";
            }
        }
        return name;
    }

    /** A worker-level metric (not a task's): the transport's links; null for others. */
    static Mapped mapWorker(String name) {
        Matcher m = LINK.matcher(name);
        if (!m.matches()) {
            return null;
        }
        String what = switch (m.group(4)) {
            case "messages" -> "meridian_transport_sent_messages";
            case "bytes" -> "meridian_transport_sent_bytes";
            case "lag" -> "meridian_transport_reader_lag_messages";
            case "backpressure" -> "meridian_transport_backpressure";
            case "wakeups" -> "meridian_transport_doorbell_wakeups";
            default -> "meridian_transport_" + snake(m.group(4));
        };
        return new Mapped(what, new String[] {"peer", "way"}, new String[] {m.group(2) + ":" + m.group(3), m.group(1)},
                1);
    }

    private static String kafkaField(String field) {
        return field.equals("spoutLag") ? "lag" : snake(field);
    }

    /**
     * {@code meridian.map.publishedToFrame} -> {@code meridian_map_published_to_frame}: camel case and every
     * character Prometheus does not allow become underscores, runs of them one, none at either end.
     */
    static String snake(String name) {
        StringBuilder out = new StringBuilder(name.length() + 8);
        char previous = '_';
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            boolean upper = c >= 'A' && c <= 'Z';
            boolean valid = (c >= 'a' && c <= 'z') || upper || (c >= '0' && c <= '9');
            if (!valid) {
                c = '_';
            } else if (upper) {
                if (previous != '_' && !(previous >= 'A' && previous <= 'Z')) {
                    out.append('_');
                }
                c = Character.toLowerCase(c);
            }
            if (c == '_' && (out.length() == 0 || out.charAt(out.length() - 1) == '_')) {
                previous = '_';
                continue;
            }
            out.append(c);
            previous = name.charAt(i);
        }
        int end = out.length();
        while (end > 0 && out.charAt(end - 1) == '_') {
            end--;
        }
        String s = out.substring(0, end).toLowerCase(Locale.ROOT);
        return s.isEmpty() || Character.isDigit(s.charAt(0)) ? "_" + s : s;
    }
}
