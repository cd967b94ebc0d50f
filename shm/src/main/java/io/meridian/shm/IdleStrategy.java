package io.meridian.shm;

import java.util.concurrent.locks.LockSupport;

/**
 * How a polling thread waits when it found no work. {@link Backoff} is the default: it spins a few times, then parks
 * for exponentially longer up to a cap, so a machine with fewer cores than busy threads is not starved by it. It does
 * not yield: measured on the 2-core cluster with acking on (bursty traffic, many short idle gaps), a phase of 20
 * yields per gap made the reader cost 1.5x Netty's CPU per tuple, because on a loaded host each yield is a context
 * switch.
 */
public interface IdleStrategy {
    /** @param workCount what the last poll did; 0 means idle */
    void idle(int workCount);

    final class Spin implements IdleStrategy {
        @Override
        public void idle(int workCount) {
            if (workCount == 0) {
                Thread.onSpinWait();
            }
        }
    }

    final class Yield implements IdleStrategy {
        @Override
        public void idle(int workCount) {
            if (workCount == 0) {
                Thread.yield();
            }
        }
    }

    final class Backoff implements IdleStrategy {
        private static final int SPINS = 20;
        private static final long MIN_PARK_NANOS = 1_000;
        private final long maxParkNanos;
        private int idleCount;
        private long parkNanos = MIN_PARK_NANOS;

        public Backoff(long maxParkNanos) {
            this.maxParkNanos = Math.max(MIN_PARK_NANOS, maxParkNanos);
        }

        @Override
        public void idle(int workCount) {
            if (workCount > 0) {
                idleCount = 0;
                parkNanos = MIN_PARK_NANOS;
                return;
            }
            int n = idleCount++;
            if (n < SPINS) {
                Thread.onSpinWait();
            } else {
                LockSupport.parkNanos(parkNanos);
                parkNanos = Math.min(maxParkNanos, parkNanos << 1);
            }
        }
    }
}
