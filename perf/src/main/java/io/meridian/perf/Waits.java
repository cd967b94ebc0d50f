package io.meridian.perf;

import java.time.Duration;
import java.util.Locale;

/** How the cluster benchmarks wait for a condition, and say what they do. */
public final class Waits {
    private Waits() {
    }

    /** A condition polled until it holds. */
    public interface Check {
        boolean ok() throws Exception;
    }

    /** Polls {@code check} every {@code every} until it holds; past {@code timeout}, fails naming {@code what}. */
    public static void waitFor(Duration timeout, Duration every, String what, Check check) throws Exception {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!check.ok()) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("timed out after " + timeout.toSeconds() + " s waiting for " + what);
            }
            Thread.sleep(every.toMillis());
        }
    }

    /** A progress line on standard output, formatted in the root locale. */
    public static void say(String format, Object... args) {
        System.out.println(String.format(Locale.ROOT, format, args));
    }
}
