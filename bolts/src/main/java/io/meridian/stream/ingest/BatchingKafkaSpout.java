package io.meridian.stream.ingest;

import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.apache.storm.kafka.spout.KafkaSpout;
import org.apache.storm.kafka.spout.KafkaSpoutConfig;
import org.apache.storm.spout.ISpoutOutputCollector;
import org.apache.storm.spout.SpoutOutputCollector;
import org.apache.storm.task.TopologyContext;
import org.apache.storm.topology.IRichSpout;
import org.apache.storm.topology.OutputFieldsDeclarer;
import org.apache.storm.tuple.Values;

/**
 * storm-kafka-client's {@link KafkaSpout}, emitting the rows of a poll together: one tuple of up to
 * {@code maxRowsPerTuple} rows ({@link RowBatch}, at most {@code maxBytesPerTuple} of them) instead of one per record.
 * The Kafka spout does everything it did (assignment, polling, offsets committed once their rows are stored, replays,
 * its lag metrics); this spout hands it a collector that gathers what it emits, calls its {@code nextTuple} until it
 * has nothing more (its poll timeout is short, 2 ms in Meridian's topology: the most batching adds to a row's latency;
 * when idle, Storm's spout wait strategy sleeps), and emits the batch with a message id that lists the Kafka spout's
 * own ids: a batch's ack or fail is passed on for each of its rows.
 *
 * <p>Storm's per-tuple costs (the executors' hand-offs, Kryo framing, the acker's three messages per tuple tree) took
 * most of the topology's CPU with one row per tuple. {@code maxSpoutPending} here counts rows, as Meridian's
 * configuration always described it ({@code topology.maxSpoutPending}: un-acked rows in flight per spout task); Storm's
 * own limit counts tuples. The rows' bytes in flight are bounded too ({@code maxPendingBytes}): 2000 rows of 2 MB (a
 * 16-bit row at a million points) would be 4 GB in the workers' heaps. One thread, as every spout.
 */
public final class BatchingKafkaSpout implements IRichSpout {
    private static final long serialVersionUID = 1L;

    private final KafkaSpout<String, byte[]> kafka;
    private final int maxRowsPerTuple;
    private final long maxBytesPerTuple;
    private final int maxPendingRows;
    private final long maxPendingBytes;
    private transient SpoutOutputCollector collector;
    private transient Gatherer gatherer;
    private transient int pendingRows;
    private transient long pendingBytes;
    private transient RowBatch building;

    /** The ids of the Kafka spout's messages one tuple carries: acked or failed together. */
    static final class BatchId {
        final Object[] members;
        final long bytes;

        BatchId(Object[] members, long bytes) {
            this.members = members;
            this.bytes = bytes;
        }

        @Override
        public String toString() {
            return members.length + " rows from " + (members.length > 0 ? members[0] : "none");
        }
    }

    /**
     * The collector the Kafka spout emits to: each emit appends a row (the {@link KafkaRowTranslator}'s fields) and the
     * Kafka spout's message id to the batch being built, unless the row would take a batch that has rows over
     * {@code maxBytes}: that row is held ({@link #held}) and starts the next batch. So a tuple is at most
     * {@code maxBytes} or one row: a wide row (8 MB at 1,000,000 float32 distances with weights) never rides with
     * others into a tuple larger than the mmap transport's 8 MiB.
     */
    private static final class Gatherer implements ISpoutOutputCollector {
        private final SpoutOutputCollector real;
        private final long maxBytes;
        RowBatch batch;
        Object[] ids;
        /** The row that did not fit the last batch, its fields as the translator made them, and its message id. */
        List<Object> held;
        Object heldId;

        Gatherer(SpoutOutputCollector real, long maxBytes) {
            this.real = real;
            this.maxBytes = maxBytes;
        }

        @Override
        public List<Integer> emit(String streamId, List<Object> tuple, Object messageId) {
            if (batch == null) {
                throw new IllegalStateException("the Kafka spout emitted outside nextTuple");
            }
            byte[] value = (byte[]) tuple.get(0);
            if (batch.size() > 0 && value != null && batch.bytes() + value.length > maxBytes) {
                held = tuple;
                heldId = messageId;
                return List.of();
            }
            add(tuple, messageId);
            return List.of();
        }

        /** Starts {@link #batch} with the held row, if there is one. */
        void addHeld() {
            if (held != null) {
                add(held, heldId);
                held = null;
                heldId = null;
            }
        }

