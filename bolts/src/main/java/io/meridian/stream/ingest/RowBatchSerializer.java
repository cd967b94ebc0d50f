package io.meridian.stream.ingest;

import com.esotericsoftware.kryo.Kryo;
import com.esotericsoftware.kryo.KryoException;
import com.esotericsoftware.kryo.Serializer;
import com.esotericsoftware.kryo.io.Input;
import com.esotericsoftware.kryo.io.Output;

/**
 * Kryo form of a {@link RowBatch} between workers: the row count, the distinct source prefixes once (a batch from one
 * Kafka partition has one), then per row its bytes (length-prefixed; -1 for none), publish time, prefix index and
 * source number. The rows are checked where they are used (validation; the row store re-reads each header), not here.
 * Registered with {@code topology.kryo.register}; see {@code IngestTopology}.
 */
public final class RowBatchSerializer extends Serializer<RowBatch> {
    public RowBatchSerializer() {
        setImmutable(true);
    }

    @Override
    public void write(Kryo kryo, Output output, RowBatch batch) {
        int n = batch.size();
        output.writeVarInt(n, true);
        // the distinct prefixes, in order of first use (a handful at most: one per partition of the batch)
        String[] prefixes = new String[Math.min(n, 8)];
        int distinct = 0;
        int[] index = new int[n];
        for (int i = 0; i < n; i++) {
            String p = batch.sourcePrefix(i);
            int k = 0;
            while (k < distinct && !prefixes[k].equals(p)) {
                k++;
            }
            if (k == distinct) {
                if (distinct == prefixes.length) {
                    prefixes = java.util.Arrays.copyOf(prefixes, 2 * distinct);
                }
                prefixes[distinct++] = p;
            }
            index[i] = k;
        }
        output.writeVarInt(distinct, true);
        for (int k = 0; k < distinct; k++) {
            output.writeString(prefixes[k]);
        }
        for (int i = 0; i < n; i++) {
            byte[] v = batch.value(i);
            if (v == null) {
                output.writeVarInt(0, true);
            } else {
                output.writeVarInt(v.length + 1, true);
                output.writeBytes(v);
            }
            output.writeLong(batch.publishedMs(i));
            output.writeVarInt(index[i], true);
            output.writeVarLong(batch.sourceNumber(i), false);
        }
    }

    @Override
    public RowBatch read(Kryo kryo, Input input, Class<? extends RowBatch> type) {
        int n = input.readVarInt(true);
        int distinct = input.readVarInt(true);
        if (n < 0 || distinct < 0 || distinct > n) {
            throw new KryoException("corrupt row batch: " + n + " rows, " + distinct + " source prefixes");
        }
        String[] prefixes = new String[distinct];
        for (int k = 0; k < distinct; k++) {
            prefixes[k] = input.readString();
        }
        RowBatch batch = new RowBatch(n);
        for (int i = 0; i < n; i++) {
            int length = input.readVarInt(true) - 1;
            byte[] v = length < 0 ? null : input.readBytes(length);
            long published = input.readLong();
            int k = input.readVarInt(true);
            if (k >= distinct) {
                throw new KryoException("corrupt row batch: row " + i + " names source prefix " + k + " of " + distinct);
            }
            batch.add(v, published, prefixes[k], input.readVarLong(false));
        }
        return batch;
    }
}
