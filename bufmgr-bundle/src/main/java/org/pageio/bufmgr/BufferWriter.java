package org.pageio.bufmgr;

import java.lang.foreign.MemorySegment;
import org.pageio.api.IoHandle;
import org.pageio.api.IoSession;
import org.pageio.bufmgr.page.Page;
import org.pageio.bufmgr.smgr.SmgrRelation;
import org.pageio.bufmgr.stats.StatIo;
import org.pageio.bufmgr.stats.StatIo.Column;
import org.pageio.bufmgr.stats.StatIo.IoContext;
import org.pageio.posix.PosixException;

/**
 * Asynchronous write-back of dirty buffers through the session's I/O handles: one
 * {@code writev} per run of adjacent dirty blocks, up to {@code io_combine_limit} and never across
 * a segment boundary, completed by {@link SharedBufferWritev} in whichever thread completes it.
 * Used by eviction, the checkpointer and the background writer. One per {@link BufferSession};
 * confined to its thread.
 *
 * <h2>Write rules (the state word)</h2>
 * <ul>
 *   <li>A write <b>claims</b> a buffer by one CAS from {@code DIRTY|VALID|TAG_VALID}, neither
 *       IO_IN_PROGRESS nor LOCKED, to the same plus IO_IN_PROGRESS and one pin owned by the I/O;
 *       the tag is read again after the claim (a dirty buffer is never evicted, and a claimed one
 *       cannot be), so a stale look-up is detected and the claim given back.</li>
 *   <li>The page checksum is computed by the issuer after the claim and before the I/O starts:
 *       modifiers hold LOCKED and wait for IO_IN_PROGRESS to clear before taking it
 *       ({@link #lockForModify}), so the image on its way to the kernel never changes.</li>
 *   <li>Only the completion ({@link #terminateWrite}, any thread) ends a write: it stores the
 *       errno, clears the wait reference, then one CAS clears IO_IN_PROGRESS (and DIRTY on
 *       success) and drops the I/O's pin. A failed block stays DIRTY and VALID.</li>
 *   <li>Readers are not excluded: a VALID buffer under a write is a hit.</li>
 * </ul>
 * The handle is acquired before any buffer is claimed (the AIO core's rule: never block holding a
 * claim).
 */
final class BufferWriter {

    private final BufferPool pool;
    private final BufferSession session;
    private final IoSession io;
    private final SharedBufferWritev callback;
    private final long[] addresses;
    private final int[] claimed;
    /** Blocks and writes this writer issued (for the checkpoint's report). */
    long blocksIssued;
    long writesIssued;

    BufferWriter(BufferPool pool, BufferSession session) {
        this.pool = pool;
        this.session = session;
        this.io = session.io();
        this.callback = new SharedBufferWritev(pool);
        int max = pool.settings().ioMaxCombineLimit();
        this.addresses = new long[max];
        this.claimed = new int[max];
    }

    // ------------------------------------------------------------------ state-word transitions

    /** Claims {@code buf} for a write if it is dirty, valid, tagged, unlocked and not under I/O. */
    static boolean claimWrite(BufferPool pool, int buf) {
        for (;;) {
            long s = pool.state(buf);
            if ((s & (BufferPool.DIRTY | BufferPool.VALID | BufferPool.TAG_VALID)) != (BufferPool.DIRTY
                    | BufferPool.VALID | BufferPool.TAG_VALID) || (s & (BufferPool.IO_IN_PROGRESS | BufferPool.LOCKED)) != 0) {
                return false;
            }
            // CAS (volatile): the claim and the I/O's pin at once; tags[] is read after it.
            if (pool.casState(buf, s, (s | BufferPool.IO_IN_PROGRESS) + BufferPool.REFCOUNT_ONE)) {
                return true;
            }
            Thread.onSpinWait();
        }
    }

    /** Gives back a claim whose I/O was never started. */
    static void unclaimWrite(BufferPool pool, int buf) {
        for (;;) {
            long s = pool.state(buf);
            if (pool.casState(buf, s, (s & ~BufferPool.IO_IN_PROGRESS) - BufferPool.REFCOUNT_ONE)) {
                return;
            }
        }
    }

    /**
     * Ends a write of {@code buf}: on errno 0 clean and UNSYNCED (not reusable until an fsync
     * covers the epoch recorded here), else still dirty with the errno kept. Any thread. The
     * caller registered the segment for an fsync again before (see {@link SharedBufferWritev}).
     */
    static void terminateWrite(BufferPool pool, int buf, int errno) {
        pool.writeErrno[buf] = errno; // published by the CAS below (volatile), as is the epoch
        if (errno == 0) {
            pool.writtenEpoch[buf] = pool.storage().currentEpoch(); // after the write returned: a later sync covers it
        }
        BufferPool.LONGS.setRelease(pool.ioRefs, buf, IoHandle.NO_WAIT_REF);
        for (;;) {
            long s = pool.state(buf);
            long n = (s & ~BufferPool.IO_IN_PROGRESS) - BufferPool.REFCOUNT_ONE;
            if (errno == 0) {
                n = (n & ~BufferPool.DIRTY) | BufferPool.UNSYNCED;
            }
            if (pool.casState(buf, s, n)) {
                return;
            }
        }
    }

    /**
     * Takes {@code buf}'s content lock for modification (the caller pins it and it is valid):
     * waits for a write of it in flight and for another modifier.
     */
    void lockForModify(int buf) {
        for (;;) {
            long s = pool.state(buf);
            if (BufferPool.refcount(s) == 0 || (s & BufferPool.VALID) == 0) {
                throw new IllegalStateException("beginModify of buffer " + buf + " that is not pinned and valid");
            }
            if ((s & BufferPool.IO_IN_PROGRESS) != 0) {
                long ref = pool.ioRef(buf);
                if (ref != IoHandle.NO_WAIT_REF) {
                    io.awaitRef(ref); // submits our staged I/O first; the write's completion clears the flag
                } else {
                    Thread.onSpinWait(); // claimed, reference not yet published: a short window
                }
                continue;
            }
            if ((s & BufferPool.LOCKED) != 0) {
                Thread.yield(); // another modifier: short critical sections
                continue;
            }
            if (pool.casState(buf, s, s | BufferPool.LOCKED)) {
                return;
            }
        }
    }

