package org.pageio.api;

import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import org.pageio.posix.CallState;
import org.pageio.posix.Errno;
import org.pageio.posix.Iovec;
import org.pageio.posix.Posix;

/**
 * One I/O: PostgreSQL's {@code PgAioHandle}. Handles are preallocated, owned by one
 * {@link IoSession} for their whole life, and reused; a 64-bit generation, incremented on every
 * reuse, lets anybody holding a wait reference {@code (index(), generation)} tell whether the I/O
 * it referenced is over.
 *
 * <h2>State machine</h2>
 * <pre>
 *  IDLE -acquire-> HANDED_OUT -start*-> DEFINED -stage callbacks-> STAGED -submit-> SUBMITTED
 *    ^                 |                                                              |
 *    |              release                                            method: complete(raw)
 *    |                 v                                                              v
 *    +------------- IDLE  <-reclaim (owner)- COMPLETED_LOCAL <-owner- COMPLETED_SHARED <- COMPLETED_IO
 * </pre>
 *
 * <h2>Who may do what</h2>
 * <ul>
 *   <li>The owner thread (the session's) defines the I/O ({@code add*}, {@code set*}, {@code start*},
 *       {@link #release}) while the handle is HANDED_OUT, and is the only thread that moves a handle
 *       to COMPLETED_LOCAL and IDLE (reclaim, inside {@link IoSession}).</li>
 *   <li>The method moves it from SUBMITTED through COMPLETED_IO to COMPLETED_SHARED by calling
 *       {@link #complete(int)} exactly once, from any thread; the shared callbacks run in that
 *       thread.</li>
 *   <li>Any thread may read {@link #state()} and {@link #generation()} and wait
 *       ({@link IoSession#await}, {@link AioContext#await}).</li>
 * </ul>
 *
 * <h2>Memory ordering</h2>
 * The state word is published with release stores and read with acquire loads: everything the
 * owner wrote to define the I/O is visible to whoever sees SUBMITTED, and everything the
 * completer wrote (raw and distilled result) is visible to whoever sees COMPLETED_SHARED. The
 * generation is incremented (release) before the state returns to IDLE and before fields are
 * reset; a reader loads state (acquire) and then generation (acquire), so a matching generation
 * proves the state it read belongs to the referenced I/O.
 */
public final class IoHandle {

    // ---- states (ordered: a larger number is further along) ----
    public static final int IDLE = 0;
    public static final int HANDED_OUT = 1;
    public static final int DEFINED = 2;
    public static final int STAGED = 3;
    public static final int SUBMITTED = 4;
    public static final int COMPLETED_IO = 5;
    public static final int COMPLETED_SHARED = 6;
    public static final int COMPLETED_LOCAL = 7;

    // ---- operations ----
    public static final int OP_INVALID = 0;
    public static final int OP_READV = 1;
    public static final int OP_WRITEV = 2;
    public static final int OP_FSYNC = 3;
    public static final int OP_FDATASYNC = 4;

    // ---- flags (PostgreSQL's PGAIO_HF_*) ----
    /** The caller will wait at once: execute inline instead of submitting. */
    public static final int FLAG_SYNCHRONOUS = 1;
    /** The iovecs point into memory only the issuer may touch. */
    public static final int FLAG_REFERENCES_LOCAL = 2;
    /** The file was opened without O_DIRECT (heuristics only). */
    public static final int FLAG_BUFFERED = 4;
    /**
     * The issuer gave the kernel {@code posix_fadvise(WILLNEED)} advice for this read's range before
     * starting it: its pages are in the page cache or on their way, so executing it costs a copy
     * and at most the rest of a read already in flight (heuristics only; since 1.8.0).
     */
    public static final int FLAG_ADVISED = 8;

    /** Completion callbacks per handle. */
    public static final int MAX_CALLBACKS = 4;

    private static final VarHandle STATE;
    private static final VarHandle GENERATION;
    private static final VarHandle WAITERS;
    private static final VarHandle EXTRA_COMPLETIONS;

