package io.meridian.matrix;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.meridian.engine.BadInputException;
import io.meridian.stream.row.BlockRowStore;
import io.meridian.stream.row.DistanceRow;
import io.meridian.stream.row.RowFormat;
import io.meridian.stream.row.RowStores;
import io.meridian.synthetic.SyntheticDataset;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RowStoreSourceTest {
    private static final int N = 45;
    private static final int WIDTH = 64;
    private static final int BLOCK_ROWS = 16;

    @TempDir
    Path dir;

    /** Streams the lower triangle of {@code matrix} into row stores, in a shuffled order, as the topology would. */
    private static void store(Path stores, RowBlock matrix, int n, int skip) {
        short[] full = new short[n];
        try (RowStores rows = new RowStores(stores, BLOCK_ROWS, WIDTH, b -> true)) {
            for (int k = 0; k < n; k++) {
                int id = (k * 17) % n; // 17 is coprime with 45: every id once
                if (id == skip) {
                    continue;
                }
                matrix.copyRow(id, full);
                DistanceRow row = DistanceRow.decode(RowFormat.encodeInt16(id, full, 0, id, false), null);
                assertEquals(BlockRowStore.Outcome.STORED, rows.store(row));
            }
        }
    }

    @Test
    void assemblesTheSymmetricMatrixTheRowsCameFrom() throws Exception {
        SyntheticDataset data = SyntheticDataset.blobs(N, 4, 3, 2.0, 7);
        data.write(dir.resolve("data"), ByteOrder.LITTLE_ENDIAN);
        Path generated = dir.resolve("data").resolve(SyntheticDataset.DISTANCES_FILE);
        RowBlock matrix = DistanceSource.matrixFile(generated, N, ByteOrder.LITTLE_ENDIAN).all();
        store(dir.resolve("stores"), matrix, N, -1);

        RowStoreSource source = RowStoreSource.assemble(dir.resolve("stores"), BLOCK_ROWS, WIDTH, N,
                dir.resolve("out").resolve("assembled.bin"));
        assertEquals(N, source.n());
        assertArrayEquals(Files.readAllBytes(generated), Files.readAllBytes(source.matrixFile()));
        RowBlock block = source.rows(10, 20);
        assertEquals(10, block.rows());
        assertEquals(matrix.raw(15, 40), block.raw(15, 40));
        assertEquals(block.raw(15, 40), source.all().raw(40, 15), "symmetric");
    }

    @Test
    void aMissingRowIsRefusedWithItsId() throws Exception {
        SyntheticDataset data = SyntheticDataset.uniform(N, 3, 1);
        data.write(dir.resolve("data"), ByteOrder.LITTLE_ENDIAN);
        RowBlock matrix = DistanceSource.matrixFile(dir.resolve("data").resolve(SyntheticDataset.DISTANCES_FILE), N,
                ByteOrder.LITTLE_ENDIAN).all();
        store(dir.resolve("stores"), matrix, N, 33);
        BadInputException e = assertThrows(BadInputException.class, () -> RowStoreSource.assemble(dir.resolve("stores"),
                BLOCK_ROWS, WIDTH, N, dir.resolve("assembled.bin")));
        assertEquals(BadInputException.Input.ROW_STORE, e.input());
        assertTrue(e.getMessage().contains("missing [33]"), e.getMessage());
        assertThrows(BadInputException.class, () -> RowStoreSource.assemble(dir.resolve("nowhere"), BLOCK_ROWS, WIDTH, N,
                dir.resolve("assembled.bin")));
    }
}
