package org.pageio.api;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * {@code io_hang_warning}: one daemon thread, {@code pageio aio watchdog}, that looks at every
 * live {@link AioContext}'s handles a few times per threshold and reports an I/O that has stayed
 * in flight — DEFINED, STAGED, SUBMITTED or COMPLETED_IO in one generation — for longer than the
 * context's {@link AioContext#hangWarning}: once per handle and generation, as a WARNING naming
 * the {@code aios} row, the method, and the stacks of pageio's threads and of the session's owner.
 *
 * <p>Nothing on the I/O path: the watchdog samples each handle's generation and state (volatile
 * reads) and keeps, in its own arrays, since when it has seen that generation in flight. A handle
 * whose I/O ends and starts again between two samples is a new generation, so a busy handle is
 * never taken for a stuck one; an I/O is reported between one and 1¼ thresholds after it began.
 *
 * <p>Thread-safe; the per-context arrays belong to the watchdog thread.
 */
final class HangWatchdog implements Runnable {

    static final HangWatchdog INSTANCE = new HangWatchdog();

    private static final System.Logger LOG = System.getLogger("org.pageio.api");
    /** The fewest and most time between two samples. */
    private static final long MIN_PERIOD_NANOS = TimeUnit.MILLISECONDS.toNanos(10);
    private static final long MAX_PERIOD_NANOS = TimeUnit.SECONDS.toNanos(1);
    /** Frames shown per thread: enough to see who waits on what, not a test runner's whole stack. */
    private static final int MAX_FRAMES = 24;

    /** Per watched context: for each handle, the generation seen in flight, since when, and whether reported. */
    private static final class Watch {
        final long[] generation;
        final long[] since;
        final boolean[] reported;

        Watch(int handles) {
            generation = new long[handles];
            since = new long[handles];
            reported = new boolean[handles];
        }
    }

    private final Map<AioContext, Watch> watched = new ConcurrentHashMap<>();
    private final AtomicLong warnings = new AtomicLong();
    private Thread thread; // guarded by this

    private HangWatchdog() {
    }

    void watch(AioContext ctx) {
        watched.put(ctx, new Watch(ctx.handles().length));
        synchronized (this) {
            if (thread == null) {
                thread = new Thread(this, "pageio aio watchdog");
                thread.setDaemon(true);
                thread.start();
            } else {
                LockSupport.unpark(thread);
            }
        }
    }

    void unwatch(AioContext ctx) {
        watched.remove(ctx);
    }

    /** A threshold changed: the next sample may be due sooner. */
    void changed() {
        Thread t;
        synchronized (this) {
            t = thread;
        }
        if (t != null) {
            LockSupport.unpark(t);
        }
    }

    long warnings() {
        return warnings.get();
    }

    @Override
    public void run() {
        for (;;) {
            long period = MAX_PERIOD_NANOS;
            long now = System.nanoTime();
            for (Map.Entry<AioContext, Watch> e : watched.entrySet()) {
                long threshold = e.getKey().hangWarning();
                if (threshold <= 0) {
                    continue;
                }
                period = Math.min(period, Math.max(MIN_PERIOD_NANOS, threshold / 4));
                try {
                    sample(e.getKey(), e.getValue(), threshold, now);
                } catch (RuntimeException ex) {
                    // the context closed while it was sampled (its memory went away): nothing to report
                }
            }
            LockSupport.parkNanos(this, period);
        }
    }

    private void sample(AioContext ctx, Watch w, long threshold, long now) {
        IoHandle[] handles = ctx.handles();
        for (int i = 0; i < handles.length; i++) {
            IoHandle h = handles[i];
            long gen = h.generation();
            int state = h.state();
            boolean inFlight = state >= IoHandle.DEFINED && state <= IoHandle.COMPLETED_IO;
            if (!inFlight) {
                w.since[i] = 0;
                continue;
            }
            if (w.since[i] == 0 || w.generation[i] != gen) {
                w.generation[i] = gen;
                w.since[i] = now;
                w.reported[i] = false;
                continue;
            }
            if (!w.reported[i] && now - w.since[i] >= threshold) {
                AioHandleInfo row = ctx.info(h, gen);
                if (row == null) {
                    continue; // it moved on meanwhile
                }
                w.reported[i] = true;
                warnings.incrementAndGet();
                report(ctx, h, row, now - w.since[i], threshold);
            }
        }
    }

    private static void report(AioContext ctx, IoHandle h, AioHandleInfo row, long inFlight, long threshold) {
        Thread owner = h.session().owner();
        StringBuilder b = new StringBuilder(4096);
        b.append("io_hang_warning: an I/O has been ").append(row.state()).append(" for ")
                .append(TimeUnit.NANOSECONDS.toMillis(inFlight)).append(" ms (io_hang_warning = ")
                .append(TimeUnit.NANOSECONDS.toMillis(threshold)).append(" ms) on io_method=").append(ctx.method().name())
                .append(": aios row ").append(row).append(" of session ").append(h.session().id()).append(" (")
                .append(h.session().kind()).append(", thread '").append(owner == null ? "none" : owner.getName())
                .append("'); reported once for this I/O. Thread stacks:");
        for (Map.Entry<Thread, StackTraceElement[]> e : Thread.getAllStackTraces().entrySet()) {
            Thread t = e.getKey();
            if (t == Thread.currentThread() || (t != owner && !t.getName().startsWith("pageio"))) {
                continue;
            }
            b.append("\n\"").append(t.getName()).append("\" ").append(t.getState());
            StackTraceElement[] frames = e.getValue();
            for (int i = 0; i < Math.min(frames.length, MAX_FRAMES); i++) {
                b.append("\n    at ").append(frames[i]);
            }
            if (frames.length > MAX_FRAMES) {
                b.append("\n    ... ").append(frames.length - MAX_FRAMES).append(" more");
            }
        }
        LOG.log(System.Logger.Level.WARNING, b.toString());
    }
}
