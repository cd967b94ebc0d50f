package io.meridian.cli;

import io.meridian.config.UsageException;
import io.meridian.engine.BadInputException;

/**
 * One {@code meridian} sub-command run in the JVM. Bad arguments are reported by throwing {@link UsageException};
 * an engine's {@link BadInputException} is turned into the same one-line error, prefixed with the command's option for
 * that input ({@link #optionFor}).
 */
public interface Command {
    /**
     * The usage, printed whole by {@code --help}: its first line is the synopsis, which ends every usage error
     * ({@link Main#usageLine}); further lines explain.
     */
    String usage();

    /** Runs the command; the return value is the process exit status. */
    int run(String[] args) throws Exception;

    /** The option through which this command takes {@code input} (e.g. {@code --distances}), or null. */
    default String optionFor(BadInputException.Input input) {
        return null;
    }
}
