package org.pageio.method.worker;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.pageio.api.IoHandle;
import org.pageio.posix.Errno;

/**
 * The engine of {@code io_method=worker} (PostgreSQL's method_worker.c plus the postmaster's part):
 * the submission of handles, the workers' life cycle, stop, and the gauges.
 *
 * <h2>PostgreSQL's pool</h2>
 * These parts follow method_worker.c, and read as it does:
 * <ul>
 *   <li>{@link SubmissionQueue}: the bounded ring and what its lock guards (idle and woken
 *       workers, whether it accepts, the poller);</li>
 *   <li>{@link WorkerSlots}: which of the 32 worker ids exist, the {@link IoWorker} of each, and
 *       waking them;</li>
 *   <li>{@link IoWorker}: dequeue, wake the next idle worker or ask for growth, execute, sleep,
 *       retire ({@code io_worker_idle_timeout});</li>
 *   <li>{@link PoolSupervisor}: the postmaster's part, launching workers between
 *       {@code io_min_workers} and {@code io_max_workers};</li>
 *   <li>{@link HandleWaiters}: threads sleeping until a handle completed;
 *       {@link PoolCounters}: the gauges' counters.</li>
 * </ul>
 *
 * <h2>Wake-ups (PostgreSQL's one rule)</h2>
 * A worker marks itself idle <em>under the queue lock</em> when it finds the queue empty, and a
 * submitter chooses (and un-marks) the lowest idle worker under the same lock after enqueuing: so
 * either the worker saw the handle or the submitter saw the worker idle. {@link LockSupport#unpark}
 * before {@link LockSupport#park} is not lost (the permit). One worker is woken per batch; a worker
 * that dequeued wakes the lowest idle worker above itself while the queue is non-empty and it is
 * not itself getting useless wake-ups (the {@code hist_wakeups <= hist_ios} ratio), else asks for
 * growth when the queue is deeper than the number of workers.
 *
 * <h2>pageio's hand-off policy</h2>
 * {@link HandOffPolicy} ({@link #handOff}) holds what pageio adds: the CPU cap that may hold either
 * wake-up back, the supervisor's watch over a held wake-up, and issuers that take back or help
 * with their own queued handles. The code above calls it at named points only.
 *
 * <p>Held here: {@code settings}, a volatile reference to an immutable {@link WorkerSettings},
 * replaced by {@link #reconfigure}, after which every worker and the supervisor are woken; and
 * {@code stopping}, volatile, set once by {@link #stop}.
 */
final class WorkerPool {

    static final int QUEUE_SIZE = SubmissionQueue.QUEUE_SIZE;
    static final int MAX_WORKERS = WorkerSettings.MAX_WORKERS;
    /**
     * How long one worker at a time polls the queue before it goes idle: a hand-off within that
     * time costs no futex wake-up and no context switch. Off (0): with few CPUs it costs more than it saves.
     */
    static final long WORKER_SPIN_NANOS = 0; // why: docs/performance.md, "The worker pool's hand-off policy"

    private static final System.Logger LOG = System.getLogger(WorkerIoMethod.PID);

    private static final VarHandle FAULT;

