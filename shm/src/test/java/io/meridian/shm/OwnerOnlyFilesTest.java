package io.meridian.shm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.nio.file.attribute.UserPrincipal;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The per-user working-data root: made owner-only, and refused when someone else made or planted it first. */
class OwnerOnlyFilesTest {
    @TempDir
    Path dir;

    @Test
    void createsTheRootAndEveryDirectoryBelowItOwnerOnly() throws IOException {
        Path root = dir.resolve("meridian-me");
        Path stores = OwnerOnlyFiles.createWorkingDirectory(root.resolve("local/rowstore"), root);
        assertEquals(root.resolve("local/rowstore"), stores);
        for (Path p : new Path[] {root, root.resolve("local"), stores}) {
            assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(p)), p.toString());
        }
        // again: nothing to do, nothing refused
        assertEquals(stores, OwnerOnlyFiles.createWorkingDirectory(stores, root));
    }

    @Test
    void aWiderRootOfThisUsersIsTightened() throws IOException {
        Path root = Files.createDirectory(dir.resolve("meridian-me"));
        Files.setPosixFilePermissions(root, PosixFilePermissions.fromString("rwxrwxrwx"));
        OwnerOnlyFiles.createWorkingDirectory(root.resolve("map"), root);
        assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(root)));
    }

    @Test
    void aSymbolicLinkPlantedAsTheRootIsRefusedAndNotFollowed() throws IOException {
        Path elsewhere = Files.createDirectory(dir.resolve("attackers"));
        Path root = Files.createSymbolicLink(dir.resolve("meridian-me"), elsewhere);
        IOException e = assertThrows(IOException.class,
                () -> OwnerOnlyFiles.createWorkingDirectory(root.resolve("rowstore"), root));
        assertTrue(e.getMessage().contains(root + " is a symbolic link (to " + elsewhere + ")"), e.getMessage());
        assertTrue(e.getMessage().contains("refusing to follow it"), e.getMessage());
        try (var listing = Files.list(elsewhere)) {
            assertEquals(0, listing.count(), "nothing was made through the link");
        }
    }

    @Test
    void aFileWhereTheRootShouldBeIsRefused() throws IOException {
        Path root = Files.writeString(dir.resolve("meridian-me"), "x");
        IOException e = assertThrows(IOException.class,
                () -> OwnerOnlyFiles.createWorkingDirectory(root.resolve("rowstore"), root));
        assertEquals(root + " exists and is not a directory", e.getMessage());
    }

    @Test
    void aRootOfAnotherUsersIsRefused() throws IOException {
        Path root = Files.createDirectory(dir.resolve("meridian-me"));
        UserPrincipal nobody;
        try {
            nobody = root.getFileSystem().getUserPrincipalLookupService().lookupPrincipalByName("nobody");
            Files.setOwner(root, nobody);
        } catch (IOException | UnsupportedOperationException notRoot) {
            return; // only root can give a directory away; the check itself is the same either way
        }
        IOException e = assertThrows(IOException.class,
                () -> OwnerOnlyFiles.createWorkingDirectory(root.resolve("rowstore"), root));
        assertTrue(e.getMessage().startsWith(root + " belongs to nobody, not to "), e.getMessage());
        assertFalse(Files.exists(root.resolve("rowstore"), LinkOption.NOFOLLOW_LINKS));
    }

    @Test
    void aDirectoryOutsideTheRootIsOnlyCreated() throws IOException {
        Path own = dir.resolve("my/own/choice");
        assertEquals(own, OwnerOnlyFiles.createWorkingDirectory(own, dir.resolve("meridian-me")));
        assertTrue(Files.isDirectory(own));
        assertFalse(Files.exists(dir.resolve("meridian-me")));
        Path file = Files.writeString(dir.resolve("plain"), "x");
        IOException e = assertThrows(IOException.class,
                () -> OwnerOnlyFiles.createWorkingDirectory(file.resolve("sub"), dir.resolve("meridian-me")));
        assertTrue(e.getMessage().startsWith("cannot create directory " + file), e.getMessage());
    }
}
