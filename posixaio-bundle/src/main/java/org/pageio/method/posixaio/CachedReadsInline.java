package org.pageio.method.posixaio;

import org.pageio.api.IoHandle;
import org.pageio.posix.CallState;
import org.pageio.posix.Iovec;
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
 * read never finds the page cache. A cold read pays one system call that returns at once.
 *
 * <p>why: docs/performance.md, "A table in shared buffers and sessions at once". Owner thread only
 * (it runs inside {@code submit}); no allocation; {@link #enabled} is volatile, for tests.
 */
final class CachedReadsInline {

    /** Whether buffered reads are tried against the page cache first. Volatile: read once per read. */
    volatile boolean enabled = true;

    /**
     * Tries {@code h}, a read, against the page cache; true when it completed {@code h} (the whole
     * transfer was there), false when the caller must queue it.
     */
    boolean tryComplete(IoHandle h, CallState cs) {
        if (!enabled || (h.flags() & IoHandle.FLAG_BUFFERED) == 0) {
            return false;
        }
        long want = 0;
        for (int i = 0; i < h.iovcnt(); i++) {
            want += Iovec.length(h.iovecs(), i);
        }
        long r = Posix.preadv2(cs, h.fd(), h.iovecs(), h.iovcnt(), h.offset(), Posix.RWF_NOWAIT);
        if (r != want) {
            return false; // EAGAIN (not cached), a short copy, or an error: glibc reads it and reports
        }
        h.complete((int) r);
        return true;
    }
}
