package org.pageio.method.worker;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import org.pageio.api.IoHandle;
import org.pageio.api.IoSession;

/**
 * The submission queue (PostgreSQL's {@code io_worker_submission_queue}) and the state guarded by
 * its lock: the ring of queued handles, the idle and woken worker sets, whether it accepts, and the
 * id of the one worker that polls it.
 *
 * <ul>
 *   <li><b>Queue lock</b> ({@code queueLock}, a CAS spin lock: 0 free, 1 held): guards {@code ring},
 *       {@code head}, {@code tail}, {@code idle}, {@code woken} and {@code accepting}. Acquired by a
 *       CAS (volatile, hence acquire), released by a release store. Submitters only <em>try</em> it
 *       once ({@link #tryLock}: PostgreSQL 19's conditional acquire; if it is busy, the batch runs in
 *       the issuer); workers, waiting issuers, the supervisor and stop spin, then yield
 *       ({@link #lock}). Nothing else is taken while it is held.</li>
 *   <li><b>Ring</b>: 64 slots (a power of two), {@code head} = next insert, {@code tail} = next
 *       consume, full when {@code head + 1 == tail} (so 63 usable), as in PostgreSQL. A handle enters
 *       in state SUBMITTED: the issuer's release store of SUBMITTED and then the queue lock order its
 *       definition before the worker's dequeue. {@code head}/{@code tail}/{@code idle} are written
 *       under the lock with release stores so that the gauges may read them without it.</li>
 * </ul>
 * Methods named {@code ...Locked} require the queue lock.
 */
final class SubmissionQueue {

    /** The submission queue's size, as PostgreSQL's {@code io_worker_queue_size} (63 usable). */
    static final int QUEUE_SIZE = 64;
    private static final int QUEUE_MASK = QUEUE_SIZE - 1;
    private static final int SPINS_BEFORE_YIELD = 64;

    private static final VarHandle QUEUE_LOCK;
    private static final VarHandle HEAD;
    private static final VarHandle TAIL;
    private static final VarHandle IDLE;
    private static final VarHandle SPINNER;

