package io.meridian.stream.row;

import io.meridian.shm.FileMapping;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.io.UncheckedIOException;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;

/**
 * The writer of one row block: its rows' lower-triangle values (and weights) in sparse files sized for the whole block,
 * and a mapped marker byte per row ({@link RowStoreLayout}). Values go in with positional writes from a direct buffer:
 * a full disk is then an {@link IOException} naming the file, where a store into a mapping of a sparse file would be
 * a SIGBUS. Written pages belong to the kernel's page cache, so a stored row survives the SIGKILL of its worker and is
 * seen at once through the readers' mappings; only a host crash can lose rows not yet written back (see
 * {@link #force()}). One writer per block (the task that owns it), one thread.
 */
public final class BlockRowStore implements AutoCloseable {
    /** What {@link #store} did with a row. */
    public enum Outcome { STORED, DUPLICATE, CONFLICT }

    private final int block;
    private final int blockRows;
    private final int firstId;
    private final long blockBytes;
    private final Path valuesPath;
    private final Path weightsPath;
    private final FileChannel values;
    private final FileChannel markersChannel;
    private final FileMapping markers;
    private final MappedByteBuffer present;
    private FileChannel weights;
    private int storedRows;
    private int highestLocal = -1;

    public BlockRowStore(Path directory, int block, int blockRows) {
        this.block = block;
        this.blockRows = blockRows;
        this.firstId = block * blockRows;
        this.blockBytes = 2 * RowStoreLayout.blockValues(block, blockRows);
        if (blockBytes > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("block " + block + " of " + blockRows + " rows holds " + blockBytes
                    + " bytes of distances, over the 2 GB one mapping holds: lower ingest.rowStore.blockRows");
        }
        String base = RowStoreLayout.fileBase(block);
        this.valuesPath = directory.resolve(base + RowStoreLayout.VALUES);
        this.weightsPath = directory.resolve(base + RowStoreLayout.WEIGHTS);
        Path markersPath = directory.resolve(base + RowStoreLayout.MARKERS);
        try {
            Files.createDirectories(directory);
            boolean made = !Files.exists(markersPath);
            if (made) {
                Files.deleteIfExists(weightsPath); // a block without markers has no row stored: a leftover
                // the value file is whole before the marker file exists (readers open a block by its marker file)
                values = openSized(valuesPath, true);
                createMarkers(markersPath);
            } else {
                values = openSized(valuesPath, false);
            }
            if (Files.exists(weightsPath)) {
                weights = openSized(weightsPath, false);
            }
            markersChannel = FileChannel.open(markersPath, StandardOpenOption.READ, StandardOpenOption.WRITE);
            if (markersChannel.size() != blockRows) {
                long size = markersChannel.size();
                markersChannel.close();
                throw new RowStoreCorruptException(markersPath, block, blockRows, "it has " + size + " bytes, not the "
                        + blockRows + " marker bytes of a block (truncated, or written with another"
                        + " ingest.rowStore.blockRows)");
            }
            markers = FileMapping.map(markersChannel, FileChannel.MapMode.READ_WRITE, 0, blockRows);
            present = markers.buffer();
            for (int r = 0; r < blockRows; r++) {
                byte marker = present.get(r);
                if (marker == 1) {
                    storedRows++;
                    highestLocal = r;
                } else if (marker != 0) {
                    markers.close();
                    markersChannel.close();
                    throw new RowStoreCorruptException(markersPath, block, blockRows, "the marker byte of row "
                            + (firstId + r) + " is " + (marker & 0xff) + ", neither 0 (not stored) nor 1 (stored)");
                }
            }
        } catch (FileWriteException e) {
            throw new RowStoreWriteException(e.file, "cannot make the row markers of block " + block,
                    (IOException) e.getCause());
        } catch (IOException e) {
            throw new RowStoreWriteException(valuesPath, "cannot open block " + block, e);
        }
    }

    /**
     * Makes the block's marker file whole under a temporary name and renames it into place: a reader or a restarted
     * writer never finds one half made, and its bytes are written, not a hole, so that marking a row in the mapping
     * never needs a new page of a full disk (a store into a mapping that cannot get its page is a SIGBUS).
     */
    private void createMarkers(Path markersPath) throws IOException {
        Path making = markersPath.resolveSibling(markersPath.getFileName() + ".making");
        try (FileChannel out = FileChannel.open(making, StandardOpenOption.CREATE, StandardOpenOption.TRUNCATE_EXISTING,
                StandardOpenOption.WRITE)) {
            ByteBuffer zeros = ByteBuffer.allocate(blockRows);
            long at = 0;
            while (zeros.hasRemaining()) {
                at += out.write(zeros, at);
            }
        } catch (IOException e) {
            Files.deleteIfExists(making);
            throw new FileWriteException(making, e);
        }
        Files.move(making, markersPath, StandardCopyOption.ATOMIC_MOVE);
    }

