package org.pageio.method.posixaio;

import org.pageio.api.IoHandle;
import org.pageio.posix.CallState;
import org.pageio.posix.Posix;

/**
 * A pageio policy of {@code io_method=posix_aio}: <b>reads the page cache holds complete at
 * submission</b>. glibc's POSIX AIO hands every request to one of its threads, which performs a
 * blocking {@code pread} and is then asked for the result: for a read whose pages are already in
 * the page cache that is a copy wrapped in two thread switches, on the CPUs the scan needs, and
 * with many sessions glibc's request lock and its bounded threads serialise them. So before a
 * buffered read is queued, the owner tries it with {@code preadv2(RWF_NOWAIT)}, which copies from
 * the page cache and never waits for the device: when that transfers the whole read, the handle
 * completes there and then, in the owner, as an io_uring read of cached pages completes inside
 * {@code io_uring_enter}; otherwise (some page not cached: {@code EAGAIN} or a short transfer, or
 * any error) the read is queued with glibc as it is, and what the try copied is read again.
 *
 * <p>Only reads on descriptors opened without O_DIRECT ({@link IoHandle#FLAG_BUFFERED}): a direct
 * read never finds the page cache. A try that misses is not free (the kernel starts the read-ahead
 * it would have started, and glibc's thread then waits for it), so a session that misses backs off
 * ({@link Backoff}): after a miss it queues the next read without a try, after another the next
 * two, up to {@value #MAX_SKIP}, and one hit puts it back to trying every read. A cold scan then
 * tries about one read in {@value #MAX_SKIP}; a scan over the page cache tries, and completes,
 * every one.
 *
 * <p>why: docs/performance.md, "A table in shared buffers and sessions at once". Owner thread only
 * (it runs inside {@code submit}); no allocation; {@link #enabled} is volatile, for tests.
 */
final class CachedReadsInline {

    /** The most reads a session queues without a try after misses. */
    static final int MAX_SKIP = 64;

    /** Whether buffered reads are tried against the page cache first. Volatile: read once per read. */
    volatile boolean enabled = true;

    /** One session's back-off after misses. Owner thread only. */
    static final class Backoff {
        /** Reads still to queue without a try. */
        private int skip;
        /** Reads to skip after the next miss: 1, 2, 4 … {@link #MAX_SKIP}; a hit resets it. */
        private int next = 1;
        /** Tries that missed, for tests and the session's counters. */
        long misses;

        /** Whether to try the next read. */
        boolean tryNext() {
            if (skip > 0) {
                skip--;
                return false;
            }
            return true;
        }

        void hit() {
            next = 1;
        }

        void missed() {
            misses++;
            skip = next;
            next = Math.min(MAX_SKIP, next * 2);
        }
    }

    /**
     * Tries {@code h}, a read, against the page cache unless the session's {@code backoff} says to
     * skip it; true when it completed {@code h} (the whole transfer was there), false when the
     * caller must queue it.
     */
    boolean tryComplete(IoHandle h, CallState cs, Backoff backoff) {
        if (!enabled || (h.flags() & IoHandle.FLAG_BUFFERED) == 0 || !backoff.tryNext()) {
            return false;
        }
        long r = Posix.preadv2(cs, h.fd(), h.iovecs(), h.iovcnt(), h.offset(), Posix.RWF_NOWAIT);
        if (r != h.length()) {
            backoff.missed();
            return false; // EAGAIN (not cached), a short copy, or an error: glibc reads it and reports
        }
        backoff.hit();
        h.complete((int) r);
        return true;
    }
}
