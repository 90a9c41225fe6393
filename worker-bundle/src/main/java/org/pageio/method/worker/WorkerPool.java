package org.pageio.method.worker;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.pageio.api.IoHandle;
import org.pageio.posix.Errno;

/**
 * The engine of {@code io_method=worker} (PostgreSQL's method_worker.c plus the postmaster's part):
 * a bounded submission queue of handles, up to 32 worker slots with registered/idle bitsets, and a
 * supervisor thread that launches workers (at start, below {@code io_min_workers}, to replace a
 * worker that died, and when the backlog asks for growth, at most one per
 * {@code io_worker_launch_interval}).
 *
 * <h2>Shared state and who touches it</h2>
 * <ul>
 *   <li><b>Queue lock</b> ({@code queueLock}, a CAS spin lock: 0 free, 1 held): guards {@code ring},
 *       {@code head}, {@code tail}, {@code idle} and {@code accepting}. Acquired by a CAS (volatile,
 *       hence acquire), released by a release store. Submitters only <em>try</em> it once
 *       (PostgreSQL 19's conditional acquire: if it is busy, the batch runs in the issuer); workers
 *       and {@link #stop} spin, then yield. Nothing else is taken while it is held.</li>
 *   <li><b>Ring</b>: 64 slots (a power of two), {@code head} = next insert, {@code tail} = next
 *       consume, full when {@code head + 1 == tail} (so 63 usable), as in PostgreSQL. A handle enters
 *       in state SUBMITTED: the issuer's release store of SUBMITTED and then the queue lock order its
 *       definition before the worker's dequeue. {@code head}/{@code tail}/{@code idle} are written
 *       under the lock with release stores so that the gauges may read them without it.</li>
 *   <li><b>registered</b> (bit i = worker i exists): set by the supervisor at launch, cleared by the
 *       worker itself when it exits; atomic read-modify-write (volatile). {@code nworkers} is its bit
 *       count. Ids stay dense: launches take the lowest free id; only the highest may retire.</li>
 *   <li><b>grow / growSignalSent</b>: PostgreSQL's grow request, volatile accesses (PostgreSQL
 *       puts full barriers there). Set by workers, cleared by workers (cancel) and the supervisor.</li>
 *   <li><b>settings</b>: a volatile reference to an immutable {@link WorkerSettings}; replaced by
 *       {@link #reconfigure}, after which every worker and the supervisor are woken.</li>
 *   <li><b>slots</b>: the {@link IoWorker} of each id; release store at launch (before the
 *       registered bit), acquire load by wakers. An entry is never cleared: a waker that picked a
 *       worker that is exiting unparks a finished thread, which is harmless, because an exiting
 *       worker wakes every other worker (PostgreSQL's wake-up-versus-exit rule).</li>
 *   <li><b>counters</b>: per-slot I/O counts have one writer (the worker holding the id), opaque
 *       stores; the others are atomic adds, none on the queued fast path.</li>
 * </ul>
 *
 * <h2>Wake-ups</h2>
 * A worker marks itself idle <em>under the queue lock</em> when it finds the queue empty, and a
 * submitter chooses (and un-marks) the lowest idle worker under the same lock after enqueuing: so
 * either the worker saw the handle or the submitter saw the worker idle. {@link LockSupport#unpark}
 * before {@link LockSupport#park} is not lost (the permit). One worker is woken per batch; a worker
 * that dequeued wakes the lowest idle worker above itself while the queue is non-empty and it is
 * not itself getting useless wake-ups (the {@code hist_wakeups <= hist_ios} ratio), else asks for
 * growth when the queue is deeper than the number of workers.
 */
final class WorkerPool {

    /** The submission queue's size, as PostgreSQL's {@code io_worker_queue_size} (63 usable). */
    static final int QUEUE_SIZE = 64;
    private static final int QUEUE_MASK = QUEUE_SIZE - 1;
    static final int MAX_WORKERS = WorkerSettings.MAX_WORKERS;
    /** When a retry of a failed thread start happens. */
    private static final long LAUNCH_RETRY_NANOS = TimeUnit.MILLISECONDS.toNanos(100);
    private static final int SPINS_BEFORE_YIELD = 64;
    /**
     * How long one worker at a time polls the queue before it goes idle, and how long a waiter
     * polls its handle before it sleeps: a hand-off within that time costs no futex wake-up and
     * no context switch. Off (0): on a busy machine with few CPUs the polling costs more than it
     * saves.
     */
    static final long WORKER_SPIN_NANOS = 0;
    static final long WAITER_SPIN_NANOS = 0;

    private static final System.Logger LOG = System.getLogger(WorkerIoMethod.PID);

    /**
     * Whether the hand-off event counters ({@link HandOffStats}) count: off (a static final, so
     * the JIT drops the counting code). Turning it on means editing this constant; atomic adds when on.
     */
    static final boolean COUNT_HANDOFFS = false;
    static final int HO_BATCHES = 0;
    static final int HO_SUBMIT_WAKES = 1;
    static final int HO_CHAIN_WAKES = 2;
    static final int HO_WORKER_PARKS = 3;
    static final int HO_WAKEUPS_FOR_WORK = 4;
    static final int HO_FUTILE_WAKEUPS = 5;
    static final int HO_WAITS = 6;
    static final int HO_WAITER_SLEEPS = 7;
    static final int HO_WAITER_UNPARKS = 8;
    static final int HO_WAITER_KICKS = 9;
    static final int HO_SUPERVISOR_WAKES = 10;
    static final int HO_COUNTERS = 11;
    /** One counter per 128 bytes (16 longs), so that counting does not add false sharing. */
    private static final int HO_STRIDE = 16;

