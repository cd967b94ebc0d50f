package io.meridian.cli;

/**
 * A row too wide for the row topic's record limit: {@code feed} refuses it before Kafka would (after many retries and
 * with a message that names no limit). The front end prints the message, which names the row and the limit, on one
 * line and exits with status 2: the input is wrong, not the cluster.
 */
final class RowTooWideException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    RowTooWideException(String message) {
        super(message, null, false, false);
    }
}
