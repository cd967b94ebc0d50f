package io.meridian.cli;

import static org.junit.jupiter.api.Assertions.fail;

import java.time.Duration;

/** Waiting for a condition of a real cluster in an integration test, with a bound. */
final class ClusterWait {
    interface Check {
        boolean ok() throws Exception;
    }

    private ClusterWait() {
    }

    static void waitFor(Duration timeout, String what, Check check) throws Exception {
        waitFor(timeout, what, check, () -> "");
    }

    /** The same; a failure's message adds what {@code state} says then (what the condition saw). */
    static void waitFor(Duration timeout, String what, Check check, java.util.function.Supplier<String> state)
            throws Exception {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!check.ok()) {
            if (System.nanoTime() > deadline) {
                String seen = state.get();
                fail("timed out after " + timeout.toSeconds() + " s waiting for " + what + (seen.isEmpty() ? "" : "; " + seen));
            }
            Thread.sleep(250);
        }
    }
}
