package io.meridian.stream.ingest;

import com.codahale.metrics.Counter;
import io.meridian.config.MeridianConfig;
import io.meridian.stream.live.AssignmentHook;
import io.meridian.stream.live.MapLayout;
import io.meridian.stream.live.MapStreams;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.apache.storm.task.OutputCollector;
import org.apache.storm.task.TopologyContext;
import org.apache.storm.topology.OutputFieldsDeclarer;
import org.apache.storm.topology.base.BaseRichBolt;
import org.apache.storm.tuple.Tuple;
import org.apache.storm.tuple.Values;

/**
 * Checks each row of an incoming {@link RowBatch} ({@link RowValidator}): bad rows go one by one on
 * {@link IngestStreams#REJECTED} with the reason; the valid ones go to the row store tasks that store their blocks
 * ({@link MapLayout#primaryStore}, and {@link MapLayout#mirrorStore} when the map spans hosts), one tuple per row store
 * task on the direct stream {@link IngestStreams#ROWS}. Everything is anchored, so the source's ack waits for every row
 * store (and dead-letter write) involved.
 */
public final class ValidationBolt extends BaseRichBolt {
    private static final long serialVersionUID = 1L;
    private transient OutputCollector collector;
    private transient RowValidator validator;
    private transient int blockRows;
    private transient MapLayout.Tracker layout;
    /** The row store tasks, ascending: a task's output batch is at its index. */
    private transient int[] storeTasks;
    private transient Counter received;
    private transient Counter[] rejected;

    @Override
    public void prepare(Map<String, Object> topoConf, TopologyContext context, OutputCollector collector) {
        this.collector = collector;
        MeridianConfig config = MeridianConfig.parse((String) topoConf.get(IngestStreams.CONFIG_KEY), "topology config");
        this.validator = new RowValidator(config.ingest().maxPoints());
        this.blockRows = config.ingest().rowStore().blockRows();
        this.layout = new MapLayout.Tracker(AssignmentHook.context(context), MapStreams.MAP, IngestStreams.STORE);
        List<Integer> stores = context.getComponentTasks(IngestStreams.STORE);
        this.storeTasks = stores.stream().mapToInt(Integer::intValue).sorted().toArray();
        this.received = context.registerCounter(IngestMetrics.RECEIVED);
        this.rejected = IngestMetrics.rejectCounters(context);
    }

    @Override
    public void execute(Tuple input) {
        RowBatch in = (RowBatch) input.getValue(0);
        MapLayout routes = layout.current();
        RowBatch[] out = new RowBatch[storeTasks.length];
        int n = in.size();
        received.inc(n);
        for (int i = 0; i < n; i++) {
            byte[] bytes = in.value(i);
            RejectReason reason = validator.check(bytes);
            if (reason != null) {
                rejected[reason.ordinal()].inc();
                collector.emit(IngestStreams.REJECTED, input, new Values(bytes, reason.code(), validator.detail(), in.source(i)));
                continue;
            }
            int block = validator.row().id() / blockRows;
            add(out, routes.primaryStore(block), in, i, n);
            int mirror = routes.mirrorStore(block);
            if (mirror >= 0) {
                add(out, mirror, in, i, n);
            }
        }
        for (int k = 0; k < out.length; k++) {
            if (out[k] != null) {
                collector.emitDirect(storeTasks[k], IngestStreams.ROWS, input, new Values(out[k]));
            }
        }
        collector.ack(input);
    }

    private void add(RowBatch[] out, int task, RowBatch in, int i, int n) {
        int k = Arrays.binarySearch(storeTasks, task);
        if (out[k] == null) {
            out[k] = new RowBatch(n);
        }
        out[k].add(in, i);
    }

    @Override
    public void declareOutputFields(OutputFieldsDeclarer declarer) {
        declarer.declareStream(IngestStreams.ROWS, true, IngestStreams.ROW_FIELDS);
        declarer.declareStream(IngestStreams.REJECTED, IngestStreams.REJECTED_FIELDS);
    }
}
