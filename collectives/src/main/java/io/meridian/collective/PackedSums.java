package io.meridian.collective;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.DoubleBuffer;

/**
 * An allgatherv that carries a sum in the same message: participant p's piece is its part followed by its
 * {@code sumCount} partial sums, so one allgatherv of the packed pieces replaces an allreduce and an allgatherv (one
 * message latency instead of two between hosts). The caller packs its own piece, runs the allgatherv on
 * {@link #buffer()} with {@link #counts()} and {@link #displs()}, then unpacks: the others' parts go to their places
 * in the result area, and the partial sums are added in participant order, so every participant gets the same bits.
 * Owns one private direct buffer, made at the first call and kept; no call allocates after that.
 */
final class PackedSums {
    private final int participants;
    private final int capacity;
    private final int[] counts;
    private final int[] displs;
    private DoubleBuffer buffer;

    /** @param capacity the largest result area (doubles); @param reduceCapacity the most sums a call carries */
    PackedSums(int participants, int capacity, int reduceCapacity) {
        this.participants = participants;
        this.capacity = capacity + participants * reduceCapacity;
        this.counts = new int[participants];
        this.displs = new int[participants];
    }

    /** Lays out the pieces for parts of {@code partCounts} and copies participant {@code me}'s part and sums in. */
    void pack(DoubleBuffer area, int[] partCounts, int[] partDispls, int me, DoubleBuffer sums, int sumCount) {
        int at = 0;
        for (int p = 0; p < participants; p++) {
            counts[p] = partCounts[p] + sumCount;
            displs[p] = at;
            at += counts[p];
        }
        if (buffer == null) {
            buffer = ByteBuffer.allocateDirect(8 * capacity).order(ByteOrder.nativeOrder()).asDoubleBuffer();
        }
        buffer.put(displs[me], area, partDispls[me], partCounts[me]);
        buffer.put(displs[me] + partCounts[me], sums, 0, sumCount);
    }

    /** After the allgatherv: the others' parts into {@code area}, the sums of every piece into {@code sums}. */
    void unpack(DoubleBuffer area, int[] partCounts, int[] partDispls, int me, DoubleBuffer sums, int sumCount) {
        for (int p = 0; p < participants; p++) {
            if (p != me) {
                area.put(partDispls[p], buffer, displs[p], partCounts[p]);
            }
        }
        for (int i = 0; i < sumCount; i++) {
            double sum = 0;
            for (int p = 0; p < participants; p++) {
                sum += buffer.get(displs[p] + partCounts[p] + i);
            }
            sums.put(i, sum);
        }
    }

    DoubleBuffer buffer() {
        return buffer;
    }

    int[] counts() {
        return counts;
    }

    int[] displs() {
        return displs;
    }
}
