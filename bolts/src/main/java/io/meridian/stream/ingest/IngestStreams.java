package io.meridian.stream.ingest;

import org.apache.storm.Config;
import org.apache.storm.tuple.Fields;

/** Component ids, streams and fields of the ingestion part of the topology, shared by the bolts and the wiring. */
public final class IngestStreams {
    public static final String SPOUT = "rows-in";
    public static final String VALIDATE = "validate";
    public static final String STORE = "row-store";
    public static final String DEAD_LETTER = "dead-letter";

    /** Valid rows, validation bolt -> the row store tasks that store them (a direct stream). */
    public static final String ROWS = "rows";
    /** Rejected rows, validation and row store bolts -> dead-letter bolt. */
    public static final String REJECTED = "rejected";

    /** The one field of a row source's tuples (Kafka spout, file spout) and of validation's: a {@link RowBatch}. */
    public static final String BATCH = "rows";
    public static final Fields SOURCE_FIELDS = new Fields(BATCH);
    public static final Fields ROW_FIELDS = new Fields(BATCH);
    /** One rejected row: its original bytes, the reason's code, one line saying what is wrong, where it came from. */
    public static final Fields REJECTED_FIELDS = new Fields("value", "reason", "detail", "source");

    /** Topology conf key holding the validated Meridian YAML, which every component parses in prepare. */
    public static final String CONFIG_KEY = "meridian.config.yaml";

    private IngestStreams() {
    }

    /**
     * Registers with Storm's Kryo the types these streams carry between workers: {@link RowBatch} (its own serializer)
     * and the arrays of the row stores' notifications to the map ({@code MapStreams.STORED}).
     */
    public static void registerKryo(Config conf) {
        conf.registerSerialization(RowBatch.class, RowBatchSerializer.class);
        conf.registerSerialization(int[].class);
        conf.registerSerialization(long[].class);
    }
}