    static {
        try {
            FAULT = MethodHandles.lookup().findVarHandle(WorkerPool.class, "faultAtNextDequeue", boolean.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    final SubmissionQueue queue = new SubmissionQueue();
    final WorkerSlots workers = new WorkerSlots();
    final PoolCounters counters = new PoolCounters();
    final HandleWaiters waiters = new HandleWaiters(counters);
    /** pageio's additions to PostgreSQL's hand-off (the CPU cap, the held-wake watch, take back and help). */
    final HandOffPolicy handOff = new HandOffPolicy(this);
    final PoolSupervisor supervisor = new PoolSupervisor(this);

    private volatile WorkerSettings settings;
    private volatile boolean stopping;

    /** Test hook: the next worker that dequeues a handle throws an {@link Error} while holding it. */
    @SuppressWarnings("unused")
    private boolean faultAtNextDequeue;
    /** Test hook: set by a test, read after every dequeue (one volatile load). */
    private volatile CountDownLatch holdNext;

    WorkerPool(WorkerSettings settings) {
        this.settings = settings;
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

    /** Whether new I/O is queued (false once {@link #stop} began). Any thread; volatile read. */
    boolean accepting() {
        return !stopping;
    }

    // ------------------------------------------------------------------ submission (issuer threads)

    /**
     * Queues {@code handles[0..count)} and wakes the lowest idle worker, once per batch (none for a
     * batch of advised reads, {@link AdvisedReads}). What does
     * not fit, all of it when the queue lock is busy, and everything after {@link #stop}, the issuer
     * executes itself with its session's errno area. Never throws for an I/O error. Allocates nothing.
     */
    void submit(IoHandle[] handles, int count) {
        SubmissionQueue q = queue;
        long now = System.nanoTime();
        int queued = 0;
        int worker = -1;
        if (q.tryLock()) {
            try {
                if (q.acceptingLocked()) {
                    while (queued < count && q.insertLocked(handles[queued])) {
                        queued++;
                    }
                    // A worker polling the queue will see this batch: wake nobody. It gives up
                    // polling before it re-checks the queue under this lock, so nothing is lost.
                    int depth = q.depthLocked();
                    if (q.polled()) {
                        if (depth > 1) {
                            handOff.watch.holdLocked(now); // the poller takes one; the rest waits for its chain
                        }
                    } else if (depth > 0 && handOff.advised.wakesNobody(handles, queued)) {
                        handOff.watch.holdLocked(now); // advised reads wait for their issuer; the watch covers them
                    } else if (depth > 0 && !handOff.cpuCap.holdsWakeLocked(now)) {
                        // PostgreSQL: wake the lowest idle worker; the CPU cap may hold it back
                        worker = q.chooseIdleLocked(-1);
                    }
                }
            } finally {
                q.unlock();
            }
            counters.countHandOff(PoolCounters.HO_BATCHES);
            if (worker >= 0) {
                counters.countHandOff(PoolCounters.HO_SUBMIT_WAKES);
                workers.wake(worker);
            } else {
                handOff.watch.watch(now);
            }
            if (queued < count && accepting()) {
                counters.inlineQueueFull(count - queued);
            }
        } else {
            counters.inlineContended(count);
        }
        for (int i = queued; i < count; i++) {
            IoHandle h = handles[i];
            h.performSynchronously(h.session().callState());
            waiters.wakeWaiters(h); // another session may wait on it through a wait reference
        }
    }

    // ------------------------------------------------------------------ for workers

    /**
     * Worker {@code id} found the queue empty: if no other worker is polling, polls it for
     * {@link #WORKER_SPIN_NANOS} without the lock. Returns whether something arrived (the caller
     * then dequeues under the lock as usual). Gives the poller role up before returning.
     */
    boolean pollQueue(int id) {
        if (WORKER_SPIN_NANOS <= 0 || !queue.claimPoller(id)) {
            return false;
        }
        try {
            long deadline = System.nanoTime() + WORKER_SPIN_NANOS;
            do {
                if (queue.nonEmptyAcquire() || stopping) {
                    return true;
                }
                Thread.onSpinWait();
            } while (System.nanoTime() - deadline < 0);
            return false;
        } finally {
            queue.releasePoller();
        }
    }

    /**
     * The idle timeout fired: retire if nobody chose this worker meanwhile and the queue is empty.
     * Removes it from the idle set; the caller then exits through {@link #workerExited}.
     */
    boolean tryRetire(IoWorker w) {
        queue.lock();
        try {
            if (!queue.isIdle(w.bit) || queue.depthLocked() != 0) {
                return false;
            }
            queue.clearIdleLocked(w.bit);
            return true;
        } finally {
            queue.unlock();
        }
    }

    /**
     * A worker leaves the pool (retired, above {@code io_max_workers}, stopped, or died). In its own
     * thread, as its last act: out of the idle set (queue lock), out of the registered set, then
     * every other worker is woken (the new highest learns it may time out, and a wake-up that chose
     * this worker is not lost), and the supervisor (to replace or top up to the minimum).
     */
    void workerExited(IoWorker w, IoWorker.Exit reason, Throwable death) {
        queue.lock();
        try {
            queue.clearIdleLocked(w.bit);
            queue.arrivedLocked(w.bit);
        } finally {
            queue.unlock();
        }
        workers.unregister(w.bit);
        switch (reason) {
            case RETIRED, ABOVE_MAX -> counters.retired();
            case DIED -> {
                counters.died();
                if (!stopping) {
                    supervisor.replacementNeeded();
                }
                LOG.log(System.Logger.Level.ERROR, w.thread.getName() + " died; its I/O was completed with -EIO"
                        + " and the supervisor starts a replacement", death);
            }
            case STOPPED -> { }
        }
        workers.wakeAll(w.id);
        supervisor.wake();
    }

    // ------------------------------------------------------------------ test hooks

    /**
     * Throws if the fault hook is armed (consuming it); waits if the hold hook is armed (consuming
     * it). Called by a worker holding a handle it has not executed yet. The fault hook exists
     * because nothing a caller can do makes a worker die: {@link IoHandle#performSynchronously}
     * turns every throwable of the system call and of the callbacks into the I/O's result.
     */
    void maybeInjectFault(IoWorker w, IoHandle h) {
        if ((boolean) FAULT.getOpaque(this) && FAULT.compareAndSet(this, true, false)) {
            throw new InjectedWorkerFault("injected fault in " + w.thread.getName() + " holding " + h);
        }
        CountDownLatch hold = holdNext;
        if (hold != null) {
            holdNext = null;
            try {
                hold.await(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * Package-private test hook: the next worker to dequeue waits (at most 10 s) for {@code latch}
     * before it executes the handle, which stays SUBMITTED meanwhile, as in a long system call.
     */
    void holdNextDequeue(CountDownLatch latch) {
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

    // ------------------------------------------------------------------ settings, stop, gauges

    /** Applies new (valid) settings live and wakes everybody to re-evaluate. */
    void reconfigure(WorkerSettings s) {
        settings = s;
        workers.wakeAll(-1);
        supervisor.wake();
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
        queue.lock();
        try {
            queue.stopAcceptingLocked();
            stopping = true;
            for (IoHandle h; (h = queue.dequeueLocked()) != null; ) {
                cancelled[n++] = h;
            }
        } finally {
            queue.unlock();
        }
        supervisor.wake();
        workers.wakeAll(-1);
        for (int i = 0; i < n; i++) {
            cancelled[i].complete(-Errno.ECANCELED);
            waiters.wakeWaiters(cancelled[i]);
        }
        long deadline = System.nanoTime() + boundNanos;
        int alive = 0;
        if (!join(supervisor.thread(), deadline)) {
            alive++;
        }
        for (int id = 0; id < MAX_WORKERS; id++) { // the supervisor is gone: no new workers
            IoWorker w = workers.worker(id);
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
        return counters.stats(workers.count(), Long.bitCount(queue.idleAcquire()), queue.depthAcquire());
    }

    HandOffStats handOffStats() {
        return counters.handOffStats();
    }

    /** The thread of worker {@code id}, if one ever ran there (tests). */
    Thread workerThread(int id) {
        IoWorker w = workers.worker(id);
        return w == null ? null : w.thread;
    }

    Thread supervisorThread() {
        return supervisor.thread();
    }

    /**
     * The pool's wake-up state in one line, for a hang's report: queue depth, the idle, woken and
     * registered sets, the CPU cap's last hold-back, and each worker's time inside its current I/O
     * and its average I/O time. Takes the queue lock; any thread.
     */
    String wakeState() {
        long now = System.nanoTime();
        StringBuilder b = new StringBuilder(160);
        queue.lock();
        try {
            long held = handOff.watch.heldAt();
            b.append("queue ").append(queue.depthLocked())
                    .append(", idle ").append(Long.toBinaryString(queue.idleLocked()))
                    .append(", woken ").append(Long.toBinaryString(queue.wokenLocked()))
                    .append(", registered ").append(Long.toBinaryString(workers.registered()))
                    .append(", cpu cap ").append(handOff.cpuCap.cpuCap)
                    .append(", held back ").append(held == 0 ? "never" : TimeUnit.NANOSECONDS.toMicros(now - held) + " µs ago")
                    .append(", supervisor ").append(supervisor.thread().getState())
                    .append(handOff.watch.supervisorAsleep() ? " asleep" : "");
            for (int id = 0; id < MAX_WORKERS; id++) {
                IoWorker w = workers.worker(id);
                if (w != null) {
                    b.append("; worker ").append(id).append(' ').append(w.thread.getState())
                            .append(" in I/O ").append(TimeUnit.NANOSECONDS.toMicros(now - w.busySince))
                            .append(" µs, avg ").append(TimeUnit.NANOSECONDS.toMicros(w.ioNanosAvg)).append(" µs");
                }
            }
        } finally {
            queue.unlock();
        }
        return b.toString();
    }
}
