package io.meridian.collective;

import static io.meridian.collective.RegionDescriptor.HEADER_PROBE_BYTES;
import static io.meridian.collective.RegionDescriptor.LAYOUT_VERSION;
import static io.meridian.collective.RegionDescriptor.LONGS;
import static io.meridian.collective.RegionDescriptor.MAGIC;
import static io.meridian.collective.RegionDescriptor.MAX_FAILURE_BYTES;
import static io.meridian.collective.RegionDescriptor.MAX_JOB_ID_BYTES;
import static io.meridian.collective.RegionDescriptor.OFF_BLOCKS;
import static io.meridian.collective.RegionDescriptor.OFF_CAPACITY;
import static io.meridian.collective.RegionDescriptor.OFF_CREATOR_PID;
import static io.meridian.collective.RegionDescriptor.OFF_CREATOR_START;
import static io.meridian.collective.RegionDescriptor.OFF_DESCRIPTOR;
import static io.meridian.collective.RegionDescriptor.OFF_FAILURE;
import static io.meridian.collective.RegionDescriptor.OFF_GROUP;
import static io.meridian.collective.RegionDescriptor.OFF_GROUPS;
import static io.meridian.collective.RegionDescriptor.OFF_JOB;
import static io.meridian.collective.RegionDescriptor.OFF_JOB_LEN;
import static io.meridian.collective.RegionDescriptor.OFF_LEADER_MODE;
import static io.meridian.collective.RegionDescriptor.OFF_MAGIC;
import static io.meridian.collective.RegionDescriptor.OFF_MEMBERS;
import static io.meridian.collective.RegionDescriptor.OFF_REDUCE_CAPACITY;
import static io.meridian.collective.RegionDescriptor.OFF_STATE;
import static io.meridian.collective.RegionDescriptor.OFF_VERSION;
import static io.meridian.collective.RegionDescriptor.STATE_CLOSED;
import static io.meridian.collective.RegionDescriptor.STATE_FAILED;
import static io.meridian.collective.RegionDescriptor.STATE_READY;

import io.meridian.shm.Doorbell;
import io.meridian.shm.OwnerOnlyFiles;
import io.meridian.shm.ProcessIdentity;
import io.meridian.shm.ProportionalBackoff;
import io.meridian.shm.TmpfsSpace;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The files of the memory groups' regions ({@link RegionDescriptor}): where they live
 * ({@code root/meridian-<user>/<job>/group-<g>.region}), creating one (temporary file, header, atomic rename: an
 * attacher never sees half a header), attaching to one, and removing the regions of crashed runs. Holds no mapping: a
 * region's mapping belongs to the {@link SharedRegion} made over it.
 */
final class RegionFiles {
    private RegionFiles() {
    }

    /** {@code root/meridian-<user>/<jobId>/group-<nodeGroup>.region}. */
    static Path pathOf(Path root, String jobId, int nodeGroup) {
        validateJobId(jobId);
        return userDirectory(root).resolve(jobId).resolve("group-" + nodeGroup + ".region");
    }

    /** A leader daemon's doorbell beside its region: {@code group-<g>.bell} (a socket, or a link to one). */
    static Path bellOf(Path region) {
        String name = region.getFileName().toString();
        return region.resolveSibling(name.substring(0, name.length() - ".region".length()) + ".bell");
    }

    /** A doorbell whose region is gone or has no live owner: its daemon was killed before it closed it. */
    private static boolean staleBell(Path bell) throws IOException {
        String name = bell.getFileName().toString();
        return liveOwner(bell.resolveSibling(name.substring(0, name.length() - ".bell".length()) + ".region")) == null;
    }

    /** Deletes a stale doorbell: the socket its link points to (in the doorbells' short directory), then itself. */
    private static void deleteBell(Path bell) throws IOException {
        Doorbell.deleteLinkedSocket(bell);
        Files.deleteIfExists(bell);
    }

    static Path userDirectory(Path root) {
        return root.resolve("meridian-" + System.getProperty("user.name", "user").replaceAll("[^A-Za-z0-9._-]", "_"));
    }

    /** The regions under {@code root} whose creator is gone, of any job, as a new region's creation sweeps them. */
    static int sweepStale(Path root) {
        Path userDir = userDirectory(root);
        return Files.isDirectory(userDir) ? sweepStale(userDir, null) : 0;
    }

    static void validateJobId(String jobId) {
        JobIds.validate(jobId);
    }

