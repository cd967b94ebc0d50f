package io.meridian.live;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

class BulkCgroupTest {
    private static final Path CPU_HIERARCHY = Path.of("/sys/fs/cgroup/cpu");

    @Test
    void theEnvironmentNamesTheCgroupAndEmptyMeansNone() {
        assertEquals(Path.of("/sys/fs/cgroup/cpu/other"),
                BulkCgroup.configured(Map.of(BulkCgroup.ENV, "/sys/fs/cgroup/cpu/other")));
        assertNull(BulkCgroup.configured(Map.of(BulkCgroup.ENV, "")), "empty: no cgroup");
        assertNull(BulkCgroup.configured(Map.of()), "unset (a LocalCluster, a batch job): no cgroup, even where the"
                + " cluster made " + BulkCgroup.DEFAULT);
    }

    @Test
    void aMissingCgroupIsRefusedWithWhere() {
        String failure = BulkCgroup.join(Path.of("/nonexistent/meridian-bulk"), 1);
        assertTrue(failure.contains("/nonexistent/meridian-bulk"), failure);
    }

    @Test
    void movesTheCallingThreadAloneAndItsLaterThreadsAreBornInIt() throws Exception {
        assumeTrue(Files.isWritable(CPU_HIERARCHY.resolve("tasks")) && Files.exists(CPU_HIERARCHY.resolve("cpu.shares")),
                "needs a writable cgroup v1 cpu hierarchy at " + CPU_HIERARCHY);
        String name = "meridian-test-" + ProcessHandle.current().pid();
        Path dir = Files.createDirectory(CPU_HIERARCHY.resolve(name));
        try {
            String before = BulkCgroup.currentThreadCpuCgroup();
            AtomicReference<Object> moved = new AtomicReference<>();
            AtomicReference<Object> child = new AtomicReference<>();
            Thread t = new Thread(() -> {
                try {
                    long tid = Long.parseLong(Files.readSymbolicLink(Path.of("/proc/thread-self")).getFileName()
                            .toString());
                    String failure = BulkCgroup.join(dir, tid);
                    moved.set(failure != null ? failure : BulkCgroup.currentThreadCpuCgroup());
                    Thread c = new Thread(() -> {
                        try {
                            child.set(BulkCgroup.currentThreadCpuCgroup());
                        } catch (Exception e) {
                            child.set(e);
                        }
                    });
                    c.start();
                    c.join();
                } catch (Exception e) {
                    moved.set(e);
                }
            });
            t.start();
            t.join();
            assertEquals("/" + name, moved.get(), "the thread that joined");
            assertEquals("/" + name, child.get(), "a thread it started afterwards");
            assertEquals(before, BulkCgroup.currentThreadCpuCgroup(), "the test's own thread stays where it was");
        } finally {
            removeOnceEmpty(dir);
        }
    }

    /** A cgroup goes once its threads have exited, which the kernel notes shortly after their join returns. */
    private static void removeOnceEmpty(Path dir) throws Exception {
        for (int i = 0; i < 100; i++) {
            try {
                Files.delete(dir);
                return;
            } catch (java.io.IOException e) {
                Thread.sleep(20);
            }
        }
        Files.delete(dir);
    }
}
