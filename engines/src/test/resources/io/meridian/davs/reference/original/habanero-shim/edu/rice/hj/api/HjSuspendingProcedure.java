package edu.rice.hj.api;

/** Shim: a loop body taking the iteration index. */
@FunctionalInterface
public interface HjSuspendingProcedure<T> {
    void apply(T index) throws SuspendableException;
}