    private static final VarHandle QUEUE_LOCK;
    private static final VarHandle HEAD;
    private static final VarHandle TAIL;
    private static final VarHandle IDLE;
    private static final VarHandle REGISTERED;
    private static final VarHandle GROW;
    private static final VarHandle GROW_SIGNAL_SENT;
    private static final VarHandle SUPERVISOR_ASLEEP;
    private static final VarHandle PEAK;
    private static final VarHandle LAUNCHES;
    private static final VarHandle RETIREMENTS;
    private static final VarHandle DEATHS;
    private static final VarHandle INLINE_FULL;
    private static final VarHandle INLINE_CONTENDED;
    private static final VarHandle PENDING_REPLACEMENTS;
    private static final VarHandle FAULT;
    private static final VarHandle TAKEN_BACK;
    private static final VarHandle SPINNER;
    private static final VarHandle WAITER_SLOTS;
    private static final VarHandle WAITERS = MethodHandles.arrayElementVarHandle(Thread[].class);
    private static final VarHandle SLOTS = MethodHandles.arrayElementVarHandle(IoWorker[].class);
    private static final VarHandle COUNTS = MethodHandles.arrayElementVarHandle(long[].class);
    private final long[] handOff = new long[HO_COUNTERS * HO_STRIDE];

    static {
        try {
            MethodHandles.Lookup l = MethodHandles.lookup();
            QUEUE_LOCK = l.findVarHandle(WorkerPool.class, "queueLock", int.class);
            HEAD = l.findVarHandle(WorkerPool.class, "head", int.class);
            TAIL = l.findVarHandle(WorkerPool.class, "tail", int.class);
            IDLE = l.findVarHandle(WorkerPool.class, "idle", long.class);
            REGISTERED = l.findVarHandle(WorkerPool.class, "registered", long.class);
            GROW = l.findVarHandle(WorkerPool.class, "grow", boolean.class);
            GROW_SIGNAL_SENT = l.findVarHandle(WorkerPool.class, "growSignalSent", boolean.class);
            SUPERVISOR_ASLEEP = l.findVarHandle(WorkerPool.class, "supervisorAsleep", boolean.class);
            PEAK = l.findVarHandle(WorkerPool.class, "peakWorkers", int.class);
            LAUNCHES = l.findVarHandle(WorkerPool.class, "launches", long.class);
            RETIREMENTS = l.findVarHandle(WorkerPool.class, "retirements", long.class);
            DEATHS = l.findVarHandle(WorkerPool.class, "deaths", long.class);
            INLINE_FULL = l.findVarHandle(WorkerPool.class, "inlineQueueFull", long.class);
            INLINE_CONTENDED = l.findVarHandle(WorkerPool.class, "inlineContended", long.class);
            PENDING_REPLACEMENTS = l.findVarHandle(WorkerPool.class, "pendingReplacements", int.class);
            FAULT = l.findVarHandle(WorkerPool.class, "faultAtNextDequeue", boolean.class);
            TAKEN_BACK = l.findVarHandle(WorkerPool.class, "takenBack", long.class);
            SPINNER = l.findVarHandle(WorkerPool.class, "spinner", int.class);
            WAITER_SLOTS = l.findVarHandle(WorkerPool.class, "waiterSlots", long.class);
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
    /** False once {@link #stop} began: submitters then execute inline. Plain, under the lock. */
    private boolean accepting = true;

    // ---- lock-free state ----
    /** Bit i: worker i exists. getAndBitwiseOr/And (volatile) to change, getVolatile to read. */
    @SuppressWarnings("unused")
    private long registered;
    /** PostgreSQL's {@code grow}: a worker saw a backlog and no higher idle peer. Volatile accesses. */
    @SuppressWarnings("unused")
    private boolean grow;
    /** PostgreSQL's {@code grow_signal_sent}: the supervisor was unparked for it. Volatile accesses. */
    @SuppressWarnings("unused")
    private boolean growSignalSent;
    /** Deaths not yet replaced. Atomic adds; the supervisor consumes them. */
    @SuppressWarnings("unused")
    private int pendingReplacements;
    /** Test hook: the next worker that dequeues a handle throws an {@link Error} while holding it. */
    @SuppressWarnings("unused")
    private boolean faultAtNextDequeue;

    private volatile WorkerSettings settings;
    private volatile boolean stopping;

    private final IoWorker[] slots = new IoWorker[MAX_WORKERS];
    private final long[] slotIos = new long[MAX_WORKERS];
    @SuppressWarnings("unused")
    private int peakWorkers;
    @SuppressWarnings("unused")
    private long launches;
    @SuppressWarnings("unused")
    private long retirements;
    @SuppressWarnings("unused")
    private long deaths;
    @SuppressWarnings("unused")
    private long inlineQueueFull;
    @SuppressWarnings("unused")
    private long inlineContended;
    @SuppressWarnings("unused")
    private long takenBack;
    /**
     * Whether an issuer may take back its queued handle (pageio's rule, not PostgreSQL's). On by
     * default; tests of PostgreSQL's growth rule switch it off, because issuers that absorb the
     * backlog themselves keep the queue shallow and growth slow. Volatile: read once per wait.
     */
    volatile boolean takeBackEnabled = true;
    /**
     * The CPU cap (pageio's): while this many workers are awake on short
     * I/Os (copies from the page cache: {@link #awakeSoonLocked}), nobody else is woken, and the
     * issuer may take back its queued handles although workers are idle. 0: off (PostgreSQL's
     * wake-up rules exactly; tests). Default {@link #DEFAULT_CPU_CAP}. Volatile: tests change it;
     * read under the queue lock and once per submitted batch.
     */
    volatile int cpuCap = DEFAULT_CPU_CAP;
    /** One CPU fewer than the JVM may use (the other runs the issuer), at least 1. */
    static final int DEFAULT_CPU_CAP = Math.max(1, Runtime.getRuntime().availableProcessors() - 1);
    /**
     * {@link System#nanoTime} of the last time handles were left queued with nobody woken for them
     * (the CPU cap or the wake-up rule counted awake workers as taking them soon, a polling worker
     * took the batch's wake-up, or a worker's wake-up ratio kept it from waking a peer); 0 if never.
     * Volatile: written under the queue lock, read by the supervisor to decide whether to watch.
     */
    private volatile long wakeHeldAt;
    /**
     * Whether the supervisor sleeps for longer than {@link #HELD_CHECK_NANOS} (parked until a grow
     * signal or a launch time). Volatile, against {@link #wakeHeldAt}: the supervisor stores it,
     * then reads {@code wakeHeldAt}; a holder stores {@code wakeHeldAt}, then reads it (Dekker; both
     * sequentially consistent), so a held-back wake-up is never left unwatched.
     */
    @SuppressWarnings("unused")
    private volatile boolean supervisorAsleep;
    /** How often the supervisor checks a queue the CPU cap left to awake workers: the cap's worst delay. */
    static final long HELD_CHECK_NANOS = TimeUnit.MILLISECONDS.toNanos(2);
    /**
     * How long a worker counted by the cap must be inside one I/O before the supervisor's check
     * calls it stalled (longer than {@link #busyNanos}: a preempted copy is not a stall).
     */
    static final long STALL_NANOS = TimeUnit.MILLISECONDS.toNanos(1);
    /** How long after the last held-back wake-up the supervisor keeps checking. */
    static final long HELD_LINGER_NANOS = TimeUnit.MILLISECONDS.toNanos(100);
    /** Whether a waiting issuer executes its newest queued handle ({@link #helpNewest}). On; tests switch it off. */
    volatile boolean issuerHelps = true;
    /**
     * The id of the one worker polling the queue before it goes idle, or -1. Claimed by CAS, given
     * up with a volatile store before that worker takes the queue lock again; submitters read it
     * (volatile) under the queue lock and wake nobody while it is set.
     */
    @SuppressWarnings("unused")
    private int spinner = -1;

    // ---- waiters: threads sleeping in waitOne on a handle that a worker (or anyone) completes ----
    /** Bit i: waiter slot i is claimed. Claimed and freed by CAS / atomic and (volatile). */
    @SuppressWarnings("unused")
    private long waiterSlots;
    /** The thread sleeping in slot i, or null; volatile array accesses (see {@link #awaitDone}). */
    private final Thread[] waiters = new Thread[64];
    /** The handle slot i waits for; plain, written before and read after the volatile thread slot. */
    private final IoHandle[] waitingFor = new IoHandle[64];

    private final Thread supervisor;
    /**
     * How long a worker may be inside one I/O and still count as taking the next queued handle
     * soon ({@link #awakeSoonLocked}): 50 µs, about twice a 128 KiB read from the page cache with
     * its checksums, a fraction of a read from a device. Tests change it.
     */
    volatile long busyNanos = BUSY_NANOS;
    static final long BUSY_NANOS = TimeUnit.MICROSECONDS.toNanos(50);

    WorkerPool(WorkerSettings settings) {
        this.settings = settings;
        this.supervisor = new Thread(this::supervise, "pageio io worker supervisor");
        this.supervisor.setDaemon(true);
    }

    /** Starts the supervisor, which launches {@code io_min_workers} workers at once. */
    void start() {
        supervisor.start();
    }

    WorkerSettings settings() {
        return settings;
    }

    boolean stopping() {
        return stopping;
    }

    // ------------------------------------------------------------------ submission (issuer threads)

    /**
     * Queues {@code handles[0..count)} and wakes the lowest idle worker, once per batch. What does
     * not fit, all of it when the queue lock is busy, and everything after {@link #stop}, the issuer
     * executes itself with its session's errno area. Never throws for an I/O error. Allocates nothing.
     */
    void submit(IoHandle[] handles, int count) {
        long now = System.nanoTime();
        int queued = 0;
        int worker = -1;
        if ((boolean) QUEUE_LOCK.compareAndSet(this, 0, 1)) {
            try {
                if (accepting) {
                    while (queued < count && insertLocked(handles[queued])) {
                        queued++;
                    }
                    // A worker polling the queue will see this batch: wake nobody. It gives up
                    // polling before it re-checks the queue under this lock, so nothing is lost.
                    int depth = depthLocked();
                    if ((int) SPINNER.getVolatile(this) >= 0) {
                        if (depth > 1) {
                            holdWakeLocked(now); // the poller takes one; the rest waits for its chain
                        }
                    } else if (wakeNeededLocked(depth, now)) {
                        worker = chooseIdleLocked(-1);
                    }
                }
            } finally {
                unlockQueue();
            }
            countHandOff(HO_BATCHES);
            if (worker >= 0) {
                countHandOff(HO_SUBMIT_WAKES);
                wake(worker);
            } else {
                watchHeldWake(now);
            }
            if (queued < count && accepting()) {
                INLINE_FULL.getAndAdd(this, (long) (count - queued));
            }
        } else {
            INLINE_CONTENDED.getAndAdd(this, (long) count);
        }
        for (int i = queued; i < count; i++) {
            IoHandle h = handles[i];
            h.performSynchronously(h.session().callState());
            wakeWaiters(h); // another session may wait on it through a wait reference
        }
    }

    /** Whether new I/O is queued (false once {@link #stop} began). Any thread; volatile read. */
    boolean accepting() {
        return !stopping;
    }

    private boolean insertLocked(IoHandle h) {
        int hd = (int) HEAD.get(this);
        int next = (hd + 1) & QUEUE_MASK;
        if (next == (int) TAIL.get(this)) {
            return false; // full
        }
        ring[hd] = h;
        HEAD.setRelease(this, next);
        return true;
    }

    /**
     * The issuer is about to sleep on its own handle {@code h} of {@code generation}, which may
     * still be queued. If the pool is behind — at least two handles queued, no worker polling the
     * queue, and no worker idle unless the pool's I/Os are short ({@link #shortIosLocked}; with
     * the CPU cap off: no worker idle) — and {@code h} is one of the queued, it is taken out of
     * the queue and the caller executes it itself: it would otherwise sleep for at least the I/O's
     * time plus two wake-ups. A lone queued handle is never taken back: if no worker is idle an
     * awake one takes it next; if the CPU cap left it to a worker that is now no longer counted as
     * taking it soon (the worker may be in a long system call), the lowest idle worker is woken for
     * it now. Order of the rest of the queue is kept. Returns whether the caller now owns the
     * handle's execution. Issuer thread.
     */
    boolean takeBack(IoHandle h, long generation) {
        int cap = cpuCap;
        boolean pgTake = cap == 0; // with the cap: idle workers do not forbid it
        if ((int) SPINNER.getVolatile(this) >= 0 || !accepting()
                || (pgTake && (!takeBackEnabled || (long) IDLE.getAcquire(this) != 0))) {
            return false; // a worker will be there soon (or stop drains the queue)
        }
        int kick = -1;
        lockQueue();
        try {
            if (!accepting || (int) SPINNER.getVolatile(this) >= 0 || (pgTake && (long) IDLE.get(this) != 0)) {
                return false;
            }
            int tl = (int) TAIL.get(this);
            int hd = (int) HEAD.get(this);
            for (int i = tl; i != hd; i = (i + 1) & QUEUE_MASK) {
                if (ring[i] != h) {
                    continue;
                }
                if (h.generation() != generation) {
                    return false; // cannot happen: a queued handle is SUBMITTED with its generation
                }
                if (depthLocked() < 2 || !takeBackEnabled || ((long) IDLE.get(this) != 0 && !shortIosLocked())) {
                    if (!pgTake && woken == 0 && awakeSoonLocked(System.nanoTime()) < cap) {
                        // nobody is on the way: wake one (-1 if none is idle: an awake one takes it next)
                        kick = chooseIdleLocked(-1);
                    }
                    return false;
                }
                for (int j = i; j != tl; j = (j - 1) & QUEUE_MASK) {
                    ring[j] = ring[(j - 1) & QUEUE_MASK]; // the older ones move up one place
                }
                ring[tl] = null;
                TAIL.setRelease(this, (tl + 1) & QUEUE_MASK);
                TAKEN_BACK.getAndAdd(this, 1L);
                return true;
            }
            return false;
        } finally {
            unlockQueue();
            if (kick >= 0) {
                countHandOff(HO_WAITER_KICKS);
                wake(kick);
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
     * is {@link #takeBack}'s rule. Issuer thread. pageio's, not PostgreSQL's.
     */
    IoHandle helpNewest(org.pageio.api.IoSession session, IoHandle awaited) {
        if (!issuerHelps || (int) SPINNER.getVolatile(this) >= 0 || !accepting()) {
            return null;
        }
        lockQueue();
        try {
            if (!accepting || depthLocked() < 2) {
                return null;
            }
            int newest = ((int) HEAD.get(this) - 1) & QUEUE_MASK;
            IoHandle h = ring[newest];
            if (h == null || h == awaited || h.session() != session) {
                return null;
            }
            ring[newest] = null;
            HEAD.setRelease(this, newest);
            TAKEN_BACK.getAndAdd(this, 1L);
            return h;
        } finally {
            unlockQueue();
        }
    }

    /**
     * Worker {@code id} found the queue empty: if no other worker is polling, polls it for
     * {@link #WORKER_SPIN_NANOS} without the lock. Returns whether something arrived (the caller
     * then dequeues under the lock as usual). Gives the poller role up before returning.
     */
    boolean pollQueue(int id) {
        if (WORKER_SPIN_NANOS <= 0 || !SPINNER.compareAndSet(this, -1, id)) {
            return false;
        }
        try {
            long deadline = System.nanoTime() + WORKER_SPIN_NANOS;
            do {
                if ((int) HEAD.getAcquire(this) != (int) TAIL.getAcquire(this) || stopping) {
                    return true;
                }
                Thread.onSpinWait();
            } while (System.nanoTime() - deadline < 0);
            return false;
        } finally {
            SPINNER.setVolatile(this, -1);
        }
    }

    /** Longest sleep between re-checks in {@link #awaitDone}: a safety net, wake-ups are explicit. */
    private static final long WAIT_RECHECK_NANOS = TimeUnit.MILLISECONDS.toNanos(10);
    /** Re-check interval when all 64 waiter slots are taken (then nobody wakes this waiter). */
    private static final long WAIT_POLL_NANOS = TimeUnit.MICROSECONDS.toNanos(100);

    /**
     * Sleeps until the I/O {@code (h, generation)} reached COMPLETED_SHARED or the handle was
     * reused. The waiter registers in a slot (its handle, then its thread with a volatile store),
     * then a full fence, then re-checks the handle's state; a completer stores the state (volatile,
     * in {@link IoHandle#complete}) and then reads the slots (volatile) in {@link #wakeWaiters}: so
     * either the waiter sees the completion or the completer sees the waiter. Uninterruptible (the
     * interrupt status is kept), like the core's own sleep. Any thread.
     */
    void awaitDone(IoHandle h, long generation) {
        countHandOff(HO_WAITS);
        if (done(h, generation)) {
            return;
        }
        if (WAITER_SPIN_NANOS > 0) {
            long deadline = System.nanoTime() + WAITER_SPIN_NANOS;
            do {
                Thread.onSpinWait();
                if (done(h, generation)) {
                    return;
                }
            } while (System.nanoTime() - deadline < 0);
        }
        Thread me = Thread.currentThread();
        int slot = claimWaiterSlot();
        if (slot >= 0) {
            waitingFor[slot] = h;
            WAITERS.setVolatile(waiters, slot, me);
        }
        VarHandle.fullFence(); // store (slot) - load (state), against complete's store (state) - load (slots)
        boolean interrupted = false;
        try {
            while (!done(h, generation)) {
                countHandOff(HO_WAITER_SLEEPS);
                LockSupport.parkNanos(this, slot >= 0 ? WAIT_RECHECK_NANOS : WAIT_POLL_NANOS);
                if (Thread.interrupted()) {
                    interrupted = true;
                }
            }
        } finally {
            if (slot >= 0) {
                WAITERS.setVolatile(waiters, slot, null);
                waitingFor[slot] = null;
                WAITER_SLOTS.getAndBitwiseAnd(this, ~(1L << slot));
            }
            if (interrupted) {
                me.interrupt();
            }
        }
    }

    static boolean done(IoHandle h, long generation) {
        int s = h.state(); // state first, then generation, as the core reads them
        return h.generation() != generation || s >= IoHandle.COMPLETED_SHARED;
    }

    private int claimWaiterSlot() {
        for (;;) {
            long claimed = (long) WAITER_SLOTS.getVolatile(this);
            if (claimed == -1L) {
                return -1;
            }
            int slot = Long.numberOfTrailingZeros(~claimed);
            if (WAITER_SLOTS.compareAndSet(this, claimed, claimed | (1L << slot))) {
                return slot;
            }
        }
    }

    /**
     * After {@code h} was completed (its state stored with a volatile store): unparks the threads
     * sleeping in {@link #awaitDone} on it. Allocates nothing; one volatile load when nobody waits.
     */
    void wakeWaiters(IoHandle h) {
        long set = (long) WAITER_SLOTS.getVolatile(this);
        while (set != 0) {
            int i = Long.numberOfTrailingZeros(set);
            set &= set - 1;
            Thread t = (Thread) WAITERS.getVolatile(waiters, i);
            if (t != null && waitingFor[i] == h) {
                countHandOff(HO_WAITER_UNPARKS);
                LockSupport.unpark(t);
            }
        }
    }

    // ------------------------------------------------------------------ queue, for workers

    void lockQueue() {
        int spins = 0;
        while (!(boolean) QUEUE_LOCK.compareAndSet(this, 0, 1)) {
            if (++spins < SPINS_BEFORE_YIELD) {
                Thread.onSpinWait();
            } else {
                Thread.yield();
            }
        }
    }

    void unlockQueue() {
        QUEUE_LOCK.setRelease(this, 0);
    }

    /** The oldest queued handle, or null. Queue lock held. */
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

    /**
     * Whether {@code depth} queued handles need another worker woken, {@code now} being
     * {@link System#nanoTime}: PostgreSQL's rule, whenever anything is queued, unless the CPU cap's
     * count of workers that will take it soon is reached ({@link #awakeSoonLocked}); then the
     * hold-back is noted for the supervisor's watch. An awake worker always looks at the queue under the lock before it
     * sleeps, so a handle left to it is never stranded; it only waits until that worker's current
     * I/O is done. Queue lock held.
     */
    boolean wakeNeededLocked(int depth, long now) {
        if (depth <= 0) {
            return false;
        }
        int cap = cpuCap;
        if (cap == 0) {
            return true;
        }
        if (awakeSoonLocked(now) >= cap) {
            holdWakeLocked(now);
            return false;
        }
        return true;
    }

    /**
     * Handles stay queued and nobody is woken for them now: the supervisor watches the queue from
     * {@code now} on ({@link #checkHeldWakes}), so that a worker counted on to take them and then
     * stuck in a long system call does not leave them there. The caller calls
     * {@link #watchHeldWake}{@code (now)} after it released the queue lock. Queue lock held.
     */
    void holdWakeLocked(long now) {
        if (wakeHeldAt != now) {
            wakeHeldAt = now; // volatile: the supervisor watches the workers from now on
        }
    }

    /**
     * After {@link #holdWakeLocked}{@code (now)} (caller outside the queue lock): if that hold is
     * still the latest ({@code wakeHeldAt == now}) and the supervisor sleeps for longer than
     * {@link #HELD_CHECK_NANOS}, wakes it so that it watches the queue. Two volatile loads when it
     * is awake already.
     */
    void watchHeldWake(long now) {
        if (wakeHeldAt == now && supervisorAsleep && SUPERVISOR_ASLEEP.compareAndSet(this, true, false)) {
            LockSupport.unpark(supervisor);
        }
    }

    /**
     * The supervisor's check of held wake-ups, every {@link #HELD_CHECK_NANOS} while wake-ups were
     * held back in the last {@link #HELD_LINGER_NANOS}: if handles are queued, nobody is on the way
     * and fewer awake workers than the CPU cap (at least one) still count as taking one soon (the
     * others got stuck in a long system call or callback after they were counted), wakes the lowest
     * idle worker — PostgreSQL's wake-up, late by at most one check. While handles stay queued
     * behind workers counted as coming, the watch is renewed. Supervisor thread.
     */
    private void checkHeldWakes(long now) {
        int kick = -1;
        lockQueue();
        try {
            if (accepting && depthLocked() > 0) {
                if (woken == 0 && awakeSoonLocked(now, Math.max(busyNanos, STALL_NANOS)) < Math.max(1, cpuCap)) {
                    kick = chooseIdleLocked(-1);
                } else {
                    // Still queued behind workers counted as coming: keep watching. The worker
                    // counted may not have dequeued yet (a slow wake-up) and, on its first turn,
                    // does not hold a wake-up back itself, so nobody else would renew the watch
                    // before it stalls.
                    wakeHeldAt = now;
                }
            }
        } finally {
            unlockQueue();
        }
        if (kick >= 0) {
            countHandOff(HO_SUPERVISOR_WAKES);
            wake(kick);
        }
    }

    /**
     * Workers that will look at the queue soon: registered, not idle, and either chosen by a waker
     * and on their way ({@code woken}), or running short I/Os (their decaying average I/O time is
     * under {@link #busyNanos}: copies from the page cache) and inside the current one for less
     * than {@link #busyNanos}. A worker whose I/Os are long (reads from a device) or that has been
     * inside one system call longer (a stalled disk) is not counted: for it PostgreSQL's rule, wake
     * another, holds. Queue lock held (idle, woken and the workers' {@code busySince} and
     * {@code ioNanosAvg} are stable then).
     */
    int awakeSoonLocked(long now) {
        return awakeSoonLocked(now, busyNanos);
    }

    /** {@link #awakeSoonLocked(long)} counting a worker inside its current I/O for less than {@code inIoNanos}. */
    int awakeSoonLocked(long now, long inIoNanos) {
        long awake = (long) REGISTERED.getVolatile(this) & ~(long) IDLE.get(this);
        int n = 0;
        for (long set = awake; set != 0; set &= set - 1) {
            int id = Long.numberOfTrailingZeros(set);
            IoWorker w = (IoWorker) SLOTS.getAcquire(slots, id);
            if ((woken & (1L << id)) != 0 || w == null
                    || (w.ioNanosAvg < busyNanos && now - w.busySince < inIoNanos)) {
                n++; // on its way, just launched (it looks at the queue first), or busy only briefly
            }
        }
        return n;
    }

    /**
     * Whether the pool's I/Os are short: the decaying average I/O time of worker 0 (which takes the
     * most, being woken first) is under {@link #busyNanos}. Queue lock held.
     */
    boolean shortIosLocked() {
        IoWorker w = (IoWorker) SLOTS.getAcquire(slots, 0);
        return w != null && w.ioNanosAvg < busyNanos;
    }

    /** Whether a worker with an id above {@code id} is idle. Queue lock held. */
    boolean idleAboveLocked(int id) {
        return ((long) IDLE.get(this) & (-1L << (id + 1))) != 0;
    }

    /** Queued handles. Queue lock held. */
    int depthLocked() {
        return ((int) HEAD.get(this) - (int) TAIL.get(this)) & QUEUE_MASK;
    }

    void setIdleLocked(long bit) {
        IDLE.setRelease(this, (long) IDLE.get(this) | bit);
    }

    /** Worker {@code bit} has the queue lock after a wake-up: it is no longer on the way. Lock held. */
    void arrivedLocked(long bit) {
        woken &= ~bit;
    }

    void clearIdleLocked(long bit) {
        IDLE.setRelease(this, (long) IDLE.get(this) & ~bit);
    }

    /** Whether this worker's idle bit is set (nobody chose it since it marked itself). Acquire load. */
    boolean isIdle(long bit) {
        return ((long) IDLE.getAcquire(this) & bit) != 0;
    }

    /**
     * PostgreSQL's {@code pgaio_worker_choose_idle}: the lowest idle worker with an id above
     * {@code onlyAbove} (-1: any), marked not idle; -1 if none. Queue lock held.
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

    /** Sets worker {@code id}'s latch. Outside the queue lock. */
    void wake(int id) {
        IoWorker w = (IoWorker) SLOTS.getAcquire(slots, id);
        if (w != null) {
            LockSupport.unpark(w.thread);
        }
    }

    /** Wakes every registered worker but {@code except} (-1: all): the pool changed. */
    private void wakeAll(int except) {
        long set = (long) REGISTERED.getVolatile(this);
        while (set != 0) {
            int id = Long.numberOfTrailingZeros(set);
            set &= set - 1;
            if (id != except) {
                wake(id);
            }
        }
    }

    int nworkers() {
        return Long.bitCount((long) REGISTERED.getVolatile(this));
    }

    /**
     * PostgreSQL's {@code pgaio_worker_can_timeout}: only the highest-numbered worker, and only if
     * its id is at least {@code io_min_workers}, may retire on the idle timeout.
     */
    boolean canTimeout(int id, WorkerSettings s) {
        if (id < s.minWorkers()) {
            return false;
        }
        long reg = (long) REGISTERED.getVolatile(this);
        return reg != 0 && id == 63 - Long.numberOfLeadingZeros(reg);
    }

    /**
     * The idle timeout fired: retire if nobody chose this worker meanwhile and the queue is empty.
     * Removes it from the idle set; the caller then exits through {@link #workerExited}.
     */
    boolean tryRetire(IoWorker w) {
        lockQueue();
        try {
            if (!isIdle(w.bit) || depthLocked() != 0) {
                return false;
            }
            clearIdleLocked(w.bit);
            return true;
        } finally {
            unlockQueue();
        }
    }

    /** PostgreSQL's {@code pgaio_worker_request_grow}. Any worker. */
    void requestGrow() {
        if (nworkers() >= settings.maxWorkers()) {
            return;
        }
        if ((boolean) GROW.getVolatile(this)) {
            return;
        }
        GROW.setVolatile(this, true);
        if ((boolean) GROW_SIGNAL_SENT.getVolatile(this)) {
            return; // the supervisor already knows; it waits for the launch interval
        }
        GROW_SIGNAL_SENT.setVolatile(this, true);
        LockSupport.unpark(supervisor);
    }

    /** PostgreSQL's {@code pgaio_worker_cancel_grow}: a worker saw the queue empty. */
    void cancelGrow() {
        if ((boolean) GROW.getVolatile(this)) {
            GROW.setVolatile(this, false);
        }
    }

    /** Counts hand-off event {@code c} (an {@code HO_*} constant) when counting is on. Atomic add. */
    void countHandOff(int c) {
        if (COUNT_HANDOFFS) {
            COUNTS.getAndAdd(handOff, c * HO_STRIDE, 1L);
        }
    }

    HandOffStats handOffStats() {
        long[] v = new long[HO_COUNTERS];
        for (int i = 0; i < HO_COUNTERS; i++) {
            v[i] = (long) COUNTS.getVolatile(handOff, i * HO_STRIDE);
        }
        long ios = 0;
        for (int i = 0; i < MAX_WORKERS; i++) {
            ios += (long) COUNTS.getOpaque(slotIos, i);
        }
        return new HandOffStats(COUNT_HANDOFFS, ios, (long) TAKEN_BACK.getVolatile(this),
                (long) INLINE_FULL.getVolatile(this) + (long) INLINE_CONTENDED.getVolatile(this),
                v[HO_BATCHES], v[HO_SUBMIT_WAKES], v[HO_CHAIN_WAKES], v[HO_WORKER_PARKS], v[HO_WAKEUPS_FOR_WORK],
                v[HO_FUTILE_WAKEUPS], v[HO_WAITS], v[HO_WAITER_SLEEPS], v[HO_WAITER_UNPARKS], v[HO_WAITER_KICKS],
                v[HO_SUPERVISOR_WAKES]);
    }

    /** One more I/O executed by worker {@code id}. Single writer per id: opaque store. */
    void countIo(int id) {
        COUNTS.setOpaque(slotIos, id, (long) COUNTS.getOpaque(slotIos, id) + 1);
    }

    /**
     * Throws if the fault hook is armed (consuming it); waits if the hold hook is armed (consuming
     * it). Called by a worker holding a handle it has not executed yet.
     */
    void maybeInjectFault(IoWorker w, IoHandle h) {
        if ((boolean) FAULT.getOpaque(this) && FAULT.compareAndSet(this, true, false)) {
            throw new InjectedWorkerFault("injected fault in " + w.thread.getName() + " holding " + h);
        }
        java.util.concurrent.CountDownLatch hold = holdNext;
        if (hold != null) {
            holdNext = null;
            try {
                hold.await(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Test hook: set by a test, read after every dequeue (one volatile load). */
    private volatile java.util.concurrent.CountDownLatch holdNext;

    /**
     * Package-private test hook: the next worker to dequeue waits (at most 10 s) for {@code latch}
     * before it executes the handle, which stays SUBMITTED meanwhile, as in a long system call.
     */
    void holdNextDequeue(java.util.concurrent.CountDownLatch latch) {
        holdNext = latch;
    }

    /** Package-private test hook: the next dequeue, in whichever worker, throws an Error. */
    void injectFaultAtNextDequeue() {
        FAULT.setVolatile(this, true);
    }

    /** The Error the fault hook throws. */
    static final class InjectedWorkerFault extends Error {
        private static final long serialVersionUID = 1L;

        InjectedWorkerFault(String message) {
            super(message);
        }
    }

    // ------------------------------------------------------------------ worker life cycle

    /**
     * A worker leaves the pool (retired, above {@code io_max_workers}, stopped, or died). In its own
     * thread, as its last act: out of the idle set (queue lock), out of the registered set, then
     * every other worker is woken (the new highest learns it may time out, and a wake-up that chose
     * this worker is not lost), and the supervisor (to replace or top up to the minimum).
     */
    void workerExited(IoWorker w, IoWorker.Exit reason, Throwable death) {
        lockQueue();
        try {
            clearIdleLocked(w.bit);
            arrivedLocked(w.bit);
        } finally {
            unlockQueue();
        }
        REGISTERED.getAndBitwiseAnd(this, ~w.bit);
        switch (reason) {
            case RETIRED, ABOVE_MAX -> RETIREMENTS.getAndAdd(this, 1L);
            case DIED -> {
                DEATHS.getAndAdd(this, 1L);
                if (!stopping) {
                    PENDING_REPLACEMENTS.getAndAdd(this, 1);
                }
                LOG.log(System.Logger.Level.ERROR, w.thread.getName() + " died; its I/O was completed with -EIO"
                        + " and the supervisor starts a replacement", death);
            }
            case STOPPED -> { }
        }
        wakeAll(w.id);
        LockSupport.unpark(supervisor);
    }

    // ------------------------------------------------------------------ supervisor (the postmaster's part)

    private void supervise() {
        long launchNext = 0;
        boolean launchNextSet = false;
        while (!stopping) {
            WorkerSettings s = settings;
            long sleep = -1; // park until unparked
            int n = nworkers();
            if (n >= s.maxWorkers()) {
                // Nothing to launch. Forget requests, so that a later backlog signals afresh.
                PENDING_REPLACEMENTS.setVolatile(this, 0);
                GROW.setVolatile(this, false);
                GROW_SIGNAL_SENT.setVolatile(this, false);
            } else if (n < s.minWorkers() || (int) PENDING_REPLACEMENTS.getVolatile(this) > 0) {
                // Start, a raised io_min_workers, or a replacement: at once, not gated by the interval.
                if (launch(s)) {
                    if ((int) PENDING_REPLACEMENTS.getVolatile(this) > 0) {
                        PENDING_REPLACEMENTS.getAndAdd(this, -1);
                    }
                    continue;
                }
                sleep = LAUNCH_RETRY_NANOS;
            } else if ((boolean) GROW_SIGNAL_SENT.getVolatile(this)) {
                long now = System.nanoTime();
                if (launchNextSet && launchNext - now > 0) {
                    sleep = launchNext - now; // not yet: at most one launch per interval
                } else {
                    long interval = TimeUnit.MILLISECONDS.toNanos(s.launchIntervalMs());
                    // Advance from the previous launch time, or from now if that is stale.
                    launchNext = launchNextSet && launchNext + interval - now > 0 ? launchNext + interval
                            : now + interval;
                    launchNextSet = true;
                    boolean wanted = (boolean) GROW.getVolatile(this);
                    GROW.setVolatile(this, false);
                    GROW_SIGNAL_SENT.setVolatile(this, false);
                    if (wanted && !launch(s)) {
                        sleep = LAUNCH_RETRY_NANOS;
                    } else {
                        continue;
                    }
                }
            }
            if (stopping) {
                break;
            }
            // Watch a queue left to awake workers while wake-ups are held back.
            long now = System.nanoTime();
            long held = wakeHeldAt;
            if (held != 0 && now - held < HELD_LINGER_NANOS) {
                checkHeldWakes(now);
                sleep = sleep < 0 ? HELD_CHECK_NANOS : Math.min(sleep, HELD_CHECK_NANOS);
            } else if (sleep < 0 || sleep > HELD_CHECK_NANOS) {
                supervisorAsleep = true; // then read wakeHeldAt again: a holder may have missed it
                held = wakeHeldAt;
                if (held != 0 && System.nanoTime() - held < HELD_LINGER_NANOS) {
                    supervisorAsleep = false;
                    continue;
                }
            }
            if (sleep < 0) {
                LockSupport.park(this);
            } else {
                LockSupport.parkNanos(this, sleep);
            }
            supervisorAsleep = false;
            Thread.interrupted(); // interrupts mean nothing here; do not let them turn park into a spin
        }
    }

    /** Starts a worker in the lowest free id (dense ids). Supervisor thread only. */
    private boolean launch(WorkerSettings s) {
        long reg = (long) REGISTERED.getVolatile(this);
        long free = ~reg & (-1L >>> (64 - MAX_WORKERS));
        if (free == 0) {
            return false;
        }
        int id = Long.numberOfTrailingZeros(free);
        if (id >= s.maxWorkers()) {
            return false;
        }
        IoWorker w;
        try {
            w = new IoWorker(this, id);
            SLOTS.setRelease(slots, id, w);
            REGISTERED.getAndBitwiseOr(this, w.bit);
            w.thread.start();
        } catch (Throwable t) {
            REGISTERED.getAndBitwiseAnd(this, ~(1L << id));
            LOG.log(System.Logger.Level.WARNING, "could not start pageio io worker " + id + "; retrying in "
                    + TimeUnit.NANOSECONDS.toMillis(LAUNCH_RETRY_NANOS) + " ms", t);
            return false;
        }
        LAUNCHES.getAndAdd(this, 1L);
        int count = nworkers();
        int peak;
        while (count > (peak = (int) PEAK.getVolatile(this)) && !PEAK.compareAndSet(this, peak, count)) {
            Thread.onSpinWait();
        }
        wakeAll(id); // PostgreSQL's registration wake-up: the previous highest may no longer time out
        return true;
    }

    // ------------------------------------------------------------------ settings, stop, gauges

    /** Applies new (valid) settings live and wakes everybody to re-evaluate. */
    void reconfigure(WorkerSettings s) {
        settings = s;
        wakeAll(-1);
        LockSupport.unpark(supervisor);
    }

    /**
     * Stops accepting, completes the queued-but-not-started handles with {@code -ECANCELED}, lets
     * the running ones finish, and joins the threads within {@code boundNanos}. Returns the number
     * of threads still alive after the bound (0 normally). After this, {@link #submit} executes
     * inline.
     */
    int stop(long boundNanos) {
        IoHandle[] cancelled = new IoHandle[QUEUE_SIZE];
        int n = 0;
        lockQueue();
        try {
            accepting = false;
            stopping = true;
            for (IoHandle h; (h = dequeueLocked()) != null; ) {
                cancelled[n++] = h;
            }
        } finally {
            unlockQueue();
        }
        LockSupport.unpark(supervisor);
        wakeAll(-1);
        for (int i = 0; i < n; i++) {
            cancelled[i].complete(-Errno.ECANCELED);
            wakeWaiters(cancelled[i]);
        }
        long deadline = System.nanoTime() + boundNanos;
        int alive = 0;
        if (!join(supervisor, deadline)) {
            alive++;
        }
        for (int id = 0; id < MAX_WORKERS; id++) { // the supervisor is gone: no new workers
            IoWorker w = (IoWorker) SLOTS.getAcquire(slots, id);
            if (w != null && !join(w.thread, deadline)) {
                alive++;
            }
        }
        if (alive > 0) {
            LOG.log(System.Logger.Level.WARNING, alive + " pageio io worker thread(s) still running "
                    + TimeUnit.NANOSECONDS.toMillis(boundNanos) + " ms after stop (a system call that does not"
                    + " return?); they complete their I/O and exit when it returns");
        }
        return alive;
    }

    private static boolean join(Thread t, long deadline) {
        boolean interrupted = false;
        try {
            while (t.isAlive()) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return false;
                }
                LockSupport.unpark(t);
                try {
                    t.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(Math.min(left, 50_000_000L))));
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
            return true;
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    WorkerPoolStats stats() {
        long[] ios = new long[MAX_WORKERS];
        for (int i = 0; i < MAX_WORKERS; i++) {
            ios[i] = (long) COUNTS.getOpaque(slotIos, i);
        }
        int depth = ((int) HEAD.getAcquire(this) - (int) TAIL.getAcquire(this)) & QUEUE_MASK;
        return new WorkerPoolStats(nworkers(), Long.bitCount((long) IDLE.getAcquire(this)),
                (int) PEAK.getVolatile(this), depth, (long) LAUNCHES.getVolatile(this),
                (long) RETIREMENTS.getVolatile(this), (long) DEATHS.getVolatile(this),
                (long) INLINE_FULL.getVolatile(this), (long) INLINE_CONTENDED.getVolatile(this),
                (long) TAKEN_BACK.getVolatile(this), ios);
    }

    /** The thread of worker {@code id}, if one ever ran there (tests). */
    Thread workerThread(int id) {
        IoWorker w = (IoWorker) SLOTS.getAcquire(slots, id);
        return w == null ? null : w.thread;
    }

    Thread supervisorThread() {
        return supervisor;
    }

    /**
     * The pool's wake-up state in one line, for a hang's report: queue depth, the idle, woken and
     * registered sets, the CPU cap's last hold-back, and each worker's time inside its current I/O
     * and its average I/O time. Takes the queue lock; any thread.
     */
    String wakeState() {
        long now = System.nanoTime();
        StringBuilder b = new StringBuilder(160);
        lockQueue();
        try {
            long held = wakeHeldAt;
            b.append("queue ").append(depthLocked())
                    .append(", idle ").append(Long.toBinaryString((long) IDLE.get(this)))
                    .append(", woken ").append(Long.toBinaryString(woken))
                    .append(", registered ").append(Long.toBinaryString((long) REGISTERED.getVolatile(this)))
                    .append(", cpu cap ").append(cpuCap)
                    .append(", held back ").append(held == 0 ? "never" : TimeUnit.NANOSECONDS.toMicros(now - held) + " µs ago")
                    .append(", supervisor ").append(supervisor.getState()).append(supervisorAsleep ? " asleep" : "");
            for (int id = 0; id < MAX_WORKERS; id++) {
                IoWorker w = (IoWorker) SLOTS.getAcquire(slots, id);
                if (w != null) {
                    b.append("; worker ").append(id).append(' ').append(w.thread.getState())
                            .append(" in I/O ").append(TimeUnit.NANOSECONDS.toMicros(now - w.busySince))
                            .append(" µs, avg ").append(TimeUnit.NANOSECONDS.toMicros(w.ioNanosAvg)).append(" µs");
                }
            }
        } finally {
            unlockQueue();
        }
        return b.toString();
    }
}
