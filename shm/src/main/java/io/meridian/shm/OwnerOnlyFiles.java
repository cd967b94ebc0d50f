package io.meridian.shm;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Comparator;
import java.util.Set;
import java.util.stream.Stream;

/**
 * Directories and files on tmpfs that only their owner may read: the transport's queues and the collectives' regions
 * hold a topology's data, so every directory either creates is {@code rwx------} and every file {@code rw-------}.
 */
public final class OwnerOnlyFiles {
    public static final Set<PosixFilePermission> DIRECTORY = PosixFilePermissions.fromString("rwx------");
    public static final Set<PosixFilePermission> FILE = PosixFilePermissions.fromString("rw-------");
    public static final FileAttribute<Set<PosixFilePermission>> DIRECTORY_ATTRIBUTE =
            PosixFilePermissions.asFileAttribute(DIRECTORY);
    public static final FileAttribute<Set<PosixFilePermission>> FILE_ATTRIBUTE = PosixFilePermissions.asFileAttribute(FILE);

    private OwnerOnlyFiles() {
    }

    /** A name safe as one path element: anything but letters, digits, '.', '_' and '-' becomes '_'. */
    public static String sanitize(String name) {
        return name.replaceAll("[^A-Za-z0-9._-]", "_");
    }

    /** Creates {@code dir} and its missing parents, each owner-only; existing directories are left as they are. */
    public static void createMissing(Path dir) {
        try {
            if (Files.isDirectory(dir)) {
                return;
            }
            Path parent = dir.getParent();
            if (parent != null && !Files.isDirectory(parent)) {
                createMissing(parent);
            }
            try {
                Files.createDirectory(dir, DIRECTORY_ATTRIBUTE);
            } catch (FileAlreadyExistsException raced) {
                // created by another process at the same moment
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create directory " + dir + ": " + e.getMessage(), e);
        }
    }

    /**
     * Makes sure {@code dir} exists, is a real directory (not a link planted by someone else), belongs to this user and
     * is {@code rwx------}: created so if missing, tightened if an older one is wider.
     */
    public static void ensureOwned(Path dir) throws IOException {
        try {
            Files.createDirectory(dir, DIRECTORY_ATTRIBUTE);
        } catch (FileAlreadyExistsException e) {
            if (!Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) {
                throw new IOException(dir + " exists and is not a directory");
            }
        }
        String user = System.getProperty("user.name");
        String owner = Files.getOwner(dir, LinkOption.NOFOLLOW_LINKS).getName();
        if (!owner.equals(user)) {
            throw new IOException(dir + " belongs to " + owner + ", not to " + user + ": refusing to use it");
        }
        // createDirectory's mode is filtered by the umask, and an old directory may be wider
        if (!Files.getPosixFilePermissions(dir, LinkOption.NOFOLLOW_LINKS).equals(DIRECTORY)) {
            Files.setPosixFilePermissions(dir, DIRECTORY);
        }
    }

    /** Deletes {@code dir} and everything below it; best effort (a peer deleting the same files at once is fine). */
    public static void deleteTree(Path dir) {
        if (!Files.exists(dir, LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        try (Stream<Path> walk = Files.walk(dir)) {
            walk.sorted(Comparator.reverseOrder()).map(Path::toFile).forEach(File::delete);
        } catch (IOException | UncheckedIOException e) {
            // best effort
        }
    }

    /** Removes {@code dir} and then its parents up to (not including) {@code root} while they are empty. */
    public static void deleteEmptyUpTo(Path dir, Path root) {
        Path d = dir;
        while (d != null && !d.equals(root) && d.startsWith(root)) {
            try {
                Files.deleteIfExists(d);
            } catch (IOException notEmpty) {
                return;
            }
            d = d.getParent();
        }
    }
}
