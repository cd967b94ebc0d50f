package io.meridian.perf.stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** The map-updates record value as KafkaFramePublisher writes it: {@code id x y z cluster frame outlier}. */
class MapUpdatesTest {
    @Test
    void readsTheFrameAndTheOutlierFlagByPosition() {
        String flagged = "17\t0.25\t-1.5\t3.0E-4\t2\t41\t1";
        assertEquals("17", MapUpdates.field(flagged, 0));
        assertEquals("2", MapUpdates.field(flagged, 4));
        assertEquals(41, MapUpdates.frame(flagged), "the frame is the sixth field, no longer the last");
        assertTrue(MapUpdates.outlier(flagged));
        assertFalse(MapUpdates.outlier("17\t0.25\t-1.5\t3.0E-4\t2\t41\t0"));
        assertNull(MapUpdates.field(flagged, 7));
    }

    @Test
    void aValueWrittenBeforeTheFlagReadsAsNotFlagged() {
        String old = "3\t1.0\t2.0\t3.0\t-1\t9";
        assertEquals(9, MapUpdates.frame(old));
        assertFalse(MapUpdates.outlier(old));
    }
}