        private void add(List<Object> tuple, Object messageId) {
            if (ids.length == batch.size()) {
                ids = Arrays.copyOf(ids, 2 * ids.length);
            }
            ids[batch.size()] = messageId;
            batch.add((byte[]) tuple.get(0), (Long) tuple.get(1), (String) tuple.get(2), (Long) tuple.get(3));
        }

        @Override
        public void emitDirect(int taskId, String streamId, List<Object> tuple, Object messageId) {
            throw new UnsupportedOperationException("the Kafka spout emits no direct tuples here");
        }

        @Override
        public long getPendingCount() {
            return real.getPendingCount();
        }

        @Override
        public void flush() {
            real.flush();
        }

        @Override
        public void reportError(Throwable error) {
            real.reportError(error);
        }
    }

    /**
     * @param config the Kafka spout's configuration; its record translator must be a {@link KafkaRowTranslator}, and
     *               its poll timeout short (a batch waits that long for more rows)
     */
    public BatchingKafkaSpout(KafkaSpoutConfig<String, byte[]> config, int maxRowsPerTuple, long maxBytesPerTuple,
                              int maxPendingRows, long maxPendingBytes) {
        if (!(config.getTranslator() instanceof KafkaRowTranslator)) {
            throw new IllegalArgumentException("the Kafka spout's records must be translated by KafkaRowTranslator");
        }
        if (maxRowsPerTuple < 1 || maxBytesPerTuple < 1 || maxPendingRows < 1 || maxPendingBytes < 1) {
            throw new IllegalArgumentException("rows per tuple " + maxRowsPerTuple + ", bytes per tuple "
                    + maxBytesPerTuple + ", pending rows " + maxPendingRows + " and pending bytes " + maxPendingBytes
                    + " must be positive");
        }
        this.kafka = new KafkaSpout<>(config);
        this.maxRowsPerTuple = maxRowsPerTuple;
        this.maxBytesPerTuple = maxBytesPerTuple;
        this.maxPendingRows = maxPendingRows;
        this.maxPendingBytes = maxPendingBytes;
    }

    @Override
    public void open(Map<String, Object> conf, TopologyContext context, SpoutOutputCollector collector) {
        this.collector = collector;
        this.gatherer = new Gatherer(collector, maxBytesPerTuple);
        gatherer.ids = new Object[maxRowsPerTuple]; // copied out per emitted batch, so one array serves every batch
        kafka.open(conf, context, new SpoutOutputCollector(gatherer));
    }

    @Override
    public void nextTuple() {
        int room = Math.min(maxRowsPerTuple, maxPendingRows - pendingRows);
        if (room <= 0 || pendingBytes >= maxPendingBytes) {
            return; // as many rows (or row bytes) in flight as allowed: wait for acks
        }
        // an idle spout calls this thousands of times a second: the batch being built is kept until a row fills it,
        // and a new one is made only after it has been emitted (the tuple owns it from then on)
        if (building == null) {
            building = new RowBatch(maxRowsPerTuple);
        }
        RowBatch batch = building;
        gatherer.batch = batch;
        try {
            gatherer.addHeld();
            while (batch.size() < room && batch.bytes() < maxBytesPerTuple && gatherer.held == null) {
                int before = batch.size();
                kafka.nextTuple(); // emits at most one row; polls once it has none left
                if (batch.size() == before) {
                    break;
                }
            }
        } finally {
            gatherer.batch = null;
        }
        int n = batch.size();
        if (n > 0) {
            building = null;
            pendingRows += n;
            pendingBytes += batch.bytes();
            collector.emit(new Values(batch), new BatchId(Arrays.copyOf(gatherer.ids, n), batch.bytes()));
        }
    }

    @Override
    public void ack(Object msgId) {
        BatchId id = (BatchId) msgId;
        pendingRows -= id.members.length;
        pendingBytes -= id.bytes;
        for (Object member : id.members) {
            kafka.ack(member);
        }
    }

    @Override
    public void fail(Object msgId) {
        BatchId id = (BatchId) msgId;
        pendingRows -= id.members.length;
        pendingBytes -= id.bytes;
        for (Object member : id.members) {
            kafka.fail(member); // the Kafka spout replays each row (seeking back to it), in later batches
        }
    }

    @Override
    public void activate() {
        kafka.activate();
    }

    @Override
    public void deactivate() {
        kafka.deactivate();
    }

    @Override
    public void close() {
        kafka.close();
    }

    @Override
    public void declareOutputFields(OutputFieldsDeclarer declarer) {
        declarer.declare(IngestStreams.SOURCE_FIELDS);
    }

    @Override
    public Map<String, Object> getComponentConfiguration() {
        return kafka.getComponentConfiguration();
    }
}
