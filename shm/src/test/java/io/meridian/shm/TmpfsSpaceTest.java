package io.meridian.shm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A full tmpfs (a real one, 1 MB, mounted by the test: run as root): a reservation is refused with an error naming the
 * mount, the bytes, the file, the host and the free bytes; a store into a mapped page the tmpfs cannot back is the
 * JVM's InternalError, which {@link TmpfsSpace#isMappedWriteFault} recognises; a shared file's creation fails named.
 */
class TmpfsSpaceTest {
    private static final Set<StandardOpenOption> CREATE = Set.of(StandardOpenOption.CREATE_NEW,
            StandardOpenOption.READ, StandardOpenOption.WRITE);

    @TempDir
    Path dir;
    private Path mount;

    @BeforeEach
    void mountSmallTmpfs() throws Exception {
        mount = dir.resolve("tmpfs");
        Files.createDirectories(mount);
        run("mount", "-t", "tmpfs", "-o", "size=1m,mode=0700", "meridian-test-shm", mount.toString());
    }

    @AfterEach
    void unmount() throws Exception {
        run("umount", "-l", mount.toString());
    }

    @Test
    void aReservationThatFitsIsWritableThroughItsMappingAndOneThatDoesNotIsRefusedNamed() throws IOException {
        Path fits = mount.resolve("fits");
        try (FileChannel ch = FileChannel.open(fits, CREATE)) {
            TmpfsSpace.reserve(ch, fits, 0, 512 << 10);
            MappedByteBuffer b = ch.map(FileChannel.MapMode.READ_WRITE, 0, 512 << 10);
            for (int p = 0; p < b.capacity(); p += 4096) {
                b.putLong(p, p); // every page backed: no fault
            }
        }
        Path big = mount.resolve("big");
        ShmFullException e;
        try (FileChannel ch = FileChannel.open(big, CREATE)) {
            e = assertThrows(ShmFullException.class, () -> TmpfsSpace.reserve(ch, big, 0, 2 << 20));
        }
        assertEquals(mount + " full: cannot reserve 2097152 bytes for " + big + " (host " + TmpfsSpace.host()
                + "): free " + e.freeBytes() + " bytes", e.getMessage());
        // read after the refused reservation gave its pages back: what the 2 MB did not fit into
        assertTrue(e.freeBytes() >= 0 && e.freeBytes() <= (512 << 10), "free bytes as the file system said: "
                + e.freeBytes());
        assertEquals(big, e.path());
        assertEquals(0, Files.size(big), "a refused reservation gives back what it had written");
        assertTrue(TmpfsSpace.freeBytes(mount) > (400 << 10), "free again: " + TmpfsSpace.freeBytes(mount));
    }

    @Test
    void aStoreIntoAPageTheTmpfsCannotBackIsAFaultRecognisedAndNamed() throws IOException {
        Path sparse = mount.resolve("sparse");
        Throwable fault = null;
        try (FileChannel ch = FileChannel.open(sparse, CREATE)) {
            MappedByteBuffer b = ch.map(FileChannel.MapMode.READ_WRITE, 0, 4 << 20); // 4 MB of holes on a 1 MB tmpfs
            try {
                for (int p = 0; p < b.capacity(); p += 4096) {
                    b.putLong(p, p);
                }
            } catch (InternalError e) {
                fault = e;
            }
        }
        assertTrue(fault != null && TmpfsSpace.isMappedWriteFault(fault), "the SIGBUS arrives as the JVM's"
                + " InternalError: " + fault);
        ShmFullException named = TmpfsSpace.fault(sparse, fault);
        assertTrue(named.getMessage().startsWith(mount + " full: a write into " + sparse + " faulted"),
                named.getMessage());
        assertTrue(TmpfsSpace.isNoSpace(new UncheckedIOException(named)));
    }

    @Test
    void aSharedFileOnAFullTmpfsFailsAtCreationNamed() throws IOException {
        Path filler = mount.resolve("filler");
        try (FileChannel ch = FileChannel.open(filler, CREATE)) {
            TmpfsSpace.reserve(ch, filler, 0, 1000 << 10);
        }
        Path control = mount.resolve("receiver.ctl");
        UncheckedIOException e = assertThrows(UncheckedIOException.class, () -> SharedLongs.create(control, 16384));
        ShmFullException full = ShmFullException.in(e);
        assertTrue(full != null && e.getMessage().contains(mount + " full: cannot reserve"), e.getMessage());
    }

    /**
     * What a reservation costs against the sparse mapping it replaces and the page-touching loop the payload ring
     * used: creation time of 64 MiB on /dev/shm (the pages are allocated either way once the ring has wrapped).
     */
    @Test
    void reservationCost() throws IOException {
        Path shm = Files.isWritable(Path.of("/dev/shm")) ? Path.of("/dev/shm") : dir;
        int size = 64 << 20;
        long touchNanos = Long.MAX_VALUE;
        long reserveNanos = Long.MAX_VALUE;
        for (int round = 0; round < 3; round++) {
            Path touched = shm.resolve("meridian-reserve-test-" + ProcessHandle.current().pid() + "-t");
            long t0 = System.nanoTime();
            try (FileChannel ch = FileChannel.open(touched, CREATE)) {
                MappedByteBuffer b = ch.map(FileChannel.MapMode.READ_WRITE, 0, size);
                for (int p = 0; p < size; p += 4096) {
                    b.put(p, b.get(p));
                }
            }
            touchNanos = Math.min(touchNanos, System.nanoTime() - t0);
            Files.delete(touched);
            Path reserved = shm.resolve("meridian-reserve-test-" + ProcessHandle.current().pid() + "-r");
            t0 = System.nanoTime();
            try (FileChannel ch = FileChannel.open(reserved, CREATE)) {
                TmpfsSpace.reserve(ch, reserved, 0, size);
                ch.map(FileChannel.MapMode.READ_WRITE, 0, size);
            }
            reserveNanos = Math.min(reserveNanos, System.nanoTime() - t0);
            Files.delete(reserved);
        }
        System.out.printf(Locale.ROOT, "64 MiB on %s: pages touched through the mapping %.1f ms, reserved through the"
                + " channel %.1f ms (best of 3)%n", shm, touchNanos / 1e6, reserveNanos / 1e6);
    }

    private static void run(String... command) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        if (!p.waitFor(30, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new IOException(String.join(" ", command) + " failed (the test mounts a small tmpfs: run it as"
                    + " root): " + out);
        }
    }
}
