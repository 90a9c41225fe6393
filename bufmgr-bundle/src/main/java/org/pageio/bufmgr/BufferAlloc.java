package org.pageio.bufmgr;

import static org.pageio.bufmgr.BufferPool.DIRTY;
import static org.pageio.bufmgr.BufferPool.IO_ERROR;
import static org.pageio.bufmgr.BufferPool.IO_IN_PROGRESS;
import static org.pageio.bufmgr.BufferPool.MAX_USAGE;
import static org.pageio.bufmgr.BufferPool.REFCOUNT_ONE;
import static org.pageio.bufmgr.BufferPool.TAG_VALID;
import static org.pageio.bufmgr.BufferPool.UNSYNCED;
import static org.pageio.bufmgr.BufferPool.USAGE_MASK;
import static org.pageio.bufmgr.BufferPool.USAGE_ONE;
import static org.pageio.bufmgr.BufferPool.VALID;
import static org.pageio.bufmgr.BufferPool.refcount;
import static org.pageio.bufmgr.BufferPool.tagKey;
import static org.pageio.bufmgr.BufferPool.usage;

import java.util.concurrent.atomic.AtomicLong;
import org.pageio.api.IoHandle;
import org.pageio.bufmgr.smgr.SmgrRelation;
import org.pageio.posix.PosixException;

/**
 * Finding a buffer for a block (PostgreSQL's {@code PinBufferForBlock}/{@code BufferAlloc} in
 * {@code bufmgr.c} and {@code StrategyGetBuffer} in {@code freelist.c}): the mapping lookup, and
 * on a miss a victim from the access strategy's ring or the clock sweep, written back first if
 * dirty, evicted and retagged. The state-word rules it follows are {@link BufferPool}'s: it changes
 * a buffer's identity only while it holds the only pin, by CAS on the state word.
 *
 * <p>Thread-safe: any session's thread; the clock hand is an atomic counter.
 */
final class BufferAlloc {

    private final BufferPool pool;
    /** The clock hand: the next buffer the sweep looks at, modulo {@code shared_buffers}. */
    private final AtomicLong nextVictim = new AtomicLong();

    BufferAlloc(BufferPool pool) {
        this.pool = pool;
    }

    /** Position of the clock hand (for the background writer). */
    long clockHand() {
        return nextVictim.get();
    }

    /**
     * Pins the buffer for {@code block} of {@code rel}, finding it in the pool or claiming a
     * victim and retagging it (PostgreSQL's {@code PinBufferForBlock}/{@code BufferAlloc}). The
     * returned buffer may be VALID (a hit), under I/O, or neither (the caller reads it).
     */
    int pinBufferForBlock(BufferSession session, SmgrRelation rel, long block, BufferAccessStrategy strategy)
            throws PosixException {
        long key = tagKey(rel, block);
        boolean ring = strategy != null;
        for (;;) {
            int buf = pool.mapping().lookup(key);
            if (buf >= 0) {
                if (pool.pinIfTagged(buf, key, ring)) {
                    return buf;
                }
                continue; // retagged meanwhile; look again
            }
            int victim = claimVictim(session, strategy);
            // Publish the tag while nobody can find the buffer (pinned by us, not yet mapped).
            pool.tags[victim] = key;
            pool.writeErrno[victim] = 0;
            pool.writtenEpoch[victim] = 0;
            for (;;) {
                long s = pool.state(victim);
                long n = (s & ~(VALID | IO_ERROR | DIRTY | UNSYNCED | USAGE_MASK)) | TAG_VALID | USAGE_ONE;
                if (pool.casState(victim, s, n)) {
                    break;
                }
            }
            int existing = pool.mapping().insertIfAbsent(key, victim);
            if (existing < 0) {
                return victim;
            }
            // Someone else mapped the block first: give the victim back untagged and use theirs.
            for (;;) {
                long s = pool.state(victim);
                if (pool.casState(victim, s, s & ~(TAG_VALID | USAGE_MASK))) {
                    break;
                }
            }
            pool.tags[victim] = -1;
            pool.unpin(victim);
        }
    }