    /**
     * Opens a value or weight file of this block. A new block's file ({@code fresh}: no marker file yet, so no row of
     * it was ever stored) is sized for the whole block (sparse: no disk yet); a block's file that exists must have that
     * size, or it was truncated.
     */
    private FileChannel openSized(Path file, boolean fresh) throws IOException {
        try (RandomAccessFile raf = new RandomAccessFile(file.toFile(), "rw")) {
            long size = raf.length();
            if (fresh && size != blockBytes) {
                raf.setLength(0);
                raf.setLength(blockBytes);
            } else if (size != blockBytes) {
                throw new RowStoreCorruptException(file, block, blockRows, "it has " + size + " bytes, not the "
                        + blockBytes + " of block " + block + " of " + blockRows + " rows (truncated, or written with"
                        + " another ingest.rowStore.blockRows)");
            }
        }
        return FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE);
    }

    public int block() {
        return block;
    }

    public int storedRows() {
        return storedRows;
    }

    /** The highest point id stored in this block, or -1. */
    public int highestId() {
        return highestLocal < 0 ? -1 : firstId + highestLocal;
    }

    public boolean contains(int id) {
        int local = id - firstId;
        return local >= 0 && local < blockRows && present.get(local) == 1;
    }

    /**
     * Stores {@code row} (valid, of this block), building its stored form in {@code image}. A row already stored with
     * the same values is a {@link Outcome#DUPLICATE} (nothing changes); with other values a {@link Outcome#CONFLICT}
     * (nothing changes either). Allocates nothing once {@code image} has grown to the row's width. A write that fails
     * (a full disk) leaves the row unmarked and throws, naming the file: the row was not stored.
     */
    public Outcome store(DistanceRow row, RowImage image) {
        int local = row.id() - firstId;
        if (local < 0 || local >= blockRows) {
            throw new IllegalArgumentException(row + " is not in block " + block);
        }
        image.ofDistances(row);
        int length = RowImage.length(row);
        long at = 2 * RowStoreLayout.rowOffset(row.id(), blockRows);
        try {
            if (present.get(local) == 1) {
                return replayOutcome(row, image, length, at);
            }
            write(values, image.bytes(), at, valuesPath);
            if (row.hasWeights() && weights == null) {
                openWeights(image);
            }
            if (weights != null) {
                if (row.hasWeights()) {
                    image.ofWeights(row);
                    write(weights, image.bytes(), at, weightsPath);
                } else {
                    write(weights, image.unitWeights(row.id()), at, weightsPath);
                }
            }
        } catch (FileWriteException e) {
            throw new RowStoreWriteException(e.file, "cannot store row " + row.id(), (IOException) e.getCause());
        } catch (IOException e) {
            throw new RowStoreWriteException(valuesPath, "cannot store row " + row.id(), e);
        }
        // values before marker, also for a reader in another thread or process (RowStoreReader): release, then mark
        VarHandle.releaseFence();
        present.put(local, (byte) 1);
        storedRows++;
        highestLocal = Math.max(highestLocal, local);
        return Outcome.STORED;
    }

    private Outcome replayOutcome(DistanceRow row, RowImage image, int length, long at) throws IOException {
        read(values, image.readBack(length), at, valuesPath);
        if (!image.sameAsReadBack()) {
            return Outcome.CONFLICT;
        }
        if (weights == null) {
            return row.hasWeights() ? Outcome.CONFLICT : Outcome.DUPLICATE;
        }
        read(weights, image.readBack(length), at, weightsPath);
        if (row.hasWeights()) {
            image.ofWeights(row);
            return image.sameAsReadBack() ? Outcome.DUPLICATE : Outcome.CONFLICT;
        }
        return image.readBackIsUnitWeights(row.id()) ? Outcome.DUPLICATE : Outcome.CONFLICT;
    }

    /** Writes the stored rows back to disk (a host crash loses nothing stored before this). */
    public void force() {
        try {
            values.force(false);
            if (weights != null) {
                weights.force(false);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("row store " + valuesPath + ": " + e.getMessage(), e);
        }
        present.force();
    }

    /** Creates the weight file: the rows stored so far get unit weights (they came without). */
    private void openWeights(RowImage image) throws IOException {
        weights = openSized(weightsPath, true);
        for (int local = 0; local < blockRows; local++) {
            if (present.get(local) == 1) {
                int id = firstId + local;
                write(weights, image.unitWeights(id), 2 * RowStoreLayout.rowOffset(id, blockRows), weightsPath);
            }
        }
    }

    private static void write(FileChannel channel, ByteBuffer bytes, long at, Path file) throws IOException {
        bytes.rewind();
        long position = at;
        try {
            while (bytes.hasRemaining()) {
                position += channel.write(bytes, position);
            }
        } catch (IOException e) {
            throw new FileWriteException(file, e);
        }
    }

    /** A write that failed, with the file it was to. */
    private static final class FileWriteException extends IOException {
        private static final long serialVersionUID = 1L;
        private final transient Path file;

        FileWriteException(Path file, IOException cause) {
            super(cause.getMessage(), cause);
            this.file = file;
        }
    }

    private static void read(FileChannel channel, ByteBuffer into, long at, Path file) throws IOException {
        long position = at;
        while (into.hasRemaining()) {
            int n = channel.read(into, position);
            if (n < 0) {
                throw new IOException(file + " ends at " + position + ", inside a row marked stored");
            }
            position += n;
        }
    }

    @Override
    public void close() {
        markers.close();
        try {
            values.close();
            markersChannel.close();
            if (weights != null) {
                weights.close();
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
