package org.pageio.method.worker;

import java.lang.foreign.Arena;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.pageio.api.IoHandle;
import org.pageio.posix.CallState;
import org.pageio.posix.Errno;

/**
 * One I/O worker (PostgreSQL's {@code IoWorkerMain}): a daemon thread named
 * {@code pageio io worker N} that takes handles from the submission queue, executes them with
 * preadv/pwritev/fsync ({@link IoHandle#performSynchronously}, which also runs the shared
 * completion callbacks here), and sleeps on its latch ({@link LockSupport#park}) when there is
 * nothing to do.
 *
 * <p>All fields but {@link #thread}, {@link #id} and {@link #bit} belong to the worker's own
 * thread. The worker's {@link CallState} lives in a confined arena of that thread.
 */
final class IoWorker implements Runnable {

    /** PostgreSQL's {@code PGAIO_WORKER_WAKEUP_RATIO_SATURATE}. */
    static final int WAKEUP_RATIO_SATURATE = 4;

    /** Why a worker left the pool. */
    enum Exit { RETIRED, ABOVE_MAX, STOPPED, DIED }

    final WorkerPool pool;
    final int id;
    final long bit;
    final Thread thread;

    // ---- the worker thread's own state ----
    /** The handle being executed, and its generation: completed with -EIO if this worker dies. */
    private IoHandle current;
    private long currentGeneration;
    /** Decaying counts of wake-ups received and I/Os executed (the wake-up chain's ratio test). */
    private int histWakeups;
    private int histIos;
    /** The idle-timeout deadline (System.nanoTime), when armed; and the timeout it was armed with. */
    private boolean armed;
    private long deadline;
    private int timeoutUsed;
    private Exit exit = Exit.STOPPED;
    /**
     * {@link System#nanoTime} when this worker dequeued its current (or last) handle, or was created.
     * Plain: written by the worker only under the queue lock, read by others under it
     * ({@link CpuCap#awakeSoonLocked}); the constructor's value is published with the slot.
     */
    long busySince;
    /**
     * A decaying average of this worker's I/O times (each I/O weighs 1/8), in ns: whether its I/Os
     * are short (copies from the page cache) or long (reads from a device). Plain: written by the
     * worker under the queue lock, at the dequeue after the I/O, and read by others under it.
     */
    long ioNanosAvg;
    /** Whether the previous turn of the loop executed an I/O (its time ends at the next dequeue). */
    private boolean executed;
    /** Chosen by a waker at the last wake-up (hand-off counters only). */
    private boolean wokenForWork;

    IoWorker(WorkerPool pool, int id) {
        this.pool = pool;
        this.id = id;
        this.bit = 1L << id;
        this.busySince = System.nanoTime(); // just launched: it looks at the queue first
        this.thread = new Thread(this, "pageio io worker " + id);
        this.thread.setDaemon(true);
    }

    @Override
    public void run() {
        Throwable death = null;
        try (Arena arena = Arena.ofConfined()) {
            work(CallState.allocate(arena));
        } catch (Throwable t) {
            death = t;
            exit = Exit.DIED;
            failCurrent();
        } finally {
            pool.workerExited(this, exit, death);
        }
    }

    /**
     * A worker that dies while holding a handle completes it with {@code -EIO}: nobody else will,
     * and its waiters must not hang. EIO rather than ECANCELED because the worker cannot know
     * whether the system call already ran (a write may have reached the kernel); it is the same
     * result {@link IoHandle#performSynchronously} gives when the call itself throws. The handle is
     * still this I/O's only if its generation matches and it is still SUBMITTED: nobody else
     * completes a handle a worker dequeued, so that check cannot race.
     */
    private void failCurrent() {
        IoHandle h = current;
        current = null;
        if (h != null && h.generation() == currentGeneration && h.state() == IoHandle.SUBMITTED) {
            h.complete(-Errno.EIO);
            pool.waiters.wakeWaiters(h);
        }
    }