    /**
     * A buffer pinned once by the caller with no tag: from the strategy ring if it can be reused,
     * else by clock sweep. A valid victim is evicted (written first if dirty). A victim whose last
     * write is not yet durable is not taken: when the sweep meets too many, or a ring's buffer is
     * one, this session fsyncs that relation first ({@link BufferPool#syncForReuse}).
     */
    private int claimVictim(BufferSession session, BufferAccessStrategy strategy) throws PosixException {
        int dirtyVictims = 0;
        session.sweepUnsynced = 0;
        session.sweepUnsyncedRelation = -1;
        int unsyncedLimit = unsyncedVictimsSkipped(pool.nbuffers());
        for (;;) {
            if (session.sweepUnsynced >= unsyncedLimit) {
                // This allocation met only written buffers not yet durable: fsync the relation of
                // the first, then sweep again (also when another sync of it ran meanwhile).
                pool.syncForReuse(session, pool.storage().relation(session.sweepUnsyncedRelation), false);
                session.sweepUnsynced = 0;
                session.sweepUnsyncedRelation = -1;
            }
            int buf = -1;
            boolean reuse = false;
            if (strategy != null) {
                strategy.current = (strategy.current + 1) % strategy.ring.length;
                int candidate = strategy.ring[strategy.current];
                if (candidate >= 0 && pool.tryPinUnused(candidate, 1)) {
                    buf = candidate;
                    reuse = true;
                    long s = pool.state(buf);
                    if ((s & (UNSYNCED | DIRTY)) == UNSYNCED && !pool.settleUnsynced(buf, s) && !reuseRingBuffer(session, buf)) {
                        pool.unpin(buf); // its relation is being synced by someone else: the sweep's turn
                        buf = -1;
                        reuse = false;
                    }
                }
            }
            if (buf < 0) {
                buf = clockSweep(session, unsyncedLimit);
                if (buf == SWEEP_UNSYNCED) {
                    continue; // synced at the top of the loop
                }
                if (buf < 0) {
                    // Every buffer is pinned, some by I/O in flight: wait for one, sweep again.
                    session.io().awaitRef(session.sweepBusyRef);
                    continue;
                }
                if (strategy != null) {
                    strategy.ring[strategy.current] = buf;
                }
            }
            if ((pool.state(buf) & (DIRTY | TAG_VALID)) == (DIRTY | TAG_VALID)) {
                // A dirty victim: start writing it (and its dirty neighbours) back. Rings and a
                // sweep that keeps meeting dirty buffers wait for the write; otherwise the sweep
                // moves on and the buffer is clean when the hand comes round again.
                boolean wait = strategy != null || ++dirtyVictims > MAX_DIRTY_VICTIMS_SKIPPED;
                try {
                    if (reuse) {
                        RingWriteBehind.writeBehind(pool, session, strategy, buf); // one fsync a lap, not one a write
                    }
                    session.writer().writeVictim(buf, strategy, wait);
                } catch (PosixException | RuntimeException e) {
                    pool.unpin(buf); // the victim's file could not be opened: nothing was claimed
                    throw e;
                }
            }
            if (evict(session, buf, strategy, reuse)) {
                return buf;
            }
            long s = pool.state(buf);
            if ((s & (UNSYNCED | DIRTY | IO_IN_PROGRESS)) == UNSYNCED) { // written just now: counts as the sweep's
                noteUnsynced(session, pool.tags[buf]); // pinned: the tag is stable
            }
            pool.unpin(buf);
        }
    }

    /** A victim passed over because its last write is not yet durable; {@code tag} read after its state. */
    private static void noteUnsynced(BufferSession session, long tag) {
        if (tag < 0) {
            return; // retagged meanwhile: not one
        }
        if (session.sweepUnsyncedRelation < 0) {
            session.sweepUnsyncedRelation = BufferPool.tagRelation(tag);
        }
        session.sweepUnsynced++;
    }

    /**
     * A ring's own buffer, pinned by the caller, whose last write (the ring's, a lap ago) is not yet
     * durable: fsyncs its relation, which makes the whole lap durable, unless another sync of it
     * runs. Returns whether the buffer is reusable now.
     */
    private boolean reuseRingBuffer(BufferSession session, int buf) throws PosixException {
        SmgrRelation rel = pool.storage().relation(BufferPool.tagRelation(pool.tags[buf])); // pinned: the tag is stable
        try {
            if (!pool.syncForReuse(session, rel, false)) {
                return false;
            }
        } catch (PosixException | RuntimeException e) {
            pool.unpin(buf);
            throw e;
        }
        long s = pool.state(buf);
        return (s & UNSYNCED) == 0 || pool.settleUnsynced(buf, s);
    }

    /** The hibernating background writer, or null (PostgreSQL's {@code bgwprocno}). */
    private volatile Thread bgwriterLatch;

