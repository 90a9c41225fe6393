package org.pageio.method.worker;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.locks.LockSupport;

/**
 * The pool's 32 worker ids: which exist ({@code registered}) and the {@link IoWorker} that holds
 * each, and the latch-setting ({@link LockSupport#unpark}) of one or all of them.
 *
 * <ul>
 *   <li><b>registered</b> (bit i = worker i exists): set by the supervisor at launch, cleared by the
 *       worker itself when it exits; atomic read-modify-write (volatile). {@link #count} is its bit
 *       count. Ids stay dense: launches take the lowest free id; only the highest may retire.</li>
 *   <li><b>slots</b>: the {@link IoWorker} of each id; release store at launch (before the
 *       registered bit), acquire load by wakers. An entry is never cleared: a waker that picked a
 *       worker that is exiting unparks a finished thread, which is harmless, because an exiting
 *       worker wakes every other worker (PostgreSQL's wake-up-versus-exit rule).</li>
 * </ul>
 * Any thread.
 */
final class WorkerSlots {

    static final int MAX_WORKERS = WorkerSettings.MAX_WORKERS;

    private static final VarHandle REGISTERED;
    private static final VarHandle SLOTS = MethodHandles.arrayElementVarHandle(IoWorker[].class);

    static {
        try {
            REGISTERED = MethodHandles.lookup().findVarHandle(WorkerSlots.class, "registered", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** Bit i: worker i exists. getAndBitwiseOr/And (volatile) to change, getVolatile to read. */
    @SuppressWarnings("unused")
    private long registered;
    private final IoWorker[] slots = new IoWorker[MAX_WORKERS];

    /** The registered set. Volatile load. */
    long registered() {
        return (long) REGISTERED.getVolatile(this);
    }

    int count() {
        return Long.bitCount(registered());
    }

    /** The lowest id not registered, or -1 when all 32 are. Supervisor thread. */
    int lowestFree() {
        long free = ~registered() & (-1L >>> (64 - MAX_WORKERS));
        return free == 0 ? -1 : Long.numberOfTrailingZeros(free);
    }

    /** Publishes {@code w} in its slot (release), then sets its registered bit. Supervisor, at launch. */
    void register(IoWorker w) {
        SLOTS.setRelease(slots, w.id, w);
        REGISTERED.getAndBitwiseOr(this, w.bit);
    }

    /** Clears the registered bit {@code bit} (the worker exits, or its thread did not start). */
    void unregister(long bit) {
        REGISTERED.getAndBitwiseAnd(this, ~bit);
    }

    /** The worker that holds or last held id {@code id}, or null if none ever did. Acquire load. */
    IoWorker worker(int id) {
        return (IoWorker) SLOTS.getAcquire(slots, id);
    }

    /** Sets worker {@code id}'s latch. Outside the queue lock. */
    void wake(int id) {
        IoWorker w = worker(id);
        if (w != null) {
            LockSupport.unpark(w.thread);
        }
    }

    /** Wakes every registered worker but {@code except} (-1: all): the pool changed. */
    void wakeAll(int except) {
        long set = registered();
        while (set != 0) {
            int id = Long.numberOfTrailingZeros(set);
            set &= set - 1;
            if (id != except) {
                wake(id);
            }
        }
    }

    /**
     * PostgreSQL's {@code pgaio_worker_can_timeout}: only the highest-numbered worker, and only if
     * its id is at least {@code io_min_workers}, may retire on the idle timeout.
     */
    boolean canTimeout(int id, WorkerSettings s) {
        if (id < s.minWorkers()) {
            return false;
        }
        long reg = registered();
        return reg != 0 && id == 63 - Long.numberOfLeadingZeros(reg);
    }
}
