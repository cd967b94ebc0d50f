package io.meridian.stream.row;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.nio.MappedByteBuffer;
import java.nio.ShortBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.Locale;

/**
 * The rows of one row block, off-heap in memory-mapped files, in the 16-bit layout DA-MDS reads:
 * <ul>
 *   <li>{@code block-NNNNNN.dist}: rows {@code block*blockRows ..} in order, each {@code width} little-endian 16-bit
 *   values (distance = value / 32767, -1 missing), no header. The file grows (doubling, in whole rows) as points
 *   arrive; rows not yet stored read as all -1. Concatenating the block files in order gives the row-major matrix.</li>
 *   <li>{@code block-NNNNNN.rows}: one byte per row of the block, 1 once the row is stored. A row's values are written
 *   before its byte, so a process killed in between leaves the row unmarked and its replay writes it again.</li>
 *   <li>{@code block-NNNNNN.wts}: the weights, same layout, created with the first weighted row (other rows: 32767).</li>
 * </ul>
 * Mapped pages belong to the kernel's page cache, so a stored row survives the SIGKILL of its worker; only a host crash
 * can lose rows not yet written back (see {@link #force()}). One writer per block (the task that owns it).
 */
public final class BlockRowStore implements AutoCloseable {
    /** What {@link #store} did with a row. */
    public enum Outcome { STORED, DUPLICATE, CONFLICT }

    private static final int MIN_ROWS = 16;
    /** 4 KB of missing values (-1), and of unit weights (32767, little-endian), to fill new rows with in bulk. */
    private static final byte[] MISSING_TEMPLATE = new byte[4096];
    private static final byte[] UNIT_TEMPLATE = new byte[4096];

    static {
        Arrays.fill(MISSING_TEMPLATE, (byte) 0xff);
        for (int i = 0; i < UNIT_TEMPLATE.length; i += 2) {
            RowFormat.SHORT.set(UNIT_TEMPLATE, i, (short) RowFormat.SCALE);
        }
    }

    private final int block;
    private final int blockRows;
    private final int width;
    /** Bytes of one row: a block file is mapped whole, so offsets within it are ints. */
    private final int rowBytes;
    private final Path distPath;
    private final Path weightsPath;
    private final FileChannel distChannel;
    private final FileChannel rowsChannel;
    private final MappedByteBuffer present;
    private FileChannel weightsChannel;
    private MappedByteBuffer distMap;
    private ShortBuffer dist;
    private MappedByteBuffer weightsMap;
    private int mappedRows;
    private int storedRows;
    private int highestLocal = -1;