    private void work(CallState cs) {
        final WorkerPool p = pool;
        final SubmissionQueue q = p.queue;
        final PoolCounters counters = p.counters;
        for (;;) {
            if (p.stopping()) {
                exit = Exit.STOPPED;
                return;
            }
            WorkerSettings s = p.settings();
            if (id >= s.maxWorkers()) {
                exit = Exit.ABOVE_MAX; // io_max_workers was lowered: the highest ids leave
                return;
            }

            IoHandle h;
            int wake = -1;
            int depth = 0;
            boolean maybeGrow = false;
            long dequeueTime = System.nanoTime();
            q.lock();
            try {
                q.arrivedLocked(bit);
                if (executed) { // the previous I/O ended just before this turn began
                    executed = false;
                    ioNanosAvg += (dequeueTime - busySince - ioNanosAvg) / 8;
                }
                h = q.dequeueLocked();
                if (h == null) {
                    // Empty: before going idle, poll a little (one worker at a time), unlocked.
                    q.unlock();
                    try {
                        p.pollQueue(id);
                    } finally {
                        q.lock();
                    }
                    // A submitter may have chosen this worker while the lock was free (its idle bit
                    // was still set from an earlier turn): it has arrived now, or the held-wake watch
                    // would count it as on its way for as long as its next I/O lasts.
                    q.arrivedLocked(bit);
                    h = q.dequeueLocked();
                }
                if (h != null) {
                    busySince = dequeueTime;
                    current = h; // from here on, dying completes it
                    currentGeneration = h.generation();
                    q.clearIdleLocked(bit);
                    // Wake a higher peer only if this worker is not itself woken for nothing.
                    depth = q.depthLocked();
                    if (histWakeups <= histIos) {
                        // PostgreSQL: wake the lowest idle worker above this one while anything is
                        // queued; pageio's hand-off policy may hold that wake-up back (CPU cap)
                        if (depth > 0 && !p.handOff.cpuCap.holdsWakeLocked(dequeueTime)) {
                            wake = q.chooseIdleLocked(id);
                        }
                        // PostgreSQL's grow condition: more queued and no idle worker above this one
                        maybeGrow = depth > 0 && wake < 0 && !q.idleAboveLocked(id);
                    } else if (depth > 0) {
                        p.handOff.watch.holdLocked(dequeueTime); // nobody woken for the rest: the supervisor watches
                    }
                } else {
                    q.setIdleLocked(bit);
                }
            } finally {
                q.unlock();
            }
            if (PoolCounters.COUNT_HANDOFFS) {
                if (wokenForWork && h == null) {
                    counters.countHandOff(PoolCounters.HO_FUTILE_WAKEUPS);
                }
                wokenForWork = false;
            }
            if (wake >= 0) {
                counters.countHandOff(PoolCounters.HO_CHAIN_WAKES);
                p.workers.wake(wake);
            } else if (maybeGrow && depth > p.workers.count()) {
                p.supervisor.requestGrow(); // a backlog deeper than the pool, and no idle peer above: grow
            } else if (depth > 0) {
                p.handOff.watch.watch(dequeueTime); // if a peer's wake-up was held back, the supervisor watches
            }

            if (h != null) {
                armed = false;
                if (++histIos == WAKEUP_RATIO_SATURATE) {
                    histIos /= 2;
                    histWakeups /= 2;
                }
                p.maybeInjectFault(this, h);
                h.performSynchronously(cs); // never throws; runs the shared callbacks here
                current = null;
                p.waiters.wakeWaiters(h);
                counters.countIo(id);
                executed = true;
                continue;
            }

            p.supervisor.cancelGrow();
            counters.countHandOff(PoolCounters.HO_WORKER_PARKS);
            boolean canTimeout = p.workers.canTimeout(id, s);
            if (canTimeout) {
                long now = System.nanoTime();
                if (!armed || timeoutUsed != s.idleTimeoutMs()) {
                    // Just became the highest worker above the minimum, or the timeout changed.
                    armed = true;
                    timeoutUsed = s.idleTimeoutMs();
                    deadline = now + TimeUnit.MILLISECONDS.toNanos(timeoutUsed);
                }
                long left = deadline - now;
                if (left > 0) {
                    LockSupport.parkNanos(p, left);
                }
            } else {
                armed = false;
                LockSupport.park(p);
            }
            Thread.interrupted(); // an interrupt must not turn park into a spin; stop uses flags

            if (!q.isIdle(bit)) {
                // Someone chose this worker (its idle bit was cleared): a wake-up for work.
                if (PoolCounters.COUNT_HANDOFFS) {
                    wokenForWork = true;
                    counters.countHandOff(PoolCounters.HO_WAKEUPS_FOR_WORK);
                }
                if (++histWakeups == WAKEUP_RATIO_SATURATE) {
                    histIos /= 2;
                    histWakeups /= 2;
                }
            } else if (canTimeout && armed && System.nanoTime() - deadline >= 0
                    && p.workers.canTimeout(id, p.settings()) && p.settings().idleTimeoutMs() == timeoutUsed
                    && p.tryRetire(this)) {
                exit = Exit.RETIRED;
                return;
            }
        }
    }
}
