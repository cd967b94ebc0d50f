package io.meridian.mds;

/**
 * A run whose layout or stress is not finite (NaN or infinite): an error, never an output. Its message says which
 * point and value, and that nothing was written.
 */
public final class NonFiniteResultException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public NonFiniteResultException(String message) {
        super(message);
    }
}
