package io.meridian.matrix;

import io.meridian.engine.BadInputException;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RowBlockTest {
    @TempDir
    Path dir;

    private static short entry(int i, int j) {
        return (short) (i == j ? 0 : (i * 131 + j * 7) % 32768 - (j == 3 ? 32768 : 0));
    }

    private Path write(int n, ByteOrder order) throws IOException {
        Path file = dir.resolve("m-" + order + ".bin");
        try (ShortMatrixWriter w = new ShortMatrixWriter(file, n, order)) {
            short[] row = new short[n];
            for (int i = 0; i < n; i++) {
                for (int j = 0; j < n; j++) {
                    row[j] = entry(i, j);
                }
                w.writeRow(row);
            }
        }
        return file;
    }

    @Test
    void readsBothByteOrdersAndAnyRowBlock() throws IOException {
        int n = 23;
        for (ByteOrder order : new ByteOrder[] {ByteOrder.LITTLE_ENDIAN, ByteOrder.BIG_ENDIAN}) {
            Path file = write(n, order);
            assertEquals(2L * n * n, Files.size(file));
            RowPartition part = RowPartition.of(n, 4);
            short[] row = new short[n];
            for (int b = 0; b < part.blocks(); b++) {
                RowBlock block = RowBlock.map(BadInputException.Input.DISTANCES, file, order, part, b);
                assertEquals(part.rows(b), block.rows());
                for (int i = block.rowStart(); i < block.rowEnd(); i++) {
                    block.copyRow(i, row);
                    for (int j = 0; j < n; j++) {
                        assertEquals(entry(i, j), block.raw(i, j));
                        assertEquals(entry(i, j), row[j]);
                        assertEquals(entry(i, j) / 32767.0, block.value(i, j), 1e-15);
                    }
                }
            }
        }
    }

    @Test
    void theWrongByteOrderReadsSwappedValues() throws IOException {
        Path file = write(5, ByteOrder.BIG_ENDIAN);
        RowBlock wrong = RowBlock.mapAll(BadInputException.Input.DISTANCES, file, 5, ByteOrder.LITTLE_ENDIAN);
        assertEquals(Short.reverseBytes(entry(1, 2)), wrong.raw(1, 2));
    }

    @Test
    void mapsInPiecesOfWholeRows() throws IOException {
        int n = 17;
        Path file = write(n, ByteOrder.LITTLE_ENDIAN);
        // pieces of 3 rows (2 * 17 * 3 = 102 bytes) across a block that starts mid-piece
        RowBlock block = RowBlock.map(BadInputException.Input.DISTANCES, file, n, ByteOrder.LITTLE_ENDIAN, 2, 15, 110);
        short[] part = new short[5];
        for (int i = 2; i < 15; i++) {
            block.copyRow(i, 4, 9, part, 0);
            for (int j = 0; j < n; j++) {
                assertEquals(entry(i, j), block.raw(i, j));
            }
            for (int j = 4; j < 9; j++) {
                assertEquals(entry(i, j), part[j - 4]);
            }
        }
    }

    @Test
    void aFileOfTheWrongSizeIsABadMatrixNamingTheFile() throws IOException {
        Path file = write(6, ByteOrder.LITTLE_ENDIAN);
        BadInputException e = assertThrows(BadInputException.class,
                () -> RowBlock.mapAll(BadInputException.Input.DISTANCES, file, 7, ByteOrder.LITTLE_ENDIAN));
        assertTrue(e.getMessage().contains(file.toString()), e.getMessage());
        assertTrue(e.getMessage().contains("72 bytes"), e.getMessage());
        assertTrue(e.getMessage().contains("N = 6"), e.getMessage());
        assertEquals(BadInputException.Input.DISTANCES, e.input());
        assertEquals(file, e.file());
        BadInputException missing = assertThrows(BadInputException.class,
                () -> RowBlock.mapAll(BadInputException.Input.DISTANCES, dir.resolve("nope.bin"), 7, ByteOrder.LITTLE_ENDIAN));
        assertTrue(missing.getMessage().contains("does not exist"), missing.getMessage());
        assertThrows(BadInputException.class, () -> RowBlock.mapAll(BadInputException.Input.DISTANCES, file, 0, ByteOrder.LITTLE_ENDIAN));
    }

    @Test
    void partitionGivesTheFirstNModPBlocksAnExtraRow() {
        RowPartition p = RowPartition.of(10, 4);
        assertEquals(3, p.rows(0));
        assertEquals(3, p.rows(1));
        assertEquals(2, p.rows(2));
        assertEquals(2, p.rows(3));
        assertEquals(0, p.start(0));
        assertEquals(6, p.start(2));
        assertEquals(10, p.end(3));
        for (int row = 0; row < 10; row++) {
            int b = p.blockOf(row);
            assertTrue(p.start(b) <= row && row < p.end(b));
        }
        assertEquals(6 * 3, p.displacements(3)[2]);
        assertEquals(2 * 3, p.counts(3)[3]);
    }

    @Test
    void encodeClampsAndMarksMissing() {
        assertEquals(32767, ShortMatrixFormat.encode(1.0));
        assertEquals(32767, ShortMatrixFormat.encode(3.0));
        assertEquals(0, ShortMatrixFormat.encode(0.0));
        assertEquals(-1, ShortMatrixFormat.encode(-0.5));
        assertEquals(-1, ShortMatrixFormat.encode(Double.NaN));
    }

    @Test
    void aMatrixReadInTheWrongByteOrderIsRefusedNamingTheOption() throws Exception {
        int n = 60;
        io.meridian.synthetic.SyntheticDataset data = io.meridian.synthetic.SyntheticDataset.uniform(n, 4, 3);
        Path little = dir.resolve("little");
        Path big = dir.resolve("big");
        data.write(little, ByteOrder.LITTLE_ENDIAN);
        data.write(big, ByteOrder.BIG_ENDIAN);
        Path le = little.resolve("distances.bin");
        Path be = big.resolve("distances.bin");
        // each in its own order reads as written
        RowBlock asWritten = RowBlock.mapAll(BadInputException.Input.DISTANCES, be, n, ByteOrder.BIG_ENDIAN);
        RowBlock reference = RowBlock.mapAll(BadInputException.Input.DISTANCES, le, n, ByteOrder.LITTLE_ENDIAN);
        assertEquals(reference.raw(7, 3), asWritten.raw(7, 3));
        BadInputException give = assertThrows(BadInputException.class,
                () -> RowBlock.mapAll(BadInputException.Input.DISTANCES, be, n, ByteOrder.LITTLE_ENDIAN));
        assertTrue(give.getMessage().contains("is big-endian") && give.getMessage().endsWith("give --big-endian"),
                give.getMessage());
        BadInputException drop = assertThrows(BadInputException.class,
                () -> RowBlock.mapAll(BadInputException.Input.DISTANCES, le, n, ByteOrder.BIG_ENDIAN));
        assertTrue(drop.getMessage().contains("is little-endian") && drop.getMessage().endsWith("drop --big-endian"),
                drop.getMessage());
    }
}
