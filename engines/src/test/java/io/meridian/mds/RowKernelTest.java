package io.meridian.mds;

import io.meridian.engine.BadInputException;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.meridian.matrix.RowBlock;
import io.meridian.matrix.Weighting;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The explicit-vector SMACOF pass against the scalar one, on the cases the vector loop handles with masks. */
class RowKernelTest {
    /** More than one tile per row, and a length that leaves a scalar tail in every tile shape. */
    private static final int N = RowKernel.TILE + 83;

    @TempDir
    static Path dir;

    @Test
    void vectorPassEqualsScalarPassToReductionOrderAndItsScalarTwinToTheBit() {
        assumeTrue(RowKernel.VECTOR_AVAILABLE, "the JVM runs without --add-modules jdk.incubator.vector");
        // a vector kernel runs the scalar pass until C2 has compiled the vector one
        assertTrue(RowKernel.warmUpVectors(120_000), "the vector pass was not compiled within two minutes");
        assertTrue(RowKernel.vectorPassInUse());
        Random random = new Random(5);
        // random entries, about 2% missing (negative), some zeros; zero diagonal
        short[][] raw = new short[N][N];
        for (int i = 0; i < N; i++) {
            for (int j = i + 1; j < N; j++) {
                double u = random.nextDouble();
                short v = u < 0.02 ? (short) -1 : u < 0.03 ? 0 : (short) (1 + random.nextInt(Short.MAX_VALUE));
                raw[i][j] = v;
                raw[j][i] = v;
            }
        }
        Path file = Fixtures.writeSymmetric(dir, "kernel.bin", N, (i, j) -> raw[i][j]);
        double[] xs = new double[3 * N];
        for (int k = 0; k < xs.length; k++) {
            xs[k] = random.nextDouble();
        }
        // coincident points (d = 0 < MIN_DISTANCE), inside one tile and across tiles and blocks
        for (int[] pair : new int[][] {{5, 17}, {3, RowKernel.TILE + 40}, {600, 601}}) {
            for (int k = 0; k < 3; k++) {
                xs[k * N + pair[1]] = xs[k * N + pair[0]];
            }
        }
        double minPositive = 1.0 / Short.MAX_VALUE;
        int[][] blockings = {{0, N}, {0, 300, 733, N}, {0, 1, N - 9, N}};
        for (double shift : new double[] {0, 0.05, 0.4}) {
            double[] target = RowKernel.newTargetTable();
            RowKernel.fillTargetTable(target, shift, minPositive);
            for (int[] bounds : blockings) {
                double[] outScalar = new double[3 * N];
                double[] outVector = new double[3 * N];
                double[] stressScalar = new double[1];
                double[] stressVector = new double[1];
                for (int b = 0; b + 1 < bounds.length; b++) {
                    RowBlock block = RowBlock.map(BadInputException.Input.DISTANCES, file, N, ByteOrder.LITTLE_ENDIAN, bounds[b], bounds[b + 1]);
                    new RowKernel(block, null, Weighting.unit(), 3, false)
                            .smacofPass(xs, target, shift, minPositive, 0, true, outScalar, 0, stressScalar);
                    new RowKernel(block, null, Weighting.unit(), 3, true)
                            .smacofPass(xs, target, shift, minPositive, 0, true, outVector, 0, stressVector);
                }
                double scale = 0;
                double worst = 0;
                for (int k = 0; k < outScalar.length; k++) {
                    scale = Math.max(scale, Math.abs(outScalar[k]));
                    worst = Math.max(worst, Math.abs(outScalar[k] - outVector[k]));
                }
                String what = "shift " + shift + ", blocks " + java.util.Arrays.toString(bounds);
                assertTrue(scale > 0, what);
                assertTrue(worst <= 1e-12 * scale, what + ": B(X)X differs by " + worst + " of " + scale);
                assertTrue(stressScalar[0] > 0, what);
                assertEquals(stressScalar[0], stressVector[0], 1e-12 * stressScalar[0], what);
            }
            lanesTwinEqualsVectorPassToTheBit(file, xs, shift, minPositive);
        }
    }

    /** The scalar twin run while the vector loop compiles gives the same bits, so a run does not depend on the JIT. */
    private static void lanesTwinEqualsVectorPassToTheBit(Path file, double[] xs, double shift, double minPositive) {
        RowBlock block = RowBlock.map(BadInputException.Input.DISTANCES, file, N, ByteOrder.LITTLE_ENDIAN, 0, N);
        TileVectors.Scratch scratch = new TileVectors.Scratch();
        short[] row = new short[RowKernel.TILE];
        double[] colVector = new double[4 * N];
        double[] colLanes = new double[4 * N];
        double[] sumsVector = new double[4];
        double[] sumsLanes = new double[4];
        for (int i = 0; i < N; i += 7) {
            // tiles of every length from the diagonal on, and whole tiles
            for (int j0 = i + 1; j0 < N; j0 += RowKernel.TILE) {
                int len = Math.min(RowKernel.TILE, N - j0);
                block.copyRow(i, j0, j0 + len, row, 0);
                boolean pairs = (i & 1) == 0;
                double sv = TileVectors.unit3(row, xs, N, i, j0, len, shift, minPositive, sumsVector,
                        pairs ? colVector : null, N, j0);
                double sl = TileVectors.unit3Lanes(row, xs, N, i, j0, len, shift, minPositive, sumsLanes,
                        pairs ? colLanes : null, N, j0, scratch);
                assertEquals(Double.doubleToLongBits(sv), Double.doubleToLongBits(sl), "stress, row " + i + " from " + j0);
            }
        }
        assertArrayEquals(sumsVector, sumsLanes, 0.0);
        assertArrayEquals(colVector, colLanes, 0.0);
    }
}
