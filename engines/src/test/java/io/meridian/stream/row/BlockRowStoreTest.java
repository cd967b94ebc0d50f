package io.meridian.stream.row;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class BlockRowStoreTest {
    private static final int WIDTH = 64;
    private static final int BLOCK_ROWS = 32;

    @TempDir
    Path dir;

    private static DistanceRow row(int id, int salt) {
        short[] v = new short[id];
        for (int j = 0; j < id; j++) {
            v[j] = (short) ((id * 131 + j * 7 + salt) % 32768);
        }
        return DistanceRow.decode(RowFormat.encodeInt16(id, v, 0, id, false), null);
    }

    private static short[] fileRow(Path file, int local) throws Exception {
        ByteBuffer b = ByteBuffer.wrap(Files.readAllBytes(file)).order(ByteOrder.LITTLE_ENDIAN);
        short[] out = new short[WIDTH];
        b.position(local * WIDTH * 2);
        b.asShortBuffer().get(out);
        return out;
    }

    @Test
    void storesRowsInTheSixteenBitLayoutAndGrowsTheFile() throws Exception {
        try (RowStores stores = new RowStores(dir, BLOCK_ROWS, WIDTH, b -> true)) {
            assertEquals(BlockRowStore.Outcome.STORED, stores.store(row(35, 0)));
            assertEquals(35, stores.highestId());
        }
        Path file = dir.resolve("block-000001.dist");
        long size = Files.size(file);
        assertEquals(16L * WIDTH * 2, size, "grown to the first 16 rows of block 1");
        short[] r = fileRow(file, 3);
        DistanceRow expected = row(35, 0);
        for (int j = 0; j < 35; j++) {
            assertEquals(expected.quantizedDistance(j), r[j]);
        }
        assertEquals(0, r[35], "diagonal");
        for (int j = 36; j < WIDTH; j++) {
            assertEquals(-1, r[j], "beyond the row: missing");
        }
        assertTrue(java.util.Arrays.equals(fileRow(file, 0), filled(-1)), "rows not yet stored read as missing");
        try (RowStores stores = new RowStores(dir, BLOCK_ROWS, WIDTH, b -> true)) {
            assertEquals(BlockRowStore.Outcome.STORED, stores.store(row(63, 0)));
        }
        assertEquals(32L * WIDTH * 2, Files.size(file), "grown to the whole block");
    }

    private static short[] filled(int v) {
        short[] s = new short[WIDTH];
        java.util.Arrays.fill(s, (short) v);
        return s;
    }

    @Test
    void replayOfTheSameRowChangesNothingAndOtherValuesConflict() throws Exception {
        try (RowStores stores = new RowStores(dir, BLOCK_ROWS, WIDTH, b -> true)) {
            assertEquals(BlockRowStore.Outcome.STORED, stores.store(row(5, 0)));
            assertEquals(BlockRowStore.Outcome.STORED, stores.store(row(0, 0)));
        }
        byte[] before = Files.readAllBytes(dir.resolve("block-000000.dist"));
        byte[] marksBefore = Files.readAllBytes(dir.resolve("block-000000.rows"));
        try (RowStores stores = new RowStores(dir, BLOCK_ROWS, WIDTH, b -> true)) {
            assertEquals(5, stores.highestId(), "reopened store knows what it holds");
            assertEquals(2, stores.storedRows());
            assertEquals(BlockRowStore.Outcome.DUPLICATE, stores.store(row(5, 0)));
            assertEquals(BlockRowStore.Outcome.DUPLICATE, stores.store(row(0, 0)));
            assertEquals(BlockRowStore.Outcome.CONFLICT, stores.store(row(5, 1)));
            assertEquals(2, stores.storedRows());
        }
        assertArrayEquals(before, Files.readAllBytes(dir.resolve("block-000000.dist")));
        assertArrayEquals(marksBefore, Files.readAllBytes(dir.resolve("block-000000.rows")));
    }

    @Test
    void aFloatRowAndItsReplayQuantizeAlike() {
        float[] d = {0.1f, 0.33333f, -1f};
        try (RowStores stores = new RowStores(dir, BLOCK_ROWS, WIDTH, b -> true)) {
            DistanceRow r = DistanceRow.decode(RowFormat.encodeFloat32(3, d, 3, new float[] {1f, 0.5f, 0f}, false), null);
            assertEquals(BlockRowStore.Outcome.STORED, stores.store(r));
            assertEquals(BlockRowStore.Outcome.DUPLICATE, stores.store(r));
            DistanceRow unweighted = DistanceRow.decode(RowFormat.encodeFloat32(3, d, 3, null, false), null);
            assertEquals(BlockRowStore.Outcome.CONFLICT, stores.store(unweighted), "same distances, other weights");
            short[] out = new short[WIDTH];
            stores.block(0).read(3, out);
            assertEquals(Math.round(0.33333f * 32767), out[1]);
            assertEquals(-1, out[2]);
        }
        assertTrue(Files.exists(dir.resolve("block-000000.wts")));
    }

    @Test
    void ownershipDecidesWhichBlocksAReopenedWriterLoads() {
        try (RowStores stores = new RowStores(dir, BLOCK_ROWS, WIDTH, b -> true)) {
            stores.store(row(40, 0));
            stores.store(row(3, 0));
        }
        try (RowStores stores = new RowStores(dir, BLOCK_ROWS, WIDTH, b -> b == 0)) {
            assertEquals(3, stores.highestId());
            assertFalse(stores.block(0).contains(40));
            assertTrue(stores.block(1).contains(40));
        }
    }

    @Test
    void aReaderSeesBlocksAndRowsAppearWhileTheWriterStores() throws Exception {
        try (RowStores stores = new RowStores(dir, BLOCK_ROWS, WIDTH, b -> true);
             RowStoreReader reader = new RowStoreReader(dir, BLOCK_ROWS, WIDTH)) {
            assertFalse(reader.hasBlock(1), "no block before its first row");
            assertFalse(reader.isStored(40));
            stores.store(row(35, 0));
            assertTrue(reader.hasBlock(1), "the block appears with its first row");
            assertFalse(reader.hasBlock(0));
            assertTrue(reader.isStored(35));
            assertFalse(reader.isStored(40), "a row of the block not stored yet");
            stores.store(row(40, 0));
            assertTrue(reader.isStored(40), "seen without reopening the reader");
            short[] back = new short[40];
            reader.copy(40, 0, 40, back);
            assertEquals(row(40, 0).quantizedDistance(39), back[39]);
        }
    }
}
