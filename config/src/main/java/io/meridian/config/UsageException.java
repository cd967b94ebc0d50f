package io.meridian.config;

/**
 * Bad input from a user: an option, a file, a configuration key. The front end prints its message on one line,
 * without a stack trace, and exits with status 2. The message names what is wrong and where.
 */
public final class UsageException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public UsageException(String message) {
        super(message, null, false, false);
    }

    public UsageException(String message, Throwable cause) {
        super(message, cause, false, false);
    }
}
