package io.meridian.transport.mmap;

import java.lang.reflect.Field;
import sun.misc.Unsafe;

/**
 * Plain loads, stores and copies between heap arrays and mapped memory at a native address. Chronicle's own
 * {@code Bytes.write(byte[])} copies through a Java loop of 8-byte moves on Java 9+ (it keeps copies interruptible by
 * safepoints); for the transport's small messages the JIT's memcpy stub behind {@link Unsafe#copyMemory} is what costs
 * least, and nothing here copies more than a document (about 1 MiB) at once.
 *
 * <p>Callers own the bounds: every address passed here comes from a Chronicle document whose whole extent was checked
 * to be mapped ({@link MmapSender}, {@link InboundQueue}).
 */
final class RawMemory {
    private static final Unsafe UNSAFE;
    private static final long BYTE_ARRAY_BASE;
    private static final long BUFFER_ADDRESS;

    static {
        try {
            Field f = Unsafe.class.getDeclaredField("theUnsafe");
            f.setAccessible(true);
            UNSAFE = (Unsafe) f.get(null);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
        BYTE_ARRAY_BASE = UNSAFE.arrayBaseOffset(byte[].class);
        try {
            BUFFER_ADDRESS = UNSAFE.objectFieldOffset(java.nio.Buffer.class.getDeclaredField("address"));
        } catch (NoSuchFieldException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private RawMemory() {
    }

    /** The native address of a direct (or mapped) buffer's first byte. */
    static long addressOf(java.nio.ByteBuffer direct) {
        if (!direct.isDirect()) {
            throw new IllegalArgumentException("not a direct buffer");
        }
        return UNSAFE.getLong(direct, BUFFER_ADDRESS);
    }

    static void putInt(long address, int value) {
        UNSAFE.putInt(address, value);
    }

    static void putLong(long address, long value) {
        UNSAFE.putLong(address, value);
    }

    static int getInt(long address) {
        return UNSAFE.getInt(address);
    }

    static long getLong(long address) {
        return UNSAFE.getLong(address);
    }

    static void copy(byte[] from, long toAddress, int length) {
        UNSAFE.copyMemory(from, BYTE_ARRAY_BASE, null, toAddress, length);
    }

    static void copy(long fromAddress, byte[] to, int length) {
        UNSAFE.copyMemory(null, fromAddress, to, BYTE_ARRAY_BASE, length);
    }
}
