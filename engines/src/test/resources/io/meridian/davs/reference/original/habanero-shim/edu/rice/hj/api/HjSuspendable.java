package edu.rice.hj.api;

/** Shim: a body that habanero would run as a task. */
@FunctionalInterface
public interface HjSuspendable {
    void run() throws SuspendableException;
}
