package io.meridian.transport.mmap;

import net.openhft.chronicle.bytes.Bytes;

/**
 * The native address of a document's bytes in a mapped queue file, for {@link RawMemory}. Chronicle maps a queue
 * file in blocks that overlap the next one by a quarter, so a document shorter than the overlap always lies inside
 * one mapping; asking for the range with its size (not just its start, which switches mappings at the block's
 * nominal end) keeps both ends in the same one.
 */
final class Chunks {
    private Chunks() {
    }

    /** The appender's side: maps the file up to the document's end first. */
    static long forWrite(Bytes<?> bytes, long offset, long length, Object where) {
        bytes.ensureCapacity(offset + length);
        return contiguous(bytes, offset, length, where);
    }

    /** @return the address of {@code offset}, valid for reads (and, on an appender's bytes, writes) of {@code length} bytes */
    static long contiguous(Bytes<?> bytes, long offset, long length, Object where) {
        if (length > QueueFiles.BLOCK_BYTES / 4) {
            throw new IllegalStateException("mmap transport: " + where + ": a document of " + length
                + " bytes is longer than the queue file's mapping overlap");
        }
        long address = bytes.addressForRead(offset, (int) length);
        if (length > 0 && bytes.addressForRead(offset + length - 1, 1) != address + length - 1) {
            throw new IllegalStateException("mmap transport: " + where + ": the document at " + offset + " ("
                + length + " bytes) is not mapped in one piece");
        }
        return address;
    }
}
