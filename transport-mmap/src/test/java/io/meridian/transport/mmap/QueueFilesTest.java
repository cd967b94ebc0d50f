package io.meridian.transport.mmap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.InaccessibleObjectException;
import org.junit.jupiter.api.Test;

class QueueFilesTest {
    @Test
    void aQueueThatCannotBeMappedSaysWhyTheFlagsOnlyWhenTheJvmRefusedAccess() {
        Throwable refused = new ExceptionInInitializerError(new InaccessibleObjectException(
                "Unable to make field long java.nio.Buffer.address accessible: module java.base does not \"opens java.nio\""));
        assertTrue(QueueFiles.whyNotMapped(refused).contains(MmapTransport.JVM_FLAGS), QueueFiles.whyNotMapped(refused));

        Throwable halted = new ExceptionInInitializerError(new IllegalStateException("Shutdown in progress"));
        assertEquals("the JVM is shutting down", QueueFiles.whyNotMapped(halted));
        // as Java 17 reports a class whose initialization failed before: the first failure as the cause
        NoClassDefFoundError later = new NoClassDefFoundError("Could not initialize class x.BackgroundResourceReleaser");
        later.initCause(new ExceptionInInitializerError("Exception java.lang.IllegalStateException: Shutdown in progress"
                + " [in thread \"meridian-mmap-recv-6700\"]"));
        assertEquals("the JVM is shutting down", QueueFiles.whyNotMapped(later));

        NoClassDefFoundError unknown = new NoClassDefFoundError("Could not initialize class x.Jvm");
        assertTrue(QueueFiles.whyNotMapped(unknown).startsWith("Could not initialize class x.Jvm (its first failure"),
                QueueFiles.whyNotMapped(unknown));
        assertEquals("java.lang.IllegalArgumentException: bad roll cycle",
                QueueFiles.whyNotMapped(new IllegalArgumentException("bad roll cycle")));
    }
}
