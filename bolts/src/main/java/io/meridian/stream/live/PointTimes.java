package io.meridian.stream.live;

import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * Per point id, what the map task's latency figures need: when its row was published to the ingestion topic and when
 * it was stored, and whether its point has been shown (on arrival or in a frame). Kept in pages of {@link #PAGE} ids,
 * each made when the first row of its ids is stored: three arrays of the capacity took 20 MB at 1,000,000 points
 * before the first row; a map of 4000 points now holds 4 pages (80 KB) and a directory of 977 references.
 *
 * <p>Threads: the bolt's execute thread alone records rows ({@link #stored}) and so alone makes pages; the round
 * thread and the arrival placement's thread read the times and mark points shown. A page is complete before it is
 * published (a release store into the directory, read with acquire), and pages are never replaced or copied, so no
 * reader sees a half-made one; an id whose page is not there yet reads as not stored.
 */
final class PointTimes {
    static final int PAGE_BITS = 10;
    static final int PAGE = 1 << PAGE_BITS;

    private final int capacity;
    private final AtomicReferenceArray<Page> pages;

    /** One page's ids: times in ms (0: not yet stored), shown flags (1 once shown). */
    private record Page(AtomicLongArray publishedAt, AtomicLongArray storedAt, AtomicIntegerArray shown) {
        Page() {
            this(new AtomicLongArray(PAGE), new AtomicLongArray(PAGE), new AtomicIntegerArray(PAGE));
        }
    }

    PointTimes(int capacity) {
        if (capacity < 1) {
            throw new IllegalArgumentException("capacity must be at least 1, got " + capacity);
        }
        this.capacity = capacity;
        this.pages = new AtomicReferenceArray<>((capacity + PAGE - 1) >>> PAGE_BITS);
    }

    int capacity() {
        return capacity;
    }

    /**
     * Records that row {@code id} (below the capacity) was published at {@code publishedMillis} and stored at
     * {@code storedMillis}. One thread (the bolt's execute thread).
     */
    void stored(int id, long publishedMillis, long storedMillis) {
        int p = id >>> PAGE_BITS;
        Page page = pages.getAcquire(p);
        if (page == null) {
            page = new Page();
            pages.setRelease(p, page);
        }
        int k = id & (PAGE - 1);
        page.publishedAt().set(k, publishedMillis);
        page.storedAt().set(k, storedMillis);
    }

    /** When row {@code id} was stored, in ms; 0 when it is not (as far as this thread has seen). */
    long storedAt(int id) {
        Page page = pages.getAcquire(id >>> PAGE_BITS);
        return page == null ? 0 : page.storedAt().get(id & (PAGE - 1));
    }

    /** When row {@code id} was published to the ingestion topic, in ms; 0 when it is not stored. */
    long publishedAt(int id) {
        Page page = pages.getAcquire(id >>> PAGE_BITS);
        return page == null ? 0 : page.publishedAt().get(id & (PAGE - 1));
    }

    /** Marks point {@code id} shown; true only for the first call for a stored id (of any thread). */
    boolean firstShown(int id) {
        Page page = pages.getAcquire(id >>> PAGE_BITS);
        return page != null && page.shown().compareAndSet(id & (PAGE - 1), 0, 1);
    }

    /** Pages made so far (each {@link #PAGE} ids). */
    int pagesMade() {
        int made = 0;
        for (int p = 0; p < pages.length(); p++) {
            if (pages.getAcquire(p) != null) {
                made++;
            }
        }
        return made;
    }
}
