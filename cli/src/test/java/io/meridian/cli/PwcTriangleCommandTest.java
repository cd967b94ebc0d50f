package io.meridian.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.meridian.cli.MdsCommandTest.Outcome;
import io.meridian.matrix.DistanceSource;
import io.meridian.matrix.RowBlock;
import io.meridian.matrix.TriangleFile;
import io.meridian.stream.row.DistanceRow;
import io.meridian.stream.row.RowFormat;
import io.meridian.stream.row.RowStores;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code ./meridian gen --layout triangle} writes the square matrix's lower triangle, and {@code ./meridian pwc} over
 * that triangle file or over the row stores (read in place, no square copy) gives the square file's labels.
 */
class PwcTriangleCommandTest {
    private static final int N = 400;
    private static final int BLOCK_ROWS = 64;

    @TempDir
    static Path dir;
    static Path square;
    static Path triangle;

    @BeforeAll
    static void generate() {
        for (String layout : List.of("square", "triangle")) {
            Outcome gen = MdsCommandTest.main("gen", "--kind", "blobs", "--n", "" + N, "--dim", "6", "--centers", "4",
                    "--std", "1", "--seed", "11", "--layout", layout, "--out", dir.resolve(layout).toString());
            assertEquals(0, gen.status(), gen.err());
        }
        square = dir.resolve("square").resolve("distances.bin");
        triangle = dir.resolve("triangle").resolve("distances.tri");
    }

    @Test
    void genWritesTheLowerTriangleOfTheSquareMatrix() throws Exception {
        assertEquals(TriangleFile.bytes(N), Files.size(triangle));
        assertFalse(Files.exists(dir.resolve("triangle").resolve("distances.bin")), "no square file beside it");
        RowBlock full = DistanceSource.matrixFile(square, N, ByteOrder.LITTLE_ENDIAN).all();
        ByteBuffer tri = ByteBuffer.wrap(Files.readAllBytes(triangle)).order(ByteOrder.LITTLE_ENDIAN);
        short[] row = new short[N];
        for (int i = 1; i < N; i++) {
            full.copyRow(i, row);
            for (int j = 0; j < i; j++) {
                assertEquals(row[j], tri.getShort(), "d(" + i + ", " + j + ")");
            }
        }
        String description = Files.readString(dir.resolve("triangle").resolve("dataset.json"));
        assertTrue(description.contains("\"distances\":\"distances.tri\",\"layout\":\"triangle\""), description);
        assertEquals(Files.readString(dir.resolve("square").resolve("labels.tsv")),
                Files.readString(dir.resolve("triangle").resolve("labels.tsv")));

        Outcome big = MdsCommandTest.main("gen", "--kind", "blobs", "--n", "20", "--dim", "2", "--layout", "triangle",
                "--big-endian", "--out", dir.resolve("big-triangle").toString());
        assertEquals(2, big.status(), big.err());
        assertTrue(MdsCommandTest.firstLine(big.err()).contains("--big-endian is not supported with --layout triangle"),
                big.err());
        Outcome other = MdsCommandTest.main("gen", "--kind", "blobs", "--n", "20", "--dim", "2", "--layout", "upper",
                "--out", dir.resolve("upper").toString());
        assertEquals(2, other.status(), other.err());
        assertTrue(MdsCommandTest.firstLine(other.err()).contains("--layout must be one of square|triangle"),
                other.err());
    }

    @Test
    void pwcOverTheRowStoresOrATriangleFileGivesTheSquareFilesLabels() throws Exception {
        Path stores = rowStores(square, dir.resolve("stores"));
        Path fromSquare = dir.resolve("pwc-square");
        Outcome s = MdsCommandTest.main("pwc", "--distances", square.toString(), "--n", "" + N, "--out",
                fromSquare.toString(), "--max-clusters", "6", "--seed", "5");
        assertEquals(0, s.status(), s.err());
        String labels = Files.readString(fromSquare.resolve("clusters.tsv"));
        int[] sizes = sizes(fromSquare);
        assertEquals(4, sizes.length, "the square file's run finds the 4 blobs");
        String[][] sources = {{"--row-stores", stores.toString(), "--block-rows", "" + BLOCK_ROWS},
            {"--triangle", triangle.toString()}};
        for (String[] source : sources) {
            Path out = dir.resolve("pwc" + source[0]);
            String[] args = {"pwc", source[0], source[1], "--n", "" + N, "--out", out.toString(), "--max-clusters", "6",
                "--seed", "5"};
            if (source.length > 2) {
                args = concat(args, source[2], source[3]);
            }
            Outcome r = MdsCommandTest.main(args);
            assertEquals(0, r.status(), r.err());
            assertTrue(r.err().contains(source[0].equals("--triangle") ? "from the lower triangle in " + triangle
                    : "from the row stores in " + stores), r.err());
            assertEquals(labels, Files.readString(out.resolve("clusters.tsv")), source[0] + ": the square's labels");
            assertArrayEquals(sizes, sizes(out), source[0]);
        }
    }

