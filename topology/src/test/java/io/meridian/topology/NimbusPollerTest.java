package io.meridian.topology;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** The command line of the cluster's targets and sweeper daemons. */
class NimbusPollerTest {
    private static final String USAGE = "usage: sweeper --state FILE [--interval SECONDS] [--nimbus HOST:PORT]";

    @Test
    void readsThePathTheIntervalAndNimbus() {
        NimbusPoller.Options o = NimbusPoller.Options.parse(
                new String[] {"--state", "/run/x.state", "--interval", "0.5", "--nimbus", "node1:6627"}, "--state", USAGE);
        assertEquals(new NimbusPoller.Options(Path.of("/run/x.state"), 500, "node1:6627"), o);
        NimbusPoller.Options defaults = NimbusPoller.Options.parse(new String[] {"--state", "s"}, "--state", USAGE);
        assertEquals(5000, defaults.intervalMillis());
        assertNull(defaults.nimbus(), "Nimbus from nimbus.seeds");
    }

    @Test
    void aBadCommandLineNamesTheOptionAndWhy() {
        assertEquals("--state is missing (" + USAGE + ")", refused("--interval", "5"));
        assertEquals("--interval wants seconds in [0.1, 3600], not '5s'", refused("--state", "s", "--interval", "5s"));
        assertEquals("--interval wants seconds in [0.1, 3600], not '0'", refused("--state", "s", "--interval", "0"));
        assertEquals("--nimbus wants HOST:PORT, not 'node1'", refused("--state", "s", "--nimbus", "node1"));
        assertEquals("option --state needs a value (" + USAGE + ")", refused("--state"));
        assertEquals("unknown option --out (" + USAGE + ")", refused("--out", "d"));
    }

    private static String refused(String... args) {
        return assertThrows(IllegalArgumentException.class, () -> NimbusPoller.Options.parse(args, "--state", USAGE))
                .getMessage();
    }
}
