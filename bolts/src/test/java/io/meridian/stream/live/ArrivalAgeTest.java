package io.meridian.stream.live;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.meridian.live.Frame;
import org.junit.jupiter.api.Test;

/**
 * Which rows the arrival placement still places ({@link LiveMapBolt#arrivalNotBefore}): those stored within a second,
 * or within the time the rounds take to show a row when that is longer (the map at 100K points).
 */
class ArrivalAgeTest {
    private static final long NOW = 1_000_000_000L;

    private static Frame publishedAt(long millis) {
        return new Frame(7, 1, new double[3], new int[1], new boolean[1], 0.1, 0, 1, 0, 0, 0, 0, false, 0, 0, 0, 0, 0,
                1, millis, false);
    }

    @Test
    void withoutAFrameOrWithFastFramesARowIsPlacedWithinASecond() {
        assertEquals(NOW - 1000, LiveMapBolt.arrivalNotBefore(NOW, null, 0));
        assertEquals(NOW - 1000, LiveMapBolt.arrivalNotBefore(NOW, publishedAt(NOW - 40), 50));
    }

    @Test
    void slowRoundsLeaveNoRowWaitingForThem() {
        // frames 30 s apart, the last 2 s ago: a row stored 30 s ago still comes sooner from the placer
        assertEquals(NOW - 30_000, LiveMapBolt.arrivalNotBefore(NOW, publishedAt(NOW - 2000), 30_000));
        // fast frames before, but none for 50 s now (an anneal): rows stored since the last frame are placed
        assertEquals(NOW - 50_000, LiveMapBolt.arrivalNotBefore(NOW, publishedAt(NOW - 50_000), 60));
    }
}