    static {
        try {
            MethodHandles.Lookup l = MethodHandles.lookup();
            QUEUE_LOCK = l.findVarHandle(SubmissionQueue.class, "queueLock", int.class);
            HEAD = l.findVarHandle(SubmissionQueue.class, "head", int.class);
            TAIL = l.findVarHandle(SubmissionQueue.class, "tail", int.class);
            IDLE = l.findVarHandle(SubmissionQueue.class, "idle", long.class);
            SPINNER = l.findVarHandle(SubmissionQueue.class, "spinner", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    // ---- guarded by the queue lock ----
    private final IoHandle[] ring = new IoHandle[QUEUE_SIZE];
    /** 0 = free, 1 = held. CAS to acquire (volatile), setRelease to release. */
    @SuppressWarnings("unused")
    private int queueLock;
    /** Next insert position. Written under the lock with setRelease; gauges read it with getAcquire. */
    @SuppressWarnings("unused")
    private int head;
    /** Next consume position. Same accesses as {@code head}. */
    @SuppressWarnings("unused")
    private int tail;
    /** Bit i: worker i sleeps with nothing to do. Same accesses as {@code head}. */
    @SuppressWarnings("unused")
    private long idle;
    /**
     * Bit i: worker i was chosen (woken for work) and has not yet taken the queue lock since.
     * Plain, under the lock only.
     */
    private long woken;
    /** False once the pool's stop began: submitters then execute inline. Plain, under the lock. */
    private boolean accepting = true;
    /**
     * The id of the one worker polling the queue before it goes idle, or -1. Claimed by CAS, given
     * up with a volatile store before that worker takes the queue lock again; submitters read it
     * (volatile) under the queue lock and wake nobody while it is set.
     */
    @SuppressWarnings("unused")
    private int spinner = -1;

    // ------------------------------------------------------------------ the lock

    /** One attempt at the queue lock (submitters). Volatile CAS. */
    boolean tryLock() {
        return (boolean) QUEUE_LOCK.compareAndSet(this, 0, 1);
    }

    /** Takes the queue lock: spins, then yields. */
    void lock() {
        int spins = 0;
        while (!(boolean) QUEUE_LOCK.compareAndSet(this, 0, 1)) {
            if (++spins < SPINS_BEFORE_YIELD) {
                Thread.onSpinWait();
            } else {
                Thread.yield();
            }
        }
    }

    void unlock() {
        QUEUE_LOCK.setRelease(this, 0);
    }

    // ------------------------------------------------------------------ the ring

    /** Appends {@code h}; false if the queue is full. Lock held. */
    boolean insertLocked(IoHandle h) {
        int hd = (int) HEAD.get(this);
        int next = (hd + 1) & QUEUE_MASK;
        if (next == (int) TAIL.get(this)) {
            return false; // full
        }
        ring[hd] = h;
        HEAD.setRelease(this, next);
        return true;
    }

    /** The oldest queued handle, or null. Lock held. */
    IoHandle dequeueLocked() {
        int tl = (int) TAIL.get(this);
        if (tl == (int) HEAD.get(this)) {
            return null;
        }
        IoHandle h = ring[tl];
        ring[tl] = null;
        TAIL.setRelease(this, (tl + 1) & QUEUE_MASK);
        return h;
    }

    /** Queued handles. Lock held. */
    int depthLocked() {
        return ((int) HEAD.get(this) - (int) TAIL.get(this)) & QUEUE_MASK;
    }

    /** Queued handles, without the lock (gauges): acquire loads. */
    int depthAcquire() {
        return ((int) HEAD.getAcquire(this) - (int) TAIL.getAcquire(this)) & QUEUE_MASK;
    }

    /** The ring position of {@code h} if it is queued, else -1. Lock held. */
    int indexOfLocked(IoHandle h) {
        int hd = (int) HEAD.get(this);
        for (int i = (int) TAIL.get(this); i != hd; i = (i + 1) & QUEUE_MASK) {
            if (ring[i] == h) {
                return i;
            }
        }
        return -1;
    }

    /** Removes the handle at ring position {@code i} ({@link #indexOfLocked}); the older ones move up one place. Lock held. */
    void removeAtLocked(int i) {
        int tl = (int) TAIL.get(this);
        for (int j = i; j != tl; j = (j - 1) & QUEUE_MASK) {
            ring[j] = ring[(j - 1) & QUEUE_MASK];
        }
        ring[tl] = null;
        TAIL.setRelease(this, (tl + 1) & QUEUE_MASK);
    }

    /**
     * Removes and returns the newest queued handle if it belongs to {@code session} and is not
     * {@code awaited} (the head moves back one place; the rest keeps its order); else null. Lock held.
     */
    IoHandle takeNewestLocked(IoSession session, IoHandle awaited) {
        int newest = ((int) HEAD.get(this) - 1) & QUEUE_MASK;
        IoHandle h = ring[newest];
        if (h == null || h == awaited || h.session() != session) {
            return null;
        }
        ring[newest] = null;
        HEAD.setRelease(this, newest);
        return h;
    }

    // ------------------------------------------------------------------ accepting

    boolean acceptingLocked() {
        return accepting;
    }

    /** The pool stops: from now on nothing is queued. Lock held. */
    void stopAcceptingLocked() {
        accepting = false;
    }

    // ------------------------------------------------------------------ idle and woken workers

    /** The idle set. Lock held. */
    long idleLocked() {
        return (long) IDLE.get(this);
    }

    /** The idle set, without the lock (gauges, a first look before taking it): acquire load. */
    long idleAcquire() {
        return (long) IDLE.getAcquire(this);
    }

    void setIdleLocked(long bit) {
        IDLE.setRelease(this, (long) IDLE.get(this) | bit);
    }

    void clearIdleLocked(long bit) {
        IDLE.setRelease(this, (long) IDLE.get(this) & ~bit);
    }

    /** Whether this worker's idle bit is set (nobody chose it since it marked itself). Acquire load. */
    boolean isIdle(long bit) {
        return ((long) IDLE.getAcquire(this) & bit) != 0;
    }

    /** Whether a worker with an id above {@code id} is idle. Lock held. */
    boolean idleAboveLocked(int id) {
        return ((long) IDLE.get(this) & (-1L << (id + 1))) != 0;
    }

    /**
     * PostgreSQL's {@code pgaio_worker_choose_idle}: the lowest idle worker with an id above
     * {@code onlyAbove} (-1: any), marked not idle and woken; -1 if none. Lock held.
     */
    int chooseIdleLocked(int onlyAbove) {
        long set = (long) IDLE.get(this);
        if (onlyAbove >= 0) {
            set &= -1L << (onlyAbove + 1);
        }
        if (set == 0) {
            return -1;
        }
        int id = Long.numberOfTrailingZeros(set);
        IDLE.setRelease(this, (long) IDLE.get(this) & ~(1L << id));
        woken |= 1L << id;
        return id;
    }

    /** The workers chosen by a waker and not yet arrived. Lock held. */
    long wokenLocked() {
        return woken;
    }

    /** Worker {@code bit} has the queue lock after a wake-up: it is no longer on the way. Lock held. */
    void arrivedLocked(long bit) {
        woken &= ~bit;
    }

    // ------------------------------------------------------------------ the poller

    /** Whether a worker polls the queue now. Volatile load. */
    boolean polled() {
        return (int) SPINNER.getVolatile(this) >= 0;
    }

    /** Worker {@code id} becomes the poller, if nobody is (CAS). */
    boolean claimPoller(int id) {
        return SPINNER.compareAndSet(this, -1, id);
    }

    /** The poller gives its role up, before it takes the queue lock again. Volatile store. */
    void releasePoller() {
        SPINNER.setVolatile(this, -1);
    }

    /** Whether anything is queued, without the lock (the poller): acquire loads. */
    boolean nonEmptyAcquire() {
        return (int) HEAD.getAcquire(this) != (int) TAIL.getAcquire(this);
    }
}
