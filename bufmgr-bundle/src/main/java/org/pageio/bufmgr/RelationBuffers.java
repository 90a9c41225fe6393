package org.pageio.bufmgr;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.pageio.api.IoHandle;
import org.pageio.bufmgr.smgr.SmgrRelation;

/**
 * PostgreSQL's {@code DropRelationBuffers} / {@code InvalidateBuffer} for a relation that goes
 * away: every buffer tagged with it loses its tag and its page, dirty ones included — they are
 * discarded, not written (the file is about to be unlinked) — and so do written ones whose write
 * is not yet durable (UNSYNCED): nothing is fsynced for a file about to be unlinked. Kept out of {@link BufferPool} so the
 * pool's hot paths stay as they are; it uses only the pool's state-word rules.
 *
 * <h2>How one buffer is invalidated</h2>
 * Like eviction: pin it (CAS from refcount 0, not under I/O), check the tag again (it may have been
 * retagged before the pin), then one CAS from "pinned only by us, not LOCKED, not under I/O" to
 * untagged, not VALID, not DIRTY (so no write can claim it any more, and the clock sweep cannot take
 * it while we still pin it); then remove the mapping, clear the tag and unpin. A buffer under I/O
 * (a read, or a write by the background writer, a checkpoint or an evicting session) is waited for
 * first through its wait reference, so no write reaches the file after this returns. A buffer
 * pinned by someone else is waited for (PostgreSQL waits too), up to {@link #PIN_WAIT_NANOS} or the
 * caller's wait; then the call fails naming relation, block and buffer (the caller must not pin any
 * itself) — before anything was dropped when the pin was there from the start.
 *
 * <p>Runs in the session's thread (it may wait for other sessions' I/O through its own session).
 * Costs one pass over the descriptors (PostgreSQL does the same unless the relation is small).
 */
final class RelationBuffers {

    /** How long a buffer pinned by someone else is waited for. */
    static final long PIN_WAIT_NANOS = TimeUnit.SECONDS.toNanos(30);

    private RelationBuffers() {
    }

    /**
     * Returns how many buffers were dropped, of every fork of {@code rel} when it is the main fork
     * ({@link SmgrRelation#openForks}); {@code dirty[0]} receives how many of them were dirty.
     * First waits, up to {@code pinWaitNanos}, until no buffer of {@code rel} is pinned, and fails
     * before anything is dropped if one still is: a caller that keeps the relation when this fails
     * (a refused {@code DROP}) loses no dirty page. A pin taken after that first pass is waited for
     * again below, within the same deadline (PostgreSQL's lock makes that window impossible; here it
     * is one pass long).
     */
    static int drop(BufferSession session, SmgrRelation rel, long[] dirty, long pinWaitNanos) {
        long deadline = System.nanoTime() + pinWaitNanos;
        // every fork first (the main fork stands for the relation): a pinned fork buffer fails
        // the drop before any fork lost a buffer
        java.util.List<SmgrRelation> forks = rel.openForks();
        for (SmgrRelation f : forks) {
            awaitUnpinned(session.pool(), f, deadline, pinWaitNanos);
        }
        int dropped = 0;
        for (SmgrRelation f : forks) {
            dropped += dropFork(session, f, dirty, deadline, pinWaitNanos);
        }
        return dropped;
    }

    /** {@link #drop} for one fork, after the wait for pins. */
    private static int dropFork(BufferSession session, SmgrRelation rel, long[] dirty, long deadline, long pinWaitNanos) {
        BufferPool pool = session.pool();
        int relId = rel.id();
        int dropped = 0;
        for (int buf = 0; buf < pool.nbuffers(); buf++) {
            long s = pool.state(buf); // acquire: the tag read below is the one this state published
            if ((s & BufferPool.TAG_VALID) == 0 || BufferPool.tagRelation(pool.tags[buf]) != relId) {
                continue;
            }
            int r = invalidate(session, pool, buf, pool.tags[buf], rel, deadline, pinWaitNanos);
            if (r > 0) {
                dropped++;
                if (r == 2) {
                    dirty[0]++;
                }
            }
        }
        return dropped;
    }

