package org.pageio.method.worker;

import org.pageio.api.IoHandle;
import org.pageio.api.IoSession;

/**
 * Part of {@link HandOffPolicy}: what a waiting issuer executes itself instead of sleeping: it takes
 * back its own queued handle when the pool is behind ({@link #takeBack}), and, while it must wait
 * for a handle a worker holds, executes its newest queued handle ({@link #helpNewest}). Both take
 * a handle out of the queue under the queue lock, so that exactly one thread executes it. Issuer
 * thread only (the handle's session's owner).
 */
final class IssuerTakeBack {

    /**
     * Whether an issuer may take back its queued handle. On; tests of PostgreSQL's growth rule
     * switch it off, because issuers that absorb the backlog themselves keep the queue shallow
     * and growth slow. Volatile: read once per wait.
     */
    volatile boolean takeBackEnabled = true;
    /** Whether a waiting issuer executes its newest queued handle ({@link #helpNewest}). On; tests switch it off. */
    volatile boolean issuerHelps = true;

    private final WorkerPool pool;

    IssuerTakeBack(WorkerPool pool) {
        this.pool = pool;
    }

    /**
     * The issuer is about to sleep on its own handle {@code h} of {@code generation}, which may
     * still be queued. If the pool is behind — at least two handles queued, no worker polling the
     * queue, and no worker idle unless the pool's I/Os are short ({@link CpuCap#shortIosLocked};
     * with the CPU cap off: no worker idle) — and {@code h} is one of the queued, it is taken out of
     * the queue and the caller executes it itself: it would otherwise sleep for at least the I/O's
     * time plus two wake-ups. A lone queued handle is never taken back: if no worker is idle an
     * awake one takes it next; if the CPU cap left it to a worker that is now no longer counted as
     * taking it soon (the worker may be in a long system call), the lowest idle worker is woken for
     * it now. Order of the rest of the queue is kept. Returns whether the caller now owns the
     * handle's execution. An advised read ({@link AdvisedReads}) is taken back whenever it is still
     * queued, whatever the depth and the idle workers.
     */
    boolean takeBack(IoHandle h, long generation) {
        SubmissionQueue q = pool.queue;
        CpuCap rule = pool.handOff.cpuCap;
        int cap = rule.cpuCap;
        boolean noCap = cap == 0; // with the cap, idle workers do not forbid it
        boolean advised = pool.handOff.advised.takesBack(h); // its pages are on their way: take it whenever queued
        if (q.polled() || !pool.accepting() || (!advised && noCap && (!takeBackEnabled || q.idleAcquire() != 0))) {
            return false; // a worker will be there soon (or stop drains the queue)
        }
        int kick = -1;
        q.lock();
        try {
            if (!q.acceptingLocked() || q.polled() || (!advised && noCap && q.idleLocked() != 0)) {
                return false;
            }
            int at = q.indexOfLocked(h);
            if (at < 0) {
                return false;
            }
            if (h.generation() != generation) {
                return false; // cannot happen: a queued handle is SUBMITTED with its generation
            }
            if (!advised && (q.depthLocked() < 2 || !takeBackEnabled || (q.idleLocked() != 0 && !rule.shortIosLocked()))) {
                if (!noCap && q.wokenLocked() == 0 && rule.awakeSoonLocked(System.nanoTime()) < cap) {
                    // nobody is on the way: wake one (-1 if none is idle: an awake one takes it next)
                    kick = q.chooseIdleLocked(-1);
                }
                return false;
            }
            q.removeAtLocked(at);
            pool.counters.tookBack();
            return true;
        } finally {
            q.unlock();
            if (kick >= 0) {
                pool.counters.countHandOff(PoolCounters.HO_WAITER_KICKS);
                pool.workers.wake(kick);
            }
        }
    }

    /**
     * The issuer must wait for one of its handles that a worker is executing (or that was not
     * taken back): if at least two handles are queued, no worker is polling, and the newest
     * queued handle is one of the issuer's own session, it is taken out of the queue (the head
     * moves back one place; the rest keeps its order) and returned, and the issuer executes it
     * instead of sleeping: a read it will consume soon (its pages are then in the issuer's cache),
     * on a core that would otherwise idle or wake a sleeping worker. The oldest handles stay for
     * the workers, so a worker woken for them still finds them. Null when there is nothing to
     * help with. Never {@code awaited} itself: whether the issuer executes the handle it waits for
     * is {@link #takeBack}'s rule.
     */
    IoHandle helpNewest(IoSession session, IoHandle awaited) {
        SubmissionQueue q = pool.queue;
        if (!issuerHelps || q.polled() || !pool.accepting()) {
            return null;
        }
        q.lock();
        try {
            if (!q.acceptingLocked() || q.depthLocked() < 2) {
                return null;
            }
            IoHandle h = q.takeNewestLocked(session, awaited);
            if (h != null) {
                pool.counters.tookBack();
            }
            return h;
        } finally {
            q.unlock();
        }
    }
}
