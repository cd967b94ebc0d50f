package io.meridian.transport.mmap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.meridian.shm.Doorbell;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.storm.messaging.ConnectionWithStatus.Status;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The poller's half of a sender against real control and position files: readiness, the receiver's backpressure
 * mirrored into Storm's flags, the lag limit with its release at half, and the flags let go when the link falls back.
 */
class ReceiverLinkTest {
    private static final long PID = 4242;
    @TempDir
    Path dir;
    private final AtomicBoolean[] flags = new AtomicBoolean[8];
    private ReceiverLink link;
    private ReceiverControl control;
    private ReaderPosition position;

    @BeforeEach
    void files() {
        for (int i = 0; i < flags.length; i++) {
            flags[i] = new AtomicBoolean();
        }
        TransportConfig config = TransportConfig.from(Map.of(TransportConfig.DIR, dir.toString(),
            TransportConfig.MAX_LAG_MESSAGES, 100, TransportConfig.MAX_LAG_BYTES, 1 << 20));
        Path position = QueueFiles.positionFile(dir, "s");
        link = new ReceiverLink(config, dir, position, flags);
        this.control = ReceiverControl.create(dir.resolve(QueueFiles.CONTROL), config.maxTasks, PID);
        this.position = ReaderPosition.attach(position, PID);
    }

    @Test
    void readyOnceBothFilesBeatFromTheSamePid() {
        assertEquals(Status.Connecting, link.status());
        long now = System.currentTimeMillis();
        link.poll(now, 0, 0, LinkMetrics.UNREGISTERED);
        assertEquals(Status.Ready, link.status());
        position.detach(); // heartbeat 0: the reader is gone
        link.poll(now, 0, 0, LinkMetrics.UNREGISTERED);
        assertEquals(Status.Connecting, link.status());
    }

    @Test
    void mirrorsTheReceiversBackpressureIntoTheFlagsOfItsTasks() {
        link.markSent(3);
        flags[4].set(true);
        control.publishBackPressure(List.of(3), List.of(5));
        assertTrue(link.poll(System.currentTimeMillis(), 0, 0, LinkMetrics.UNREGISTERED),
            "backpressure on: poll promptly");
        assertTrue(flags[3].get());
        assertFalse(flags[5].get());
        assertTrue(flags[4].get(), "a task neither sent to nor owned by the receiver is left alone");
        control.publishBackPressure(List.of(), List.of(3, 5));
        assertFalse(link.poll(System.currentTimeMillis(), 0, 0, LinkMetrics.UNREGISTERED));
        assertFalse(flags[3].get());
    }

    @Test
    void lagAboveTheLimitHoldsEveryTaskUntilItHalves() {
        link.markSent(1);
        control.publishBackPressure(List.of(), List.of(2));
        long now = System.currentTimeMillis();
        link.poll(now, 100, 100, LinkMetrics.UNREGISTERED);
        assertFalse(link.lagBackPressure(), "at the limit, not above it");
        link.poll(now, 101, 101, LinkMetrics.UNREGISTERED);
        assertTrue(link.lagBackPressure());
        assertTrue(flags[1].get() && flags[2].get());
        position.commit(0, 40, 40, 0);
        link.poll(now, 101, 101, LinkMetrics.UNREGISTERED);
        assertTrue(link.lagBackPressure(), "61 behind: above half the limit, still held");
        position.commit(0, 60, 60, 0);
        link.poll(now, 101, 101, LinkMetrics.UNREGISTERED);
        assertFalse(link.lagBackPressure(), "41 behind: released");
        assertFalse(flags[1].get() || flags[2].get());
        assertEquals(60, link.delivered());
    }

    @Test
    void releaseFlagsClearsWhatThisSenderHeld() {
        link.markSent(6);
        control.publishBackPressure(List.of(6), List.of());
        link.poll(System.currentTimeMillis(), 0, 0, LinkMetrics.UNREGISTERED);
        assertTrue(flags[6].get());
        link.releaseFlags();
        assertFalse(flags[6].get());
    }

    @Test
    void ringReleasedFollowsTheReadersCommit() {
        assertEquals(0, link.ringReleased(), "no position mapped yet");
        link.poll(System.currentTimeMillis(), 0, 0, LinkMetrics.UNREGISTERED);
        position.commit(7, 100, 10, 4096);
        assertEquals(4096, link.ringReleased());
    }

    @Test
    void ringsOnlyAReaderThatAnnouncedSleepAndOnlyOnce() throws Exception {
        try (Doorbell doorbell = Doorbell.bind(dir.resolve(QueueFiles.DOORBELL))) {
            link.poll(System.currentTimeMillis(), 0, 0, LinkMetrics.UNREGISTERED);
            assertTrue(link.hasRinger());
            assertFalse(link.wakeReader(), "the reader is awake: no system call");
            control.announceSleep();
            assertTrue(link.wakeReader());
            assertFalse(link.wakeReader(), "the first ring claimed the announcement");
            for (int i = 0; i < 20 && doorbell.rings() == 0; i++) {
                doorbell.await(100); // the first may only accept the ringer's connection
            }
            assertEquals(1, doorbell.rings());
        } finally {
            link.close();
        }
    }
}
