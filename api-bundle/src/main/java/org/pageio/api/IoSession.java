package org.pageio.api;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import org.pageio.posix.CallState;

/**
 * One thread's I/O context: PostgreSQL's per-backend {@code PgAioBackend}. It owns a fixed set of
 * {@code io_max_concurrency} preallocated handles, at most one of them handed out at a time, a
 * batch of at most {@link #SUBMIT_BATCH_SIZE} staged handles, and the list of its in-flight
 * handles in submission order.
 *
 * <h2>Threads</h2>
 * A session is confined to the thread that opened it (its owner): every method here except
 * {@link #await}/{@link #checkDone} for handles of other sessions must be called by the owner,
 * and calls from another thread fail with an API-violation error. Other threads touch a session's
 * handles only through wait references and {@link IoHandle#complete(int)}.
 *
 * <h2>Rules</h2>
 * <ul>
 *   <li>At most one handle handed out (acquired, not started or released) at a time; so waiting
 *       for in-flight I/O always frees a handle and {@link #acquire()} always succeeds.</li>
 *   <li>Nobody blocks while holding staged I/O: every wait here submits the session's staged
 *       handles first, so two sessions waiting on each other's staged I/O cannot deadlock.</li>
 *   <li>Batch mode does not nest; staged I/O is submitted at {@link #exitBatchMode()}, when
 *       {@link #SUBMIT_BATCH_SIZE} are staged, or at {@link #submitStaged()}.</li>
 *   <li>The method gate ({@link AioContext}): a session passes it when it starts a batch (its
 *       first handle out, or batch mode) and leaves it when nothing is handed out or staged and
 *       batch mode is off; in between it submits only to the method it is bound to. When the gate
 *       moved to a new epoch, the owner rebinds here ({@code closeSession} of the old method,
 *       {@code openSession} of the new) before its next batch.</li>
 * </ul>
 */
public final class IoSession implements AutoCloseable {

    /** Most handles staged at once, and the most one {@link IoMethod#submit} call receives. */
    public static final int SUBMIT_BATCH_SIZE = 32;

    private final AioContext context;
    private final int slot;
    private final IoHandle[] handles;
    private final IoHandle[] idle;
    private int idleCount;
    private final IoHandle[] staged = new IoHandle[SUBMIT_BATCH_SIZE];
    private int stagedCount;
    private IoHandle inFlightHead;
    private IoHandle inFlightTail;
    private int inFlightCount;
    private IoHandle handedOut;
    private boolean batchMode;
    private final CallState callState;

    // Set under the context's lock by open/close; read by the owner thread.
    private Thread owner;
    private String kind;
    private volatile boolean open;

    // The method binding. Written by the owner only (at open and when it passes a moved gate);
    // volatile because waiters in other threads drive this session's I/O through them.
    private volatile IoMethod boundMethod;
    private volatile Object methodState;
    /** The gate (method epoch) the binding belongs to; owner only. */
    private AioContext.Gate boundGate;
    /** Owner-only mirror of {@link #gateHeld}. */
    private boolean holding;
    /** 1 while in a batch (see the class comment). Owner stores it, a swapper reads it: see GATE_HELD. */
    @SuppressWarnings("unused")
    private volatile int gateHeld;

    private static final VarHandle GATE_HELD;

