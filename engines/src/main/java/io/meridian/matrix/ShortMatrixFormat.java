package io.meridian.matrix;

import io.meridian.engine.BadInputException;
import io.meridian.engine.BadInputException.Input;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * The SPIDAL 16-bit matrix format: N x N signed 16-bit integers, row-major, no header, either byte order. An entry
 * {@code v >= 0} stands for {@code v / 32767}; a negative entry means "missing". The file is exactly 2 N^2 bytes.
 */
public final class ShortMatrixFormat {
    /** The integer that stands for 1.0. */
    public static final int SCALE = 32767;
    /** {@code 1 / SCALE}: multiply a raw entry by this to get its value. */
    public static final double INV_SCALE = 1.0 / SCALE;
    /** The raw entry written for a missing value. */
    public static final short MISSING = -1;

    private ShortMatrixFormat() {
    }

    public static long expectedBytes(int n) {
        return 2L * n * n;
    }

    /** Encodes a value in [0, 1] (clamped); NaN or negative values are written as missing. */
    public static short encode(double value) {
        if (!(value >= 0)) {
            return MISSING;
        }
        return (short) Math.min(SCALE, Math.round(value * SCALE));
    }

    public static double decode(short raw) {
        return raw * INV_SCALE;
    }

    /**
     * Checks that {@code file} exists, is readable and holds exactly an N x N matrix; {@code input} says which matrix it
     * is for messages.
     */
    public static void checkFile(Input input, Path file, int n) {
        if (n <= 0) {
            throw new BadInputException(input, file, "N must be a positive integer, got " + n);
        }
        BadInputException.checkReadable(input, file);
        long size;
        try {
            size = Files.size(file);
        } catch (IOException e) {
            throw new BadInputException(input, file, "cannot read the size of " + file + ": " + e.getMessage(), e);
        }
        long expected = expectedBytes(n);
        if (size != expected) {
            String hint = "";
            if (size % 2 == 0) {
                long cells = size / 2;
                long root = (long) Math.sqrt((double) cells);
                while (root * root < cells) {
                    root++;
                }
                if (root * root == cells) {
                    hint = " (it looks like N = " + root + ")";
                }
            }
            throw new BadInputException(input, file, "file " + file + " has " + size + " bytes but an N x N 16-bit matrix with N = "
                    + n + " needs 2*N*N = " + expected + hint);
        }
    }

    /** Bytes read from the start of a matrix to judge its byte order: every entry of a 724 x 724 matrix, 1 MiB. */
    static final int ORDER_SAMPLE_BYTES = 1 << 20;

    /**
     * Refuses a matrix read in the wrong byte order. Entries are in [0, 32767], or -1 for a missing distance; read in
     * the other order, an entry whose low byte is 128 or more comes out below -1, which no valid matrix holds. So
     * when the first MiB has such entries in {@code order} and none in the other, the file is in the other order
     * (read as it is, half the entries became "missing" and DA-MDS's stress went from 1e-4 to 0.2).
     */
    public static void checkByteOrder(Input input, Path file, ByteOrder order, String option) {
        ByteBuffer sample;
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ)) {
            sample = ByteBuffer.allocate((int) Math.min(ORDER_SAMPLE_BYTES, channel.size() & ~1L));
            while (sample.hasRemaining() && channel.read(sample) >= 0) {
                // fill the sample
            }
        } catch (IOException e) {
            throw new BadInputException(input, file, "cannot read " + file + ": " + e.getMessage(), e);
        }
        sample.flip();
        ByteOrder other = order == ByteOrder.BIG_ENDIAN ? ByteOrder.LITTLE_ENDIAN : ByteOrder.BIG_ENDIAN;
        long invalidAsGiven = belowMissing(sample, order);
        long invalidSwapped = belowMissing(sample, other);
        if (invalidAsGiven > 0 && invalidSwapped == 0) {
            boolean big = other == ByteOrder.BIG_ENDIAN;
            throw new BadInputException(input, file, "file " + file + " is " + (big ? "big" : "little") + "-endian: "
                    + invalidAsGiven + " of its first " + sample.limit() / 2 + " entries are below -1 when read "
                    + (big ? "little" : "big") + "-endian and none when read " + (big ? "big" : "little")
                    + "-endian; " + (big ? "give " : "drop ") + option);
        }
    }

    private static long belowMissing(ByteBuffer sample, ByteOrder order) {
        ByteBuffer b = sample.duplicate().order(order);
        long count = 0;
        while (b.remaining() >= 2) {
            if (b.getShort() < MISSING) {
                count++;
            }
        }
        return count;
    }
}