    @Test
    void whatTheTriangleCannotReadIsRefusedInOneLine() throws Exception {
        Path partial = dir.resolve("partial");
        try (RowStores store = new RowStores(partial, BLOCK_ROWS, N, b -> true)) {
            store.store(DistanceRow.decode(RowFormat.encodeInt16(0, new short[0], 0, 0, false), null));
        }
        Path out = dir.resolve("refused");
        Path cut = dir.resolve("cut.tri");
        Files.write(cut, Arrays.copyOf(Files.readAllBytes(triangle), 1000));
        String t = triangle.toString();
        String n = "" + N;
        String o = out.toString();
        refused("--row-stores: the row stores in " + partial + " do not hold every row of points 0.." + (N - 1)
                + ": missing [1, 2, 3", "--row-stores", partial.toString(), "--block-rows", "" + BLOCK_ROWS, "--n", n,
                "--out", o);
        refused("--triangle: " + cut + " has 1000 bytes, not the lower triangle of N = " + N, "--triangle",
                cut.toString(), "--n", n, "--out", o);
        refused("--big-endian is not supported with --triangle", "--triangle", t, "--n", n, "--big-endian", "--out", o);
        refused("--big-endian is not supported with --row-stores", "--row-stores", partial.toString(), "--block-rows",
                "" + BLOCK_ROWS, "--n", n, "--big-endian", "--out", o);
        refused("give one of --distances FILE (a square matrix), --row-stores DIR", "--triangle", t, "--distances",
                square.toString(), "--n", n, "--out", o);
        refused("--block-rows", "--row-stores", partial.toString(), "--n", n, "--out", o);
        refused("--procs must be at most N = " + N, "--triangle", t, "--n", n, "--out", o, "--procs", "" + (N + 1));
        assertFalse(Files.exists(out), "a refused run makes no --out");
        assertTrue(MdsCommandTest.main("pwc", "--help").out().contains("--row-stores DIR --block-rows R"));
    }

    private static void refused(String expected, String... args) {
        Outcome r = MdsCommandTest.main(concat(new String[] {"pwc"}, args));
        assertEquals(2, r.status(), r.err());
        List<String> lines = r.err().strip().lines().toList();
        assertTrue(lines.size() == 1 || lines.size() == 2 && lines.get(1).startsWith("usage: ./meridian pwc "),
                "one line, then the usage line: " + r.err());
        assertTrue(lines.get(0).startsWith("meridian pwc: "), r.err());
        assertTrue(lines.get(0).contains(expected), "expected " + expected + " in: " + r.err());
    }

    /** The row stores of {@code matrix}'s lower triangle, rows stored out of order as a stream may store them. */
    static Path rowStores(Path matrix, Path stores) {
        RowBlock full = DistanceSource.matrixFile(matrix, N, ByteOrder.LITTLE_ENDIAN).all();
        short[] row = new short[N];
        try (RowStores store = new RowStores(stores, BLOCK_ROWS, N, b -> true)) {
            for (int k = 0; k < N; k++) {
                int id = (k * 7) % N; // 7 is coprime with 400: every id once
                full.copyRow(id, row);
                store.store(DistanceRow.decode(RowFormat.encodeInt16(id, row, 0, id, false), null));
            }
        }
        return stores;
    }

    private static int[] sizes(Path out) throws Exception {
        return Files.readAllLines(out.resolve("centers.tsv")).stream()
                .mapToInt(line -> Integer.parseInt(line.split("\t")[2])).toArray();
    }

    private static String[] concat(String[] a, String... b) {
        String[] r = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, r, a.length, b.length);
        return r;
    }
}