    static {
        try {
            GATE_HELD = MethodHandles.lookup().findVarHandle(IoSession.class, "gateHeld", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    IoSession(AioContext context, int slot, IoHandle[] handles, CallState callState) {
        this.context = context;
        this.slot = slot;
        this.handles = handles;
        this.idle = new IoHandle[handles.length];
        this.callState = callState;
    }

    /** Called once by the context after it filled {@code handles}: all of them start idle. */
    void handlesCreated() {
        for (int i = handles.length - 1; i >= 0; i--) {
            idle[idleCount++] = handles[i];
        }
    }

    // ------------------------------------------------------------------ identity

    public AioContext context() {
        return context;
    }

    /** This session's slot number (0-based), as the {@code aios} view shows it. */
    public int id() {
        return slot;
    }

    /** What kind of session this is, for statistics ({@code client}, {@code checkpointer}, …). */
    public String kind() {
        return kind;
    }

    public Thread owner() {
        return owner;
    }

    public boolean isOpen() {
        return open;
    }

    /** What {@link IoMethod#openSession} of the method this session is bound to returned. Any thread. */
    public Object methodState() {
        return methodState;
    }

    /** The method this session is bound to ({@code null} before its first binding). Any thread. */
    public IoMethod boundMethod() {
        return boundMethod;
    }

    /** Whether the owner is in a batch now (volatile read; for the swapper). */
    boolean gateHeld() {
        return (int) GATE_HELD.getVolatile(this) != 0;
    }

    // ------------------------------------------------------------------ the method gate

    /**
     * Passes the gate at the start of a batch. Fast path: one volatile store to this session's
     * word and one volatile load of the context's gate, compared by reference: no allocation.
     * The store must precede the load (StoreLoad, hence volatile both): a swapper stores the closed
     * gate and then loads this word, so one of the two sees the other.
     */
    private void enterGate() {
        for (;;) {
            GATE_HELD.setVolatile(this, 1);
            AioContext.Gate g = context.gate();
            if (g == boundGate) {
                holding = true;
                return;
            }
            GATE_HELD.setRelease(this, 0); // not passing: a swapper must not wait for us
            g = context.awaitOpenGate(this);
            if (g != boundGate) {
                rebind(g);
            }
        }
    }

    /** Leaves the gate when the batch is over: nothing handed out or staged, batch mode off. */
    private void leaveGateIfIdle() {
        if (holding && handedOut == null && stagedCount == 0 && !batchMode) {
            holding = false;
            GATE_HELD.setRelease(this, 0); // release: everything submitted happens-before a swapper sees 0
        }
    }

    /**
     * Binds this session to the method of gate {@code g}, in the owner thread, outside a batch.
     * Every own I/O of the old binding is over (the swapper drained them; if a retired method left
     * some, they are waited for here), then the old method's per-session state is closed.
     */
    private void rebind(AioContext.Gate g) {
        if (boundMethod != null) {
            while (inFlightHead != null) {
                IoHandle h = inFlightHead;
                await(h, h.generation());
            }
            try {
                boundMethod.closeSession(this, methodState);
            } catch (RuntimeException e) {
                System.getLogger("org.pageio.api").log(System.Logger.Level.WARNING, "io_method=" + boundMethod.name()
                        + ": closing the state of session " + slot + " failed while rebinding: " + e);
            }
            boundMethod = null; // closed: never closed twice, even if the new method's openSession fails
            methodState = null;
        }
        boundGate = null;
        Object state = g.method().openSession(this); // may throw: the I/O that triggered it fails with the cause
        methodState = state;
        boundMethod = g.method();
        boundGate = g;
    }

    /** At open, in the owner: binds the current method if the gate is open, else at the first I/O. */
    void bindAtOpen() {
        AioContext.Gate g = context.gate();
        if (g.open()) {
            rebind(g);
        }
    }

    /** This session's errno capture area, for I/O executed in the owner thread. Owner only. */
    public CallState callState() {
        return callState;
    }

    /** The session's handles, in index order (for views; read their state with acquire loads). */
    IoHandle[] handles() {
        return handles;
    }

    public int stagedCount() {
        return stagedCount;
    }

    public int inFlightCount() {
        return inFlightCount;
    }

    public boolean inBatchMode() {
        return batchMode;
    }

    // ------------------------------------------------------------------ acquisition

    /**
     * Hands out an idle handle, waiting for in-flight I/O to complete when none is idle: first
     * reclaiming completed handles, then submitting staged ones, then waiting for the oldest.
     * Owner only.
     */
    public IoHandle acquire() {
        for (;;) {
            IoHandle h = acquireNb();
            if (h != null) {
                return h;
            }
            waitForFreeHandle();
        }
    }

    /** Hands out an idle handle, or returns {@code null} if none is idle. Owner only. */
    public IoHandle acquireNb() {
        requireOwner("acquire");
        if (handedOut != null) {
            throw new IllegalStateException("API violation: only one I/O handle can be handed out per session"
                    + " (session " + slot + " already holds handle " + handedOut.index() + ")");
        }
        if (stagedCount == SUBMIT_BATCH_SIZE) {
            submitStaged();
        }
        if (idleCount == 0) {
            return null;
        }
        if (!holding) {
            enterGate(); // may wait while the method is swapped; nothing is staged or handed out here
        }
        IoHandle h = idle[--idleCount];
        idle[idleCount] = null;
        handedOut = h;
        h.handOut();
        return h;
    }

    private void waitForFreeHandle() {
        boolean reclaimed = false;
        for (IoHandle h = inFlightHead; h != null; ) {
            IoHandle next = h.nextInFlight;
            if (h.state() >= IoHandle.COMPLETED_SHARED) {
                reclaim(h);
                reclaimed = true;
            }
            h = next;
        }
        if (reclaimed) {
            return;
        }
        if (stagedCount > 0) {
            submitStaged();
            return;
        }
        IoHandle oldest = inFlightHead;
        if (oldest == null) {
            throw new IllegalStateException("no free I/O handle in session " + slot + " and none in flight: all "
                    + handles.length + " handles (io_max_concurrency) are handed out, which cannot happen"
                    + " unless the core is broken");
        }
        await(oldest, oldest.generation());
    }

    void handleReleased(IoHandle h) {
        handedOut = null;
        h.recycle(true);
        idle[idleCount++] = h;
        leaveGateIfIdle();
    }

    // ------------------------------------------------------------------ staging and submission

    /** Called by {@link IoHandle} start* in the owner, with the op defined. */
    void stage(IoHandle h) {
        handedOut = null;
        h.setState(IoHandle.DEFINED);
        Throwable stageFailure = null;
        try {
            h.runStageCallbacks();
        } catch (Throwable t) {
            stageFailure = t;
        }
        h.setState(IoHandle.STAGED);
        if (stageFailure != null) {
            prepareSubmit(h);
            h.failStage(stageFailure);
            leaveGateIfIdle();
            return;
        }
        IoMethod method = boundMethod;
        if ((h.flags() & IoHandle.FLAG_SYNCHRONOUS) != 0 || method.needsSynchronousExecution(h)) {
            prepareSubmit(h);
            method.performSynchronously(h, callState);
            leaveGateIfIdle();
            return;
        }
        staged[stagedCount++] = h;
        if (!batchMode || stagedCount == SUBMIT_BATCH_SIZE) {
            submitStaged();
        }
    }

    /** Hands every staged handle to the method. Returns how many. Owner only. */
    public int submitStaged() {
        requireOwner("submitStaged");
        int n = stagedCount;
        if (n == 0) {
            return 0;
        }
        for (int i = 0; i < n; i++) {
            prepareSubmit(staged[i]);
        }
        stagedCount = 0;
        try {
            boundMethod.submit(staged, n);
        } finally {
            leaveGateIfIdle();
        }
        return n;
    }

    /** SUBMITTED (release) and appended to the in-flight list. */
    private void prepareSubmit(IoHandle h) {
        h.prevInFlight = inFlightTail;
        h.nextInFlight = null;
        if (inFlightTail == null) {
            inFlightHead = h;
        } else {
            inFlightTail.nextInFlight = h;
        }
        inFlightTail = h;
        inFlightCount++;
        h.setState(IoHandle.SUBMITTED);
    }

    /** Stops submitting each staged I/O at once; see the class comment. Owner only. */
    public void enterBatchMode() {
        requireOwner("enterBatchMode");
        if (batchMode) {
            throw new IllegalStateException("API violation: session " + slot + " is already in batch mode (no nesting)");
        }
        if (!holding) {
            enterGate();
        }
        batchMode = true;
    }

    /** Leaves batch mode and submits what is staged. Owner only. */
    public void exitBatchMode() {
        requireOwner("exitBatchMode");
        if (!batchMode) {
            throw new IllegalStateException("API violation: session " + slot + " is not in batch mode");
        }
        batchMode = false;
        submitStaged();
        leaveGateIfIdle();
    }

    // ------------------------------------------------------------------ waiting and reclaiming

    /**
     * Waits until the I/O {@code (handle, generation)} is complete, reclaiming it when it is this
     * session's. Returns at once if the handle was reused since (the I/O is over by definition).
     * Submits this session's staged I/O before blocking. Owner only (the handle may be any
     * session's).
     */
    public void await(IoHandle h, long generation) {
        requireOwner("await");
        submitStaged();
        boolean own = h.session() == this;
        for (;;) {
            int s = h.state();
            if (h.recycled(generation)) {
                return;
            }
            switch (s) {
                case IoHandle.IDLE, IoHandle.HANDED_OUT, IoHandle.DEFINED, IoHandle.STAGED -> {
                    if (own) {
                        throw new IllegalStateException("API violation: waiting on own I/O handle " + h.index()
                                + " in state " + IoHandle.stateName(s) + "; start and submit it first");
                    }
                    h.sleepUntilCompleted(generation);
                }
                case IoHandle.SUBMITTED -> {
                    IoMethod m = own ? boundMethod : h.session().boundMethod();
                    if (h.waitableBy(m)) {
                        m.waitOne(h, generation);
                    } else {
                        h.sleepUntilCompleted(generation);
                    }
                }
                case IoHandle.COMPLETED_IO -> h.sleepUntilCompleted(generation);
                default -> { // COMPLETED_SHARED, COMPLETED_LOCAL
                    if (own && s == IoHandle.COMPLETED_SHARED) {
                        reclaim(h);
                    }
                    return;
                }
            }
        }
    }

    /** {@link #await(IoHandle, long)} by wait reference. */
    public void await(int handleIndex, long generation) {
        await(context.handle(handleIndex), generation);
    }

    /** {@link #await(IoHandle, long)} by packed wait reference ({@link IoHandle#waitRef()}). */
    public void awaitRef(long waitRef) {
        IoHandle h = context.handle(IoHandle.refIndex(waitRef));
        await(h, h.fullGeneration(waitRef));
    }

    /**
     * Blocks until the I/O {@code waitRef} is over or a completion is ready, then processes at
     * most {@code max} ready completions ({@link IoMethod#waitProgress}); with a method that
     * completes I/O in other threads, blocks until the I/O is over. Submits staged I/O first. Does
     * not reclaim. Owner only.
     */
    public void awaitRefProgress(long waitRef, int max) {
        requireOwner("awaitRefProgress");
        submitStaged();
        IoHandle h = context.handle(IoHandle.refIndex(waitRef));
        long generation = h.fullGeneration(waitRef);
        int s = h.state();
        if (h.completedOrRecycled(generation)) {
            return;
        }
        IoMethod m = h.session() == this ? boundMethod : h.session().boundMethod();
        if (s == IoHandle.SUBMITTED && h.waitableBy(m)) {
            m.waitProgress(h, generation, max);
        } else {
            await(h, generation);
        }
    }

    /** {@link IoMethod#readyCompletions}: this session's completed, unprocessed I/Os. Owner only. */
    public int readyCompletions() {
        return boundMethod == null ? 0 : boundMethod.readyCompletions(this);
    }

    /**
     * Whether the I/O {@code waitRef} is over, from its handle's state alone: no poll of the
     * method, no reclaim. Owner only.
     */
    public boolean peekRefDone(long waitRef) {
        IoHandle h = context.handle(IoHandle.refIndex(waitRef));
        return h.completedOrRecycled(h.fullGeneration(waitRef));
    }

    /** {@link #checkDone(IoHandle, long)} by packed wait reference ({@link IoHandle#waitRef()}). */
    public boolean checkRefDone(long waitRef) {
        IoHandle h = context.handle(IoHandle.refIndex(waitRef));
        return checkDone(h, h.fullGeneration(waitRef));
    }

    /**
     * Whether the I/O {@code (handle, generation)} is complete, without blocking; lets the method
     * process ready completions first. Reclaims it when it is this session's. Owner only.
     */
    public boolean checkDone(IoHandle h, long generation) {
        requireOwner("checkDone");
        int s = h.state();
        if (h.recycled(generation)) {
            return true;
        }
        if (s == IoHandle.SUBMITTED) {
            IoMethod m = h.session() == this ? boundMethod : h.session().boundMethod();
            if (m != null) {
                m.checkOne(h, generation);
            }
            s = h.state();
            if (h.recycled(generation)) {
                return true;
            }
        }
        if (s >= IoHandle.COMPLETED_SHARED) {
            if (h.session() == this && s == IoHandle.COMPLETED_SHARED) {
                reclaim(h);
            }
            return true;
        }
        return false;
    }

    private void reclaim(IoHandle h) {
        if (h.prevInFlight == null) {
            inFlightHead = h.nextInFlight;
        } else {
            h.prevInFlight.nextInFlight = h.nextInFlight;
        }
        if (h.nextInFlight == null) {
            inFlightTail = h.prevInFlight;
        } else {
            h.nextInFlight.prevInFlight = h.prevInFlight;
        }
        h.prevInFlight = null;
        h.nextInFlight = null;
        inFlightCount--;
        h.reclaimCompleted();
        idle[idleCount++] = h;
    }

    /** Submits staged I/O and waits for every in-flight I/O of this session. Owner only. */
    public void drain() {
        requireOwner("drain");
        submitStaged();
        while (inFlightHead != null) {
            IoHandle h = inFlightHead;
            await(h, h.generation());
        }
    }

    /**
     * Called before a file descriptor is closed: submits staged I/O and, when the method needs it
     * ({@link IoMethod#waitOnFdBeforeClose()}), waits for this session's in-flight I/O on it.
     * Owner only.
     */
    public void closingFd(int fd) {
        requireOwner("closingFd");
        submitStaged();
        IoMethod m = boundMethod;
        if (m == null || !m.waitOnFdBeforeClose()) {
            return;
        }
        for (IoHandle h = inFlightHead; h != null; ) {
            IoHandle next = h.nextInFlight;
            if (h.fd() == fd) {
                await(h, h.generation());
                next = inFlightHead; // the list changed; restart
            }
            h = next;
        }
    }

    /**
     * Closes the session: releases a handed-out handle, leaves batch mode, waits for all in-flight
     * I/O, lets the method tear down its state, and frees the slot. Owner only; idempotent.
     */
    @Override
    public void close() {
        if (!open) {
            return;
        }
        requireOwner("close");
        if (handedOut != null) {
            handleReleased(handedOut);
        }
        batchMode = false;
        drain();
        leaveGateIfIdle();
        try {
            if (boundMethod != null) {
                boundMethod.closeSession(this, methodState);
            }
        } finally {
            context.closeSlot(this);
        }
    }

    // ------------------------------------------------------------------ context hooks

    void opened(Thread owner, String kind, Object methodState) {
        this.owner = owner;
        this.kind = kind;
        this.methodState = methodState;
        this.boundMethod = null;
        this.boundGate = null;
        this.holding = false;
        this.open = true;
    }

    void closed() {
        open = false;
        owner = null;
        methodState = null;
        boundMethod = null;
        boundGate = null;
        holding = false;
        GATE_HELD.setRelease(this, 0);
    }

    void requireOwner(String what) {
        if (Thread.currentThread() != owner) {
            throw new IllegalStateException("API violation: " + what + " on I/O session " + slot
                    + (open ? " owned by thread '" + owner.getName() + "'" : " that is closed")
                    + ", called from thread '" + Thread.currentThread().getName() + "'");
        }
    }

    @Override
    public String toString() {
        return "IoSession[" + slot + " " + kind + ", in flight " + inFlightCount + ", staged " + stagedCount + "]";
    }
}
