package io.meridian.transport.mmap;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Set;

/**
 * Deletes the queue files of topologies that no longer run. Storm halts a killed topology's workers
 * ({@code Runtime.halt}) before the transport's {@code term()}, so their receivers' directories stay (129 MB after
 * two cluster tests); the stale sweep of a starting worker keeps a dead receiver's queue for
 * {@code meridian.transport.stale.minutes} (10) because a restarted worker of a running topology resumes from it. A
 * topology Nimbus no longer lists has nobody to resume: every receiver directory of it whose process is gone can go
 * at once. Run by whoever polls Nimbus on the host (the cluster's sweeper beside each Supervisor); best effort.
 */
public final class KilledTopologies {
    private KilledTopologies() {
    }

    /**
     * Deletes, under the transport root {@code stormConf} names, the receiver directories of topologies not in
     * {@code running} whose processes are gone, and then their topology directories if empty.
     *
     * @return how many receiver directories were deleted
     */
    public static int sweep(Map<String, Object> stormConf, Set<String> running) {
        Path root = TransportConfig.from(stormConf).root;
        return Files.isDirectory(root) ? QueueFiles.sweep(root, running, -1, Long.MAX_VALUE) : 0;
    }
}
