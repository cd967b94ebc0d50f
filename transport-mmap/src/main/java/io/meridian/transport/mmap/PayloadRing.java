package io.meridian.transport.mmap;

import io.meridian.shm.TmpfsSpace;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;

/**
 * Where a sender puts large tuples: a fixed-size memory-mapped file whose pages are reused lap after lap, next to the
 * pair's queue ({@code from-<sender>.ring}). The queue document then carries only the message's position here.
 *
 * <p>Why: a Chronicle queue only appends, so every byte of a large tuple lands on a tmpfs page never touched before,
 * and each first touch is a page fault that allocates and zeroes 4 KiB (and the reader faults the page into its own
 * mapping too). Measured here, appending 40 KB messages to a queue ran at 0.7-1.4 GB/s against 5-6 GB/s for the same
 * copies into a reused mapped region; that was the whole of raw Chronicle's loss to TCP on 40 KB messages, whose socket
 * buffers recycle warm pages. After its first lap the ring faults no more.
 *
 * <p>Positions are absolute byte counts (the offset is {@code position % size}); a message never wraps: the writer
 * skips to the start of the ring instead. The writer may reuse space only up to what the reader has released
 * ({@link ReaderPosition#ringReleased()}), which the reader publishes after the batch holding it was delivered, so a
 * restarted reader finds every undelivered message intact.
 */
final class PayloadRing {
    private final MappedByteBuffer buffer;
    private final long size;
    private final long address;

    private PayloadRing(MappedByteBuffer buffer) {
        this.buffer = buffer;
        this.size = buffer.capacity();
        this.address = RawMemory.addressOf(buffer);
    }

    /** Sender side: creates (owner-only) or opens the ring and faults all of its pages in once. */
    static PayloadRing create(Path file, int size) {
        try {
            if (!Files.exists(file)) {
                try {
                    Files.createFile(file, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
                } catch (java.nio.file.FileAlreadyExistsException raced) {
                    // a restarted sender's own file
                }
            }
            try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
                if (ch.size() < size) {
                    // through the channel: a full tmpfs is an ENOSPC here, not a SIGBUS in the page loop below
                    TmpfsSpace.reserve(ch, file, ch.size(), size - ch.size());
                }
                MappedByteBuffer b = ch.map(FileChannel.MapMode.READ_WRITE, 0, size);
                for (int p = 0; p < size; p += 4096) {
                    b.put(p, b.get(p)); // allocate every page now, not on the transfer thread later
                }
                return new PayloadRing(b);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot map payload ring " + file + ": " + e.getMessage(), e);
        }
    }

    /** Receiver side: maps the sender's ring. */
    static PayloadRing open(Path file) {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            return new PayloadRing(ch.map(FileChannel.MapMode.READ_WRITE, 0, ch.size()));
        } catch (NoSuchFileException e) {
            throw new IllegalStateException("the queue refers to payload ring " + file + ", which does not exist");
        } catch (IOException e) {
            throw new UncheckedIOException("cannot map payload ring " + file + ": " + e.getMessage(), e);
        }
    }

    long size() {
        return size;
    }

    /**
     * Writer: where a message of {@code length} bytes goes if the writer's head is at {@code head}, or -1 when the
     * reader has not released enough space.
     */
    long reserve(long head, long length, long released) {
        long offset = head % size;
        long start = offset + length > size ? head + (size - offset) : head; // skip the tail rather than wrap
        return start + length - released <= size ? start : -1;
    }

    /**
     * The native address of {@code length} bytes at {@code position}, which {@link #reserve} gave (so they never wrap);
     * the ring stays mapped as long as this object lives.
     */
    long address(long position, long length) {
        long offset = position % size;
        if (position < 0 || offset + length > size) {
            throw new IllegalStateException("payload ring: " + length + " bytes at position " + position
                + " run past the end of the " + size + "-byte ring");
        }
        return address + offset;
    }

    void write(long position, byte[] body) {
        buffer.put((int) (position % size), body);
    }

    void read(long position, byte[] into) {
        buffer.get((int) (position % size), into);
    }
}