    /**
     * The background writer asks to be woken at the next clock-sweep allocation ({@code t}), or
     * withdraws ({@code null}); PostgreSQL's {@code StrategyNotifyBgWriter}.
     */
    void notifyBgWriter(Thread t) {
        bgwriterLatch = t;
    }

    /** After an allocation: wakes a hibernating background writer (one volatile read otherwise). */
    private void wakeBgWriter() {
        Thread t = bgwriterLatch;
        if (t != null) {
            bgwriterLatch = null;
            java.util.concurrent.locks.LockSupport.unpark(t);
        }
    }

    /** Dirty victims the clock sweep passes over (their writes started) before it waits for one. */
    static final int MAX_DIRTY_VICTIMS_SKIPPED = 16;

    /** {@link #clockSweep}: every candidate met was written but not yet durable. */
    static final int SWEEP_UNSYNCED = -2;

    /**
     * Written-but-unsynced candidates one sweep passes over before it asks for an fsync: an eighth
     * of the pool, at least 16 (all of a smaller pool).
     */
    static int unsyncedVictimsSkipped(int nbuffers) {
        return Math.min(nbuffers, Math.max(16, nbuffers >>> 3));
    }

    /**
     * PostgreSQL 19's clock sweep: CAS-pin the first unpinned buffer whose usage count is 0 and
     * whose last write is durable. A written buffer not yet covered by an fsync counts as in use
     * (dirty until durable) and is noted in {@code session.sweepUnsynced} (the relation of the
     * first in {@code session.sweepUnsyncedRelation}); once this allocation noted
     * {@code unsyncedLimit}, or a whole sweep found no victim but such buffers, returns
     * {@link #SWEEP_UNSYNCED}. When every buffer is pinned but some are under I/O, returns -1 with
     * the wait reference of one such I/O (its completion drops its pin) in
     * {@code session.sweepBusyRef}, instead of failing.
     */
    private int clockSweep(BufferSession session, int unsyncedLimit) {
        int n = pool.nbuffers();
        int tries = n * (MAX_USAGE + 1) + 1;
        long busyRef = IoHandle.NO_WAIT_REF;
        for (int i = 0; i < tries; i++) {
            int buf = (int) Math.floorMod(nextVictim.getAndIncrement(), (long) n);
            long s = pool.state(buf);
            if (refcount(s) != 0) {
                if ((s & IO_IN_PROGRESS) != 0 && busyRef == IoHandle.NO_WAIT_REF) {
                    busyRef = pool.ioRef(buf);
                }
                continue;
            }
            if (usage(s) > 0) {
                pool.casState(buf, s, s - USAGE_ONE);
                continue;
            }
            if ((s & (UNSYNCED | DIRTY)) == UNSYNCED) { // written, clean; for the others a test of the state read above
                if (!pool.settleUnsynced(buf, s)) {
                    noteUnsynced(session, pool.tags[buf]); // after the state read
                    if (session.sweepUnsynced >= unsyncedLimit) {
                        return SWEEP_UNSYNCED;
                    }
                    continue;
                }
                s &= ~UNSYNCED; // the CAS above cleared exactly that
            } // a dirty one is written first (below, by the caller); its write sets UNSYNCED anew
            if (pool.casState(buf, s, s + REFCOUNT_ONE)) {
                pool.allocations.getAndIncrement();
                wakeBgWriter();
                return buf;
            }
        }
        if (session.sweepUnsynced > 0) {
            session.sweepUnsynced = unsyncedLimit; // a lap without a victim: sync now
            return SWEEP_UNSYNCED;
        }
        if (busyRef != IoHandle.NO_WAIT_REF) {
            session.sweepBusyRef = busyRef;
            return -1;
        }
        throw new IllegalStateException("no unpinned buffers available: all " + pool.nbuffers()
                + " buffers of shared_buffers are pinned (raise shared_buffers or lower effective_io_concurrency)");
    }

    /**
     * Removes a pinned victim's old identity. Returns false if someone else pinned it meanwhile
     * (then the caller picks another).
     */
    private boolean evict(BufferSession session, int buf, BufferAccessStrategy strategy, boolean reuse)
            throws PosixException {
        if ((pool.state(buf) & TAG_VALID) == 0) {
            return true;
        }
        if (!pool.dropPinnedOnce(buf)) {
            return false;
        }
        session.countEviction(strategy, reuse);
        return true;
    }
}
