package org.pageio.method.worker;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Modified;
import org.osgi.service.metatype.annotations.Designate;
import org.pageio.api.IoHandle;
import org.pageio.api.IoMethod;

/**
 * {@code io_method=worker}, the default method, as in PostgreSQL 18 and 19: issuers put handles
 * in a bounded submission queue, and a pool of I/O worker threads ({@code pageio io worker N})
 * executes them with preadv/pwritev/fsync and runs the shared completion callbacks, so the issuer
 * does not wait on the system call. It works everywhere, including containers that block
 * io_uring. The pool sizes itself as PostgreSQL 19's does ({@link WorkerPool}); the settings are
 * {@link WorkerConfig}'s, live through ConfigAdmin.
 *
 * <p>What the issuer executes itself: handles flagged {@link IoHandle#FLAG_REFERENCES_LOCAL}
 * (PostgreSQL: memory only the issuer may touch), what does not fit in the queue, a whole batch
 * when the queue lock is busy, and everything once the component is deactivated (a session may
 * still hold a context that references this object).
 *
 * <p>Threads: {@link #submit} and {@link #needsSynchronousExecution} in issuer threads;
 * {@link #activate}, {@link #modified}, {@link #deactivate} in SCR's thread (serialised here by the
 * object's monitor, never held on the I/O path); {@link #stats} and {@link #settingsView} anywhere.
 */
@Component(service = IoMethod.class, property = IoMethod.PROPERTY + "=" + WorkerIoMethod.NAME,
        configurationPid = WorkerIoMethod.PID)
@Designate(ocd = WorkerConfig.class)
public final class WorkerIoMethod implements IoMethod, AutoCloseable {

    public static final String NAME = "worker";
    public static final String PID = "org.pageio.method.worker";

    /** How long {@link #deactivate} waits for running I/O and worker threads. */
    static final long STOP_BOUND_NANOS = TimeUnit.SECONDS.toNanos(10);

    private static final System.Logger LOG = System.getLogger(PID);

    /** The pool; replaced only by activation. Volatile: issuers read it without a lock. */
    private volatile WorkerPool pool;
    /** The last rejected configuration, as one line; null when none was rejected. */
    private volatile String lastRejection;
    /** The pool over JMX while the component is active (not for instances made outside a container). */
    private WorkerPoolMBean mbean;

    /** For Declarative Services: the pool starts at activation. */
    public WorkerIoMethod() {
    }

    /**
     * Outside a container (tests, benchmarks): starts a pool with {@code settings} now. Stop it
     * with {@link #close()}.
     */
    public WorkerIoMethod(WorkerSettings settings) {
        start(new WorkerPool(settings));
    }

    @Activate
    synchronized void activate(WorkerConfig config) {
        WorkerSettings s;
        try {
            s = WorkerSettings.from(config);
        } catch (IllegalArgumentException e) {
            reject(e.getMessage(), WorkerSettings.DEFAULTS, "using the defaults");
            s = WorkerSettings.DEFAULTS;
        }
        start(new WorkerPool(s));
        selectPolicy(config.io__worker__policy());
        mbean = WorkerPoolMBean.register(this);
    }

    /** {@code io_worker_policy}, live; an invalid value is rejected in one line and the policy in force stays. */
    private void selectPolicy(String value) {
        try {
            pool.handOff.select(value);
        } catch (IllegalArgumentException e) {
            LOG.log(System.Logger.Level.WARNING, e.getMessage() + "; keeping the policy in force");
        }
    }

    /**
     * Applies a changed configuration live. An invalid one is rejected with one line naming the
     * values, and the settings in force stay; it never throws (that would deactivate the component).
     */
    @Modified
    synchronized void modified(WorkerConfig config) {
        WorkerSettings s;
        try {
            s = WorkerSettings.from(config);
        } catch (IllegalArgumentException e) {
            WorkerSettings current = pool.settings();
            reject(e.getMessage(), current, "keeping");
            return;
        }
        apply(s);
        selectPolicy(config.io__worker__policy());
    }

    /**
     * Applies {@code settings} live, as {@code @Modified} does (tests, benchmarks).
     *
     * @throws IllegalStateException when the method was never started or is closed
     */
    public synchronized void apply(WorkerSettings settings) {
        WorkerPool p = pool;
        if (p == null || p.stopping()) {
            throw new IllegalStateException("io_method=worker is not running; cannot apply " + settings.describe());
        }
        WorkerSettings old = p.settings();
        lastRejection = null;
        if (!old.equals(settings)) {
            p.reconfigure(settings);
            LOG.log(System.Logger.Level.INFO, "io_method=worker: " + settings.describe());
        }
    }

    /**
     * Stops the pool: no new I/O is queued (the issuer executes it), queued-but-not-started handles
     * complete with {@code -ECANCELED}, running ones finish, and the threads are joined within
     * {@link #STOP_BOUND_NANOS}. Later {@link #submit} calls execute inline.
     */
    @Deactivate
    synchronized void deactivate() {
        close();
    }

    /** {@link #deactivate()}, for use outside a container. Idempotent. */
    @Override
    public synchronized void close() {
        WorkerPoolMBean.unregister(mbean);
        mbean = null;
        WorkerPool p = pool;
        if (p != null && !p.stopping()) {
            p.stop(STOP_BOUND_NANOS);
        }
    }

