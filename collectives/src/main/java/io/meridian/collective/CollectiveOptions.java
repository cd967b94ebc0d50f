package io.meridian.collective;

import java.nio.file.Path;
import java.time.Duration;

/**
 * How collectives are set up: data capacities (doubles) of an allgatherv/broadcast result and of one allreduce, memory
 * groups per node, the timeout after which a missing participant fails a call, where regions live, and the job id
 * that names them (null: rank 0 makes one up).
 */
public record CollectiveOptions(int capacity, int reduceCapacity, int groupsPerNode, Duration timeout, Path regionRoot,
                                String jobId) {
    public static final Path DEFAULT_REGION_ROOT = Path.of("/dev/shm");
    public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(30);

    public CollectiveOptions {
        if (capacity < 1 || reduceCapacity < 1) {
            throw new IllegalArgumentException("capacities must be positive: " + capacity + ", " + reduceCapacity);
        }
        if (groupsPerNode < 1) {
            throw new IllegalArgumentException("groups per node must be at least 1, got " + groupsPerNode);
        }
        if (timeout.isNegative() || timeout.isZero()) {
            throw new IllegalArgumentException("timeout must be positive, got " + timeout);
        }
        if (jobId != null) {
            RegionFiles.validateJobId(jobId);
        }
    }

    public static CollectiveOptions of(int capacity, int reduceCapacity) {
        return new CollectiveOptions(capacity, reduceCapacity, 1, DEFAULT_TIMEOUT, DEFAULT_REGION_ROOT, null);
    }

    public CollectiveOptions groupsPerNode(int m) {
        return new CollectiveOptions(capacity, reduceCapacity, m, timeout, regionRoot, jobId);
    }

    public CollectiveOptions timeout(Duration t) {
        return new CollectiveOptions(capacity, reduceCapacity, groupsPerNode, t, regionRoot, jobId);
    }

    public CollectiveOptions regionRoot(Path root) {
        return new CollectiveOptions(capacity, reduceCapacity, groupsPerNode, timeout, root, jobId);
    }

    public CollectiveOptions jobId(String id) {
        return new CollectiveOptions(capacity, reduceCapacity, groupsPerNode, timeout, regionRoot, id);
    }
}
