package io.meridian.shm;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
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

    /**
     * The user's own directory {@code <prefix>-<user>} on tmpfs: under {@code /dev/shm} where that is a writable
     * directory, else under {@code java.io.tmpdir}. Not created here.
     */
    public static Path perUserDirectory(String prefix) {
        Path shm = Path.of("/dev/shm");
        Path base = Files.isDirectory(shm) && Files.isWritable(shm) ? shm : Path.of(System.getProperty("java.io.tmpdir"));
        return base.resolve(prefix + "-" + sanitize(System.getProperty("user.name", "user")));
    }

    /** Creates {@code dir} and its missing parents, each owner-only; existing directories are left as they are. */
    public static void createMissing(Path dir) {
        try {
            if (Files.isDirectory(dir)) {
                return;
            }
            if (Files.exists(dir, LinkOption.NOFOLLOW_LINKS)) {
                if (Files.isDirectory(dir)) {
                    return; // made by another thread or process between the two looks
                }
                throw new FileAlreadyExistsException(dir.toString(), null, "a file of that name exists");
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
            throw new UncheckedIOException("cannot create directory " + dir + ": " + reason(e), e);
        }
    }

    /** What went wrong, without the path a {@link FileSystemException}'s message repeats. */
    private static String reason(IOException e) {
        if (e instanceof AccessDeniedException) {
            return "permission denied";
        }
        if (e instanceof NoSuchFileException) {
            return "no such file or directory";
        }
        if (e instanceof FileSystemException f && f.getReason() != null) {
            return f.getReason();
        }
        return e.getMessage();
    }

    /**
     * Makes sure {@code dir} exists, is a real directory (not a link planted by someone else), belongs to this user and
     * is {@code rwx------}: created so if missing, tightened if an older one is wider.
     */
    public static void ensureOwned(Path dir) throws IOException {
        try {
            Files.createDirectory(dir, DIRECTORY_ATTRIBUTE);
        } catch (FileAlreadyExistsException e) {
            if (Files.isSymbolicLink(dir)) {
                throw new IOException(dir + " is a symbolic link (to " + Files.readSymbolicLink(dir)
                        + "), not a directory of this user's: refusing to follow it");
            }
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

    /**
     * Creates the working directory {@code dir} (row stores, snapshots, a run's output) and its missing parents, each
     * owner-only. When {@code dir} lies under {@code privateRoot}, a per-user directory in a shared place such as
     * {@code /tmp} that anyone could have made first, the root is {@link #ensureOwned checked} before anything is made
     * below it: a real directory of this user's, never a symbolic link, {@code rwx------}. Nobody else can then put
     * anything below it. A directory outside the root is the user's own choice and only created.
     *
     * @throws IOException naming the directory and the problem
     */
    public static Path createWorkingDirectory(Path dir, Path privateRoot) throws IOException {
        Path d = dir.toAbsolutePath().normalize();
        Path root = privateRoot.toAbsolutePath().normalize();
        if (d.startsWith(root)) {
            ensureOwned(root);
        }
        try {
            createMissing(d);
        } catch (UncheckedIOException e) {
            throw new IOException(e.getMessage(), e.getCause());
        }
        if (!Files.isDirectory(d)) {
            throw new IOException(d + " exists and is not a directory");
        }
        if (!Files.isWritable(d)) {
            throw new IOException("directory " + d + " is not writable");
        }
        return d;
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
