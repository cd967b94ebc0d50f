package io.meridian.stream.ingest;

import com.codahale.metrics.Counter;
import org.apache.storm.task.TopologyContext;

/** Names of the topology's own metrics (metrics v2; docs/metrics.md has their Prometheus names). */
public final class IngestMetrics {
    public static final String PREFIX = "meridian.";
    public static final String RECEIVED = "meridian.rows.received";
    public static final String STORED = "meridian.rows.stored";
    /** Rows stored as the publishing host's mirror copy of another host's block (not counted as stored). */
    public static final String MIRRORED = "meridian.rows.mirrored";
    /** Mirror blocks dropped once the publishing task no longer read them (their files deleted). */
    public static final String MIRROR_BLOCKS_DROPPED = "meridian.rows.mirrorBlocksDropped";
    public static final String DUPLICATE = "meridian.rows.duplicate";
    /** Writes to the row store files that failed (a full disk): the rows were not acked, and Kafka replays them. */
    public static final String STORE_WRITE_FAILURES = "meridian.rows.storeWriteFailures";
    public static final String REJECTED_PREFIX = "meridian.rows.rejected.";
    public static final String DEAD_LETTERED = "meridian.rows.deadLettered";
    /** Time from publishing a row (Kafka record timestamp, or the file spout's emit) to its being stored (a time histogram). */
    public static final String PUBLISH_TO_STORED = "meridian.rows.publishToStored";

    private IngestMetrics() {
    }

    /** One counter per reject reason, indexed by ordinal. */
    static Counter[] rejectCounters(TopologyContext context) {
        RejectReason[] reasons = RejectReason.values();
        Counter[] counters = new Counter[reasons.length];
        for (RejectReason r : reasons) {
            counters[r.ordinal()] = context.registerCounter(REJECTED_PREFIX + r.code());
        }
        return counters;
    }
}
