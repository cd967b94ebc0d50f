package io.meridian.collective;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.meridian.config.CommandLine;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The leader daemon's options for a second group: absent, the daemon is what it was; present, each is checked and a
 * bad one is refused in one line naming it, before mpirun would start anything.
 */
class LeaderDaemonOptionsTest {
    private static final Set<String> VALUED = Set.of("job", "members", "second-job", "second-capacity",
            "second-reduce-capacity", "second-timeout-ms");

    private static LeaderDaemon.Second second(String... args) {
        List<String> all = new ArrayList<>(List.of("--job", "rounds-1", "--members", "2"));
        all.addAll(List.of(args));
        return LeaderDaemon.Second.of(CommandLine.parse("leaders", all.toArray(String[]::new), VALUED, Set.of()),
                "rounds-1");
    }

    private static String refusal(String... args) {
        return assertThrows(RuntimeException.class, () -> second(args)).getMessage();
    }

    @Test
    void withoutASecondJobThereIsNoSecondGroup() {
        assertNull(second());
    }

    @Test
    void aSecondGroupTakesTheFirstGroupsDefaultsUnlessTold() {
        LeaderDaemon.Second s = second("--second-job", "cluster-1");
        assertEquals(new LeaderDaemon.Second("cluster-1", 1 << 20, 1 << 16,
                CollectiveOptions.DEFAULT_TIMEOUT.toMillis()), s);
        assertEquals(new LeaderDaemon.Second("cluster-1", 300, 20, 600_000), second("--second-job", "cluster-1",
                "--second-capacity", "300", "--second-reduce-capacity", "20", "--second-timeout-ms", "600000"));
    }

    @Test
    void badSecondGroupOptionsAreRefusedNamingTheOption() {
        assertTrue(refusal("--second-capacity", "10").startsWith("--second-capacity needs --second-job"));
        assertTrue(refusal("--second-timeout-ms", "10").startsWith("--second-timeout-ms needs --second-job"));
        assertTrue(refusal("--second-job", "rounds-1").startsWith("--second-job rounds-1 is --job's id"));
        assertTrue(refusal("--second-job", "../x").startsWith("--second-job: job id '../x': use 1-64"),
                refusal("--second-job", "../x"));
        assertTrue(refusal("--second-job", "c", "--second-capacity", "0").contains("second-capacity"),
                refusal("--second-job", "c", "--second-capacity", "0"));
        assertTrue(refusal("--second-job", "c", "--second-reduce-capacity", "x").contains("second-reduce-capacity"));
        assertTrue(refusal("--second-job", "c", "--second-timeout-ms", "0").contains("second-timeout-ms"));
    }

    @Test
    void theDaemonRefusesABadSecondGroupInOneLineAndExits2BeforeMpi() throws Exception {
        try (Processes ps = new Processes()) {
            Processes.Running r = ps.start(Processes.java(LeaderDaemon.class.getName(), "--job", "a", "--members", "1",
                    "--second-capacity", "5"), java.util.Map.of());
            assertEquals(2, r.await(60), r.output());
            assertEquals("meridian leaders: --second-capacity needs --second-job (the group it sizes)",
                    r.lines.get(0), r.output());
            assertTrue(r.lines.get(1).startsWith("usage: LeaderDaemon --job ID") && r.lines.get(1).contains(
                    "[--second-job ID [--second-capacity DOUBLES]"), r.output());
        }
    }
}
