package org.pageio.method.worker;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * The pool's counters: launches, retirements, deaths, the peak, I/Os the issuer executed itself,
 * the per-worker I/O counts, and the hand-off event counters ({@link HandOffStats}). Per-slot I/O
 * counts have one writer (the worker holding the id), opaque stores; the others are atomic adds,
 * none on the queued fast path. Read without locks for the gauges. Any thread.
 */
final class PoolCounters {

    /**
     * Whether the hand-off event counters count: off (a static final, so the JIT drops the
     * counting code). Turning it on means editing this constant; atomic adds when on.
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
    private static final int MAX_WORKERS = WorkerSettings.MAX_WORKERS;

    private static final VarHandle PEAK;
    private static final VarHandle LAUNCHES;
    private static final VarHandle RETIREMENTS;
    private static final VarHandle DEATHS;
    private static final VarHandle INLINE_FULL;
    private static final VarHandle INLINE_CONTENDED;
    private static final VarHandle TAKEN_BACK;
    private static final VarHandle COUNTS = MethodHandles.arrayElementVarHandle(long[].class);

    static {
        try {
            MethodHandles.Lookup l = MethodHandles.lookup();
            PEAK = l.findVarHandle(PoolCounters.class, "peakWorkers", int.class);
            LAUNCHES = l.findVarHandle(PoolCounters.class, "launches", long.class);
            RETIREMENTS = l.findVarHandle(PoolCounters.class, "retirements", long.class);
            DEATHS = l.findVarHandle(PoolCounters.class, "deaths", long.class);
            INLINE_FULL = l.findVarHandle(PoolCounters.class, "inlineQueueFull", long.class);
            INLINE_CONTENDED = l.findVarHandle(PoolCounters.class, "inlineContended", long.class);
            TAKEN_BACK = l.findVarHandle(PoolCounters.class, "takenBack", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final long[] handOff = new long[HO_COUNTERS * HO_STRIDE];
    /** I/Os per worker id. One writer per id (the worker holding it): opaque stores and loads. */
    private final long[] slotIos = new long[MAX_WORKERS];
    /** The others: atomic adds (volatile), volatile loads; the peak by CAS. */
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

    /** Counts hand-off event {@code c} (an {@code HO_*} constant) when counting is on. Atomic add. */
    void countHandOff(int c) {
        if (COUNT_HANDOFFS) {
            COUNTS.getAndAdd(handOff, c * HO_STRIDE, 1L);
        }
    }

    /** One more I/O executed by worker {@code id}. Single writer per id: opaque store. */
    void countIo(int id) {
        COUNTS.setOpaque(slotIos, id, (long) COUNTS.getOpaque(slotIos, id) + 1);
    }

    /** A worker started; {@code count} workers are registered now. Supervisor thread. */
    void launched(int count) {
        LAUNCHES.getAndAdd(this, 1L);
        int peak;
        while (count > (peak = (int) PEAK.getVolatile(this)) && !PEAK.compareAndSet(this, peak, count)) {
            Thread.onSpinWait();
        }
    }

    void retired() {
        RETIREMENTS.getAndAdd(this, 1L);
    }

    void died() {
        DEATHS.getAndAdd(this, 1L);
    }

    /** {@code n} I/Os of a batch did not fit in the queue. */
    void inlineQueueFull(int n) {
        INLINE_FULL.getAndAdd(this, (long) n);
    }

    /** A batch of {@code n} found the queue lock busy. */
    void inlineContended(int n) {
        INLINE_CONTENDED.getAndAdd(this, (long) n);
    }

    /** An issuer took a queued handle back and executes it. */
    void tookBack() {
        TAKEN_BACK.getAndAdd(this, 1L);
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

    /** The gauges, with the pool's {@code alive}, {@code idle} and queue {@code depth} read by the caller. */
    WorkerPoolStats stats(int alive, int idle, int depth) {
        long[] ios = new long[MAX_WORKERS];
        for (int i = 0; i < MAX_WORKERS; i++) {
            ios[i] = (long) COUNTS.getOpaque(slotIos, i);
        }
        return new WorkerPoolStats(alive, idle, (int) PEAK.getVolatile(this), depth, (long) LAUNCHES.getVolatile(this),
                (long) RETIREMENTS.getVolatile(this), (long) DEATHS.getVolatile(this),
                (long) INLINE_FULL.getVolatile(this), (long) INLINE_CONTENDED.getVolatile(this),
                (long) TAKEN_BACK.getVolatile(this), ios);
    }
}
