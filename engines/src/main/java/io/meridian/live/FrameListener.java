package io.meridian.live;

/** Receives each frame the live map publishes (on the map's round thread; must not keep {@code frame}'s arrays). */
@FunctionalInterface
public interface FrameListener {
    void onFrame(Frame frame);

    /** Receives points shown ahead of the rounds ({@link ArrivalPlacer}); the arrays are the receiver's to keep. */
    default void onArrivals(Arrivals arrivals) {
    }

    /**
     * Called by a publishing thread when it has no new frame to hand on: a listener that holds a frame back (a paced
     * sink) sends it here once its time has come.
     */
    default void onIdle() {
    }
}
