package org.pageio.uring;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.pageio.uring.Abi.*;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import org.pageio.api.AioContext;
import org.pageio.api.IoHandle;
import org.pageio.posix.CallState;
import org.pageio.posix.Errno;
import org.pageio.posix.Posix;

/**
 * A ring's completion side: reaping the CQ and blocking in the kernel for completions, by any
 * thread, under the ring's completion lock (PostgreSQL's {@code completion_lock}), for the whole
 * reap-or-block loop. A CQE's {@code user_data} is a handle index of the context; its result goes
 * to {@link IoHandle#complete(int)}, which runs the shared callbacks in the reaping thread. The
 * lock holder's errno capture and wait argument are preallocated: nothing is allocated per I/O.
 * {@code closed} is set under the lock before the ring is unmapped, so a holder never touches
 * unmapped memory.
 */
final class CompletionQueue {

    /** How long a waiter blocks in the kernel before it re-checks its handle (kernels with EXT_ARG). */
    static final long WAIT_SLICE_SECONDS = 1;
    /** Overflow flushes one reap makes at most before it lets the lock go. */
    static final int MAX_FLUSHES = 16;

    private static final VarHandle INT = ValueLayout.JAVA_INT.varHandle();

    private final RingMemory mem;
    private final AioContext context;
    private final ReentrantLock lock = new ReentrantLock();
    /** Scratch memory of the completion-lock holder: its errno capture and the wait argument. */
    private final CallState lockedCallState;
    private final MemorySegment waitArg;
    private final boolean extArg;

    // ---- guarded by lock ----
    private long reaped;
    /** io_uring_enter calls that blocked for a completion (GETEVENTS, min 1). */
    private long waitCalls;
    /** {@link #poll()} calls that took the lock, and those of them that found a completion. */
    private long polls;
    private long fruitfulPolls;
    private long strayCompletions;
    private long waitErrors;
    private int lastWaitErrno;
    private boolean closed;

    /** {@code scratch} outlives this queue: the ring closes it after {@link #drainAndClose}. */
    CompletionQueue(RingMemory mem, AioContext context, Arena scratch) {
        this.mem = mem;
        this.context = context;
        this.lockedCallState = CallState.allocate(scratch);
        this.extArg = (mem.features & IORING_FEAT_EXT_ARG) != 0;
        // struct io_uring_getevents_arg {u64 sigmask; u32 sigmask_sz; u32 pad; u64 ts}, then the timespec.
        this.waitArg = scratch.allocate(GETEVENTS_ARG_BYTES + 16, 8);
        MemorySegment ts = waitArg.asSlice(GETEVENTS_ARG_BYTES, 16);
        ts.set(JAVA_LONG, 0, WAIT_SLICE_SECONDS);
        ts.set(JAVA_LONG, 8, 0L);
        waitArg.set(JAVA_LONG, GEA_TS, ts.address());
    }

    /** The lock holder's errno capture (also the constructor's, before anybody knows the ring). */
    CallState lockedCallState() {
        return lockedCallState;
    }

    /** See {@link IoUring#waitFor}. */
    void waitFor(IoHandle h, long generation) {
        if (finished(h, generation)) {
            return;
        }
        // Only a thread other than the owner can be waiting for an I/O whose SQE is not in the
        // kernel yet (the owner is between marking it SUBMITTED and io_uring_enter, or failed
        // it itself because the kernel refused it): such a waiter blocks in slices and re-checks.
        // The owner's own waits never need that, and skip the kernel timer.
        boolean sliced = Thread.currentThread() != h.session().owner();
        lock.lock();
        try {
            while (!closed && !finished(h, generation)) {
                if (reapLocked() == 0) {
                    waitInKernelLocked(sliced);
                }
            }
        } finally {
            lock.unlock();
        }
    }

    /** See {@link IoUring#waitForProgress}. */
    void waitForProgress(IoHandle h, long generation, int max) {
        if (finished(h, generation)) {
            return;
        }
        boolean sliced = Thread.currentThread() != h.session().owner();
        lock.lock();
        try {
            long before = reaped;
            while (!closed && !finished(h, generation) && reaped == before && readyCompletions() == 0) {
                waitInKernelLocked(sliced);
            }
            if (!closed && max > 0) {
                reapLocked(max);
            }
        } finally {
            lock.unlock();
        }
    }

    /** See {@link IoUring#readyCompletions}: no lock; the head is read opaque, the tail with acquire. */
    int readyCompletions() {
        return (int) INT.getAcquire(mem.cqRing, mem.cqTailOff) - (int) INT.getOpaque(mem.cqRing, mem.cqHeadOff);
    }

