package io.meridian.cli;

/** One {@code meridian} sub-command run in the JVM. Bad input is reported by throwing {@link io.meridian.config.UsageException}. */
public interface Command {
    /** A one-line usage synopsis, shown by {@code meridian help} and on usage errors. */
    String usage();

    /** Runs the command; the return value is the process exit status. */
    int run(String[] args) throws Exception;
}
