package io.meridian.stream.row;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.meridian.shm.FileMapping;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.function.IntPredicate;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class BlockRowStoreTest {
    private static final int CAPACITY = 64;
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

    /** Row {@code id} as the value file of its block holds it, read with plain file I/O. */
    private short[] fileRow(String suffix, int id) throws Exception {
        Path file = dir.resolve(RowStoreLayout.fileBase(id / BLOCK_ROWS) + suffix);
        ByteBuffer b = ByteBuffer.wrap(Files.readAllBytes(file)).order(ByteOrder.LITTLE_ENDIAN);
        short[] out = new short[id];
        b.position((int) (2 * RowStoreLayout.rowOffset(id, BLOCK_ROWS)));
        b.asShortBuffer().get(out);
        return out;
    }

    @Test
    void storesEachRowAsItsLowerTriangleInAFileSizedForTheBlock() throws Exception {
        try (RowStores stores = new RowStores(dir, BLOCK_ROWS, CAPACITY, b -> true)) {
            assertEquals(BlockRowStore.Outcome.STORED, stores.store(row(35, 0)));
            assertEquals(BlockRowStore.Outcome.STORED, stores.store(row(33, 0)));
            assertEquals(35, stores.highestId());
        }
        Path file = dir.resolve("block-000001.tri");
        // rows 32..63: 32 + 33 + ... + 63 values, 2 bytes each
        long values = 0;
        for (int i = 32; i < 64; i++) {
            values += i;
        }
        assertEquals(2 * values, Files.size(file), "the whole block's triangle, however few rows it holds");
        assertEquals(RowStoreLayout.triangleBytes(64) - RowStoreLayout.triangleBytes(32), Files.size(file));
        for (int id : new int[] {33, 35}) {
            short[] stored = fileRow(RowStoreLayout.VALUES, id);
            DistanceRow expected = row(id, 0);
            for (int j = 0; j < id; j++) {
                assertEquals(expected.quantizedDistance(j), stored[j], "row " + id + " entry " + j);
            }
        }
        assertFalse(Files.exists(dir.resolve("block-000000.tri")), "no block before its first row");
        assertFalse(Files.exists(dir.resolve("block-000001.tri-weights")), "no weights before a weighted row");
    }

    @Test
    void replayOfTheSameRowChangesNothingAndOtherValuesConflict() throws Exception {
        try (RowStores stores = new RowStores(dir, BLOCK_ROWS, CAPACITY, b -> true)) {
            assertEquals(BlockRowStore.Outcome.STORED, stores.store(row(5, 0)));
            assertEquals(BlockRowStore.Outcome.STORED, stores.store(row(0, 0)));
        }
        byte[] before = Files.readAllBytes(dir.resolve("block-000000.tri"));
        byte[] marksBefore = Files.readAllBytes(dir.resolve("block-000000.rows"));
        try (RowStores stores = new RowStores(dir, BLOCK_ROWS, CAPACITY, b -> true)) {
            assertEquals(5, stores.highestId(), "reopened store knows what it holds");
            assertEquals(2, stores.storedRows());
            assertEquals(BlockRowStore.Outcome.DUPLICATE, stores.store(row(5, 0)));
            assertEquals(BlockRowStore.Outcome.DUPLICATE, stores.store(row(0, 0)));
            assertEquals(BlockRowStore.Outcome.CONFLICT, stores.store(row(5, 1)));
            assertEquals(2, stores.storedRows());
        }
        assertArrayEquals(before, Files.readAllBytes(dir.resolve("block-000000.tri")));
        assertArrayEquals(marksBefore, Files.readAllBytes(dir.resolve("block-000000.rows")));
    }

    @Test
    void aFloatRowAndItsReplayQuantizeAlikeAndWeightsCoverEveryRowOfTheBlock() throws Exception {
        float[] d = {0.1f, 0.33333f, -1f};
        try (RowStores stores = new RowStores(dir, BLOCK_ROWS, CAPACITY, b -> true)) {
            assertEquals(BlockRowStore.Outcome.STORED, stores.store(row(2, 0)), "before any weighted row");
            DistanceRow r = DistanceRow.decode(RowFormat.encodeFloat32(3, d, 3, new float[] {1f, 0.5f, 0f}, false),
                    null);
            assertEquals(BlockRowStore.Outcome.STORED, stores.store(r));
            assertEquals(BlockRowStore.Outcome.DUPLICATE, stores.store(r));
            DistanceRow unweighted = DistanceRow.decode(RowFormat.encodeFloat32(3, d, 3, null, false), null);
            assertEquals(BlockRowStore.Outcome.CONFLICT, stores.store(unweighted), "same distances, other weights");
            assertEquals(BlockRowStore.Outcome.STORED, stores.store(row(4, 0)), "after the weighted row");
            assertEquals(BlockRowStore.Outcome.DUPLICATE, stores.store(row(4, 0)), "unit weights: the same row");
        }
        short[] values = fileRow(RowStoreLayout.VALUES, 3);
        assertEquals(Math.round(0.33333f * 32767), values[1]);
        assertEquals(-1, values[2]);
        assertArrayEquals(new short[] {32767, (short) Math.round(0.5f * 32767), 0},
                fileRow(RowStoreLayout.WEIGHTS, 3));
        assertArrayEquals(new short[] {32767, 32767}, fileRow(RowStoreLayout.WEIGHTS, 2),
                "a row stored before the first weighted one gets unit weights");
        assertArrayEquals(new short[] {32767, 32767, 32767, 32767}, fileRow(RowStoreLayout.WEIGHTS, 4));
    }

    @Test
    void aFullRowIsStoredAsItsLowerPart() throws Exception {
        short[] full = new short[CAPACITY];
        for (int j = 0; j < CAPACITY; j++) {
            full[j] = (short) (100 + j);
        }
        full[7] = 0;
        try (RowStores stores = new RowStores(dir, BLOCK_ROWS, CAPACITY, b -> true)) {
            DistanceRow r = DistanceRow.decode(RowFormat.encodeInt16(7, full, 0, CAPACITY, true), null);
            assertEquals(BlockRowStore.Outcome.STORED, stores.store(r));
        }
        assertArrayEquals(new short[] {100, 101, 102, 103, 104, 105, 106}, fileRow(RowStoreLayout.VALUES, 7));
    }

    @Test
    void ownershipDecidesWhichBlocksAReopenedWriterLoads() {
        try (RowStores stores = new RowStores(dir, BLOCK_ROWS, CAPACITY, b -> true)) {
            stores.store(row(40, 0));
            stores.store(row(3, 0));
        }
        try (RowStores stores = new RowStores(dir, BLOCK_ROWS, CAPACITY, b -> b == 0)) {
            assertEquals(3, stores.highestId());
            assertFalse(stores.block(0).contains(40));
            assertTrue(stores.block(1).contains(40));
        }
    }

    @Test
    void aReaderSeesBlocksAndRowsAppearWhileTheWriterStores() throws Exception {
        try (RowStores stores = new RowStores(dir, BLOCK_ROWS, CAPACITY, b -> true);
             RowStoreReader reader = new RowStoreReader(dir, BLOCK_ROWS, CAPACITY)) {
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
            for (int j = 0; j < 40; j++) {
                assertEquals(row(40, 0).quantizedDistance(j), back[j]);
            }
            assertEquals(row(35, 0).quantizedDistance(34), reader.get(35, 34));
            reader.copy(35, 10, 20, back);
            assertEquals(row(35, 0).quantizedDistance(10), back[0]);
            assertEquals(row(35, 0).quantizedDistance(19), back[9]);
        }
    }

    @Test
    void aGrowingStoreMapsEachBlockOnceAndCloseUnmapsEverything() {
        int capacity = 4096;
        int blockRows = 64;
        long before = FileMapping.live();
        try (RowStores stores = new RowStores(dir, blockRows, capacity, b -> true);
             RowStoreReader reader = new RowStoreReader(dir, blockRows, capacity)) {
            short[] back = new short[capacity];
            for (int id = 0; id < 1024; id++) {
                stores.store(row(id, 3));
                assertTrue(reader.isStored(id));
                reader.copy(id, 0, id, back);
                assertEquals(id == 0 ? 0 : row(id, 3).quantizedDistance(id - 1), id == 0 ? 0 : back[id - 1]);
                int blocks = id / blockRows + 1;
                // writer: the marker file of each block; reader: markers and values of each block
                assertEquals(3L * blocks, FileMapping.live() - before, "mappings after row " + id);
            }
        }
        assertEquals(before, FileMapping.live(), "every mapping unmapped by its owner's close");
    }

    /**
     * A mirror block dropped (the publishing task no longer reads it): the writer unmaps and deletes its files, the
     * reader unmaps its own mappings, so nothing keeps the block's disk space; the rows around it stay readable.
     */
    @Test
    void aDroppedBlockIsUnmappedAndDeletedByItsWriterAndReleasedByItsReader() throws Exception {
        long before = FileMapping.live();
        try (RowStores stores = new RowStores(dir, BLOCK_ROWS, CAPACITY, b -> true);
             RowStoreReader reader = new RowStoreReader(dir, BLOCK_ROWS, CAPACITY)) {
            stores.store(row(5, 1));
            stores.store(row(40, 1));
            assertTrue(reader.isStored(5) && reader.isStored(40));
            assertEquals(6, FileMapping.live() - before, "two blocks: the writer's markers, the reader's two each");

            assertTrue(stores.drop(0));
            assertFalse(stores.holds(0));
            for (String suffix : new String[] {RowStoreLayout.MARKERS, RowStoreLayout.VALUES}) {
                assertFalse(Files.exists(dir.resolve(RowStoreLayout.fileBase(0) + suffix)), "block 0's " + suffix);
            }
            assertTrue(reader.release(0));
            assertFalse(reader.release(0), "released once");
            assertEquals(3, FileMapping.live() - before, "block 1's mappings only");
            assertFalse(reader.isStored(5), "a dropped block is not there any more");
            assertTrue(reader.isStored(40));
            assertEquals(row(40, 1).quantizedDistance(39), reader.get(40, 39));
            assertFalse(stores.drop(0), "nothing left to drop");

            // a row of the block stored again makes it anew
            assertEquals(BlockRowStore.Outcome.STORED, stores.store(row(6, 2)));
            assertTrue(reader.isStored(6));
            assertFalse(reader.isStored(5));
        }
        assertEquals(before, FileMapping.live(), "every mapping unmapped by its owner's close");
    }

    /**
     * The readers' bound: blocks wholly below an id that never falls are released once each, those the caller keeps
     * (a map task's own) stay mapped, and a block reaching the id is not touched.
     */
    @Test
    void releaseBelowUnmapsEachBlockWhollyBelowTheIdOnceAndKeepsWhatTheCallerKeeps() throws Exception {
        long before = FileMapping.live();
        int blocks = 4;
        try (RowStores stores = new RowStores(dir, BLOCK_ROWS, blocks * BLOCK_ROWS, b -> true);
             RowStoreReader reader = new RowStoreReader(dir, BLOCK_ROWS, blocks * BLOCK_ROWS)) {
            for (int block = 0; block < blocks; block++) {
                stores.store(row(block * BLOCK_ROWS + 1, 1));
                assertTrue(reader.isStored(block * BLOCK_ROWS + 1));
            }
            assertEquals(3L * blocks, FileMapping.live() - before);

            IntPredicate oddBlocks = block -> block % 2 == 1;
            assertEquals(0, reader.releaseBelow(BLOCK_ROWS - 1, oddBlocks), "block 0 has a row at the id");
            assertEquals(1, reader.releaseBelow(3 * BLOCK_ROWS - 1, oddBlocks), "block 0 only: 1 kept, 2 not below");
            assertEquals(3L * blocks - 2, FileMapping.live() - before);
            assertEquals(1, reader.releaseBelow(3 * BLOCK_ROWS, oddBlocks), "block 2 once it is wholly below");
            assertEquals(0, reader.releaseBelow(3 * BLOCK_ROWS, block -> false), "blocks below are not looked at again");
            assertEquals(0, reader.releaseBelow(2 * BLOCK_ROWS, block -> false), "a lower id releases nothing");
            assertTrue(reader.isStored(BLOCK_ROWS + 1) && reader.isStored(3 * BLOCK_ROWS + 1), "kept and above: read");
            assertEquals(3L * blocks - 4, FileMapping.live() - before);
            assertEquals(1, reader.releaseBelow(Integer.MAX_VALUE, block -> false), "up to the capacity: block 3");
        }
        assertEquals(before, FileMapping.live(), "every mapping unmapped by its owner's close");
    }

    @Test
    void aStoreOfTheSquareLayoutIsRefusedNamingItsFile() throws Exception {
        Files.write(dir.resolve("block-000000.dist"), new byte[2 * CAPACITY * BLOCK_ROWS]);
        Files.write(dir.resolve("block-000000.rows"), new byte[BLOCK_ROWS]);
        IllegalStateException writer = assertThrows(IllegalStateException.class,
                () -> new RowStores(dir, BLOCK_ROWS, CAPACITY, b -> true));
        assertTrue(writer.getMessage().contains("block-000000.dist") && writer.getMessage().contains("square layout"),
                writer.getMessage());
        try (RowStoreReader reader = new RowStoreReader(dir, BLOCK_ROWS, CAPACITY)) {
            IllegalStateException read = assertThrows(IllegalStateException.class, () -> reader.isStored(3));
            assertTrue(read.getMessage().contains("block-000000.dist"), read.getMessage());
        }
    }

    @Test
    void aValueFileOfAnotherBlockSizeIsRefusedNamingIt() throws Exception {
        try (RowStores stores = new RowStores(dir, BLOCK_ROWS, CAPACITY, b -> true)) {
            stores.store(row(3, 0));
        }
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> new RowStores(dir, BLOCK_ROWS / 2, CAPACITY, b -> true));
        assertTrue(e.getMessage().contains("block-000000.tri") && e.getMessage().contains("blockRows"), e.getMessage());
    }

    @Test
    void aFlippedMarkerByteIsRefusedOnReopeningNamingTheFileAndTheRow() throws Exception {
        try (RowStores stores = new RowStores(dir, BLOCK_ROWS, CAPACITY, b -> true)) {
            stores.store(row(3, 0));
            stores.store(row(7, 0));
        }
        Path markers = dir.resolve("block-000000.rows");
        byte[] bytes = Files.readAllBytes(markers);
        assertEquals(1, bytes[7]);
        bytes[7] ^= 0x40; // one bit flipped, as a bad disk sector or a stray write would
        Files.write(markers, bytes);
        RowStoreCorruptException e = assertThrows(RowStoreCorruptException.class,
                () -> new RowStores(dir, BLOCK_ROWS, CAPACITY, b -> true));
        assertEquals(markers, e.file());
        assertTrue(e.getMessage().startsWith("row store " + markers + " is corrupt: the marker byte of row 7 is 65,"
                + " neither 0 (not stored) nor 1 (stored)"), e.getMessage());
        assertTrue(e.getMessage().contains("rows 0..31"), e.getMessage());
    }

    @Test
    void aTruncatedValueOrMarkerFileIsRefusedOnReopeningNotReadAsData() throws Exception {
        try (RowStores stores = new RowStores(dir, BLOCK_ROWS, CAPACITY, b -> true)) {
            stores.store(row(40, 0));
        }
        Path values = dir.resolve("block-000001.tri");
        long whole = Files.size(values);
        try (var channel = java.nio.channels.FileChannel.open(values, java.nio.file.StandardOpenOption.WRITE)) {
            channel.truncate(whole / 2);
        }
        RowStoreCorruptException e = assertThrows(RowStoreCorruptException.class,
                () -> new RowStores(dir, BLOCK_ROWS, CAPACITY, b -> true));
        assertEquals(values, e.file());
        assertTrue(e.getMessage().contains("it has " + whole / 2 + " bytes, not the " + whole), e.getMessage());

        try (var channel = java.nio.channels.FileChannel.open(values, java.nio.file.StandardOpenOption.WRITE)) {
            channel.truncate(0); // emptied: it must not be taken for a new block's file while its markers say stored
        }
        assertThrows(RowStoreCorruptException.class, () -> new RowStores(dir, BLOCK_ROWS, CAPACITY, b -> true));

        Path markers = dir.resolve("block-000001.rows");
        Files.write(values, new byte[(int) whole]);
        Files.write(markers, new byte[BLOCK_ROWS / 2]);
        e = assertThrows(RowStoreCorruptException.class, () -> new RowStores(dir, BLOCK_ROWS, CAPACITY, b -> true));
        assertEquals(markers, e.file());
        assertTrue(e.getMessage().contains("it has 16 bytes, not the 32 marker bytes of a block"), e.getMessage());
    }

    @Test
    void aBlockWhoseMarkersWereNeverMadeStartsAfreshAndLeavesNoTemporaryFile() throws Exception {
        // a writer that died between sizing the value file and renaming its markers into place: no row was stored
        Files.write(dir.resolve("block-000001.tri"), new byte[100]);
        Files.write(dir.resolve("block-000001.rows.making"), new byte[3]);
        try (RowStores stores = new RowStores(dir, BLOCK_ROWS, CAPACITY, b -> true)) {
            assertEquals(BlockRowStore.Outcome.STORED, stores.store(row(40, 0)));
        }
        assertEquals(RowStoreLayout.triangleBytes(64) - RowStoreLayout.triangleBytes(32),
                Files.size(dir.resolve("block-000001.tri")));
        assertEquals(BLOCK_ROWS, Files.size(dir.resolve("block-000001.rows")));
        assertFalse(Files.exists(dir.resolve("block-000001.rows.making")));
        try (RowStoreReader reader = new RowStoreReader(dir, BLOCK_ROWS, CAPACITY)) {
            assertTrue(reader.isStored(40));
            short[] back = new short[40];
            reader.copy(40, 0, 40, back);
            assertArrayEquals(fileRow(RowStoreLayout.VALUES, 40), back);
        }
    }
}
