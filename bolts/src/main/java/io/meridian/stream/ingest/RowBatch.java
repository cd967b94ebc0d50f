package io.meridian.stream.ingest;

import java.util.Arrays;

/**
 * The rows one tuple carries between the row source, validation and a row store: each row's encoded bytes (the Kafka
 * record value, unchanged), its publish time, and where it came from ({@link #source}: a shared prefix such as
 * {@code distance-rows-2@} and a number such as the offset, joined only when a row is rejected). Storm's costs are
 * per tuple (executor hand-offs, Kryo framing, and above all the acker, three messages per tuple tree): with one row
 * per tuple they took most of the topology's CPU (bench ingest), so the spout emits the rows of a poll together and
 * validation passes each row store the valid rows meant for it together. Filled by one thread, then read-only.
 */
public final class RowBatch {
    private byte[][] values;
    private long[] publishedMs;
    private String[] sourcePrefix;
    private long[] sourceNumber;
    private int size;
    private long bytes;

    public RowBatch(int capacity) {
        int c = Math.max(1, capacity);
        this.values = new byte[c][];
        this.publishedMs = new long[c];
        this.sourcePrefix = new String[c];
        this.sourceNumber = new long[c];
    }

    /** Appends a row; {@code value} is kept, not copied. */
    public void add(byte[] value, long published, String prefix, long number) {
        if (size == values.length) {
            int c = 2 * size;
            values = Arrays.copyOf(values, c);
            publishedMs = Arrays.copyOf(publishedMs, c);
            sourcePrefix = Arrays.copyOf(sourcePrefix, c);
            sourceNumber = Arrays.copyOf(sourceNumber, c);
        }
        values[size] = value;
        publishedMs[size] = published;
        sourcePrefix[size] = prefix;
        sourceNumber[size] = number;
        size++;
        bytes += value == null ? 0 : value.length;
    }

    /** Appends row {@code i} of {@code other}. */
    public void add(RowBatch other, int i) {
        add(other.values[i], other.publishedMs[i], other.sourcePrefix[i], other.sourceNumber[i]);
    }

    public int size() {
        return size;
    }

    /** The rows' bytes together. */
    public long bytes() {
        return bytes;
    }

    /** Row {@code i}'s encoded bytes (null when its record had no value). */
    public byte[] value(int i) {
        return values[i];
    }

    /** Row {@code i}'s publish time (the Kafka record timestamp, or the file spout's emit time), epoch milliseconds. */
    public long publishedMs(int i) {
        return publishedMs[i];
    }

    /** Where row {@code i} came from, e.g. {@code distance-rows-2@1734} (topic-partition@offset): for dead letters. */
    public String source(int i) {
        return sourcePrefix[i] + sourceNumber[i];
    }

    String sourcePrefix(int i) {
        return sourcePrefix[i];
    }

    long sourceNumber(int i) {
        return sourceNumber[i];
    }

    @Override
    public String toString() {
        return size + " rows, " + bytes + " bytes" + (size > 0 ? ", from " + source(0) : "");
    }
}
