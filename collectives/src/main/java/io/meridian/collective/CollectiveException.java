package io.meridian.collective;

/**
 * A collective could not complete: a participant is missing (died, left, or did not arrive within the timeout), a
 * region does not match, or the participants called different operations. The message names who and where.
 */
public class CollectiveException extends IllegalStateException {
    private static final long serialVersionUID = 1L;

    public CollectiveException(String message) {
        super(message);
    }

    public CollectiveException(String message, Throwable cause) {
        super(message, cause);
    }
}
