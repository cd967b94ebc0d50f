package io.meridian.pwc;

import io.meridian.engine.BadInputException;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.meridian.matrix.RowBlock;
import io.meridian.matrix.ShortMatrixWriter;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class BlockProductTest {
    @TempDir
    Path dir;

    @Test
    void productMatchesNaiveSumForEveryColumnCountAndOddRowBlocks() throws Exception {
        int n = 37;
        Random random = new Random(3);
        short[][] raw = new short[n][n];
        for (int i = 0; i < n; i++) {
            for (int j = 0; j < n; j++) {
                raw[i][j] = (short) (random.nextInt(10) == 0 ? -1 : random.nextInt(32768));
            }
        }
        Path file = dir.resolve("d.bin");
        try (ShortMatrixWriter w = new ShortMatrixWriter(file, n, ByteOrder.BIG_ENDIAN)) {
            for (short[] row : raw) {
                w.writeRow(row);
            }
        }
        RowBlock block = RowBlock.map(BadInputException.Input.DISTANCES, file, n, ByteOrder.BIG_ENDIAN, 5, 16); // 11 rows: odd, not a multiple of 4
        BlockProduct product = new BlockProduct(block, 7);
        assertTrue(product.hadMissing());
        for (int k = 1; k <= 7; k++) {
            double[] x = new double[n * k];
            for (int i = 0; i < x.length; i++) {
                x[i] = random.nextGaussian();
            }
            double[] y = new double[block.rows() * k];
            product.multiply(x, k, y);
            for (int i = 0; i < block.rows(); i++) {
                for (int j = 0; j < k; j++) {
                    double expected = 0;
                    for (int b = 0; b < n; b++) {
                        expected += Math.max(0, raw[5 + i][b]) * x[b * k + j];
                    }
                    assertEquals(expected, y[i * k + j], 1e-9 * Math.max(1, Math.abs(expected)), "k=" + k + " row " + i + " col " + j);
                }
            }
        }
    }
}
