package io.meridian.collective;

/** A participant did not arrive (or a leader did not release) within the configured timeout. */
public final class CollectiveTimeoutException extends CollectiveException {
    private static final long serialVersionUID = 1L;

    public CollectiveTimeoutException(String message) {
        super(message);
    }
}
