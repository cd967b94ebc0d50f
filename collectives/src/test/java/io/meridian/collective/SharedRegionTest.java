package io.meridian.collective;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Region files: owner-only creation, refusal of regions that do not match, replacement of stale ones. */
class SharedRegionTest {
    private static final RegionShape SHAPE = new RegionShape(0, 1, 2, new int[] {0, 2}, 1000, 100, true);

    @TempDir
    Path root;

    @Test
    void createdOwnerOnlyAndAttachable() throws IOException {
        Path path = RegionFiles.pathOf(root, "job-1", 0);
        SharedRegion created = RegionFiles.create(path, "job-1", SHAPE);
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(path)));
        assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(path.getParent())));
        assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(path.getParent().getParent())));
        SharedRegion attached = RegionFiles.attach(path, "job-1", 1_000_000_000L);
        assertEquals(2, attached.shape.members());
        assertEquals(1000, attached.shape.capacity());
        created.result(1).put(7, 42.5);
        assertEquals(42.5, attached.result(1).get(7));
        created.unlink();
        assertFalse(Files.exists(path));
    }

    @Test
    void refusesAnotherJobsRegion() throws IOException {
        Path path = RegionFiles.pathOf(root, "job-a", 0);
        RegionFiles.create(path, "job-a", SHAPE);
        Path other = RegionFiles.pathOf(root, "job-b", 0);
        Files.createDirectories(other.getParent());
        Files.copy(path, other);
        RegionMismatchException e = assertThrows(RegionMismatchException.class,
                () -> RegionFiles.attach(other, "job-b", 1_000_000_000L));
        assertTrue(e.getMessage().contains("belongs to job 'job-a', not 'job-b'"), e.getMessage());
    }

    @Test
    void refusesWrongMagicAndLayoutVersion() throws IOException {
        Path path = RegionFiles.pathOf(root, "job-v", 0);
        RegionFiles.create(path, "job-v", SHAPE);
        patchInt(path, 8, RegionDescriptor.LAYOUT_VERSION + 1);
        RegionMismatchException version = assertThrows(RegionMismatchException.class,
                () -> RegionFiles.attach(path, "job-v", 1_000_000_000L));
        assertTrue(version.getMessage().contains("layout version " + (RegionDescriptor.LAYOUT_VERSION + 1)),
                version.getMessage());

        Path garbage = RegionFiles.pathOf(root, "job-g", 0);
        Files.createDirectories(garbage.getParent());
        Files.write(garbage, new byte[8192]);
        RegionMismatchException magic = assertThrows(RegionMismatchException.class,
                () -> RegionFiles.attach(garbage, "job-g", 1_000_000_000L));
        assertTrue(magic.getMessage().contains("not a Meridian collectives region"), magic.getMessage());
    }

    @Test
    void refusesALiveOwnersRegionAndReplacesAStaleOne() throws Exception {
        Path path = RegionFiles.pathOf(root, "job-s", 0);
        RegionFiles.create(path, "job-s", SHAPE);
        CollectiveException live = assertThrows(CollectiveException.class,
                () -> RegionFiles.create(path, "job-s", SHAPE));
        assertTrue(live.getMessage().contains("is in use by pid " + ProcessHandle.current().pid()), live.getMessage());

        long deadPid = deadPid();
        patchLong(path, 16, deadPid); // creator pid: as if the run that made it crashed
        CollectiveTimeoutException stale = assertThrows(CollectiveTimeoutException.class,
                () -> RegionFiles.attach(path, "job-s", 300_000_000L));
        assertTrue(stale.getMessage().contains("stale"), stale.getMessage());

        SharedRegion fresh = RegionFiles.create(path, "job-s", SHAPE);
        SharedRegion attached = RegionFiles.attach(path, "job-s", 1_000_000_000L);
        fresh.result(0).put(0, 3.0);
        assertEquals(3.0, attached.result(0).get(0));
    }

    @Test
    void aSweepRemovesTheRegionsOfGoneCreatorsOfAnyJobAndKeepsLiveOnes() throws Exception {
        assertEquals(0, TwoLevelCollectives.sweepStaleRegions(root), "no user directory yet: nothing to do");
        Path live = RegionFiles.pathOf(root, "job-live", 0);
        RegionFiles.create(live, "job-live", SHAPE);
        Path dead = RegionFiles.pathOf(root, "job-gone-g2", 1);
        RegionFiles.create(dead, "job-gone-g2", SHAPE);
        patchLong(dead, 16, deadPid()); // its leader daemon died after the next generation's region was made
        assertEquals(1, TwoLevelCollectives.sweepStaleRegions(root));
        assertFalse(Files.exists(dead));
        assertTrue(Files.exists(live), "a live creator's region stays");
        assertEquals(0, TwoLevelCollectives.sweepStaleRegions(root), "nothing left to remove");
    }

    @Test
    void theDoorbellOfAKilledLeaderDaemonGoesWithItsRegionAndALiveOnesStays() throws Exception {
        Path live = RegionFiles.pathOf(root, "job-bell-live", 0);
        SharedRegion liveRegion = RegionFiles.create(live, "job-bell-live", SHAPE);
        Path dead = RegionFiles.pathOf(root, "job-bell-gone", 0);
        SharedRegion deadRegion = RegionFiles.create(dead, "job-bell-gone", SHAPE);
        try (io.meridian.shm.Doorbell liveBell = io.meridian.shm.Doorbell.bind(liveRegion.bellPath())) {
            // a daemon killed with -9: its socket file stays beside its region, nobody listens
            try (java.nio.channels.ServerSocketChannel killed =
                         java.nio.channels.ServerSocketChannel.open(java.net.StandardProtocolFamily.UNIX)) {
                killed.bind(java.net.UnixDomainSocketAddress.of(deadRegion.bellPath()));
            }
            assertTrue(Files.exists(deadRegion.bellPath(), java.nio.file.LinkOption.NOFOLLOW_LINKS));
            patchLong(dead, 16, deadPid());
            TwoLevelCollectives.sweepStaleRegions(root);
            assertFalse(Files.exists(deadRegion.bellPath(), java.nio.file.LinkOption.NOFOLLOW_LINKS),
                    "the dead one's bell");
            assertTrue(Files.exists(liveRegion.bellPath()), "a live daemon's bell stays");
            assertTrue(Files.exists(live));
        }
        assertFalse(Files.exists(liveRegion.bellPath()), "closing the doorbell deletes its socket");
    }

    @Test
    void refusesASlotHeldByAnotherProcess() throws Exception {
        Path path = RegionFiles.pathOf(root, "job-c", 0);
        SharedRegion region = RegionFiles.create(path, "job-c", SHAPE);
        region.claim(0);
        long deadPid = deadPid();
        // slot 1 held by a process that died: that run failed
        patchLong(path, slotOffset(1) + 8, deadPid);
        CollectiveException e = assertThrows(CollectiveException.class, () -> region.claim(1));
        assertTrue(e.getMessage().contains("held by pid " + deadPid + " (gone"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> region.claim(2));
    }

    private static int slotOffset(int member) {
        // descriptor 1024 + 8 * blocks, block table 4 * (groups + 1), aligned to the slot size
        int slotBytes = RegionDescriptor.SLOT_BYTES;
        int slots = (1024 + 8 * 2 + 4 * 2 + slotBytes - 1) / slotBytes * slotBytes;
        return slots + member * RegionDescriptor.SLOT_BYTES;
    }

    static long deadPid() throws Exception {
        Process p = new ProcessBuilder("true").start();
        p.waitFor();
        return p.pid();
    }

    private static void patchInt(Path path, int offset, int value) throws IOException {
        try (FileChannel ch = FileChannel.open(path, StandardOpenOption.WRITE)) {
            ch.write(ByteBuffer.allocate(4).order(ByteOrder.nativeOrder()).putInt(0, value), offset);
        }
    }

    private static void patchLong(Path path, int offset, long value) throws IOException {
        try (FileChannel ch = FileChannel.open(path, StandardOpenOption.WRITE)) {
            ch.write(ByteBuffer.allocate(8).order(ByteOrder.nativeOrder()).putLong(0, value), offset);
        }
    }
}
