package org.pageio.method.worker;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * The postmaster's part of {@code io_method=worker}: one daemon thread that sizes the pool. It
 * launches workers at start and below {@code io_min_workers} at once, replaces a worker that died
 * at once, and grows the pool on a worker's grow request (PostgreSQL's
 * {@code pgaio_worker_request_grow}) at most one launch per {@code io_worker_launch_interval}.
 * Between launches it runs the {@link HeldWakeWatch}, then parks.
 *
 * <p>{@code grow} and {@code growSignalSent} are PostgreSQL's grow request, volatile accesses
 * (PostgreSQL puts full barriers there): set by workers, cleared by workers (cancel) and the
 * supervisor. {@code pendingReplacements}: deaths not yet replaced, atomic adds by dying workers;
 * the supervisor consumes them.
 */
final class PoolSupervisor {

    /** When a retry of a failed thread start happens. */
    private static final long LAUNCH_RETRY_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

    private static final System.Logger LOG = System.getLogger(WorkerIoMethod.PID);

    private static final VarHandle GROW;
    private static final VarHandle GROW_SIGNAL_SENT;
    private static final VarHandle PENDING_REPLACEMENTS;

    static {
        try {
            MethodHandles.Lookup l = MethodHandles.lookup();
            GROW = l.findVarHandle(PoolSupervisor.class, "grow", boolean.class);
            GROW_SIGNAL_SENT = l.findVarHandle(PoolSupervisor.class, "growSignalSent", boolean.class);
            PENDING_REPLACEMENTS = l.findVarHandle(PoolSupervisor.class, "pendingReplacements", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** PostgreSQL's {@code grow}: a worker saw a backlog and no higher idle peer. Volatile accesses. */
    @SuppressWarnings("unused")
    private boolean grow;
    /** PostgreSQL's {@code grow_signal_sent}: the supervisor was unparked for it. Volatile accesses. */
    @SuppressWarnings("unused")
    private boolean growSignalSent;
    /** Deaths not yet replaced. Atomic adds; the supervisor consumes them. */
    @SuppressWarnings("unused")
    private int pendingReplacements;

    private final WorkerPool pool;
    private final Thread thread;

    PoolSupervisor(WorkerPool pool) {
        this.pool = pool;
        this.thread = new Thread(this::supervise, "pageio io worker supervisor");
        this.thread.setDaemon(true);
    }

    Thread thread() {
        return thread;
    }

    /** Starts the thread, which launches {@code io_min_workers} workers at once. */
    void start() {
        thread.start();
    }

    /** Sets the supervisor's latch: the pool changed (settings, an exit, stop). Any thread. */
    void wake() {
        LockSupport.unpark(thread);
    }

    /** A worker died: the supervisor launches a replacement at once. The dying worker's thread. */
    void replacementNeeded() {
        PENDING_REPLACEMENTS.getAndAdd(this, 1);
    }

    /** PostgreSQL's {@code pgaio_worker_request_grow}. Any worker. */
    void requestGrow() {
        if (pool.workers.count() >= pool.settings().maxWorkers()) {
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
        LockSupport.unpark(thread);
    }

    /** PostgreSQL's {@code pgaio_worker_cancel_grow}: a worker saw the queue empty. */
    void cancelGrow() {
        if ((boolean) GROW.getVolatile(this)) {
            GROW.setVolatile(this, false);
        }
    }

    private void supervise() {
        long launchNext = 0;
        boolean launchNextSet = false;
        while (!pool.stopping()) {
            WorkerSettings s = pool.settings();
            long sleep = -1; // park until unparked
            int n = pool.workers.count();
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
            if (pool.stopping()) {
                break;
            }
            // Watch a queue left to awake workers while wake-ups are held back.
            sleep = pool.handOff.watch.beforeSleep(sleep);
            if (sleep == 0) {
                continue; // a hold-back arrived as it was about to sleep long
            }
            if (sleep < 0) {
                LockSupport.park(this);
            } else {
                LockSupport.parkNanos(this, sleep);
            }
            pool.handOff.watch.awake();
            Thread.interrupted(); // interrupts mean nothing here; do not let them turn park into a spin
        }
    }

    /** Starts a worker in the lowest free id (dense ids). Supervisor thread only. */
    private boolean launch(WorkerSettings s) {
        int id = pool.workers.lowestFree();
        if (id < 0 || id >= s.maxWorkers()) {
            return false;
        }
        IoWorker w;
        try {
            w = new IoWorker(pool, id);
            pool.workers.register(w);
            w.thread.start();
        } catch (Throwable t) {
            pool.workers.unregister(1L << id);
            LOG.log(System.Logger.Level.WARNING, "could not start pageio io worker " + id + "; retrying in "
                    + TimeUnit.NANOSECONDS.toMillis(LAUNCH_RETRY_NANOS) + " ms", t);
            return false;
        }
        pool.counters.launched(pool.workers.count());
        pool.workers.wakeAll(id); // PostgreSQL's registration wake-up: the previous highest may no longer time out
        return true;
    }
}