    public BlockRowStore(Path directory, int block, int blockRows, int width) {
        this.block = block;
        this.blockRows = blockRows;
        this.width = width;
        if (2L * width * blockRows > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("a block of " + blockRows + " rows of " + width + " 16-bit values exceeds"
                    + " 2 GB, the most one mapping holds: lower ingest.rowStore.blockRows");
        }
        this.rowBytes = 2 * width;
        String base = fileBase(block);
        this.distPath = directory.resolve(base + ".dist");
        this.weightsPath = directory.resolve(base + ".wts");
        try {
            Files.createDirectories(directory);
            distChannel = FileChannel.open(distPath, StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE);
            rowsChannel = FileChannel.open(directory.resolve(base + ".rows"), StandardOpenOption.CREATE,
                    StandardOpenOption.READ, StandardOpenOption.WRITE);
            present = rowsChannel.map(FileChannel.MapMode.READ_WRITE, 0, blockRows);
            long existingRows = distChannel.size() / rowBytes;
            if (distChannel.size() % rowBytes != 0 || existingRows > blockRows) {
                throw new IllegalStateException(distPath + " has " + distChannel.size() + " bytes, not whole rows of "
                        + width + " 16-bit values for a block of " + blockRows + " rows (was the store written with"
                        + " another ingest.maxPoints or ingest.rowStore.blockRows?)");
            }
            if (existingRows > 0) {
                mapRows((int) existingRows, (int) existingRows);
            }
            if (Files.exists(weightsPath)) {
                openWeights();
            }
            for (int r = 0; r < blockRows; r++) {
                if (present.get(r) == 1) {
                    storedRows++;
                    highestLocal = r;
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("row store " + distPath + ": " + e.getMessage(), e);
        }
    }

    public static String fileBase(int block) {
        return String.format(Locale.ROOT, "block-%06d", block);
    }

    public int block() {
        return block;
    }

    public int storedRows() {
        return storedRows;
    }

    /** The highest point id stored in this block, or -1. */
    public int highestId() {
        return highestLocal < 0 ? -1 : block * blockRows + highestLocal;
    }

    public boolean contains(int id) {
        int local = id - block * blockRows;
        return local >= 0 && local < blockRows && present.get(local) == 1;
    }

    /**
     * Stores {@code row} (valid, of this block), building its stored form in {@code image} (of {@link #width} values).
     * A row already stored with the same values is a {@link Outcome#DUPLICATE} (nothing changes); with other values a
     * {@link Outcome#CONFLICT} (nothing changes either). Allocates nothing (bulk copies between the image and the
     * mapped file), except when the block file grows.
     */
    public Outcome store(DistanceRow row, RowImage image) {
        int local = row.id() - block * blockRows;
        if (local < 0 || local >= blockRows) {
            throw new IllegalArgumentException(row + " is not in block " + block);
        }
        if (image.width() != width) {
            throw new IllegalArgumentException("a row image of " + image.width() + " values for rows of " + width);
        }
        image.ofDistances(row);
        int offset = local * rowBytes;
        if (present.get(local) == 1) {
            distMap.get(offset, image.readBack(), 0, rowBytes);
            boolean same = image.sameAsReadBack();
            if (same && row.hasWeights()) {
                image.ofWeights(row);
                if (weightsMap == null) {
                    same = false;
                } else {
                    weightsMap.get(offset, image.readBack(), 0, rowBytes);
                    same = image.sameAsReadBack();
                }
            } else if (same && weightsMap != null) {
                same = isUnitWeightRow(offset, image.readBack());
            }
            return same ? Outcome.DUPLICATE : Outcome.CONFLICT;
        }
        if (local >= mappedRows) {
            mapRows(Math.min(blockRows, Math.max(local + 1, Math.max(MIN_ROWS, 2 * mappedRows))), mappedRows);
        }
        distMap.put(offset, image.bytes(), 0, rowBytes);
        if (row.hasWeights()) {
            if (weightsMap == null) {
                openWeights();
            }
            image.ofWeights(row);
            weightsMap.put(offset, image.bytes(), 0, rowBytes);
        }
        // values before marker, also for a reader in another thread or process (RowStoreReader): release, then mark
        VarHandle.releaseFence();
        present.put(local, (byte) 1);
        storedRows++;
        highestLocal = Math.max(highestLocal, local);
        return Outcome.STORED;
    }

    /** The raw 16-bit entry {@code column} of stored row {@code id} (negative: missing). */
    public short get(int id, int column) {
        return dist.get((int) ((id - block * blockRows) * (long) width + column));
    }

    /** Reads stored row {@code id} into {@code out} (width entries). */
    public void read(int id, short[] out) {
        dist.get((int) ((id - block * blockRows) * (long) width), out, 0, width);
    }

    /** Writes the mapped pages back to disk (a host crash loses nothing stored before this). */
    public void force() {
        if (distMap != null) {
            distMap.force();
        }
        if (weightsMap != null) {
            weightsMap.force();
        }
        present.force();
    }

    /** Whether the stored weights read back into {@code stored} are those of a row stored without weights. */
    private boolean isUnitWeightRow(int offset, byte[] stored) {
        weightsMap.get(offset, stored, 0, rowBytes);
        for (int j = 0; j < width; j++) {
            short w = (short) RowFormat.SHORT.get(stored, 2 * j);
            if (w != RowFormat.SCALE && w != RowFormat.MISSING) {
                return false;
            }
        }
        return true;
    }

    /** Maps {@code rows} rows; rows from {@code initialisedRows} on are new and set to missing (-1). */
    private void mapRows(int rows, int initialisedRows) {
        try {
            distMap = distChannel.map(FileChannel.MapMode.READ_WRITE, 0, (long) rows * rowBytes);
            distMap.order(ByteOrder.LITTLE_ENDIAN);
            dist = distMap.asShortBuffer();
            fillRange(distMap, initialisedRows, rows, MISSING_TEMPLATE);
            if (weightsChannel != null) {
                mapWeights(rows, initialisedRows);
            }
            mappedRows = rows;
        } catch (IOException e) {
            throw new UncheckedIOException("row store " + distPath + ": cannot grow to " + rows + " rows: " + e.getMessage(), e);
        }
    }

    private void openWeights() {
        try {
            weightsChannel = FileChannel.open(weightsPath, StandardOpenOption.CREATE, StandardOpenOption.READ,
                    StandardOpenOption.WRITE);
            int existing = (int) (weightsChannel.size() / rowBytes);
            mapWeights(mappedRows, Math.min(existing, mappedRows));
        } catch (IOException e) {
            throw new UncheckedIOException("row store " + weightsPath + ": " + e.getMessage(), e);
        }
    }

    private void mapWeights(int rows, int initialisedRows) throws IOException {
        weightsMap = weightsChannel.map(FileChannel.MapMode.READ_WRITE, 0, (long) rows * rowBytes);
        weightsMap.order(ByteOrder.LITTLE_ENDIAN);
        fillRange(weightsMap, initialisedRows, rows, UNIT_TEMPLATE);
    }

    /** Sets rows {@code [fromRow, toRow)} of {@code buffer} to {@code template}'s repeated 2-byte value, in bulk. */
    private void fillRange(MappedByteBuffer buffer, int fromRow, int toRow, byte[] template) {
        int end = toRow * rowBytes;
        for (int at = fromRow * rowBytes; at < end; at += template.length) {
            buffer.put(at, template, 0, Math.min(template.length, end - at));
        }
    }

    @Override
    public void close() {
        try {
            distChannel.close();
            rowsChannel.close();
            if (weightsChannel != null) {
                weightsChannel.close();
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
