package edu.rice.hj;

import edu.rice.hj.api.HjSuspendingProcedure;
import edu.rice.hj.api.SuspendableException;

/**
 * Shim of habanero-java-lib's forallChunked: runs the body for every index from start to end inclusive,
 * in order, on the calling thread. davs calls it only as forallChunked(0, ThreadCount - 1, threadIndex -> ...)
 * with each index owning its own slice of the data and the results combined after the loop, so running the
 * indices one after another gives what habanero gives; with ThreadCount = 1 it is a single call.
 * Like habanero's, Module1 extends Module0, so launchHabaneroApp can be imported from either (davs does both).
 */
public final class Module1 extends Module0 {
    private Module1() {}

    public static void forallChunked(int start, int endInclusive, HjSuspendingProcedure<Integer> body)
            throws SuspendableException {
        for (int i = start; i <= endInclusive; i++) {
            body.apply(i);
        }
    }
}
