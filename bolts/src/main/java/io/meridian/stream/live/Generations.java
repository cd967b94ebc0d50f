package io.meridian.stream.live;

import io.meridian.collective.TwoLevelCollectives;
import io.meridian.stream.WorkingDirectories;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/**
 * Which incarnation of the live map's group is current. The group's region is named after the topology and a
 * generation number; when a collective call fails, task 0 (the survivor, or its restarted successor) starts the next
 * generation and the other tasks follow it, so a re-formed group never mixes with the region of the failed one. The
 * number is kept in a file beside the map's snapshots ({@code .generation-<job>}), replaced atomically.
 */
final class Generations {
    private static final long POLL_NANOS = 20_000_000L;
    private final Path file;
    private final String job;

    Generations(Path snapshots, String job) {
        this.job = job;
        this.file = snapshots.resolve(".generation-" + job);
        WorkingDirectories.create(snapshots, "map.snapshotDirectory");
    }

    /** The region name of generation {@code g}: the job id with the generation, at most 64 characters. */
    String jobId(long g) {
        String suffix = "-g" + g;
        String base = job.length() + suffix.length() > 64 ? job.substring(job.length() - (64 - suffix.length())) : job;
        return base + suffix;
    }

    /**
     * The region name of generation {@code g}'s clustering group (DA-PWC's exchanges): the rounds' name with
     * {@code -pwc} after it, at most 64 characters, never a name {@link #newestRegion} takes for a generation of the
     * rounds' group, and its leader daemons' files ({@code NAME.log}, {@code NAME.pid}) do not end as the rounds' do.
     */
    String clusterJobId(long g) {
        String suffix = "-g" + g + "-pwc";
        String base = job.length() + suffix.length() > 64 ? job.substring(job.length() - (64 - suffix.length())) : job;
        return base + suffix;
    }

    /**
     * Task 0: removes the regions of the generations before {@code current} that no live process owns (a killed
     * leader's; an orderly leader removes its own), the clustering groups' too.
     */
    void removeStaleRegions(Path regionRoot, long current) {
        for (long g = 0; g < current; g++) {
            TwoLevelCollectives.removeStaleRegions(regionRoot, jobId(g));
            TwoLevelCollectives.removeStaleRegions(regionRoot, clusterJobId(g));
        }
    }

    /** The current generation, or -1 when none was started. */
    long current() {
        try {
            return Long.parseLong(Files.readString(file, StandardCharsets.UTF_8).trim());
        } catch (NoSuchFileException e) {
            return -1;
        } catch (IOException | NumberFormatException e) {
            return -1;
        }
    }

    /** Task 0: starts the next generation and returns it. */
    long next() {
        long g = current() + 1;
        Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
        try {
            Files.writeString(tmp, Long.toString(g), StandardCharsets.UTF_8);
            Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (AtomicMoveNotSupportedException e) {
            throw new UncheckedIOException(new IOException(file.getParent() + " does not support atomic rename", e));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + file + ": " + e.getMessage(), e);
        }
        return g;
    }

    /**
     * The other tasks: waits until a generation after {@code failed} (any, with -1) has a region on this host and
     * returns the newest such, or -1 once {@code stop} says so. The regions, not the generation file, because a task
     * on another host cannot read task 0's file: the group's region on each host is created for the generation (by
     * task 0 itself, or by the host's leader daemon), so its name tells the generation on every host. Waits as long as
     * it takes: Storm may take a while to restart a dead task 0.
     */
    long awaitAfter(long failed, Path regionRoot, BooleanSupplier stop) {
        while (!stop.getAsBoolean()) {
            long g = newestRegion(regionRoot);
            if (g > failed) {
                return g;
            }
            LockSupport.parkNanos(POLL_NANOS);
        }
        return -1;
    }

    /** The newest generation of this job with a region of node group 0 under {@code regionRoot}, or -1. */
    long newestRegion(Path regionRoot) {
        Path jobs = TwoLevelCollectives.regionPath(regionRoot, jobId(0), 0).getParent().getParent();
        long newest = -1;
        try (var dirs = Files.newDirectoryStream(jobs)) {
            for (Path d : dirs) {
                String name = d.getFileName().toString();
                int dash = name.lastIndexOf("-g");
                String digits = dash < 0 ? "" : name.substring(dash + 2);
                if (digits.matches("[0-9]{1,18}")) {
                    long g = Long.parseLong(digits);
                    // a long job id is cut to fit the generation's suffix: the name must be exactly the generation's
                    if (g > newest && jobId(g).equals(name)
                            && Files.exists(TwoLevelCollectives.regionPath(regionRoot, name, 0))) {
                        newest = g;
                    }
                }
            }
        } catch (NoSuchFileException e) {
            return -1;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot list " + jobs + ": " + e.getMessage(), e);
        }
        return newest;
    }
}
