package io.meridian.perf.soak;

import io.meridian.metrics.MetricSamples;
import java.util.Map;

/**
 * One sample of a soak run, {@code seconds} after the feed began.
 *
 * @param jvms              by name ({@code worker-PORT}, {@code nimbus}, {@code supervisor}, {@code kafka}, ...)
 * @param shmFiles          files under the run's own /dev/shm directories (transport queues, collectives' regions)
 * @param shmBytes          their bytes
 * @param devShmUsedBytes   /dev/shm as a whole: size minus what is free (every user's files)
 * @param storeFiles        the row stores' directory: its files (block files, each opened and mapped by workers)
 * @param storeBytes        their bytes
 * @param diskUsedBytes     the filesystem holding the row stores: size minus what is free
 * @param placement         the workers' {@code meridian_map_placement_seconds} buckets, cumulative since they started
 * @param storedRows        rows stored, from the row store files' markers
 * @param offered           records the broker acknowledged so far
 * @param afterFullGc       every JVM, workers and daemons, was asked for a full collection (jcmd GC.class_histogram)
 *                          just before: its heap after GC is then its live set, not what young collections left in
 *                          the old generation
 */
record SoakSample(double seconds, Map<String, Jvm> jvms, long shmFiles, long shmBytes, long devShmUsedBytes,
                  long storeFiles, long storeBytes, long diskUsedBytes, MetricSamples placement, long storedRows,
                  long offered, boolean afterFullGc) {

    /**
     * One JVM: what /proc says, and its heap after the last collection (a daemon serves no heap metric: its live heap
     * from the full collection's histogram, NaN between them).
     */
    record Jvm(long pid, ProcStats proc, double heapAfterGcBytes) {
    }
}
