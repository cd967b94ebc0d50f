package io.meridian.stream.ingest;

import com.codahale.metrics.Counter;
import io.meridian.config.MeridianConfig;
import io.meridian.stream.WorkingDirectories;
import io.meridian.stream.live.AssignmentHook;
import io.meridian.stream.live.MapLayout;
import io.meridian.stream.live.MapStreams;
import io.meridian.stream.metrics.TimeHistogram;
import io.meridian.stream.row.BlockRowStore;
import io.meridian.stream.row.DistanceRow;
import io.meridian.stream.row.RowStoreWriteException;
import io.meridian.stream.row.RowStores;
import java.util.Arrays;
import java.util.Map;
import org.apache.storm.task.OutputCollector;
import org.apache.storm.task.TopologyContext;
import org.apache.storm.topology.OutputFieldsDeclarer;
import org.apache.storm.topology.base.BaseRichBolt;
import org.apache.storm.tuple.Tuple;
import org.apache.storm.tuple.Values;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes the valid rows validation sends here ({@link RowBatch}es of the blocks {@link MapLayout} routes to this task:
 * on the host of the map task that owns the block, and a mirror copy on the publishing task's host) into the
 * memory-mapped row stores, and acks a batch only once each of its rows is written. A mirror copy counts as mirrored, not stored, and
 * is not announced to the map: the block's own store does both. The mirror holds only the rows the publishing task
 * may still read: it says from which id on ({@link MapStreams#MIRROR_NEEDED}), and the blocks wholly below are dropped
 * (their files deleted) and not made again by a replayed row. Replays are idempotent: a row already stored with the same values is acked and
 * counted as a duplicate; with other values it is rejected as a conflict. A row whose id is more than
 * {@code ingest.validation.maxIdAhead} beyond the highest id this task has stored is rejected as out of order (see the
 * row format page for why that bound never rejects a row of a well-behaved stream).
 *
 * <p>A row that cannot be written (a full disk: {@link RowStoreWriteException}) is not the row's fault: the batch is
 * failed, not acked and not dead-lettered, so Kafka replays it (with the spout's back-off, up to 10 s) until the store
 * has room; the failure is counted ({@code meridian_rows_store_write_failures_total}, alert
 * MeridianRowStoreWriteFailing) and named, with the file and the operating system's reason, in the worker log and
 * Storm's component errors, once a minute for each file.
 */
public final class RowStoreBolt extends BaseRichBolt {
    private static final long serialVersionUID = 1L;
    private transient OutputCollector collector;
    private transient RowStores stores;
    private transient int maxIdAhead;
    private transient Counter stored;
    private transient Counter mirrored;
    private transient Counter mirrorBlocksDropped;
    /** Mirror copies of rows below it are not wanted (the publishing task said so): none are kept. */
    private transient int mirrorNeededFrom;
    private transient int blockRows;
    private transient int me;
    private transient MapLayout.Tracker layout;
    private transient Counter duplicates;
    private transient Counter[] rejected;
    private transient TimeHistogram latency;
    private transient DistanceRow row;
    private transient Counter writeFailures;
    private transient String host;
    /** The files whose failures were reported in the current minute (so a full disk logs each once a minute). */
    private transient java.util.Set<java.nio.file.Path> failedFilesReported;
    private transient long reportWindowStartNanos;
    private transient long failuresSinceLog;
    private static final long WRITE_FAILURE_LOG_INTERVAL_NANOS = 60_000_000_000L;
    private static final Logger LOG = LoggerFactory.getLogger(RowStoreBolt.class);

    @Override
    public void prepare(Map<String, Object> topoConf, TopologyContext context, OutputCollector collector) {
        this.collector = collector;
        MeridianConfig config = MeridianConfig.parse((String) topoConf.get(IngestStreams.CONFIG_KEY), "topology config");
        var ingest = config.ingest();
        this.maxIdAhead = ingest.validation().maxIdAhead();
        this.me = context.getThisTaskId();
        this.layout = new MapLayout.Tracker(AssignmentHook.context(context), MapStreams.MAP, context.getThisComponentId());
        // the blocks validation sends here (MapLayout's routes), so a restarted task reopens its own blocks
        MapLayout atStart = layout.current();
        this.stores = new RowStores(WorkingDirectories.create(ingest.rowStore().directory(), "ingest.rowStore.directory"), ingest.rowStore().blockRows(), ingest.maxPoints(),
                block -> atStart.stores(me, block));
        this.stored = context.registerCounter(IngestMetrics.STORED);
        this.mirrored = context.registerCounter(IngestMetrics.MIRRORED);
        this.mirrorBlocksDropped = context.registerCounter(IngestMetrics.MIRROR_BLOCKS_DROPPED);
        this.blockRows = ingest.rowStore().blockRows();
        this.duplicates = context.registerCounter(IngestMetrics.DUPLICATE);
        this.rejected = IngestMetrics.rejectCounters(context);
        this.latency = TimeHistogram.register(context, IngestMetrics.PUBLISH_TO_STORED);
        this.row = new DistanceRow();
        this.writeFailures = context.registerCounter(IngestMetrics.STORE_WRITE_FAILURES);
        this.host = hostName() + ":" + context.getThisWorkerPort();
        this.failedFilesReported = new java.util.HashSet<>();
        this.reportWindowStartNanos = System.nanoTime();
    }

    private static String hostName() {
        try {
            return org.apache.storm.utils.Utils.hostname(); // Storm's name of the host (storm.local.hostname)
        } catch (java.net.UnknownHostException e) {
            return "unknown host";
        }
    }

    @Override
    public void execute(Tuple input) {
        if (MapStreams.MIRROR_NEEDED.equals(input.getSourceStreamId())) {
            dropMirrorBelow(input.getInteger(0));
            collector.ack(input);
            return;
        }
        RowBatch in = (RowBatch) input.getValue(0);
        MapLayout routes = layout.current();
        int n = in.size();
        int[] ids = null; // the rows stored here as their block's own store: announced to the map
        long[] published = null;
        int announced = 0;
        int mirroredRows = 0;
        int duplicateRows = 0;
        for (int i = 0; i < n; i++) {
            RejectReason reason = null;
            String detail = row.wrap(in.value(i));
            if (detail != null) { // validation passed it: only a corrupted tuple gets here
                reason = RejectReason.MALFORMED;
            } else if (row.id() > stores.highestId() + maxIdAhead) { // so it cannot be stored yet: no replay of a stored row
                reason = RejectReason.ID_OUT_OF_ORDER;
                detail = "id " + row.id() + " is more than " + maxIdAhead + " beyond the highest id stored by this row"
                        + " store (" + stores.highestId() + ")";
            } else if (unwantedMirror(routes, row.id())) {
                continue; // a replayed mirror copy the publishing task no longer reads: its block was dropped here
            } else {
                BlockRowStore.Outcome outcome;
                try {
                    outcome = stores.store(row);
                } catch (RowStoreWriteException e) {
                    // not stored (nor acked): Kafka replays the batch, whose rows stored so far come back duplicates
                    writeFailed(e, row.id(), n - i);
                    announce(ids, published, announced, mirroredRows, duplicateRows);
                    collector.fail(input);
                    return;
                }
                if (outcome == BlockRowStore.Outcome.STORED && routes.primaryStore(stores.blockOf(row.id())) != me) {
                    mirroredRows++; // the publishing host's copy: counted and announced by the block's own store
                } else if (outcome == BlockRowStore.Outcome.STORED) {
                    latency.updateMillis(System.currentTimeMillis() - in.publishedMs(i));
                    if (ids == null) {
                        ids = new int[n - i];
                        published = new long[n - i];
                    }
                    ids[announced] = row.id();
                    published[announced++] = in.publishedMs(i);
                } else if (outcome == BlockRowStore.Outcome.DUPLICATE) {
                    duplicateRows++;
                } else {
                    reason = RejectReason.CONFLICT;
                    detail = "row " + row.id() + " is already stored with other values";
                }
            }
            if (reason != null) {
                rejected[reason.ordinal()].inc();
                collector.emit(IngestStreams.REJECTED, input, new Values(in.value(i), reason.code(), detail, in.source(i)));
            }
        }
        announce(ids, published, announced, mirroredRows, duplicateRows);
        collector.ack(input);
    }

    /** A mirror copy of a row in a block wholly below what the publishing task still reads. */
    private boolean unwantedMirror(MapLayout routes, int id) {
        int block = stores.blockOf(id);
        return (block + 1L) * blockRows <= mirrorNeededFrom && routes.primaryStore(block) != me;
    }

    /**
     * Drops the mirror blocks wholly below {@code from}: the publishing task reads no row below it from this host's
     * copies any more (its clustering covers them), so the mirror holds the newest rows only, not a second copy of
     * the other hosts' part of the matrix. The task unmaps its own mappings of them, so the disk space comes back.
     */
    private void dropMirrorBelow(int from) {
        if (from <= mirrorNeededFrom) {
            return;
        }
        mirrorNeededFrom = from;
        MapLayout routes = layout.current();
        int dropped = 0;
        for (int block = 0; (block + 1L) * blockRows <= from; block++) {
            if (stores.holds(block) && routes.primaryStore(block) != me && stores.drop(block)) {
                dropped++;
            }
        }
        if (dropped > 0) {
            mirrorBlocksDropped.inc(dropped);
            LOG.info("row store task {} on {}: dropped {} mirror blocks wholly below row {} (the publishing task no"
                    + " longer reads them)", me, host, dropped, from);
        }
    }

    private void announce(int[] ids, long[] published, int announced, int mirroredRows, int duplicateRows) {
        stored.inc(announced);
        mirrored.inc(mirroredRows);
        duplicates.inc(duplicateRows);
        if (announced > 0) {
            // unanchored: a notification for the live map, which reads the rows from the store files
            collector.emit(MapStreams.STORED, new Values(Arrays.copyOf(ids, announced), Arrays.copyOf(published, announced),
                    System.currentTimeMillis()));
        }
    }

    /**
     * Counts a failed write and says so in the worker log and Storm's component errors, once a minute for each file
     * that failed (with the count since the last report): Kafka replays the rows every few seconds while the disk stays
     * full, and a first test run logged 108 lines in 40 s.
     */
    private void writeFailed(RowStoreWriteException e, int id, int rowsNotStored) {
        writeFailures.inc();
        failuresSinceLog++;
        long now = System.nanoTime();
        if (now - reportWindowStartNanos > WRITE_FAILURE_LOG_INTERVAL_NANOS) {
            failedFilesReported.clear();
            reportWindowStartNanos = now;
        }
        if (failedFilesReported.add(e.file())) {
            String message = "row store task " + me + " on " + host + ": " + e.getMessage() + " (" + failuresSinceLog
                    + (failuresSinceLog == 1 ? " failure" : " failures") + " since the last report; row " + id
                    + " and the " + (rowsNotStored - 1) + " after it in its batch not stored, not acked: Kafka replays"
                    + " them until they are stored)";
            LOG.error(message);
            collector.reportError(new IllegalStateException(message, e));
            failuresSinceLog = 0;
        }
    }

    @Override
    public void cleanup() {
        if (stores != null) {
            stores.force();
            stores.close();
        }
    }

    @Override
    public void declareOutputFields(OutputFieldsDeclarer declarer) {
        declarer.declareStream(IngestStreams.REJECTED, IngestStreams.REJECTED_FIELDS);
        declarer.declareStream(MapStreams.STORED, MapStreams.STORED_FIELDS);
    }
}
