package io.meridian.stream;

import io.meridian.config.MeridianConfig;
import io.meridian.shm.OwnerOnlyFiles;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;

/**
 * The directories the topology writes ({@code ingest.rowStore.directory}, {@code ingest.local.output},
 * {@code map.snapshotDirectory}), made before anything is written in them: owner-only, the per-user data root
 * ({@link MeridianConfig#dataRoot()}) checked first, so that nothing is written through a link someone else planted in
 * {@code /tmp} ({@link OwnerOnlyFiles#createWorkingDirectory}).
 */
public final class WorkingDirectories {
    private WorkingDirectories() {
    }

    /**
     * Creates {@code dir}, which configuration key {@code key} names; fails with the key, the directory and the
     * problem in the message.
     */
    public static Path create(Path dir, String key) {
        try {
            return OwnerOnlyFiles.createWorkingDirectory(dir, MeridianConfig.dataRoot());
        } catch (IOException e) {
            throw new UncheckedIOException(key + ": " + e.getMessage(), e);
        }
    }
}