    /** Waits until no buffer tagged with {@code rel} is pinned; throws {@link #stillPinned} at the deadline. */
    private static void awaitUnpinned(BufferPool pool, SmgrRelation rel, long deadline, long pinWaitNanos) {
        int relId = rel.id();
        for (int buf = 0; buf < pool.nbuffers(); buf++) {
            for (;;) {
                long s = pool.state(buf); // acquire: the tag read below is the one this state published
                long key = pool.tags[buf];
                if ((s & BufferPool.TAG_VALID) == 0 || BufferPool.tagRelation(key) != relId
                        || BufferPool.refcount(s) == 0) {
                    break;
                }
                if (System.nanoTime() - deadline > 0) {
                    throw stillPinned(rel, key, buf, pinWaitNanos);
                }
                LockSupport.parkNanos(100_000);
            }
        }
    }

    private static IllegalStateException stillPinned(SmgrRelation rel, long key, int buf, long pinWaitNanos) {
        return new IllegalStateException("cannot drop the buffers of relation " + rel + ": block "
                + BufferPool.tagBlock(key) + " (buffer " + buf + ") is still pinned by another session after "
                + TimeUnit.NANOSECONDS.toMillis(pinWaitNanos) + " ms");
    }

    /** 0: the buffer no longer held {@code key}; 1: dropped clean; 2: dropped dirty. */
    private static int invalidate(BufferSession session, BufferPool pool, int buf, long key, SmgrRelation rel,
            long deadline, long pinWaitNanos) {
        // the tag is checked again after the pin: the buffer may have been evicted and retagged
        // (same state bits, other tag) between the caller's look and our CAS
        for (;;) {
            long s = pool.state(buf);
            if ((s & BufferPool.TAG_VALID) == 0 || pool.tags[buf] != key) {
                return 0;
            }
            if ((s & BufferPool.IO_IN_PROGRESS) != 0) {
                long ref = pool.ioRef(buf);
                if (ref != IoHandle.NO_WAIT_REF) {
                    session.io().awaitRef(ref); // the I/O's completion clears IO_IN_PROGRESS
                } else {
                    Thread.onSpinWait(); // claimed, reference not yet published: a short window
                }
                continue;
            }
            if (BufferPool.refcount(s) != 0) {
                if (System.nanoTime() - deadline > 0) {
                    throw stillPinned(rel, key, buf, pinWaitNanos);
                }
                LockSupport.parkNanos(100_000);
                continue;
            }
            // pin it, as eviction does, so the clock sweep cannot take it while we untag it
            if (!pool.casState(buf, s, s + BufferPool.REFCOUNT_ONE)) {
                continue;
            }
            long p = s + BufferPool.REFCOUNT_ONE;
            if (pool.tags[buf] != key) {
                pool.unpin(buf);
                return 0;
            }
            boolean wasDirty = (p & BufferPool.DIRTY) != 0;
            long untagged = p & ~(BufferPool.TAG_VALID | BufferPool.VALID | BufferPool.DIRTY | BufferPool.IO_ERROR
                    | BufferPool.UNSYNCED | BufferPool.USAGE_MASK);
            if (!pool.casState(buf, p, untagged)) {
                pool.unpin(buf); // someone pinned it or a write claimed it meanwhile: look again
                continue;
            }
            pool.mapping().remove(key, buf);
            pool.tags[buf] = -1;
            pool.writeErrno[buf] = 0;
            if ((p & BufferPool.UNSYNCED) != 0) { // written, maybe not durable: no fsync is owed for a relation going away
                rel.leftBuffersUnsynced(pool.writtenEpoch[buf]);
            }
            pool.writtenEpoch[buf] = 0;
            pool.unpin(buf); // volatile CAS: publishes the cleared tag with the state
            return wasDirty ? 2 : 1;
        }
    }
}
