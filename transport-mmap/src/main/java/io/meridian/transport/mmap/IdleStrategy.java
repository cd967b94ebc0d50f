package io.meridian.transport.mmap;

import java.util.concurrent.locks.LockSupport;

/**
 * How a polling thread waits when it found no work. {@link Backoff} is the default: it spins briefly, yields, then
 * parks for exponentially longer up to a cap, so a machine with fewer cores than busy threads is not starved by it.
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
        private static final int SPINS = 50;
        private static final int YIELDS = 20;
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
            } else if (n < SPINS + YIELDS) {
                Thread.yield();
            } else {
                LockSupport.parkNanos(parkNanos);
                parkNanos = Math.min(maxParkNanos, parkNanos << 1);
            }
        }
    }
}
