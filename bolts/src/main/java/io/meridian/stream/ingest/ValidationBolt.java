package io.meridian.stream.ingest;

import com.codahale.metrics.Counter;
import io.meridian.config.MeridianConfig;
import io.meridian.stream.row.DistanceRow;
import java.util.Map;
import org.apache.storm.task.OutputCollector;
import org.apache.storm.task.TopologyContext;
import org.apache.storm.topology.OutputFieldsDeclarer;
import org.apache.storm.topology.base.BaseRichBolt;
import org.apache.storm.tuple.Tuple;
import org.apache.storm.tuple.Values;

/**
 * Decodes and checks each incoming row ({@link RowValidator}); valid rows go on {@link IngestStreams#ROWS} keyed by
 * their row block, bad ones on {@link IngestStreams#REJECTED} with the reason. Both are anchored, so the source's
 * ack waits for the row store (or the dead-letter write).
 */
public final class ValidationBolt extends BaseRichBolt {
    private static final long serialVersionUID = 1L;
    private transient OutputCollector collector;
    private transient RowValidator validator;
    private transient int blockRows;
    private transient Counter received;
    private transient Counter[] rejected;

    @Override
    public void prepare(Map<String, Object> topoConf, TopologyContext context, OutputCollector collector) {
        this.collector = collector;
        MeridianConfig config = MeridianConfig.parse((String) topoConf.get(IngestStreams.CONFIG_KEY), "topology config");
        this.validator = new RowValidator(config.ingest().maxPoints());
        this.blockRows = config.ingest().rowStore().blockRows();
        this.received = context.registerCounter(IngestMetrics.RECEIVED);
        this.rejected = IngestMetrics.rejectCounters(context);
    }

    @Override
    public void execute(Tuple input) {
        received.inc();
        byte[] bytes = (byte[]) input.getValue(0);
        RejectReason reason = validator.check(bytes);
        if (reason != null) {
            rejected[reason.ordinal()].inc();
            collector.emit(IngestStreams.REJECTED, input,
                    new Values(bytes, reason.code(), validator.detail(), input.getValue(2)));
        } else {
            DistanceRow row = new DistanceRow();
            row.wrap(bytes);
            collector.emit(IngestStreams.ROWS, input, new Values(row.id() / blockRows, row, input.getValue(1), input.getValue(2)));
        }
        collector.ack(input);
    }

    @Override
    public void declareOutputFields(OutputFieldsDeclarer declarer) {
        declarer.declareStream(IngestStreams.ROWS, IngestStreams.ROW_FIELDS);
        declarer.declareStream(IngestStreams.REJECTED, IngestStreams.REJECTED_FIELDS);
    }
}
