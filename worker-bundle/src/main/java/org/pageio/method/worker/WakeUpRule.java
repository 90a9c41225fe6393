package org.pageio.method.worker;

import java.util.concurrent.TimeUnit;

/**
 * Whether queued handles need a worker woken: PostgreSQL's rule (wake one whenever anything is
 * queued) with pageio's CPU cap on top. While {@link #cpuCap} workers are awake on short I/Os
 * ({@link #awakeSoonLocked}: copies from the page cache), nobody else is woken: a wake-up and the
 * sleep after it cost more CPU than such a copy, and the awake workers take the handle next. A
 * wake-up held back so is watched by the supervisor ({@link HeldWakeWatch}).
 *
 * <p>Every decision is taken under the queue lock, where the idle and woken sets and the workers'
 * {@code busySince} and {@code ioNanosAvg} are stable.
 */
final class WakeUpRule {

    /** One CPU fewer than the JVM may use (the other runs the issuer), at least 1. */
    static final int DEFAULT_CPU_CAP = Math.max(1, Runtime.getRuntime().availableProcessors() - 1);
    /**
     * How long a worker may be inside one I/O and still count as taking the next queued handle
     * soon ({@link #awakeSoonLocked}): 50 µs, about twice a 128 KiB read from the page cache with
     * its checksums, a fraction of a read from a device.
     */
    static final long BUSY_NANOS = TimeUnit.MICROSECONDS.toNanos(50);

    /**
     * The CPU cap: while this many workers are awake on short I/Os, nobody else is woken, and the
     * issuer may take back its queued handles although workers are idle. 0: off (PostgreSQL's
     * wake-up rules exactly; tests). Default {@link #DEFAULT_CPU_CAP}. Volatile: tests change it;
     * read under the queue lock and once per submitted batch.
     */
    volatile int cpuCap = DEFAULT_CPU_CAP;
    /** {@link #BUSY_NANOS}; volatile so that tests may change it. */
    volatile long busyNanos = BUSY_NANOS;

    private final SubmissionQueue queue;
    private final WorkerSlots workers;
    private final HeldWakeWatch watch;

    WakeUpRule(SubmissionQueue queue, WorkerSlots workers, HeldWakeWatch watch) {
        this.queue = queue;
        this.workers = workers;
        this.watch = watch;
    }

    /**
     * Whether {@code depth} queued handles need another worker woken, {@code now} being
     * {@link System#nanoTime}: whenever anything is queued, unless the CPU cap's count of workers
     * that will take it soon is reached ({@link #awakeSoonLocked}); then the hold-back is noted for
     * the supervisor's watch. An awake worker always looks at the queue under the lock before it
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
            watch.holdLocked(now);
            return false;
        }
        return true;
    }

    /**
     * Workers that will look at the queue soon: registered, not idle, and either chosen by a waker
     * and on their way ({@code woken}), or running short I/Os (their decaying average I/O time is
     * under {@link #busyNanos}: copies from the page cache) and inside the current one for less
     * than {@link #busyNanos}. A worker whose I/Os are long (reads from a device) or that has been
     * inside one system call longer (a stalled disk) is not counted: for it PostgreSQL's rule, wake
     * another, holds. Queue lock held.
     */
    int awakeSoonLocked(long now) {
        return awakeSoonLocked(now, busyNanos);
    }

    /** {@link #awakeSoonLocked(long)} counting a worker inside its current I/O for less than {@code inIoNanos}. */
    int awakeSoonLocked(long now, long inIoNanos) {
        long awake = workers.registered() & ~queue.idleLocked();
        long woken = queue.wokenLocked();
        long busy = busyNanos;
        int n = 0;
        for (long set = awake; set != 0; set &= set - 1) {
            int id = Long.numberOfTrailingZeros(set);
            IoWorker w = workers.worker(id);
            if ((woken & (1L << id)) != 0 || w == null
                    || (w.ioNanosAvg < busy && now - w.busySince < inIoNanos)) {
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
        IoWorker w = workers.worker(0);
        return w != null && w.ioNanosAvg < busyNanos;
    }
}
