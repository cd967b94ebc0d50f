package io.meridian.transport.mmap;

import net.openhft.posix.PosixAPI;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Faults in the pages just ahead of a queue writer, on the poller thread, so the transfer thread does not.
 *
 * <p>Why: a Chronicle queue only appends, so every write lands on tmpfs pages never touched before, and each first
 * touch is a page fault that allocates and zeroes a 4 KiB page. A 40 KB tuple costs ten of them on the transfer
 * thread, which is what made raw Chronicle lose to TCP (whose socket buffers recycle warm pages). Here the writer
 * publishes the address of its next write, and the poller asks the kernel to populate the next few MiB of the same
 * mapping ({@code madvise(MADV_POPULATE_WRITE)}, Linux 5.14+): the writer then finds its pages ready. Populating
 * never changes the contents of a page, so racing the writer (or a remapped range) is harmless. Without the system
 * call (older kernels, no native access) it disables itself.
 */
final class PagePrefaulter {
    private static final Logger LOG = LoggerFactory.getLogger(PagePrefaulter.class);
    private static final int MADV_POPULATE_WRITE = 23;
    private static final long PAGE = 4096;
    private static final long STEP = 256 * 1024;
    private static volatile boolean unavailable;

    private final long ahead;
    private volatile long writeAddress;
    private long populatedTo;

    PagePrefaulter(long ahead) {
        this.ahead = ahead;
    }

    /** Writer thread: where the next write will go. */
    void writerAt(long address) {
        writeAddress = address;
    }

    /** Poller thread. */
    void run() {
        long at = writeAddress;
        if (at == 0 || unavailable) {
            return;
        }
        if (populatedTo < at || populatedTo - at > 2 * ahead) {
            populatedTo = at & ~(PAGE - 1); // a new mapping or a new cycle file
        }
        long target = at + ahead;
        try {
            PosixAPI posix = PosixAPI.posix();
            while (populatedTo < target) {
                if (posix.madvise(populatedTo, STEP, MADV_POPULATE_WRITE) != 0) {
                    return; // past the end of the mapped chunk; the writer will map the next one
                }
                populatedTo += STEP;
            }
        } catch (Throwable t) {
            unavailable = true;
            LOG.info("mmap transport: page prefaulting is unavailable ({}); writers fault their own pages", t.toString());
        }
    }

    void close() {
        writeAddress = 0;
    }
}
