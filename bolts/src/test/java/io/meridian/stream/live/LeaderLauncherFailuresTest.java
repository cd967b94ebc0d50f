package io.meridian.stream.live;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What task 0 reads in the leader daemons' log when a generation fails: a daemon's own line, and mpirun's report of a
 * daemon killed by a signal (Open MPI 4.1.4's wording, as TwoHostFaultsIT's SIGKILL left it), which names its rank,
 * pid and host.
 */
class LeaderLauncherFailuresTest {
    @Test
    void namesADaemonKilledByASignalAndRepeatsTheDaemonsOwnLines(@TempDir Path dir) throws Exception {
        Path log = dir.resolve("job-map-g0.log");
        Files.writeString(log, """
                meridian leader: group 0 serves metrics on http://meridian-h1:7800/metrics
                meridian leader: group 0 of 2 (node group 0 on meridian-h1, pid 9603, 2 members) serving /dev/shm/x
                --------------------------------------------------------------------------
                mpirun noticed that process rank 1 with PID 9604 on node meridian-h2 exited on signal 9 (Killed).
                --------------------------------------------------------------------------
                meridian leader: group 0 on meridian-h1 failed: the link to group 1 on meridian-h2 is down
                """);
        assertEquals("the leader daemon of group 1 on meridian-h2 (MPI rank 1, pid 9604) was killed by signal 9"
                + " (Killed); group 0 on meridian-h1 failed: the link to group 1 on meridian-h2 is down",
                LeaderLauncher.failuresIn(log));
        assertEquals("", LeaderLauncher.failuresIn(dir.resolve("none.log")));
    }
}