    /**
     * Creates the region of a group (by its leader), replacing a stale one left by a crashed run. Refuses when a
     * live process still owns a region at that path. The file is written under a temporary name and renamed into
     * place complete and READY, so an attacher never sees a half-initialised header.
     */
    static SharedRegion create(Path path, String jobId, RegionShape shape) {
        validateJobId(jobId);
        try {
            ensureOwnerOnlyDirs(path.getParent());
            sweepStale(path.getParent().getParent(), path);
            Path existing = path;
            if (Files.exists(existing)) {
                String owner = liveOwner(existing);
                if (owner != null) {
                    throw new CollectiveException("region " + path + " is in use by " + owner
                            + "; another run of job " + jobId + " is active (stop it or use another job id)");
                }
                System.err.println("meridian collectives: replacing stale region " + path);
            }
            RegionDescriptor.Layout layout = new RegionDescriptor.Layout(shape);
            Path tmp = path.resolveSibling(path.getFileName() + ".tmp-" + ProcessIdentity.SELF_PID + "-"
                    + Long.toHexString(ThreadLocalRandom.current().nextLong()));
            MappedByteBuffer buffer;
            try (FileChannel ch = FileChannel.open(tmp, Set.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.READ,
                    StandardOpenOption.WRITE), OwnerOnlyFiles.FILE_ATTRIBUTE)) {
                // the pages every call writes (header, descriptor, slots), so that a full tmpfs fails here, named, and
                // not as a SIGBUS in a round; the data areas stay sparse: sized for the capacity (256 MB at 1,000,000
                // points), they hold only the pages the calls touch (RegionPagesTest)
                TmpfsSpace.reserve(ch, path, 0, layout.result[0]);
                buffer = ch.map(FileChannel.MapMode.READ_WRITE, 0, layout.size);
            } catch (IOException | RuntimeException e) {
                Files.deleteIfExists(tmp);
                throw e;
            }
            buffer.order(ByteOrder.nativeOrder());
            SharedRegion region = new SharedRegion(path, jobId, shape, buffer);
            region.initialise();
            try {
                Files.move(tmp, path, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } catch (AtomicMoveNotSupportedException e) {
                Files.deleteIfExists(tmp);
                throw new CollectiveException("region directory " + path.getParent()
                        + " does not support atomic rename");
            }
            return region;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create region " + path + ": " + e.getMessage(), e);
        }
    }

    /**
     * Attaches to the region a leader created at {@code path}. Waits (up to {@code timeoutNanos}) for it to appear or
     * for a stale one to be replaced; refuses immediately a region whose magic, layout version or job id differ.
     */
    static SharedRegion attach(Path path, String jobId, long timeoutNanos) {
        validateJobId(jobId);
        long deadline = System.nanoTime() + timeoutNanos;
        ProportionalBackoff backoff = new ProportionalBackoff(10_000_000);
        backoff.reset();
        String lastProblem = "it does not exist";
        while (true) {
            try {
                SharedRegion region = tryAttach(path, jobId);
                if (region != null) {
                    return region;
                }
                lastProblem = "it is stale (its creator is gone) and no leader has replaced it";
            } catch (NoSuchFileException e) {
                lastProblem = "it does not exist";
            } catch (IOException e) {
                throw new UncheckedIOException("cannot open region " + path + ": " + e.getMessage(), e);
            }
            if (System.nanoTime() - deadline > 0) {
                throw new CollectiveTimeoutException("no region to attach at " + path + " after "
                        + timeoutNanos / 1_000_000 + " ms: " + lastProblem + " (is the leader of job " + jobId
                        + " running?)");
            }
            backoff.idle();
        }
    }