    /** See {@link IoUring#poll}. */
    int poll() {
        if (!lock.tryLock()) {
            return 0;
        }
        try {
            if (closed) {
                return 0;
            }
            polls++;
            int n = reapLocked();
            if (n > 0) {
                fruitfulPolls++;
            }
            return n;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Reaps what is ready if the lock is free, for the submitter (which never blocks on the lock:
     * a holder is reaping already). Returns the completions processed.
     */
    int reapIfFree() {
        if (!lock.tryLock()) {
            return 0;
        }
        try {
            return closed ? 0 : reapLocked();
        } finally {
            lock.unlock();
        }
    }

    /** State first, then generation: a matching generation proves the state read is this I/O's. */
    private static boolean finished(IoHandle h, long generation) {
        return h.state() >= IoHandle.COMPLETED_IO || h.generation() != generation;
    }

    /**
     * Processes the completions ready now (a snapshot of the tail: does not chase new arrivals),
     * flushing the kernel's overflow list when flagged. Lock held.
     */
    private int reapLocked() {
        return reapLocked(Integer.MAX_VALUE);
    }

    /** {@link #reapLocked()}, stopping after {@code max} completions (the rest stays in the CQ). */
    private int reapLocked(int max) {
        MemorySegment cq = mem.cqRing;
        int n = 0;
        for (int flushes = 0; ; flushes++) {
            // Plain: only the completion-lock holder writes the CQ head, and the lock orders us after it.
            int head = (int) INT.get(cq, mem.cqHeadOff);
            // Acquire: pairs with the kernel's release store of the tail, so the CQEs before it are
            // fully written when we read them.
            int tail = (int) INT.getAcquire(cq, mem.cqTailOff);
            while (head != tail && n < max) {
                long cqe = mem.cqesOff + (long) (head & mem.cqMask) * CQE_BYTES;
                long userData = cq.get(JAVA_LONG, cqe + CQE_USER_DATA);
                int res = cq.get(JAVA_INT, cqe + CQE_RES);
                head++;
                // Release: user_data and res are read before the kernel can see the slot free and
                // reuse it (PostgreSQL's 8077649907: read res BEFORE advancing the head).
                INT.setRelease(cq, mem.cqHeadOff, head);
                reaped++;
                n++;
                dispatch(userData, res);
            }
            if (n >= max) {
                return n; // the rest stays in the CQ for the next reap
            }
            // Opaque: a hint; if set, the kernel holds completions that did not fit the CQ.
            if (((int) INT.getOpaque(mem.sqRing, mem.sqFlagsOff) & IORING_SQ_CQ_OVERFLOW) == 0 || flushes == MAX_FLUSHES) {
                return n; // after MAX_FLUSHES the next reap goes on: the lock is not held forever
            }
            // GETEVENTS with min_complete 0 flushes the overflow list into the CQ without waiting.
            long r = Posix.syscall(lockedCallState, SYS_IO_URING_ENTER, mem.fd, 0, 0, IORING_ENTER_GETEVENTS, 0, 0);
            if (r < 0 && r != -Errno.EINTR && r != -Errno.EBUSY && r != -Errno.EAGAIN) {
                noteWaitError((int) -r);
                return n;
            }
        }
    }

    private void waitInKernelLocked(boolean sliced) {
        waitCalls++;
        long r = sliced && extArg
                ? Posix.syscall(lockedCallState, SYS_IO_URING_ENTER, mem.fd, 0, 1,
                        IORING_ENTER_GETEVENTS | IORING_ENTER_EXT_ARG, waitArg.address(), GETEVENTS_ARG_BYTES)
                : Posix.syscall(lockedCallState, SYS_IO_URING_ENTER, mem.fd, 0, 1, IORING_ENTER_GETEVENTS, 0, 0);
        if (r < 0) {
            int err = (int) -r;
            if (err != Errno.EINTR && err != Errno.ETIME && err != Errno.EAGAIN && err != Errno.EBUSY) {
                noteWaitError(err);
                LockSupport.parkNanos(1_000_000L); // a persistent error must not become a hot loop
            }
        }
    }

    private void noteWaitError(int err) {
        waitErrors++;
        lastWaitErrno = err;
    }

    /**
     * Completes the handle whose index is {@code userData}. Never throws. Called with the lock
     * held, or by the owner for the I/Os the kernel refused (no CQE will come for them).
     */
    void dispatch(long userData, int res) {
        AioContext ctx = context;
        if (ctx == null || userData < 0 || userData >= ctx.handleCount()) {
            strayCompletions++; // not ours (cannot happen: every SQE carries a handle index)
            return;
        }
        ctx.handle((int) userData).complete(res);
    }

    /**
     * Waits (up to 10 s) until {@code submitted} completions were reaped, so that the kernel is
     * done with the I/Os' buffers, then marks the queue closed: later waiters and polls return at
     * once and touch no mapped memory. Returns whether it was open. Owner, at close.
     */
    boolean drainAndClose(long submitted) {
        lock.lock();
        try {
            if (closed) {
                return false;
            }
            long deadline = System.nanoTime() + 10_000_000_000L;
            while (submitted > reaped && System.nanoTime() < deadline) {
                if (reapLocked() == 0) {
                    waitInKernelLocked(true);
                }
            }
            closed = true;
            return true;
        } finally {
            lock.unlock();
        }
    }

    // ---- statistics, under the lock ----

    long reaped() {
        lock.lock();
        try {
            return reaped;
        } finally {
            lock.unlock();
        }
    }

    /** The kernel's CQ overflow count, -1 after close. */
    int cqOverflow() {
        lock.lock();
        try {
            // Opaque: a statistic; nothing is read on the strength of it.
            return closed ? -1 : (int) INT.getOpaque(mem.cqRing, mem.cqOverflowOff);
        } finally {
            lock.unlock();
        }
    }

    String waitErrors() {
        lock.lock();
        try {
            return waitErrors == 0 ? "none" : waitErrors + " (last " + Errno.name(lastWaitErrno) + ")";
        } finally {
            lock.unlock();
        }
    }

    /** {waitCalls, polls, fruitfulPolls}. */
    long[] reapStats() {
        lock.lock();
        try {
            return new long[] {waitCalls, polls, fruitfulPolls};
        } finally {
            lock.unlock();
        }
    }
}
