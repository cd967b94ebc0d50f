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
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!check.ok()) {
            if (System.nanoTime() > deadline) {
                fail("timed out after " + timeout.toSeconds() + " s waiting for " + what);
            }
            Thread.sleep(250);
        }
    }
}
