package io.meridian.cli;

/**
 * A service the command needs (Kafka, Nimbus, ZooKeeper) does not answer, or refused the work: the front end prints
 * the message on one line, without a stack trace, and exits with status 1. The message names the service and the
 * address it was looked for at.
 */
final class UnavailableException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    UnavailableException(String message) {
        super(message, null, false, false);
    }
}
