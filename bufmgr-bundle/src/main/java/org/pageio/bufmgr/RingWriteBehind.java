package org.pageio.bufmgr;

import static org.pageio.bufmgr.BufferPool.DIRTY;
import static org.pageio.bufmgr.BufferPool.IO_IN_PROGRESS;
import static org.pageio.bufmgr.BufferPool.LOCKED;
import static org.pageio.bufmgr.BufferPool.TAG_VALID;
import static org.pageio.bufmgr.BufferPool.refcount;

import org.pageio.api.IoHandle;
import org.pageio.posix.PosixException;

/**
 * pageio's tuning of a ring that meets dirty buffers (VACUUM's: every page it prunes is dirty when
 * the ring comes round to it): when the ring's next buffer must be written before it can be reused,
 * every other dirty buffer of the ring that nobody pins is written back too, asynchronously.
 *
 * <p><b>Why.</b> PostgreSQL writes a dirty ring buffer when it reuses it and moves on. pageio
 * reuses a written buffer only once an fsync covers its write (the pool's rule: a page leaves
 * shared buffers only once durable), so writing each dirty buffer at its reuse means an fsync at
 * almost every reuse: one per combined write, 1,315 for a VACUUM of 21,277 pages with the default
 * 2MB ring. Written a lap ahead, the ring's buffers are all covered by the one fsync the next reuse
 * needs, and the rest of the lap reuses them without any: one fsync per lap of the ring
 * ({@code docs/performance.md}, "VACUUM, the visibility map and index-only scans").
 *
 * <p>Only buffers that are dirty, valid, unpinned, unlocked and not under I/O are started (the
 * write-back claims them by CAS as any write does); their writes are combined with their dirty
 * neighbours as every write-back is. The session's thread, holding no content lock.
 */
final class RingWriteBehind {

    private RingWriteBehind() {
    }

    /**
     * Starts the write-back of the ring's dirty buffers other than {@code victim}; returns how many
     * writes it started.
     */
    static int writeBehind(BufferPool pool, BufferSession session, BufferAccessStrategy strategy, int victim)
            throws PosixException {
        int[] ring = strategy.ring;
        int started = 0;
        for (int k = 1; k < ring.length; k++) {
            int b = ring[(strategy.current + k) % ring.length];
            if (b < 0 || b == victim) {
                continue;
            }
            long s = pool.state(b);
            if ((s & (DIRTY | TAG_VALID | IO_IN_PROGRESS | LOCKED)) == (DIRTY | TAG_VALID) && refcount(s) == 0
                    && session.writer().writeBack(b, strategy.context()) != IoHandle.NO_WAIT_REF) {
                started++;
            }
        }
        if (started > 0) {
            session.io().submitStaged(); // they run while the victim's own write is waited for
        }
        return started;
    }
}