    /** The region at {@code path}, or null while it is stale; throws {@link RegionMismatchException} on mismatch. */
    private static SharedRegion tryAttach(Path path, String jobId) throws IOException {
        try (FileChannel ch = FileChannel.open(path, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            long size = ch.size();
            if (size < HEADER_PROBE_BYTES) {
                throw new RegionMismatchException("region " + path + " is " + size + " bytes, too small for a header");
            }
            MappedByteBuffer probe = ch.map(FileChannel.MapMode.READ_ONLY, 0, HEADER_PROBE_BYTES);
            probe.order(ByteOrder.nativeOrder());
            long magic = (long) LONGS.getAcquire(probe, OFF_MAGIC);
            if (magic != MAGIC) {
                throw new RegionMismatchException("region " + path + " has magic 0x" + Long.toHexString(magic)
                        + ", not a Meridian collectives region (0x" + Long.toHexString(MAGIC) + ")");
            }
            int version = probe.getInt(OFF_VERSION);
            if (version != LAYOUT_VERSION) {
                throw new RegionMismatchException("region " + path + " has layout version " + version
                        + ", this build uses " + LAYOUT_VERSION);
            }
            String job = readJob(probe);
            if (!job.equals(jobId)) {
                throw new RegionMismatchException("region " + path + " belongs to job '" + job + "', not '" + jobId
                        + "'");
            }
            long creator = probe.getLong(OFF_CREATOR_PID);
            long state = (long) LONGS.getAcquire(probe, OFF_STATE);
            if (!ProcessIdentity.alive(creator, probe.getLong(OFF_CREATOR_START)) || state == STATE_CLOSED) {
                return null;
            }
            int groups = probe.getInt(OFF_GROUPS);
            int blocks = probe.getInt(OFF_BLOCKS);
            if (groups < 1 || groups > RegionShape.MAX_GROUPS || blocks < 1 || blocks > RegionShape.MAX_BLOCKS) {
                throw new RegionMismatchException("region " + path + " has a corrupt header (" + groups + " groups, "
                        + blocks + " blocks)");
            }
            int tableAt = OFF_DESCRIPTOR + 8 * blocks;
            MappedByteBuffer table = ch.map(FileChannel.MapMode.READ_ONLY, tableAt, 4L * (groups + 1));
            table.order(ByteOrder.nativeOrder());
            int[] first = new int[groups + 1];
            for (int g = 0; g <= groups; g++) {
                first[g] = table.getInt(4 * g);
            }
            RegionShape shape;
            try {
                shape = new RegionShape(probe.getInt(OFF_GROUP), groups, probe.getInt(OFF_MEMBERS), first,
                        probe.getInt(OFF_CAPACITY), probe.getInt(OFF_REDUCE_CAPACITY),
                        probe.getInt(OFF_LEADER_MODE) == 1);
            } catch (IllegalArgumentException e) {
                throw new RegionMismatchException("region " + path + " has a corrupt header: " + e.getMessage());
            }
            RegionDescriptor.Layout layout = new RegionDescriptor.Layout(shape);
            if (size != layout.size) {
                throw new RegionMismatchException("region " + path + " is " + size + " bytes, its header says "
                        + layout.size);
            }
            MappedByteBuffer buffer = ch.map(FileChannel.MapMode.READ_WRITE, 0, layout.size);
            buffer.order(ByteOrder.nativeOrder());
            return new SharedRegion(path, jobId, shape, buffer);
        }
    }

    private static String readJob(ByteBuffer header) {
        int len = header.getInt(OFF_JOB_LEN);
        if (len < 1 || len > MAX_JOB_ID_BYTES) {
            return "<corrupt job id length " + len + ">";
        }
        byte[] job = new byte[len];
        header.get(OFF_JOB, job);
        return new String(job, StandardCharsets.UTF_8);
    }

    /**
     * Removes the regions of job {@code jobId} (every group) under {@code root} that no live process owns, with their
     * directory once it is empty. Returns how many region files it removed.
     */
    static int removeStale(Path root, String jobId) {
        Path jobDir = pathOf(root, jobId, 0).getParent();
        int removed = 0;
        if (!Files.isDirectory(jobDir)) {
            return 0;
        }
        try (var files = Files.newDirectoryStream(jobDir)) {
            for (Path f : files) {
                String name = f.getFileName().toString();
                if ((name.endsWith(".region") && liveOwner(f) == null) || name.contains(".tmp-")) {
                    if (Files.deleteIfExists(f)) {
                        removed++;
                    }
                } else if (name.endsWith(".bell") && staleBell(f)) {
                    deleteBell(f);
                }
            }
            try (var left = Files.list(jobDir)) {
                if (left.findAny().isEmpty()) {
                    Files.deleteIfExists(jobDir);
                }
            }
        } catch (IOException e) {
            // best effort: a region that stays is found stale by the next sweep
        }
        return removed;
    }

    /** "pid N" when a live process owns the (complete, valid) region at {@code path}, else null (stale or foreign). */
    private static String liveOwner(Path path) throws IOException {
        try (FileChannel ch = FileChannel.open(path, StandardOpenOption.READ)) {
            if (ch.size() < HEADER_PROBE_BYTES) {
                return null;
            }
            MappedByteBuffer probe = ch.map(FileChannel.MapMode.READ_ONLY, 0, HEADER_PROBE_BYTES);
            probe.order(ByteOrder.nativeOrder());
            if ((long) LONGS.getAcquire(probe, OFF_MAGIC) != MAGIC) {
                return null;
            }
            long pid = probe.getLong(OFF_CREATOR_PID);
            long state = (long) LONGS.getAcquire(probe, OFF_STATE);
            if (state == STATE_READY && ProcessIdentity.alive(pid, probe.getLong(OFF_CREATOR_START))) {
                return "pid " + pid;
            }
            return null;
        } catch (NoSuchFileException e) {
            return null;
        }
    }

    /**
     * Removes the regions of crashed runs under the user's directory (any job): regions whose creator is gone (or
     * that are not valid regions), temporary files older than a minute, and job directories empty for a minute.
     */
    private static int sweepStale(Path userDir, Path own) {
        int removed = 0;
        try (var jobs = Files.newDirectoryStream(userDir)) {
            for (Path jobDir : jobs) {
                if (!Files.isDirectory(jobDir)) {
                    continue;
                }
                boolean empty = true;
                try (var files = Files.newDirectoryStream(jobDir)) {
                    for (Path f : files) {
                        String name = f.getFileName().toString();
                        if (name.endsWith(".bell")) {
                            if (staleBell(f)) {
                                deleteBell(f);
                            } else {
                                empty = false;
                            }
                            continue;
                        }
                        boolean stale = name.contains(".tmp-")
                                ? Files.getLastModifiedTime(f).toMillis() < System.currentTimeMillis() - 60_000
                                : name.endsWith(".region") && liveOwner(f) == null;
                        if (stale) {
                            if (Files.deleteIfExists(f) && name.endsWith(".region")) {
                                removed++;
                            }
                            if (!f.equals(own)) {
                                System.err.println("meridian collectives: removed stale region " + f);
                            }
                        } else {
                            empty = false;
                        }
                    }
                }
                // a directory another leader has just made is empty for a moment: only old ones go
                if (empty && (own == null || !jobDir.equals(own.getParent()))
                        && Files.getLastModifiedTime(jobDir).toMillis() < System.currentTimeMillis() - 60_000) {
                    Files.deleteIfExists(jobDir);
                }
            }
        } catch (IOException | RuntimeException e) {
            // best effort: another process may be sweeping or creating at the same time
        }
        return removed;
    }

    private static void ensureOwnerOnlyDirs(Path jobDir) throws IOException {
        Path userDir = jobDir.getParent();
        Files.createDirectories(userDir.getParent());
        OwnerOnlyFiles.ensureOwned(userDir);
        OwnerOnlyFiles.ensureOwned(jobDir);
    }

    /**
     * Failure messages of the regions beside {@code path} (the other groups of its job on this host; "" if none): when
     * a group's leader stopped or vanished because another group failed, that is the reason worth reporting. Slow path.
     */
    static String otherGroupsFailures(Path path) {
        StringBuilder out = new StringBuilder();
        try (var files = Files.newDirectoryStream(path.getParent(), "group-*.region")) {
            for (Path f : files) {
                if (f.equals(path)) {
                    continue;
                }
                try (FileChannel ch = FileChannel.open(f, StandardOpenOption.READ)) {
                    if (ch.size() < HEADER_PROBE_BYTES) {
                        continue;
                    }
                    MappedByteBuffer probe = ch.map(FileChannel.MapMode.READ_ONLY, 0, HEADER_PROBE_BYTES);
                    probe.order(ByteOrder.nativeOrder());
                    if ((long) LONGS.getAcquire(probe, OFF_MAGIC) == MAGIC
                            && (long) LONGS.getAcquire(probe, OFF_STATE) == STATE_FAILED) {
                        int len = Math.min(Math.max(probe.getInt(OFF_FAILURE), 0), MAX_FAILURE_BYTES);
                        byte[] bytes = new byte[len];
                        probe.get(OFF_FAILURE + 4, bytes);
                        out.append("; another group failed: ").append(new String(bytes, StandardCharsets.UTF_8));
                    }
                }
            }
        } catch (IOException | RuntimeException e) {
            // best effort
        }
        return out.toString();
    }


    /** Removes the region file at {@code path} (mappings stay valid) and its job directory when it is empty. */
    static void unlink(Path path) {
        try {
            Files.deleteIfExists(path);
            Path dir = path.getParent();
            try (var entries = Files.list(dir)) {
                if (entries.findAny().isEmpty()) {
                    Files.deleteIfExists(dir);
                }
            }
        } catch (IOException e) {
            // best effort: a left-over file is detected as stale by the next run
        }
    }

}
