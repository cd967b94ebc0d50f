package io.meridian.stream.ingest;

import org.apache.storm.tuple.Fields;

/** Component ids, streams and fields of the ingestion part of the topology, shared by the bolts and the wiring. */
public final class IngestStreams {
    public static final String SPOUT = "rows-in";
    public static final String VALIDATE = "validate";
    public static final String STORE = "row-store";
    public static final String DEAD_LETTER = "dead-letter";

    /** Valid rows, validation bolt -> row store bolt. */
    public static final String ROWS = "rows";
    /** Rejected rows, validation and row store bolts -> dead-letter bolt. */
    public static final String REJECTED = "rejected";

    /** What a row source (Kafka spout, file spout) emits: the encoded row, publish time, and where it came from. */
    public static final Fields SOURCE_FIELDS = new Fields("value", "publishedMs", "source");
    /** The row block a valid row belongs to: what its row store is chosen by. */
    public static final String BLOCK = "block";
    public static final Fields ROW_FIELDS = new Fields(BLOCK, "row", "publishedMs", "source");
    public static final Fields REJECTED_FIELDS = new Fields("value", "reason", "detail", "source");

    /** Topology conf key holding the validated Meridian YAML, which every component parses in prepare. */
    public static final String CONFIG_KEY = "meridian.config.yaml";

    private IngestStreams() {
    }
}
