package org.pageio.method.worker;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.pageio.api.IoHandle;

/**
 * The threads sleeping on a handle that a worker (or anyone) completes: 64 waiter slots, each a
 * thread and the handle it waits for. A waiter registers and re-checks; a completer stores the
 * handle's state and then unparks the waiters of that handle. Allocates nothing. Any thread.
 */
final class HandleWaiters {

    /**
     * How long a waiter polls its handle before it sleeps: a hand-off within that time costs no
     * futex wake-up and no context switch. Off (0): on a busy machine with few CPUs the polling
     * costs more than it saves.
     */
    static final long WAITER_SPIN_NANOS = 0;
    /** Longest sleep between re-checks in {@link #awaitDone}: a safety net, wake-ups are explicit. */
    private static final long WAIT_RECHECK_NANOS = TimeUnit.MILLISECONDS.toNanos(10);
    /** Re-check interval when all 64 waiter slots are taken (then nobody wakes this waiter). */
    private static final long WAIT_POLL_NANOS = TimeUnit.MICROSECONDS.toNanos(100);

    private static final VarHandle WAITER_SLOTS;
    private static final VarHandle WAITERS = MethodHandles.arrayElementVarHandle(Thread[].class);

    static {
        try {
            WAITER_SLOTS = MethodHandles.lookup().findVarHandle(HandleWaiters.class, "waiterSlots", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** Bit i: waiter slot i is claimed. Claimed and freed by CAS / atomic and (volatile). */
    @SuppressWarnings("unused")
    private long waiterSlots;
    /** The thread sleeping in slot i, or null; volatile array accesses (see {@link #awaitDone}). */
    private final Thread[] waiters = new Thread[64];
    /** The handle slot i waits for; plain, written before and read after the volatile thread slot. */
    private final IoHandle[] waitingFor = new IoHandle[64];

    private final PoolCounters counters;

    HandleWaiters(PoolCounters counters) {
        this.counters = counters;
    }

    /**
     * Sleeps until the I/O {@code (h, generation)} reached COMPLETED_SHARED or the handle was
     * reused. The waiter registers in a slot (its handle, then its thread with a volatile store),
     * then a full fence, then re-checks the handle's state; a completer stores the state (volatile,
     * in {@link IoHandle#complete}) and then reads the slots (volatile) in {@link #wakeWaiters}: so
     * either the waiter sees the completion or the completer sees the waiter. Uninterruptible (the
     * interrupt status is kept), like the core's own sleep. Any thread.
     */
    void awaitDone(IoHandle h, long generation) {
        counters.countHandOff(PoolCounters.HO_WAITS);
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
        int slot = claimSlot();
        if (slot >= 0) {
            waitingFor[slot] = h;
            WAITERS.setVolatile(waiters, slot, me);
        }
        VarHandle.fullFence(); // store (slot) - load (state), against complete's store (state) - load (slots)
        boolean interrupted = false;
        try {
            while (!done(h, generation)) {
                counters.countHandOff(PoolCounters.HO_WAITER_SLEEPS);
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

    /** Whether the I/O {@code (h, generation)} is done: COMPLETED_SHARED or later, or the handle reused. */
    static boolean done(IoHandle h, long generation) {
        int s = h.state(); // state first, then generation, as the core reads them
        return h.generation() != generation || s >= IoHandle.COMPLETED_SHARED;
    }

    private int claimSlot() {
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
                counters.countHandOff(PoolCounters.HO_WAITER_UNPARKS);
                LockSupport.unpark(t);
            }
        }
    }
}
