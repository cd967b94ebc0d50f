package io.meridian.shm;

import java.io.IOException;
import java.lang.reflect.Field;
import java.nio.ByteOrder;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.util.concurrent.atomic.AtomicLong;
import sun.misc.Unsafe;

/**
 * The owner of one mapping of a file range: it maps, hands out the buffer, and unmaps it when closed, after which
 * {@link #buffer()} fails instead of reading freed memory (Aeron's {@code LogBuffers}, Flink's {@code MemorySegment}).
 * A {@link MappedByteBuffer} is otherwise unmapped only when the collector finds it unreachable: a file remapped as it
 * grew kept every older mapping alive until then. Views derived from the buffer (a {@code ShortBuffer}) must be dropped
 * by their holder before {@link #close()}: the owner cannot poison them. {@link #live()} counts the mappings made here
 * and not yet unmapped, so that tests can check that no stale mapping is left.
 */
public final class FileMapping implements AutoCloseable {
    private static final Unsafe UNSAFE = unsafe();
    private static final AtomicLong LIVE = new AtomicLong();

    private final long size;
    private volatile MappedByteBuffer buffer;

    private FileMapping(MappedByteBuffer buffer, long size) {
        this.buffer = buffer;
        this.size = size;
    }

    /** Maps {@code size} bytes of {@code channel} from {@code offset} (at most 2 GB - 1, a mapping's limit). */
    public static FileMapping map(FileChannel channel, FileChannel.MapMode mode, long offset, long size)
            throws IOException {
        if (size < 0 || size > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("a mapping of " + size + " bytes: one mapping holds 0.."
                    + Integer.MAX_VALUE);
        }
        MappedByteBuffer mapped = channel.map(mode, offset, size);
        mapped.order(ByteOrder.LITTLE_ENDIAN);
        LIVE.incrementAndGet();
        return new FileMapping(mapped, size);
    }

    /** The mapped bytes, little-endian; fails once closed. */
    public MappedByteBuffer buffer() {
        MappedByteBuffer b = buffer;
        if (b == null) {
            throw new IllegalStateException("a mapping of " + size + " bytes used after it was unmapped");
        }
        return b;
    }

    public long size() {
        return size;
    }

    public boolean isOpen() {
        return buffer != null;
    }

    /** Mappings made by this class and not yet unmapped, in this process. */
    public static long live() {
        return LIVE.get();
    }

    /**
     * Unmaps now. Only when no thread reads the buffer or a view of it any more: a read after the unmapping is a
     * crash of the JVM, not an exception. Idempotent.
     */
    @Override
    public void close() {
        MappedByteBuffer b;
        synchronized (this) {
            b = buffer;
            buffer = null;
        }
        if (b != null) {
            if (b.capacity() > 0) {
                UNSAFE.invokeCleaner(b);
            }
            LIVE.decrementAndGet();
        }
    }

    private static Unsafe unsafe() {
        try {
            Field f = Unsafe.class.getDeclaredField("theUnsafe");
            f.setAccessible(true);
            return (Unsafe) f.get(null);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }
}
