package io.meridian.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Set;
import org.junit.jupiter.api.Test;

class CommandLineTest {
    private static CommandLine parse(String... args) {
        return CommandLine.parse("mds", args, Set.of("n", "alpha", "out"), Set.of("sammon"));
    }

    @Test
    void readsValuedOptionsFlagsAndInlineValues() {
        CommandLine cl = parse("--n", "4000", "--alpha=0.9", "--sammon");
        assertEquals(4000, cl.requiredInt("n", 1, Integer.MAX_VALUE));
        assertEquals(0.9, cl.doubleValue("alpha", 0.95, 0, 1, true));
        assertTrue(cl.flag("sammon"));
        assertFalse(cl.has("out"));
        assertEquals("x", cl.string("out", "x"));
    }

    @Test
    void namesTheOptionAndTheProblem() {
        assertEquals("unknown option --bogus for 'mds'", assertThrows(UsageException.class, () -> parse("--bogus", "1")).getMessage());
        assertEquals("--n must be an integer, got 'abc'",
                assertThrows(UsageException.class, () -> parse("--n", "abc").requiredInt("n", 1, Integer.MAX_VALUE)).getMessage());
        assertEquals("--n must be a positive integer, got 0",
                assertThrows(UsageException.class, () -> parse("--n", "0").requiredInt("n", 1, Integer.MAX_VALUE)).getMessage());
        assertEquals("option --n needs a value", assertThrows(UsageException.class, () -> parse("--n")).getMessage());
        // the value left out before the next option: it was taken as the value, and the option's own as an argument
        assertEquals("option --n needs a value, got option --out", assertThrows(UsageException.class,
                () -> parse("--n", "--out", "dir")).getMessage());
        assertEquals("option --n needs a value, got option --sammon", assertThrows(UsageException.class,
                () -> parse("--n", "--sammon")).getMessage());
        assertEquals("--bogus", parse("--out", "--bogus").string("out", null)); // not an option: a value
        assertEquals("option --out is required", assertThrows(UsageException.class, () -> parse().requiredString("out")).getMessage());
        assertEquals("option --sammon takes no value", assertThrows(UsageException.class, () -> parse("--sammon=1")).getMessage());
        assertTrue(assertThrows(UsageException.class, () -> parse("--alpha", "NaN").doubleValue("alpha", 0.95, 0, 1, true))
                .getMessage().startsWith("--alpha must be > 0.0"));
    }

    @Test
    void refusesMissingFilesByName() {
        UsageException e = assertThrows(UsageException.class,
                () -> CommandLine.parse("mds", new String[] {"--out", "/nonexistent/x.bin"}, Set.of("out"), Set.of()).existingFile("out"));
        assertEquals("--out: file /nonexistent/x.bin does not exist", e.getMessage());
    }
}
