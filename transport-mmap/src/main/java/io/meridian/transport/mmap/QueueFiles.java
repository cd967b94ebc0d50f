package io.meridian.transport.mmap;

import io.meridian.shm.Doorbell;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Set;
import io.meridian.shm.OwnerOnlyFiles;
import io.meridian.shm.ProcessIdentity;
import net.openhft.chronicle.queue.RollCycle;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueue;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueueBuilder;
import net.openhft.chronicle.queue.rollcycles.RollCycleArithmetic;
import net.openhft.chronicle.wire.WireType;

/**
 * Where the queues live and how they are opened.
 *
 * <pre>
 *   &lt;root&gt;/&lt;topology-id&gt;/w&lt;receiver-port&gt;/receiver.ctl          the receiver's control file
 *   &lt;root&gt;/&lt;topology-id&gt;/w&lt;receiver-port&gt;/from-&lt;sender&gt;/       the Chronicle queue sender -&gt; receiver
 *   &lt;root&gt;/&lt;topology-id&gt;/w&lt;receiver-port&gt;/from-&lt;sender&gt;.pos     the receiver's position in it
 * </pre>
 *
 * Every directory is created owner-only (rwx------): the tuples of a topology are readable by its user alone.
 */
final class QueueFiles {
    static final String CONTROL = "receiver.ctl";
    /** The receiver's doorbell ({@link Doorbell}): its socket, or a link to it when the path is too long. */
    static final String DOORBELL = "doorbell.sock";
    static final String QUEUE_PREFIX = "from-";
    static final String POSITION_SUFFIX = ".pos";

    private QueueFiles() {
    }

    static Path receiverDir(Path root, String topologyId, int port) {
        return root.resolve(sanitize(topologyId)).resolve("w" + port);
    }

    static Path queueDir(Path receiverDir, String senderId) {
        return receiverDir.resolve(QUEUE_PREFIX + senderId);
    }

    static Path ringFile(Path receiverDir, String senderId) {
        return receiverDir.resolve(QUEUE_PREFIX + senderId + ".ring");
    }

    static Path positionFile(Path receiverDir, String senderId) {
        return receiverDir.resolve(QUEUE_PREFIX + senderId + POSITION_SUFFIX);
    }

    static String sanitize(String name) {
        return OwnerOnlyFiles.sanitize(name);
    }

    /** Creates the directory and any missing parents below {@code root}'s parent, all owner-only. */
    static void createOwnerOnly(Path dir) {
        OwnerOnlyFiles.createMissing(dir);
    }

    /** Chronicle maps a queue file in blocks of this size, each overlapping the next by a quarter (16 MiB). */
    static final long BLOCK_BYTES = 64L << 20;

    static SingleChronicleQueue open(Path dir, int rollSeconds, boolean withListener,
                                     net.openhft.chronicle.queue.impl.StoreFileListener listener) {
        createOwnerOnly(dir);
        SingleChronicleQueueBuilder b = SingleChronicleQueueBuilder.builder(dir, WireType.BINARY_LIGHT)
            .rollCycle(new SecondsRollCycle(rollSeconds))
            .blockSize(BLOCK_BYTES)
            .checkInterrupts(false);
        if (withListener) {
            b.storeFileListener(listener);
        }
        try {
            return b.build();
        } catch (RuntimeException | LinkageError e) {
            throw new IllegalStateException("the mmap transport cannot map " + dir + ": " + whyNotMapped(e), e);
        }
    }

