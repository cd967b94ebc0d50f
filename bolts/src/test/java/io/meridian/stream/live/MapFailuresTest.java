package io.meridian.stream.live;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The failed part a map task names from its error and the leader daemons' lines (the messages the collectives and
 * {@link LeaderLauncher#failures} write), and the last failure kept for {@code ./meridian status}.
 */
class MapFailuresTest {
    @Test
    void namesTheFailedPartAndItsHost() {
        assertEquals(new MapFailures.Cause(MapFailures.LEADER_DAEMON, "meridian-h2"), MapFailures.cause(
                "collective call #812 (allreduce) in group 0 of job x-map-g1, seen by member 0: the leader of group 0"
                        + " stopped", "the leader daemon of group 1 on meridian-h2 (MPI rank 1, pid 4711) was killed by"
                        + " signal 9 (Killed)", "meridian-h1"));
        assertEquals(new MapFailures.Cause(MapFailures.LEADER_DAEMON, "meridian-h1"), MapFailures.cause(
                "collective call #9 (barrier) in group 0 of job x-map-g1, seen by member 1: the leader of group 0"
                        + " (pid 4711) is gone", "", "meridian-h1"));
        assertEquals(new MapFailures.Cause(MapFailures.PEER_LINK, "meridian-h2"), MapFailures.cause(
                "group 0 on meridian-h1: the link to group 1 on meridian-h2 is down: 2 connections to meridian-h2:7800"
                        + " in a row failed (SocketTimeoutException: Connect timed out) while MPI allreduce waited"
                        + " 2.5 s for it", "", "meridian-h1"));
        assertEquals(new MapFailures.Cause(MapFailures.MAP_TASK, "meridian-h2"), MapFailures.cause(
                "the leader of group 0 stopped", "group 1 on meridian-h2 failed: collective call #3 (allreduce) in"
                        + " group 1: member 0 (block 2, pid 11961) is gone", "meridian-h1"));
        assertEquals(MapFailures.TIMEOUT, MapFailures.cause("collective call #3 (allreduce): timed out after 30000 ms"
                + " waiting for member 1", "", "meridian-h1").part());
        assertEquals(MapFailures.OTHER, MapFailures.cause("something else", "", "meridian-h1").part());
    }

    @Test
    void namesAnotherHostsFullTmpfsFromItsLeaderDaemonsLine(@TempDir Path dir) throws Exception {
        // the line LeaderDaemon prints when RegionFiles.create is refused, with the message TmpfsSpace makes
        String refused = io.meridian.shm.TmpfsSpace.full(Path.of("/dev/shm/meridian-x-map-g1-1"), 4096,
                new java.io.IOException("No space left on device")).getMessage();
        Path log = dir.resolve("leaders.log");
        Files.writeString(log, "meridian leader: group 1 on meridian-h2 failed: cannot create its region: "
                + "java.io.UncheckedIOException: io.meridian.shm.ShmFullException: " + refused + "\n");
        String daemons = LeaderLauncher.failuresIn(log);
        assertTrue(daemons.startsWith("group 1 on meridian-h2 failed: cannot create its region: "), daemons);
        MapFailures.Cause cause = MapFailures.cause("starting the leader daemons of x-map-g1 failed", daemons,
                "meridian-h1");
        assertEquals(MapFailures.SHM_FULL, cause.part(), refused);
        int at = refused.indexOf("(host ") + "(host ".length();
        assertEquals(refused.substring(at, refused.indexOf(')', at)), cause.host(), "the host it names: " + refused);
        assertTrue(!cause.host().isEmpty());
        assertTrue(cause.named());
        assertEquals("the shared memory tmpfs on " + cause.host(), cause.describe());
    }

    @Test
    void keepsTheLastFailureAndWhenTheMapResumed(@TempDir Path snapshots) {
        assertNull(MapFailures.read(snapshots, "job-map"));
        MapFailures.Cause cause = new MapFailures.Cause(MapFailures.PEER_LINK, "meridian-h2");
        MapFailures.recordFailure(snapshots, "job-map", 3, cause, "the link to group 1 on meridian-h2 is down");
        MapFailures.Last failed = MapFailures.read(snapshots, "job-map");
        assertEquals(3, failed.generation());
        assertEquals(-1, failed.resumedGeneration());
        String fiveSecondsLater = failed.toText(failed.failedAtMillis() + 5000);
        assertTrue(fiveSecondsLater.startsWith("generation 3 failed at ") && fiveSecondsLater.contains("(5 s ago)"),
                fiveSecondsLater);
        assertTrue(failed.toText(failed.failedAtMillis()).endsWith("): the link to meridian-h2; the link to group 1"
                + " on meridian-h2 is down; not resumed yet (the group re-forms)"), failed.toText(0));
        MapFailures.recordFailure(snapshots, "job-map", 4, new MapFailures.Cause(MapFailures.OTHER, ""),
                "starting the leader daemons failed");
        MapFailures.Last again = MapFailures.read(snapshots, "job-map");
        assertEquals(3, again.generation(), "the first failure of the streak is the one shown");
        assertEquals(MapFailures.PEER_LINK, again.part());
        assertEquals(1, again.failedAgain());
        assertTrue(again.toText(again.failedAtMillis()).contains("; 1 more generation failed while the group"
                + " re-formed, the last: generation 4: unknown; starting the leader daemons failed;"), again.toText(0));
        MapFailures.recordResumed(snapshots, "job-map", 3); // the failed generation itself: not a resumption
        assertEquals(-1, MapFailures.read(snapshots, "job-map").resumedGeneration());
        MapFailures.recordResumed(snapshots, "job-map", 5);
        MapFailures.Last resumed = MapFailures.read(snapshots, "job-map");
        assertEquals(5, resumed.resumedGeneration());
        assertTrue(resumed.resumedAtMillis() >= resumed.failedAtMillis());
        assertTrue(resumed.toText(resumed.resumedAtMillis()).contains("; resumed in generation 5, "),
                resumed.toText(0));
        assertTrue(Files.exists(snapshots.resolve(".failure-job-map")));
        MapFailures.recordFailure(snapshots, "job-map", 9, new MapFailures.Cause(MapFailures.LEADER_DAEMON,
                "meridian-h1"), "the leader of group 0 (pid 4711) is gone");
        MapFailures.Last next = MapFailures.read(snapshots, "job-map");
        assertEquals(9, next.generation(), "after a resumption the next failure is a new one");
        assertEquals(0, next.failedAgain());
        assertEquals(-1, next.resumedGeneration());
    }
}