    private void start(WorkerPool p) {
        pool = p;
        p.start();
    }

    private void reject(String reason, WorkerSettings kept, String verb) {
        String line = "io_method=worker: rejected configuration: " + reason + "; " + verb + " "
                + kept.describe();
        lastRejection = line;
        LOG.log(System.Logger.Level.WARNING, line);
    }

    // ------------------------------------------------------------------ IoMethod

    @Override
    public String name() {
        return NAME;
    }

    /**
     * Inline when the handle references issuer-local memory (as PostgreSQL), or when the pool is
     * not running (before activation, after deactivation).
     */
    @Override
    public boolean needsSynchronousExecution(IoHandle handle) {
        WorkerPool p = pool;
        return (handle.flags() & IoHandle.FLAG_REFERENCES_LOCAL) != 0 || p == null || p.stopping();
    }

    @Override
    public int submit(IoHandle[] handles, int count) {
        WorkerPool p = pool;
        if (p == null) {
            for (int i = 0; i < count; i++) {
                IoHandle h = handles[i];
                h.performSynchronously(h.session().callState());
            }
        } else {
            p.submit(handles, count);
        }
        return count;
    }

    /** Waiters go through {@link #waitOne}: it may execute a handle still queued (see there). */
    @Override
    public boolean hasWaitOne() {
        return true;
    }

    /**
     * Waits for a submitted handle. If the caller is the handle's issuer, the handle still waits in
     * the queue and no worker is idle, the issuer takes it back and executes it itself (its shared
     * callbacks run in the issuer, as for a full queue): sleeping there would leave a core idle
     * while every worker is busy. Otherwise it sleeps until the handle completed, woken by
     * whoever completes it. Any thread; never throws for an I/O error.
     */
    @Override
    public void waitOne(IoHandle handle, long generation) {
        WorkerPool p = pool;
        if (p == null) {
            return; // never started: nothing was queued, submit ran everything inline
        }
        if (Thread.currentThread() == handle.session().owner()) {
            if (p.handOff.issuers.takeBack(handle, generation)) {
                handle.performSynchronously(handle.session().callState());
                p.waiters.wakeWaiters(handle);
                return;
            }
            for (IoHandle x; !HandleWaiters.done(handle, generation) && (x = p.handOff.issuers.helpNewest(handle.session(), handle)) != null; ) {
                x.performSynchronously(handle.session().callState());
                p.waiters.wakeWaiters(x);
            }
        }
        p.waiters.awaitDone(handle, generation);
    }

    /**
     * True: a queued handle is executed later, by a worker, with the issuer's descriptor number;
     * closed meanwhile, that number fails (EBADF) or, reopened for another file, reads the wrong
     * file. The core therefore waits for the session's I/O on a descriptor before it is closed.
     */
    @Override
    public boolean waitOnFdBeforeClose() {
        return true;
    }

    /**
     * True: each read runs as one blocking {@code preadv} in a worker, so at most
     * {@code io_max_workers} of them are at the device at once. Read streams give the kernel
     * {@code WILLNEED} advice on random jumps, so that the reads the workers have not reached yet
     * are already on their way (the read stream's {@code ThreadPoolAdvice} policy).
     */
    @Override
    public boolean readsHoldThreads() {
        return true;
    }

    // ------------------------------------------------------------------ views

    /** The pool's gauges now (for the console); zeros before activation. */
    public WorkerPoolStats stats() {
        WorkerPool p = pool;
        return p == null ? new WorkerPoolStats(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, new long[WorkerSettings.MAX_WORKERS])
                : p.stats();
    }

    /** The hand-off counters (see {@link HandOffStats}); all zero before activation. */
    public HandOffStats handOffStats() {
        WorkerPool p = pool;
        return p == null ? new HandOffStats(PoolCounters.COUNT_HANDOFFS, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
                : p.handOffStats();
    }

    /** The settings in force; the defaults before activation. */
    public WorkerSettings settings() {
        WorkerPool p = pool;
        return p == null ? WorkerSettings.DEFAULTS : p.settings();
    }

    /**
     * The settings view: one row per setting in PostgreSQL's names, with a note on
     * {@code io_workers} (PostgreSQL 18's name), plus a row {@code rejected} when the last
     * configuration was rejected.
     */
    public List<WorkerSettings.Setting> settingsView() {
        List<WorkerSettings.Setting> rows = new ArrayList<>(settings().view());
        String r = lastRejection;
        if (r != null) {
            rows.add(new WorkerSettings.Setting("rejected", "", "", r));
        }
        return rows;
    }

    /** The last rejected configuration as one line, or null when the last one was applied. */
    public String lastRejection() {
        return lastRejection;
    }

    /** Test hook: the next handle a worker dequeues makes that worker die with an Error. */
    void injectWorkerFault() {
        pool.injectFaultAtNextDequeue();
    }

    WorkerPool pool() {
        return pool;
    }

    @Override
    public String toString() {
        WorkerPool p = pool;
        return "io_method=worker[" + (p == null ? "not started" : (p.stopping() ? "stopped, " : "")
                + p.settings().describe() + ", " + p.stats()) + "]";
    }
}