    /**
     * Why Chronicle Queue could not open a queue: the JVM flags it needs on Java 17 only when the JVM refused it access,
     * not when one of its classes failed to initialize because the JVM was shutting down (a worker Storm halts while it
     * starts), which the old message blamed on the flags too.
     */
    static String whyNotMapped(Throwable e) {
        boolean shuttingDown = false;
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            String text = String.valueOf(t);
            if (t instanceof IllegalAccessError || text.contains("IllegalAccess") || text.contains("InaccessibleObject")) {
                return "Chronicle Queue needs these JVM flags on Java 17 (worker.childopts or topology.worker.childopts,"
                    + " see MmapTransport.enable): " + MmapTransport.JVM_FLAGS;
            }
            shuttingDown |= text.contains("Shutdown in progress");
        }
        if (shuttingDown) {
            return "the JVM is shutting down";
        }
        if (e instanceof NoClassDefFoundError && String.valueOf(e.getMessage()).startsWith("Could not initialize class")) {
            return e.getMessage() + " (its first failure, earlier in this log, says why: the JVM flags Chronicle Queue"
                + " needs on Java 17, " + MmapTransport.JVM_FLAGS + ", or the JVM shutting down)";
        }
        return e.toString();
    }

    /**
     * Deletes the cycle files of {@code queueDir} older than {@code cycle}. Called by the only reader of the queue once
     * it has delivered and committed a batch of a later cycle, so no reader needs them any more; the writer is always at
     * or past the reader's cycle.
     *
     * @return how many files were deleted
     */
    static int deleteCyclesBefore(Path queueDir, RollCycle rollCycle, int cycle) {
        String limit = cycleFileName(rollCycle, cycle);
        int deleted = 0;
        try (DirectoryStream<Path> files = Files.newDirectoryStream(queueDir, "*" + SingleChronicleQueue.SUFFIX)) {
            for (Path f : files) {
                if (f.getFileName().toString().compareTo(limit) < 0 && Files.deleteIfExists(f)) {
                    deleted++;
                }
            }
        } catch (java.nio.file.NoSuchFileException gone) {
            return deleted;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot clean transport queue " + queueDir + ": " + e.getMessage(), e);
        }
        return deleted;
    }

    static String cycleFileName(RollCycle rollCycle, int cycle) {
        DateTimeFormatter f = DateTimeFormatter.ofPattern(rollCycle.format()).withZone(ZoneOffset.UTC);
        return f.format(Instant.ofEpochMilli((long) cycle * rollCycle.lengthInMillis())) + SingleChronicleQueue.SUFFIX;
    }

    /**
     * Deletes receiver directories left by workers that died without an orderly shutdown and never came back (their
     * topology was killed meanwhile, or they moved to another port): the receiver's process is gone and its heartbeat
     * is older than {@code staleMillis}. Empty topology directories go too. Run when a worker's transport starts.
     *
     * @return how many receiver directories were deleted
     */
    static int sweepStale(Path root, long staleMillis, long nowMillis) {
        return sweep(root, Set.of(), staleMillis, nowMillis);
    }

    /**
     * Deletes the receiver directories under {@code root} whose processes are gone and whose heartbeat is older than
     * {@code staleMillis}, except those of the topologies in {@code keep}, and then topology directories left empty.
     * Best effort: another worker, or the cluster's sweeper, may be deleting at the same time.
     */
    static int sweep(Path root, Set<String> keep, long staleMillis, long nowMillis) {
        int deleted = 0;
        try (DirectoryStream<Path> topologies = Files.newDirectoryStream(root)) {
            for (Path topology : topologies) {
                if (!Files.isDirectory(topology) || keep.contains(topology.getFileName().toString())) {
                    continue;
                }
                try (DirectoryStream<Path> receivers = Files.newDirectoryStream(topology, "w*")) {
                    for (Path receiver : receivers) {
                        if (isStale(receiver, staleMillis, nowMillis)) {
                            Doorbell.deleteLinkedSocket(receiver.resolve(DOORBELL));
                            deleteTree(receiver);
                            deleted++;
                        }
                    }
                } catch (IOException e) {
                    continue; // deleted meanwhile
                }
                deleteEmptyUpTo(topology, root);
            }
        } catch (IOException e) {
            return deleted;
        }
        return deleted;
    }

    private static boolean isStale(Path receiverDir, long staleMillis, long nowMillis) throws IOException {
        Path ctl = receiverDir.resolve(CONTROL);
        long lastSign;
        long pid = -1;
        // read, not mapped: a sweep that runs for days (the cluster's sweeper) would keep every file it looked at
        // mapped until its buffers were collected
        long[] header = readLiveness(ctl);
        if (header != null) {
            pid = header[0];
            lastSign = header[1];
        } else {
            lastSign = Files.getLastModifiedTime(receiverDir).toMillis();
        }
        if (lastSign == 0 && Files.exists(ctl)) {
            lastSign = Files.getLastModifiedTime(ctl).toMillis(); // closed in an orderly way but not removed
        }
        boolean alive = ProcessIdentity.alive(pid, 0);
        return !alive && nowMillis - lastSign > staleMillis;
    }

    /**
     * {pid, heartbeat} of a finished receiver control file ({@link ReceiverControl}'s header), read with one positional
     * read (no mapping), or null when there is none. A word torn by a concurrent write reads as another pid or
     * heartbeat for one sweep: the next one corrects it.
     */
    static long[] readLiveness(Path controlFile) throws IOException {
        ByteBuffer header = ByteBuffer.allocate(ReceiverControl.HEADER * Long.BYTES).order(ByteOrder.LITTLE_ENDIAN);
        try (FileChannel channel = FileChannel.open(controlFile, StandardOpenOption.READ)) {
            while (header.hasRemaining() && channel.read(header, header.position()) > 0) {
                // a short read of a file being created: read on
            }
        } catch (NoSuchFileException e) {
            return null;
        }
        if (header.hasRemaining() || header.getLong(0) != ReceiverControl.MAGIC) {
            return null;
        }
        return new long[] {header.getLong(ReceiverControl.PID * Long.BYTES),
            header.getLong(ReceiverControl.HEARTBEAT * Long.BYTES)};
    }

    static void deleteTree(Path dir) {
        OwnerOnlyFiles.deleteTree(dir);
    }

    /** Removes {@code dir} and then its parents up to (not including) {@code root} while they are empty. */
    static void deleteEmptyUpTo(Path dir, Path root) {
        OwnerOnlyFiles.deleteEmptyUpTo(dir, root);
    }

    /**
     * A roll cycle of a few seconds. Chronicle's own cycles are minutes or longer, too coarse to keep a transport's
     * files small (at 1 M tuples/s of 100 B, a five-minute cycle is 30 GB of tmpfs); deleting whole cycles behind the
     * reader keeps what the queue holds to about two cycles.
     */
    static final class SecondsRollCycle implements RollCycle {
        private final int lengthMillis;
        private final RollCycleArithmetic arithmetic = RollCycleArithmetic.of(4096, 16);

        SecondsRollCycle(int seconds) {
            this.lengthMillis = seconds * 1000;
        }

        @Override
        public String format() {
            return "yyyyMMdd-HHmmss'S'";
        }

        @Override
        public int lengthInMillis() {
            return lengthMillis;
        }

        @Override
        public int defaultIndexCount() {
            return arithmetic.indexCount();
        }

        @Override
        public int defaultIndexSpacing() {
            return arithmetic.indexSpacing();
        }

        @Override
        public long toIndex(int cycle, long sequenceNumber) {
            return arithmetic.toIndex(cycle, sequenceNumber);
        }

        @Override
        public long toSequenceNumber(long index) {
            return arithmetic.toSequenceNumber(index);
        }

        @Override
        public int toCycle(long index) {
            return arithmetic.toCycle(index);
        }

        @Override
        public long maxMessagesPerCycle() {
            return arithmetic.maxMessagesPerCycle();
        }
    }
}
