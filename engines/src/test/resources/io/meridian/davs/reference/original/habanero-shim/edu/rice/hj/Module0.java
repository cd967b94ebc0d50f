package edu.rice.hj;

import edu.rice.hj.api.HjSuspendable;
import edu.rice.hj.api.SuspendableException;

/**
 * Shim of habanero-java-lib (0.1.4-SNAPSHOT is not on Maven Central). Only what DSC-SPIDAL/davs calls:
 * launchHabaneroApp runs its body at once on the calling thread, which is what habanero does
 * (it returns after the body and every task it spawned have finished).
 */
public class Module0 {
    protected Module0() {}

    public static void launchHabaneroApp(HjSuspendable body) {
        try {
            body.run();
        } catch (SuspendableException e) {
            throw new IllegalStateException(e);
        }
    }
}