    /** Releases the content lock, marking the buffer dirty when {@code dirty}. */
    void unlockModified(int buf, boolean dirty) {
        for (;;) {
            long s = pool.state(buf);
            if ((s & BufferPool.LOCKED) == 0) {
                throw new IllegalStateException("endModify of buffer " + buf + " that is not locked");
            }
            long n = s & ~(BufferPool.LOCKED | BufferPool.CLEANUP);
            if (dirty) {
                n |= BufferPool.DIRTY;
            }
            if (pool.casState(buf, s, n)) {
                return;
            }
        }
    }

    // ------------------------------------------------------------------ writing

    /**
     * Starts an asynchronous write of {@code buf}, extended over the following blocks of its
     * relation that are dirty and claimable, up to {@code io_combine_limit} and the segment end.
     * Returns the write's wait reference, or {@link IoHandle#NO_WAIT_REF} when {@code buf} could
     * not be claimed (clean, locked, under I/O, retagged).
     *
     * @throws PosixException when the segment file cannot be opened (nothing is claimed then)
     */
    long writeBack(int buf, IoContext context) throws PosixException {
        long tag = pool.tags[buf];
        long s = pool.state(buf);
        if (tag < 0 || (s & BufferPool.DIRTY) == 0 || (s & (BufferPool.IO_IN_PROGRESS | BufferPool.LOCKED)) != 0) {
            return IoHandle.NO_WAIT_REF;
        }
        SmgrRelation rel = pool.storage().relation(BufferPool.tagRelation(tag));
        long block = BufferPool.tagBlock(tag);
        int fd = rel.fdForWrite(block); // fails cleanly, naming the file, before any claim
        IoHandle h = io.acquireNb();
        if (h == null) {
            io.submitStaged();
            h = io.acquire();
        }
        if (!claimWrite(pool, buf)) {
            h.release();
            return IoHandle.NO_WAIT_REF;
        }
        if (pool.tags[buf] != tag) {
            unclaimWrite(pool, buf);
            h.release();
            return IoHandle.NO_WAIT_REF;
        }
        claimed[0] = buf;
        int n = 1;
        // A block whose last write failed is retried alone, so one bad block cannot keep its
        // neighbours dirty; a combined run also stops before such a block.
        int max = pool.writeErrno[buf] != 0 ? 1
                : (int) Math.min(Math.min(pool.settings().effectiveIoCombineLimit(), claimed.length), rel.maxCombine(block));
        BufferMapping mapping = pool.mapping();
        while (n < max) {
            long key = tag + n;
            int next = mapping.lookup(key);
            if (next < 0 || !claimWrite(pool, next)) {
                break;
            }
            if (pool.tags[next] != key || pool.writeErrno[next] != 0) {
                unclaimWrite(pool, next);
                break;
            }
            claimed[n++] = next;
        }
        boolean checksums = pool.settings().dataChecksums();
        long ref = h.waitRef();
        for (int i = 0; i < n; i++) {
            int b = claimed[i];
            MemorySegment page = pool.page(b);
            if (checksums && !Page.isNew(page)) {
                Page.setChecksum(page, block + i); // at write time, on an image nobody can change now
            }
            addresses[i] = pool.pageAddress(b);
            h.setHandleData(i, b);
            pool.publishIoRef(b, ref);
        }
        h.addCallback(callback, 0);
        int base = session.statBase(context); // after the handle: the method that does this write
        StatIo stats = pool.stats();
        stats.add(base, Column.WRITES, 1);
        stats.add(base, Column.WRITE_BYTES, (long) n * BufferPool.BLCKSZ);
        blocksIssued += n;
        writesIssued++;
        boolean timing = pool.settings().trackIoTiming();
        long t0 = timing ? System.nanoTime() : 0;
        rel.startWritev(h, fd, block, addresses, n);
        if (timing) {
            stats.add(base, Column.WRITE_TIME, System.nanoTime() - t0); // inline execution (sync) lands here
        }
        return ref;
    }

    /** Waits for a write this session or another started; charges write_time with track_io_timing. */
    void awaitWrite(long ref, IoContext context) {
        if (ref == IoHandle.NO_WAIT_REF || io.checkRefDone(ref)) {
            return;
        }
        boolean timing = pool.settings().trackIoTiming();
        long t0 = timing ? System.nanoTime() : 0;
        io.awaitRef(ref);
        if (timing) {
            pool.stats().add(session.statBase(context), Column.WRITE_TIME, System.nanoTime() - t0);
        }
    }

    /**
     * Eviction met a dirty victim that the caller pins: start writing it back and, when
     * {@code wait}, wait for that write (or for the write already in flight on it).
     */
    void writeVictim(int buf, BufferAccessStrategy strategy, boolean wait) throws PosixException {
        IoContext context = strategy == null ? IoContext.NORMAL : strategy.context();
        long ref = writeBack(buf, context);
        if (ref == IoHandle.NO_WAIT_REF && (pool.state(buf) & BufferPool.IO_IN_PROGRESS) != 0) {
            ref = pool.ioRef(buf);
        }
        if (wait) {
            awaitWrite(ref, context);
        } else if (ref != IoHandle.NO_WAIT_REF) {
            io.submitStaged(); // let it run while the sweep goes on
        }
    }
}
