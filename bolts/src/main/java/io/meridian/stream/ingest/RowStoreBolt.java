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
import io.meridian.stream.row.RowStores;
import java.util.Arrays;
import java.util.Map;
import org.apache.storm.task.OutputCollector;
import org.apache.storm.task.TopologyContext;
import org.apache.storm.topology.OutputFieldsDeclarer;
import org.apache.storm.topology.base.BaseRichBolt;
import org.apache.storm.tuple.Tuple;
import org.apache.storm.tuple.Values;

/**
 * Writes the valid rows validation sends here ({@link RowBatch}es of the blocks {@link MapLayout} routes to this task:
 * on the host of the map task that owns the block, and a mirror copy on the publishing task's host) into the
 * memory-mapped row stores, and acks a batch only once each of its rows is written. A mirror copy counts as mirrored, not stored, and
 * is not announced to the map: the block's own store does both. Replays are idempotent: a row already stored with the same values is acked and
 * counted as a duplicate; with other values it is rejected as a conflict. A row whose id is more than
 * {@code ingest.validation.maxIdAhead} beyond the highest id this task has stored is rejected as out of order (see the
 * row format page for why that bound never rejects a row of a well-behaved stream).
 */
public final class RowStoreBolt extends BaseRichBolt {
    private static final long serialVersionUID = 1L;
    private transient OutputCollector collector;
    private transient RowStores stores;
    private transient int maxIdAhead;
    private transient Counter stored;
    private transient Counter mirrored;
    private transient int me;
    private transient MapLayout.Tracker layout;
    private transient Counter duplicates;
    private transient Counter[] rejected;
    private transient TimeHistogram latency;
    private transient DistanceRow row;

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
        this.duplicates = context.registerCounter(IngestMetrics.DUPLICATE);
        this.rejected = IngestMetrics.rejectCounters(context);
        this.latency = TimeHistogram.register(context, IngestMetrics.PUBLISH_TO_STORED);
        this.row = new DistanceRow();
    }

    @Override
    public void execute(Tuple input) {
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
            } else {
                BlockRowStore.Outcome outcome = stores.store(row);
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
        stored.inc(announced);
        mirrored.inc(mirroredRows);
        duplicates.inc(duplicateRows);
        if (announced > 0) {
            // unanchored: a notification for the live map, which reads the rows from the store files
            collector.emit(MapStreams.STORED, new Values(Arrays.copyOf(ids, announced), Arrays.copyOf(published, announced),
                    System.currentTimeMillis()));
        }
        collector.ack(input);
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
