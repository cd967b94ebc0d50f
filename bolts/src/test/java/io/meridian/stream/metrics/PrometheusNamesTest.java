package io.meridian.stream.metrics;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.meridian.stream.live.MapStreams;
import org.junit.jupiter.api.Test;

class PrometheusNamesTest {
    private static void check(String storm, String name, String[] labels, String[] values, double scale) {
        PrometheusNames.Mapped m = PrometheusNames.map(storm);
        assertEquals(name, m.name(), storm);
        assertArrayEquals(labels, m.labelNames(), storm);
        assertArrayEquals(values, m.labelValues(), storm);
        assertEquals(scale, m.scale(), storm);
    }

    @Test
    void stormBuiltInsCarryTheirStreamsComponentsQueuesAndPartitionsAsLabels() {
        String[] none = {};
        check("__emit-count-default", "storm_emitted", new String[] {"stream"}, new String[] {"default"}, 1);
        check("__ack-count-rows", "storm_acked", new String[] {"stream"}, new String[] {"rows"}, 1);
        check("__execute-count-validate:rows", "storm_executed", new String[] {"source_component", "source_stream"},
                new String[] {"validate", "rows"}, 1);
        check("__execute-latency-spout:default", "storm_execute_latency_seconds",
                new String[] {"source_component", "source_stream"}, new String[] {"spout", "default"}, 1e-3);
        check("__complete-latency-default", "storm_complete_latency_seconds", new String[] {"stream"},
                new String[] {"default"}, 1e-3);
        check("__capacity", "storm_capacity", none, none, 1);
        check("__skipped-backpressure-ms", "storm_skipped_backpressure_seconds", none, none, 1e-3);
        check("__receive-population", "storm_queue_population", new String[] {"queue"}, new String[] {"receive"}, 1);
        check("__receive-pct_full", "storm_queue_fill_ratio", new String[] {"queue"}, new String[] {"receive"}, 1);
        check("__receive-sojourn_time_ms", "storm_queue_sojourn_seconds", new String[] {"queue"},
                new String[] {"receive"}, 1e-3);
        check("kafkaOffset.distance-rows/partition_3/spoutLag", "storm_kafka_spout_lag",
                new String[] {"topic", "partition"}, new String[] {"distance-rows", "3"}, 1);
        check("kafkaOffset.distance-rows/partition_0/latestEmittedOffset", "storm_kafka_spout_latest_emitted_offset",
                new String[] {"topic", "partition"}, new String[] {"distance-rows", "0"}, 1);
        check("kafkaOffset.distance-rows/totalSpoutLag", "storm_kafka_spout_total_lag", new String[] {"topic"},
                new String[] {"distance-rows"}, 1);
        check("__send-iconnection-pending-host1:6701", "storm_netty_client_pending", new String[] {"peer"},
                new String[] {"host1:6701"}, 1);
        check("uptimeSecs", "storm_worker_uptime_seconds", none, none, 1);
        check("CGroupCpu.user-ms", "storm_cgroup_cpu_user_seconds", none, none, 1e-3);
        check("__backpressure-last-overflow-count", "storm_backpressure_last_overflow_tuples", none, none, 1);
        check("CGroupCpuStat.nr.period-count", "storm_cgroup_cpu_stat_nr_period_count_value", none, none, 1);
        assertNull(PrometheusNames.map("__emit-count-default.m1_rate"), "Prometheus computes rates itself");
    }

    @Test
    void meridianNamesBecomeSnakeCaseWithTheRejectReasonAsALabel() {
        String[] none = {};
        check("meridian.rows.received", "meridian_rows_received", none, none, 1);
        check("meridian.rows.deadLettered", "meridian_rows_dead_lettered", none, none, 1);
        check("meridian.map.publishedToFrame", "meridian_map_published_to_frame", none, none, 1);
        check("meridian.map.collectiveSharedMemory", "meridian_map_collective_shared_memory", none, none, 1);
        check(MapStreams.OUTLIERS, "meridian_map_outliers", none, none, 1);
        check("meridian.rows.rejected.id-out-of-order", "meridian_rows_rejected", new String[] {"reason"},
                new String[] {"id-out-of-order"}, 1);
        PrometheusNames.Mapped link = PrometheusNames.mapWorker("meridian.transport.mmap.meridian-h1_6701.messages");
        assertEquals("meridian_transport_sent_messages", link.name());
        assertArrayEquals(new String[] {"meridian-h1:6701", "mmap"}, link.labelValues());
        assertEquals("meridian_transport_reader_lag_messages",
                PrometheusNames.mapWorker("meridian.transport.mmap.localhost_6700.lag").name());
        assertNull(PrometheusNames.mapWorker("meridian.something.else"));
    }

    @Test
    void snakeCaseIsAValidPrometheusName() {
        assertEquals("a_b_c", PrometheusNames.snake("a.b-c"));
        assertEquals("x_latency_ms", PrometheusNames.snake("x.latencyMs"));
        assertEquals("_9lives", PrometheusNames.snake("9lives"));
        assertEquals("cgroup_cpu_stat_nr_period_count", PrometheusNames.snake("CGroupCpuStat.nr.period-count"));
    }
}
