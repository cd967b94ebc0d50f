package io.meridian.shm;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * A small memory-mapped file of 64-bit slots shared between processes, read and written with acquire/release
 * semantics. The transport's control structures (receiver status, reader positions) are flyweights over one.
 */
public final class SharedLongs implements AutoCloseable {
    private static final VarHandle LONGS = MethodHandles.byteBufferViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
    private final Path file;
    private final MappedByteBuffer buffer;
    private final int slots;

    private SharedLongs(Path file, MappedByteBuffer buffer) {
        this.file = file;
        this.buffer = buffer;
        this.slots = buffer.capacity() / Long.BYTES;
    }

    /** Creates (owner-only) or opens the file with room for {@code slots} longs. */
    public static SharedLongs create(Path file, int slots) {
        try {
            if (!Files.exists(file)) {
                try {
                    Files.createFile(file, OwnerOnlyFiles.FILE_ATTRIBUTE);
                } catch (java.nio.file.FileAlreadyExistsException raced) {
                    // another process created it first; map theirs
                }
            }
            try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
                long size = (long) slots * Long.BYTES;
                if (ch.size() < size) {
                    // every page now, through the channel: a full tmpfs is an ENOSPC here, not a SIGBUS at a later
                    // store into the mapping (the file is a few KB; the writes stay beyond what any holder wrote)
                    TmpfsSpace.reserve(ch, file, ch.size(), size - ch.size());
                }
                return new SharedLongs(file, ch.map(FileChannel.MapMode.READ_WRITE, 0, size));
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot map shared file " + file + ": " + e.getMessage(), e);
        }
    }

    /** Maps an existing file, or returns null when it does not exist (yet) or is shorter than {@code minSlots}. */
    public static SharedLongs openIfPresent(Path file, int minSlots) {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            long size = ch.size();
            if (size < (long) minSlots * Long.BYTES) {
                return null;
            }
            return new SharedLongs(file, ch.map(FileChannel.MapMode.READ_WRITE, 0, size & ~7L));
        } catch (NoSuchFileException e) {
            return null;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot map shared file " + file + ": " + e.getMessage(), e);
        }
    }

    public int slots() {
        return slots;
    }

    public Path file() {
        return file;
    }

    public long getAcquire(int slot) {
        return (long) LONGS.getAcquire(buffer, slot << 3);
    }

    public long getPlain(int slot) {
        return (long) LONGS.get(buffer, slot << 3);
    }

    public void setRelease(int slot, long value) {
        LONGS.setRelease(buffer, slot << 3, value);
    }

    public long getAndAdd(int slot, long delta) {
        return (long) LONGS.getAndAdd(buffer, slot << 3, delta);
    }

    public boolean compareAndSet(int slot, long expect, long update) {
        return LONGS.compareAndSet(buffer, slot << 3, expect, update);
    }

    @Override
    public void close() {
        // a MappedByteBuffer is unmapped when collected; nothing to release eagerly without internal APIs
    }
}
