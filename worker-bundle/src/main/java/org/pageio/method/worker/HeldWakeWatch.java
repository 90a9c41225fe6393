package org.pageio.method.worker;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * Part of {@link HandOffPolicy}: the supervisor's watch over handles left queued with nobody woken for them (the CPU cap counted
 * awake workers as taking them soon, or a worker's wake-up ratio kept it from waking a peer, or a
 * polling worker took the batch's wake-up): so that a worker counted on and then stuck in a long
 * system call or callback does not leave them there. While wake-ups were held back in the last
 * {@link #HELD_LINGER_NANOS}, the supervisor checks every {@link #HELD_CHECK_NANOS} and, if
 * nobody is on the way, wakes the lowest idle worker: PostgreSQL's wake-up, late by at most one
 * check.
 */
final class HeldWakeWatch {

    /** How often the supervisor checks a queue the CPU cap left to awake workers: the cap's worst delay. */
    static final long HELD_CHECK_NANOS = TimeUnit.MILLISECONDS.toNanos(2);
    /**
     * How long a worker counted by the cap must be inside one I/O before the supervisor's check
     * calls it stalled (longer than {@link CpuCap#busyNanos}: a preempted copy is not a stall).
     */
    static final long STALL_NANOS = TimeUnit.MILLISECONDS.toNanos(1);
    /** How long after the last held-back wake-up the supervisor keeps checking. */
    static final long HELD_LINGER_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

    private static final VarHandle SUPERVISOR_ASLEEP;

    static {
        try {
            SUPERVISOR_ASLEEP = MethodHandles.lookup().findVarHandle(HeldWakeWatch.class, "supervisorAsleep",
                    boolean.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /**
     * {@link System#nanoTime} of the last time handles were left queued with nobody woken for them;
     * 0 if never. Volatile: written under the queue lock, read by the supervisor to decide whether
     * to watch.
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

    private final WorkerPool pool;

    HeldWakeWatch(WorkerPool pool) {
        this.pool = pool;
    }

    /**
     * Handles stay queued and nobody is woken for them now: the supervisor watches the queue from
     * {@code now} on. The caller calls {@link #watch}{@code (now)} after it released the queue
     * lock. Queue lock held.
     */
    void holdLocked(long now) {
        if (wakeHeldAt != now) {
            wakeHeldAt = now; // volatile: the supervisor watches the workers from now on
        }
    }

    /**
     * After {@link #holdLocked}{@code (now)} (caller outside the queue lock): if that hold is
     * still the latest ({@code wakeHeldAt == now}) and the supervisor sleeps for longer than
     * {@link #HELD_CHECK_NANOS}, wakes it so that it watches the queue. Two volatile loads when it
     * is awake already.
     */
    void watch(long now) {
        if (wakeHeldAt == now && supervisorAsleep && SUPERVISOR_ASLEEP.compareAndSet(this, true, false)) {
            LockSupport.unpark(pool.supervisor.thread());
        }
    }

    /**
     * The supervisor is about to sleep for {@code sleep} ns (-1: until unparked). Checks the queue
     * if wake-ups were held back lately, and returns how long to sleep: at most
     * {@link #HELD_CHECK_NANOS} while watching, {@code sleep} otherwise, or 0 when a hold arrived
     * while it decided to sleep long (then it loops again at once). Supervisor thread.
     */
    long beforeSleep(long sleep) {
        long now = System.nanoTime();
        long held = wakeHeldAt;
        if (held != 0 && now - held < HELD_LINGER_NANOS) {
            check(now);
            return sleep < 0 ? HELD_CHECK_NANOS : Math.min(sleep, HELD_CHECK_NANOS);
        }
        if (sleep < 0 || sleep > HELD_CHECK_NANOS) {
            supervisorAsleep = true; // then read wakeHeldAt again: a holder may have missed it
            held = wakeHeldAt;
            if (held != 0 && System.nanoTime() - held < HELD_LINGER_NANOS) {
                supervisorAsleep = false;
                return 0;
            }
        }
        return sleep;
    }

    /** The supervisor woke up. Supervisor thread. */
    void awake() {
        supervisorAsleep = false;
    }

    /**
     * The supervisor's check of held wake-ups: if handles are queued, nobody is on the way and
     * fewer awake workers than the CPU cap (at least one) still count as taking one soon (the
     * others got stuck in a long system call or callback after they were counted), wakes the lowest
     * idle worker. While handles stay queued behind workers counted as coming, the watch is
     * renewed. Supervisor thread.
     */
    private void check(long now) {
        SubmissionQueue q = pool.queue;
        CpuCap rule = pool.handOff.cpuCap;
        int kick = -1;
        q.lock();
        try {
            if (q.acceptingLocked() && q.depthLocked() > 0) {
                if (q.wokenLocked() == 0
                        && rule.awakeSoonLocked(now, Math.max(rule.busyNanos, STALL_NANOS)) < Math.max(1, rule.cpuCap)) {
                    kick = q.chooseIdleLocked(-1);
                } else {
                    // Still queued behind workers counted as coming: keep watching. The worker
                    // counted may not have dequeued yet (a slow wake-up) and, on its first turn,
                    // does not hold a wake-up back itself, so nobody else would renew the watch
                    // before it stalls.
                    wakeHeldAt = now;
                }
            }
        } finally {
            q.unlock();
        }
        if (kick >= 0) {
            pool.counters.countHandOff(PoolCounters.HO_SUPERVISOR_WAKES);
            pool.workers.wake(kick);
        }
    }

    /** For {@link WorkerPool#wakeState}: the last hold-back's time (0: never) and whether the supervisor sleeps long. */
    long heldAt() {
        return wakeHeldAt;
    }

    boolean supervisorAsleep() {
        return supervisorAsleep;
    }
}