    static {
        try {
            MethodHandles.Lookup l = MethodHandles.lookup();
            STATE = l.findVarHandle(IoHandle.class, "state", int.class);
            GENERATION = l.findVarHandle(IoHandle.class, "generation", long.class);
            WAITERS = l.findVarHandle(IoHandle.class, "waiters", int.class);
            EXTRA_COMPLETIONS = l.findVarHandle(IoHandle.class, "extraCompletions", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final IoSession session;
    private final int index;
    private final MemorySegment iovecs;
    private final int maxIovecs;
    private final long[] handleData;

    /** Accessed through STATE only: release stores, acquire loads (see class comment). */
    @SuppressWarnings("unused")
    private int state = IDLE;
    /** Accessed through GENERATION only; starts at 1, incremented (release) at reuse. */
    @SuppressWarnings("unused")
    private long generation = 1;
    /** Threads sleeping on this handle's monitor; volatile accesses (Dekker with the state store). */
    @SuppressWarnings("unused")
    private int waiters;
    /**
     * Calls of {@link #complete} that found the handle not {@code SUBMITTED} (a method that
     * completes an I/O twice, or one it never got). Accessed through EXTRA_COMPLETIONS only:
     * getAndAdd (volatile), read by {@link AioContext#extraCompletions()} with acquire.
     */
    @SuppressWarnings("unused")
    private int extraCompletions;

    // Defined by the owner before SUBMITTED; published by the release store of SUBMITTED.
    private int op;
    private int fd = -1;
    private long offset;
    private int iovcnt;
    private long length;
    private int flags;
    private IoTarget target = IoTarget.UNKNOWN;
    private long targetData;
    private final IoCallback[] callbacks = new IoCallback[MAX_CALLBACKS];
    private final int[] callbackData = new int[MAX_CALLBACKS];
    private int numCallbacks;
    private int handleDataLength;
    private IoReturn ret;

    // Written by the completer before COMPLETED_SHARED (release).
    private int rawResult;
    private long distilled;
    private Throwable failure;

    // Owner-only bookkeeping (in-flight list in submission order).
    IoHandle prevInFlight;
    IoHandle nextInFlight;

    IoHandle(IoSession session, int index, MemorySegment iovecs, int maxIovecs) {
        this.session = session;
        this.index = index;
        this.iovecs = iovecs;
        this.maxIovecs = maxIovecs;
        this.handleData = new long[maxIovecs];
    }

    // ------------------------------------------------------------------ identity and state

    /** The session that owns this handle, for life. */
    public IoSession session() {
        return session;
    }

    /** Index of this handle in its {@link AioContext}: the first half of a wait reference. */
    public int index() {
        return index;
    }

    /** The current state (acquire load). Any thread. */
    public int state() {
        return (int) STATE.getAcquire(this);
    }

    /** The current generation (acquire load): the second half of a wait reference. Any thread. */
    public long generation() {
        return (long) GENERATION.getAcquire(this);
    }

    /** A wait reference that refers to nothing. */
    public static final long NO_WAIT_REF = -1L;
    static final int REF_GENERATION_BITS = 42;
    static final long REF_GENERATION_MASK = (1L << REF_GENERATION_BITS) - 1;

    /**
     * This handle's current I/O as one {@code long} (index in the upper 22 bits, the low 42 bits
     * of the generation below), so that a buffer descriptor can publish and read a wait reference
     * with a single release store / acquire load, never torn. Valid from HANDED_OUT until the
     * caller starts the I/O; use with {@link IoSession#awaitRef} and {@link AioContext#awaitRef}.
     * (42 bits of generation wrap after 4·10¹² reuses of one handle.)
     */
    public long waitRef() {
        return ((long) index << REF_GENERATION_BITS) | (generation() & REF_GENERATION_MASK);
    }

    /** The handle index of a packed wait reference. */
    public static int refIndex(long waitRef) {
        return (int) (waitRef >>> REF_GENERATION_BITS);
    }

    /**
     * The full generation a packed wait reference refers to, given this handle (its current
     * generation is never smaller, and generations only grow by one per reuse).
     */
    long fullGeneration(long waitRef) {
        long current = generation();
        return current - ((current - (waitRef & REF_GENERATION_MASK)) & REF_GENERATION_MASK);
    }

    /**
     * Whether the I/O of {@code generation} is over because the handle was reused since.
     * Any thread. Loads state first, then generation, as the class comment explains.
     */
    boolean recycled(long generation) {
        return (long) GENERATION.getAcquire(this) != generation;
    }

    // ------------------------------------------------------------------ definition (owner, HANDED_OUT)

    /** Registers a completion callback; callbacks run innermost (last added) first. Owner only. */
    public IoHandle addCallback(IoCallback callback, int data) {
        requireDefinable("addCallback");
        if (numCallbacks == MAX_CALLBACKS) {
            throw new IllegalStateException("API violation: at most " + MAX_CALLBACKS
                    + " callbacks per I/O handle; cannot add " + callback.name());
        }
        callbacks[numCallbacks] = callback;
        callbackData[numCallbacks] = data;
        numCallbacks++;
        return this;
    }

    /** Sets {@code FLAG_*} bits. Owner only, before start. */
    public IoHandle setFlags(int flags) {
        requireDefinable("setFlags");
        this.flags |= flags;
        return this;
    }

    /** Names what this I/O is about, for messages. Owner only, before start. */
    public IoHandle setTarget(IoTarget target, long targetData) {
        requireDefinable("setTarget");
        this.target = target;
        this.targetData = targetData;
        return this;
    }

    /** Where the issuer wants the outcome copied at reclaim. Owner only, before start. */
    public IoHandle setReturn(IoReturn ret) {
        requireDefinable("setReturn");
        this.ret = ret;
        if (ret != null) {
            ret.clear();
        }
        return this;
    }

    /** Points iovec {@code i} at {@code buffer} (its whole size). Owner only, before start. */
    public IoHandle setIovec(int i, MemorySegment buffer) {
        return setIovec(i, buffer.address(), buffer.byteSize());
    }

    /** Points iovec {@code i} at native memory. Owner only, before start. */
    public IoHandle setIovec(int i, long address, long len) {
        requireDefinable("setIovec");
        java.util.Objects.checkIndex(i, maxIovecs);
        Iovec.set(iovecs, i, address, len);
        return this;
    }

    /** Stores one long of handle data (bufmgr keeps buffer ids here). Owner only, before start. */
    public IoHandle setHandleData(int i, long value) {
        requireDefinable("setHandleData");
        java.util.Objects.checkIndex(i, maxIovecs);
        handleData[i] = value;
        handleDataLength = Math.max(handleDataLength, i + 1);
        return this;
    }

    /**
     * Starts a vectored read of iovecs {@code [0, iovcnt)} at {@code offset}. The handle is
     * staged, and then executed inline, submitted, or held in the batch (see {@link IoSession}).
     * The caller loses ownership of the definition: take the wait reference before this call.
     */
    public void startReadv(int fd, int iovcnt, long offset) {
        define(OP_READV, fd, iovcnt, offset);
    }

    /** Starts a vectored write; see {@link #startReadv}. */
    public void startWritev(int fd, int iovcnt, long offset) {
        define(OP_WRITEV, fd, iovcnt, offset);
    }

    /** Starts fsync, or fdatasync when {@code dataOnly}; see {@link #startReadv}. */
    public void startFsync(int fd, boolean dataOnly) {
        define(dataOnly ? OP_FDATASYNC : OP_FSYNC, fd, 0, 0);
    }

    /** Gives back a handle that was handed out but not started. Owner only. */
    public void release() {
        session.requireOwner("release");
        if (state() != HANDED_OUT) {
            throw new IllegalStateException("API violation: release() of an I/O handle in state "
                    + stateName(state()) + "; only a handed-out handle can be released");
        }
        session.handleReleased(this);
    }

    private void define(int op, int fd, int iovcnt, long offset) {
        requireDefinable(opName(op));
        if (op == OP_READV || op == OP_WRITEV) {
            if (iovcnt < 1 || iovcnt > maxIovecs) {
                throw new IllegalArgumentException(opName(op) + ": " + iovcnt
                        + " iovecs; valid values are 1.." + maxIovecs + " (io_max_combine_limit)");
            }
            if (offset < 0) {
                throw new IllegalArgumentException(opName(op) + ": negative offset " + offset);
            }
        }
        long total = 0;
        for (int i = 0; i < iovcnt; i++) {
            total += Iovec.length(iovecs, i);
        }
        this.op = op;
        this.fd = fd;
        this.iovcnt = iovcnt;
        this.offset = offset;
        this.length = total;
        session.stage(this);
    }

    private void requireDefinable(String what) {
        session.requireOwner(what);
        int s = state();
        if (s != HANDED_OUT) {
            throw new IllegalStateException("API violation: " + what + " on an I/O handle in state "
                    + stateName(s) + "; the handle must be handed out (acquired, not yet started)");
        }
    }

    // ------------------------------------------------------------------ what methods read (after SUBMITTED)

    public int op() {
        return op;
    }

    public int fd() {
        return fd;
    }

    public long offset() {
        return offset;
    }

    /** Number of iovecs in {@link #iovecs()}. */
    public int iovcnt() {
        return iovcnt;
    }

    /** Total bytes of the iovecs. */
    public long length() {
        return length;
    }

    public int flags() {
        return flags;
    }

    /** The native {@code struct iovec} array, {@code io_max_combine_limit} entries of 16 bytes. */
    public MemorySegment iovecs() {
        return iovecs;
    }

    public IoTarget target() {
        return target;
    }

    public long targetData() {
        return targetData;
    }

    public int handleDataLength() {
        return handleDataLength;
    }

    public long handleData(int i) {
        java.util.Objects.checkIndex(i, handleDataLength);
        return handleData[i];
    }

    /** The raw result: bytes or a negative errno; valid from COMPLETED_IO on. */
    public int rawResult() {
        return rawResult;
    }

    /** The distilled result of the shared callbacks; valid from COMPLETED_SHARED on. */
    public long distilledResult() {
        return distilled;
    }

    // ------------------------------------------------------------------ execution and completion

    /**
     * Executes the I/O with a blocking system call in the calling thread and completes it
     * (PostgreSQL's {@code pgaio_io_perform_synchronously}). For methods and the core; any thread
     * holding its own {@link CallState}. Never throws.
     */
    public void performSynchronously(CallState cs) {
        long r;
        try {
            r = switch (op) {
                case OP_READV -> Posix.preadv(cs, fd, iovecs, iovcnt, offset);
                case OP_WRITEV -> Posix.pwritev(cs, fd, iovecs, iovcnt, offset);
                case OP_FSYNC -> Posix.fsync(cs, fd);
                case OP_FDATASYNC -> Posix.fdatasync(cs, fd);
                default -> -Errno.EINVAL;
            };
        } catch (Throwable t) {
            failure = t;
            r = -Errno.EIO;
        }
        complete((int) r);
    }

    /**
     * Completes the I/O without performing it, as an error: for a method that refuses an I/O before
     * it reaches the kernel (direct I/O's alignment rules, say). {@code cause} is kept for the
     * issuer ({@link IoReturn#failure()}) and its message becomes part of {@link IoReturn#message()}.
     * Same rules as {@link #complete(int)}: any thread, exactly once, never throws.
     *
     * @param negErrno the result, a negative errno such as {@code -EINVAL}
     * @param cause    what a person should read; may be {@code null}
     */
    public void fail(int negErrno, Throwable cause) {
        if ((int) STATE.getAcquire(this) != SUBMITTED) {
            return;
        }
        failure = cause;
        complete(negErrno < 0 ? negErrno : -Errno.EIO);
    }

    /**
     * Records the raw result of the I/O ({@code >= 0} bytes, or a negative errno) and runs the
     * shared completion callbacks innermost-first in the calling thread (PostgreSQL's
     * {@code pgaio_io_process_completion}). Called by the method exactly once per submission,
     * from any thread. Never throws: a callback's exception becomes an {@link IoResult#ERROR}.
     * A second call for the same submission is ignored.
     */
    public void complete(int raw) {
        // CAS: exactly once, even if a buggy method completes twice. Volatile semantics.
        if (!STATE.compareAndSet(this, SUBMITTED, COMPLETED_IO)) {
            EXTRA_COMPLETIONS.getAndAdd(this, 1); // a method's bug, counted for the conformance kit
            return;
        }
        rawResult = raw;
        long r = initialResult(raw);
        for (int i = numCallbacks - 1; i >= 0; i--) {
            long before = r;
            try {
                r = callbacks[i].completeShared(this, r, callbackData[i]);
            } catch (Throwable t) {
                if (failure == null) {
                    failure = t;
                }
                r = IoResult.withStatus(r, IoResult.ERROR, IoResult.ERROR_DATA_CALLBACK_THREW);
            }
            if (r != before) {
                r = IoResult.stamp(r, i);
            }
        }
        distilled = r;
        // Volatile store: orders the result fields before it (release) and, with the volatile
        // load of waiters below, makes sure a concurrent sleeper either sees COMPLETED_SHARED or
        // is seen and notified (store-load, so plain release is not enough here).
        STATE.setVolatile(this, COMPLETED_SHARED);
        wakeWaiters();
    }

    private long initialResult(int raw) {
        if (raw < 0) {
            return IoResult.of(IoResult.ERROR, raw);
        }
        if ((op == OP_READV || op == OP_WRITEV) && raw < length) {
            return IoResult.of(IoResult.PARTIAL, raw);
        }
        return IoResult.of(IoResult.OK, raw);
    }

    // ------------------------------------------------------------------ owner-side transitions (IoSession)

    void handOut() {
        STATE.setRelease(this, HANDED_OUT);
    }

    void setState(int s) {
        STATE.setRelease(this, s);
    }

    /** A stage callback threw: complete without I/O, as an error the issuer will see. */
    void failStage(Throwable t) {
        fail(-Errno.ECANCELED, t);
    }

    void runStageCallbacks() {
        for (int i = numCallbacks - 1; i >= 0; i--) {
            callbacks[i].stage(this, callbackData[i]);
        }
    }

    /**
     * Owner only, state COMPLETED_SHARED: runs the local callbacks, fills the issuer's return,
     * then recycles the handle (generation first, then fields, then IDLE).
     */
    void reclaimCompleted() {
        long r = distilled;
        Throwable f = failure;
        for (int i = numCallbacks - 1; i >= 0; i--) {
            long before = r;
            try {
                r = callbacks[i].completeLocal(this, r, callbackData[i]);
            } catch (Throwable t) {
                if (f == null) {
                    f = t;
                }
                r = IoResult.withStatus(r, IoResult.ERROR, IoResult.ERROR_DATA_CALLBACK_THREW);
            }
            if (r != before) {
                r = IoResult.stamp(r, i);
            }
        }
        STATE.setRelease(this, COMPLETED_LOCAL);
        if (ret != null) {
            int id = IoResult.callbackId(r);
            ret.result = r;
            ret.op = op;
            ret.fd = fd;
            ret.offset = offset;
            ret.length = length;
            ret.target = target;
            ret.targetData = targetData;
            ret.reporter = id < numCallbacks ? callbacks[id] : null;
            ret.failure = f;
        }
        recycle(false);
    }

    /**
     * Generation first (release), then reset, then IDLE. After a completion every sleeper was
     * already woken at COMPLETED_SHARED (and a late one sees it and does not sleep), so a release
     * store suffices; a handle released without I/O ({@code wake}) may have sleepers holding a
     * wait reference from HANDED_OUT, so that store is volatile and they are woken.
     */
    void recycle(boolean wake) {
        GENERATION.setRelease(this, (long) GENERATION.getAcquire(this) + 1);
        op = OP_INVALID;
        fd = -1;
        offset = 0;
        iovcnt = 0;
        length = 0;
        flags = 0;
        target = IoTarget.UNKNOWN;
        targetData = 0;
        for (int i = 0; i < numCallbacks; i++) {
            callbacks[i] = null;
        }
        numCallbacks = 0;
        handleDataLength = 0;
        ret = null;
        rawResult = 0;
        distilled = 0;
        failure = null;
        if (wake) {
            STATE.setVolatile(this, IDLE);
            wakeWaiters();
        } else {
            STATE.setRelease(this, IDLE);
        }
    }

    private void wakeWaiters() {
        if ((int) WAITERS.getVolatile(this) > 0) {
            synchronized (this) {
                notifyAll();
            }
        }
    }

    /**
     * How long a waiter that finds the I/O done but its shared completion callbacks still running
     * in another thread (COMPLETED_IO) polls before it sleeps: those callbacks are bounded work
     * (verifying at most {@code io_combine_limit} pages), a few µs, while a sleep and its wake-up
     * cost ≈ 20 µs of CPU on a VM and put a monitor's notify on the completer's path. 20 µs: long
     * enough to cover the callbacks of one combined read, short enough that a waiter behind a
     * descheduled completer soon gives its CPU back.
     */
    static final long CALLBACK_SPIN_NANOS = 20_000L;

    /**
     * Polls for at most {@link #CALLBACK_SPIN_NANOS} while the handle is COMPLETED_IO for
     * {@code generation}; returns whether it reached COMPLETED_SHARED (or was recycled). Volatile
     * loads; allocates nothing. Any thread.
     */
    boolean pollWhileCompletingShared(long generation) {
        long deadline = 0;
        for (int i = 0;; i++) {
            if (completedOrRecycled(generation)) {
                return true;
            }
            if ((int) STATE.getVolatile(this) != COMPLETED_IO) {
                return false;
            }
            if ((i & 15) == 0) {
                long now = System.nanoTime();
                if (deadline == 0) {
                    deadline = now + CALLBACK_SPIN_NANOS;
                } else if (now - deadline > 0) {
                    return false;
                }
            }
            Thread.onSpinWait();
        }
    }

    /**
     * Sleeps until the I/O of {@code generation} reached COMPLETED_SHARED or the handle was
     * recycled; first polls briefly if the shared callbacks are running in another thread
     * ({@link #pollWhileCompletingShared}). Any thread; uninterruptible (the interrupt status is
     * kept), because giving up half-way would leave the caller without its buffer, as in PostgreSQL.
     */
    void sleepUntilCompleted(long generation) {
        if (pollWhileCompletingShared(generation)) {
            return; // the shared callbacks were running in another thread, and ended within the poll
        }
        boolean interrupted = false;
        WAITERS.getAndAdd(this, 1);
        try {
            synchronized (this) {
                while (!completedOrRecycled(generation)) {
                    try {
                        wait();
                    } catch (InterruptedException e) {
                        interrupted = true;
                    }
                }
            }
        } finally {
            WAITERS.getAndAdd(this, -1);
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * Whether {@code m}'s {@link IoMethod#waitOne} may wait for this handle while it is SUBMITTED:
     * a bound method that has one, and an I/O it really submitted (not one run synchronously).
     */
    boolean waitableBy(IoMethod m) {
        return m != null && m.hasWaitOne() && (flags() & FLAG_SYNCHRONOUS) == 0;
    }

    boolean completedOrRecycled(long generation) {
        int s = (int) STATE.getVolatile(this);
        return recycled(generation) || s >= COMPLETED_SHARED;
    }

    // ------------------------------------------------------------------ names

    public static String stateName(int state) {
        return switch (state) {
            case IDLE -> "IDLE";
            case HANDED_OUT -> "HANDED_OUT";
            case DEFINED -> "DEFINED";
            case STAGED -> "STAGED";
            case SUBMITTED -> "SUBMITTED";
            case COMPLETED_IO -> "COMPLETED_IO";
            case COMPLETED_SHARED -> "COMPLETED_SHARED";
            case COMPLETED_LOCAL -> "COMPLETED_LOCAL";
            default -> "state " + state;
        };
    }

    public static String opName(int op) {
        return switch (op) {
            case OP_READV -> "readv";
            case OP_WRITEV -> "writev";
            case OP_FSYNC -> "fsync";
            case OP_FDATASYNC -> "fdatasync";
            default -> "invalid";
        };
    }

    /** For debugging; reads fields without synchronization. */
    @Override
    public String toString() {
        return "IoHandle[" + index + " gen " + generation() + " " + stateName(state()) + " " + opName(op)
                + " fd " + fd + " off " + offset + " len " + length + "]";
    }

    /** Calls of {@link #complete} ignored because the handle was not submitted (acquire read). */
    int extraCompletions() {
        return (int) EXTRA_COMPLETIONS.getAcquire(this);
    }
}
