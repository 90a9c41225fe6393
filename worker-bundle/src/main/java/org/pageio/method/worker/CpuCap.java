package org.pageio.method.worker;

import java.util.concurrent.TimeUnit;

/**
 * Part of {@link HandOffPolicy}: the CPU cap on PostgreSQL's wake-up rule. PostgreSQL wakes an idle
 * worker whenever anything is queued; while {@link #cpuCap} workers are awake on short I/Os
 * ({@link #awakeSoonLocked}: copies from the page cache), the cap holds that wake-up back: a
 * wake-up and the sleep after it cost more CPU than such a copy, and the awake workers take the
 * handle next. A wake-up held back so is watched by the supervisor ({@link HeldWakeWatch}).
 * why: docs/performance.md, "The worker pool's hand-off policy".
 *
 * <p>Every decision is taken under the queue lock, where the idle and woken sets and the workers'
 * {@code busySince} and {@code ioNanosAvg} are stable.
 */
final class CpuCap {

    /** One CPU fewer than the JVM may use (the other runs the issuer), at least 1. */
    static final int DEFAULT_CPU_CAP = Math.max(1, Runtime.getRuntime().availableProcessors() - 1);
    /**
     * How long a worker may be inside one I/O and still count as taking the next queued handle
     * soon ({@link #awakeSoonLocked}): about twice a 128 KiB page-cache read with its checksums.
     */
    static final long BUSY_NANOS = TimeUnit.MICROSECONDS.toNanos(50); // why: docs/performance.md, "The worker pool's hand-off policy"

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

    CpuCap(SubmissionQueue queue, WorkerSlots workers, HeldWakeWatch watch) {
        this.queue = queue;
        this.workers = workers;
        this.watch = watch;
    }

    /**
     * Whether the cap holds back the wake-up PostgreSQL's rule asks for (handles are queued),
     * {@code now} being {@link System#nanoTime}: the count of workers that will take them soon
     * ({@link #awakeSoonLocked}) has reached the cap; then the hold-back is noted for the
     * supervisor's watch. An awake worker always looks at the queue under the lock before it
     * sleeps, so a handle left to it is never stranded; it only waits until that worker's current
     * I/O is done. Queue lock held.
     */
    boolean holdsWakeLocked(long now) {
        int cap = cpuCap;
        if (cap == 0) {
            return false;
        }
        if (awakeSoonLocked(now) >= cap) {
            watch.holdLocked(now);
            return true;
        }
        return false;
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
