package org.pageio.api;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.pageio.posix.CallState;
import org.pageio.posix.Iovec;

/**
 * The AIO core of one buffer pool (PostgreSQL's {@code PgAioCtl}): every session slot and every
 * handle, preallocated at creation, and the {@link IoMethod} that executes them. Handle
 * {@code i} of session slot {@code s} has index {@code s * io_max_concurrency + i} for life, so a
 * wait reference {@code (index, generation)} stays meaningful after the session closes and its
 * slot is reused.
 *
 * <p>Memory: one shared {@link Arena} holds every handle's iovec array
 * ({@code io_max_combine_limit} × 16 bytes) and every session's errno capture area; it is freed at
 * {@link #close()}.
 *
 * <p>Threads: {@link #openSession}, {@link #handle}, {@link #await}, {@link #checkDone} and the
 * views are thread-safe. {@link #close()} requires every session to be closed.
 *
 * <h2>Swapping the method (the method gate)</h2>
 * The method is not fixed for the context's life: {@link #swapMethod} replaces it while sessions
 * run, and {@link #retireMethod} replaces it, or leaves none, when the method is going away. The
 * current method is one immutable {@link Gate} object in a volatile field; its identity is the
 * method epoch. A session passes the gate when it starts a batch (its first handle, or
 * {@link IoSession#enterBatchMode}): it sets its own "in a batch" word (volatile store), then reads
 * the gate (volatile load) and compares it by reference with the gate its per-session method
 * state belongs to: no allocation, no lock. Until the batch ends (nothing handed out, nothing
 * staged, not in batch mode) it submits only to that method. A swapper, one at a time
 * ({@code swapLock}): closes the gate (volatile store of a closed {@code Gate}), waits until no
 * session is in a batch (the store-then-load on both sides is a Dekker pair: either the session
 * sees the closed gate, or the swapper sees the session's word), drives every in-flight I/O of the
 * old method to completion (as a waiter would: {@code checkOne}), then publishes the new gate and
 * wakes the sessions waiting at it. Each session rebinds itself, in its owner thread, when it next
 * passes the gate: the old method's {@code closeSession}, the new method's {@code openSession}.
 * Lock order: {@code swapLock}, then the gate monitor (only to notify); a session waiting at the
 * gate holds no lock and no staged or handed-out handle.
 */
public final class AioContext implements AutoCloseable {

    static {
        // one line per log record, as ./pageio's jul.properties says, where the JDK's two-line default is in force
        org.pageio.api.internal.PageioLogFormat.install();
    }

    private static final System.Logger LOG = System.getLogger("org.pageio.api");

    /** How long a swap waits for sessions and in-flight I/O by default (5 s). */
    public static final long DEFAULT_SWAP_TIMEOUT_NANOS = TimeUnit.SECONDS.toNanos(5);
    /** How long a session waits at a closed gate by default before its I/O fails (60 s). */
    public static final long DEFAULT_GATE_WAIT_NANOS = TimeUnit.SECONDS.toNanos(60);
    /** {@code io_hang_warning}'s default: an I/O in flight for 30 s is reported. */
    public static final long DEFAULT_HANG_WARNING_NANOS = TimeUnit.SECONDS.toNanos(30);

    /**
     * One method epoch: the method sessions submit to while {@code open}, or a closed gate
     * (a swap in progress, or no method at all: {@code method == null}) with the reason a waiting
     * session reports. Immutable; compared by identity.
     */
    record Gate(long epoch, IoMethod method, boolean open, String reason) {}

    private volatile Gate gate;
    /** The last method that was bound (for names and views while none is). */
    private volatile IoMethod lastMethod;
    private volatile long gateWaitNanos = DEFAULT_GATE_WAIT_NANOS;
    /** {@link #setHangWarning}; volatile: set by the configuring thread, read by the watchdog. */
    private volatile long hangWarningNanos = DEFAULT_HANG_WARNING_NANOS;
    private final Object swapLock = new Object();
    private final Object gateMonitor = new Object();
    private final AioConfig config;
    private final Arena arena;
    private final IoSession[] sessions;
    private final IoHandle[] handles;
    private final Object lock = new Object();
    private boolean closed;
    /**
     * The memory that I/Os mostly target (the buffer pool's pages), for methods that can register
     * it with the kernel ({@link #registerBuffers}); {@code null} when none. Volatile: set by the
     * pool's thread, read by each session's owner when its method opens a ring and before each
     * I/O it prepares there (a plain read would let a ring keep using a region the pool gave up).
     */
    private volatile MemorySegment registeredBuffers;

    private AioContext(IoMethod method, AioConfig config, String unboundReason) {
        Objects.requireNonNull(method, "method");
        this.gate = unboundReason == null ? new Gate(0, method, true, null) : new Gate(0, null, false, unboundReason);
        this.lastMethod = method;
        this.config = Objects.requireNonNull(config, "config");
        if (unboundReason == null) {
            IoMethod.Availability a = method.availability();
            if (!a.available()) {
                throw new IllegalStateException("io_method=" + method.name() + " is not available: " + a.cause());
            }
        }
        int perSession = config.ioMaxConcurrency();
        int combine = config.ioMaxCombineLimit();
        this.arena = Arena.ofShared();
        this.sessions = new IoSession[config.maxSessions()];
        this.handles = new IoHandle[config.maxSessions() * perSession];
        long iovBytes = Iovec.BYTES * combine;
        MemorySegment iovs = arena.allocate(iovBytes * handles.length, 8);
        for (int s = 0; s < sessions.length; s++) {
            IoHandle[] own = new IoHandle[perSession];
            IoSession session = new IoSession(this, s, own, CallState.allocate(arena));
            for (int i = 0; i < perSession; i++) {
                int index = s * perSession + i;
                own[i] = new IoHandle(session, index, iovs.asSlice(iovBytes * index, iovBytes), combine);
                handles[index] = own[i];
            }
            session.handlesCreated();
            sessions[s] = session;
        }
        HangWatchdog.INSTANCE.watch(this);
    }

    /**
     * Creates the core for {@code method}. Fails with the method's own cause if it is not
     * available, never falling back to another method.
     */
    public static AioContext create(IoMethod method, AioConfig config) {
        return new AioContext(method, config, null);
    }

    /**
     * Creates the core with no method bound, the gate closed for {@code reason}: sessions open, and
     * their I/O waits at the gate (at most the gate wait timeout) until {@link #retireMethod} binds
     * an available method. {@code named} stands in for names and views until then; it may be
     * unavailable and is never called to execute I/O. For a container that starts before any
     * usable method has registered.
     */
    public static AioContext createUnbound(IoMethod named, AioConfig config, String reason) {
        return new AioContext(named, config, Objects.requireNonNull(reason, "reason"));
    }

    /**
     * The method sessions submit to now; while none is bound (the gate is closed by
     * {@link #retireMethod} with no successor), the last one that was. Any thread.
     */
    public IoMethod method() {
        return lastMethod;
    }

    /** The method epoch: 0 at creation, one more per completed swap. Any thread. */
    public long methodEpoch() {
        return gate.epoch();
    }

    /** Whether a method is bound and the gate open (no swap in progress). Any thread. */
    public boolean methodBound() {
        return gate.open();
    }

    /** Why the gate is closed (a swap in progress, or no method), or {@code null} when it is open. */
    public String gateClosedReason() {
        Gate g = gate;
        return g.open() ? null : g.reason();
    }

    /** How long a session waits at a closed gate before its I/O fails (default 60 s). Any thread. */
    public void setGateWaitTimeout(long nanos) {
        gateWaitNanos = Math.max(0, nanos);
    }

    Gate gate() {
        return gate;
    }

    public AioConfig config() {
        return config;
    }

    /**
     * Opens a session owned by the calling thread. {@code kind} names what the session does, for
     * statistics ({@code "client"}, {@code "checkpointer"}, …).
     *
     * @throws IllegalStateException when all {@code max_sessions} slots are in use
     */
    public IoSession openSession(String kind) {
        IoSession session;
        synchronized (lock) {
            if (closed) {
                throw new IllegalStateException("AIO context for io_method=" + lastMethod.name() + " is closed");
            }
            session = null;
            for (IoSession s : sessions) {
                if (!s.isOpen()) {
                    session = s;
                    break;
                }
            }
            if (session == null) {
                throw new IllegalStateException("all " + sessions.length + " I/O session slots are in use"
                        + " (max_sessions = " + sessions.length + "); close a session or raise max_sessions");
            }
            session.opened(Thread.currentThread(), kind, null);
        }
        try {
            session.bindAtOpen(); // binds the current method now, or at the first I/O while the gate is closed
        } catch (RuntimeException | Error e) {
            closeSlot(session);
            throw e;
        }
        return session;
    }

    void closeSlot(IoSession session) {
        synchronized (lock) {
            session.closed();
        }
    }

    /** The handle with this index (the first half of a wait reference). Any thread. */
    public IoHandle handle(int index) {
        return handles[Objects.checkIndex(index, handles.length)];
    }

    /** Number of handles in all slots: {@code max_sessions × io_max_concurrency}. */
    public int handleCount() {
        return handles.length;
    }

    /**
     * Waits for the I/O {@code (index, generation)} from a thread that has no session (a
     * console command, a test). Threads with a session use {@link IoSession#await} instead, which
     * also reclaims their own handles and submits their staged I/O first.
     */
    public void await(int index, long generation) {
        IoHandle h = handle(index);
        for (;;) {
            int s = h.state();
            if (h.recycled(generation) || s >= IoHandle.COMPLETED_SHARED) {
                return;
            }
            IoMethod m = h.session().boundMethod();
            if (s == IoHandle.SUBMITTED && h.waitableBy(m)) {
                m.waitOne(h, generation);
            } else {
                h.sleepUntilCompleted(generation);
            }
        }
    }

    /** {@link #await(int, long)} by packed wait reference ({@link IoHandle#waitRef()}). Any thread. */
    public void awaitRef(long waitRef) {
        IoHandle h = handle(IoHandle.refIndex(waitRef));
        await(h.index(), h.fullGeneration(waitRef));
    }

    /** {@link #checkDone(int, long)} by packed wait reference. Any thread. */
    public boolean checkRefDone(long waitRef) {
        IoHandle h = handle(IoHandle.refIndex(waitRef));
        return checkDone(h.index(), h.fullGeneration(waitRef));
    }

    /** Whether the I/O {@code (index, generation)} is complete, without blocking. Any thread. */
    public boolean checkDone(int index, long generation) {
        IoHandle h = handle(index);
        int s = h.state();
        if (h.recycled(generation) || s >= IoHandle.COMPLETED_SHARED) {
            return true;
        }
        if (s == IoHandle.SUBMITTED) {
            IoMethod m = h.session().boundMethod();
            if (m != null) {
                m.checkOne(h, generation);
            }
        }
        return h.completedOrRecycled(generation);
    }

    // ------------------------------------------------------------------ the method gate

    /**
     * Replaces the method while sessions run: closes the gate, waits (at most {@code timeoutNanos})
     * until no session is in a batch and every I/O in flight has completed, binds {@code next} and
     * reopens the gate. Sessions rebind themselves at their next batch. On timeout the old method
     * stays, the gate reopens, and this throws naming what did not finish. Any thread but a
     * session's owner in a batch (it would wait for itself); swaps are serialised.
     *
     * @throws IllegalArgumentException when {@code next} is not available here (nothing changes)
     * @throws IllegalStateException on timeout (nothing changes)
     */
    public MethodSwap swapMethod(IoMethod next, long timeoutNanos) {
        Objects.requireNonNull(next, "next");
        IoMethod.Availability a = next.availability();
        if (!a.available()) {
            throw new IllegalArgumentException("io_method=" + next.name() + " is not available: " + a.cause());
        }
        return switchMethod(next, timeoutNanos, true, null);
    }

    /**
     * Replaces a method that is going away (its service is being unregistered): like
     * {@link #swapMethod} but never gives up: after {@code timeoutNanos} it switches anyway and the
     * result's {@link MethodSwap#stuck()} names the I/O that had not completed. With
     * {@code next == null} the gate stays closed: sessions that start I/O wait (up to the gate wait
     * timeout) with {@code reason} in their message until {@link #swapMethod} binds a method.
     */
    public MethodSwap retireMethod(IoMethod next, long timeoutNanos, String reason) {
        if (next != null && !next.availability().available()) {
            throw new IllegalArgumentException("io_method=" + next.name() + " is not available: "
                    + next.availability().cause());
        }
        return switchMethod(next, timeoutNanos, false, reason);
    }

    private MethodSwap switchMethod(IoMethod next, long timeoutNanos, boolean abortOnTimeout, String reason) {
        synchronized (swapLock) {
            Gate old = gate;
            String from = old.method() == null ? null : old.method().name();
            String to = next == null ? null : next.name();
            if (old.open() && old.method() == next) {
                return new MethodSwap(from, to, old.epoch(), 0, 0, 0, null);
            }
            long t0 = System.nanoTime();
            long deadline = t0 + Math.max(0, timeoutNanos);
            String closing = "io_method is being switched from " + (from == null ? "none" : from) + " to "
                    + (to == null ? "none" : to);
            gate = new Gate(old.epoch(), old.method(), false, closing); // volatile store: the gate closes
            int sessionsWaited = 0;
            int drained = 0;
            String stuck = null;
            // 1. every session leaves its batch (nothing handed out or staged for the old method)
            for (IoSession s : sessions) {
                if (s.gateHeld()) {
                    sessionsWaited++;
                    if (!waitUntil(() -> !s.gateHeld(), deadline)) {
                        stuck = "session " + s.id() + " (" + s.kind() + ") is still in a batch: "
                                + s.stagedCount() + " staged";
                        break;
                    }
                }
            }
            // 2. every I/O in flight on the old method completes
            if (stuck == null) {
                for (IoHandle h : handles) {
                    int st = h.state();
                    if (st == IoHandle.IDLE || st >= IoHandle.COMPLETED_SHARED) {
                        continue;
                    }
                    drained++;
                    long gen = h.generation();
                    if (!waitUntil(() -> checkDone(h.index(), gen) || h.state() == IoHandle.IDLE, deadline)) {
                        stuck = "I/O still " + IoHandle.stateName(h.state()) + " on handle " + h.index() + " of session "
                                + h.session().id() + " (" + h.session().kind() + ")";
                        break;
                    }
                }
            }
            long waitedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
            if (stuck != null && abortOnTimeout) {
                gate = old; // reopen: sessions bound to it go on without rebinding
                wakeGateWaiters();
                throw new IllegalStateException("io_method swap from " + from + " to " + to + " timed out after "
                        + waitedMs + " ms: " + stuck + "; io_method stays " + from);
            }
            if (stuck != null) {
                LOG.log(System.Logger.Level.ERROR, "io_method " + from + " went away with I/O in flight after waiting "
                        + waitedMs + " ms: " + stuck + "; switching to " + (to == null ? "none" : to) + " anyway");
            }
            Gate ng = next == null
                    ? new Gate(old.epoch() + 1, null, false, reason == null ? "no I/O method is bound" : reason)
                    : new Gate(old.epoch() + 1, next, true, null);
            if (next != null) {
                lastMethod = next;
            }
            gate = ng; // volatile store: the new epoch
            wakeGateWaiters();
            return new MethodSwap(from, to, ng.epoch(), System.nanoTime() - t0, sessionsWaited, drained, stuck);
        }
    }

    /** Polls {@code done} with a growing back-off (spin, then 20 µs .. 1 ms parks) until the deadline. */
    private static boolean waitUntil(java.util.function.BooleanSupplier done, long deadline) {
        long park = 20_000;
        for (int i = 0;; i++) {
            if (done.getAsBoolean()) {
                return true;
            }
            if (System.nanoTime() - deadline > 0) {
                return done.getAsBoolean();
            }
            if (i < 64) {
                Thread.onSpinWait();
            } else {
                LockSupport.parkNanos(park);
                park = Math.min(park * 2, 1_000_000);
            }
        }
    }

    private void wakeGateWaiters() {
        synchronized (gateMonitor) {
            gateMonitor.notifyAll();
        }
    }

    /**
     * Blocks the calling session's owner until the gate is open, at most the gate wait timeout.
     * Holds no lock but the gate monitor, and nothing of the session's is staged or handed out.
     *
     * @throws IllegalStateException on timeout or interrupt, with the reason the gate is closed
     */
    Gate awaitOpenGate(IoSession session) {
        Gate g = gate;
        if (g.open()) {
            return g;
        }
        long t0 = System.nanoTime();
        long deadline = t0 + gateWaitNanos;
        boolean told = false;
        synchronized (gateMonitor) {
            while (!(g = gate).open()) {
                if (g.method() == null && !told) {
                    told = true;
                    LOG.log(System.Logger.Level.WARNING, "session " + session.id() + " (" + session.kind()
                            + ") waits for an I/O method: " + g.reason());
                }
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    throw new IllegalStateException("no I/O started: " + g.reason() + "; waited "
                            + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0) + " ms for the method gate to open");
                }
                try {
                    TimeUnit.NANOSECONDS.timedWait(gateMonitor, Math.min(left, TimeUnit.MILLISECONDS.toNanos(100)));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException("no I/O started: interrupted while waiting at the method gate: "
                            + g.reason());
                }
            }
        }
        return g;
    }

    /**
     * The {@code aios} view: every handle that is not idle, read without locks as PostgreSQL's
     * {@code pg_get_aios} does (generation, then state and fields, then the generation again; a
     * row whose handle moved on meanwhile is skipped). Any thread; allocates, for views only.
     */
    public List<AioHandleInfo> snapshot() {
        List<AioHandleInfo> rows = new ArrayList<>();
        for (IoHandle h : handles) {
            AioHandleInfo row = info(h, h.generation());
            if (row != null) {
                rows.add(row);
            }
        }
        return rows;
    }

    /**
     * {@code h}'s {@code aios} row while it is in generation {@code gen} and not idle, else null
     * (read without locks, as {@link #snapshot}). Any thread.
     */
    AioHandleInfo info(IoHandle h, long gen) {
        int state = h.state();
        if (state == IoHandle.IDLE || h.generation() != gen) {
            return null;
        }
        int session = h.session().id();
        if (state == IoHandle.HANDED_OUT) {
            return new AioHandleInfo(session, h.index(), gen, IoHandle.stateName(state), "", 0, 0, "", 0, "", false, false,
                    false);
        }
        int op = h.op();
        long offset = h.offset();
        long length = h.length();
        IoTarget target = h.target();
        long targetData = h.targetData();
        int flags = h.flags();
        boolean completed = state >= IoHandle.COMPLETED_IO;
        int raw = completed ? h.rawResult() : 0;
        long distilled = state >= IoHandle.COMPLETED_SHARED ? h.distilledResult() : IoResult.of(IoResult.UNKNOWN, 0);
        if (h.generation() != gen || h.state() < state) {
            return null; // reused while we looked
        }
        String desc;
        try {
            desc = target == null ? "" : target.describe(targetData);
        } catch (RuntimeException e) {
            desc = "?";
        }
        return new AioHandleInfo(session, h.index(), gen, IoHandle.stateName(state), IoHandle.opName(op), offset, length,
                desc, raw, IoResult.statusName(IoResult.status(distilled)), (flags & IoHandle.FLAG_SYNCHRONOUS) != 0,
                (flags & IoHandle.FLAG_REFERENCES_LOCAL) != 0, (flags & IoHandle.FLAG_BUFFERED) != 0);
    }

    /**
     * {@code io_hang_warning}: an I/O in flight (defined, staged, submitted, or completed by the
     * kernel but not yet by its callbacks) for longer than this is reported once, with its
     * {@code aios} row, its method and the stacks of pageio's threads and the session owner's
     * ({@link HangWatchdog}); 0 turns the watch off. Default 30 s. Any thread.
     */
    public void setHangWarning(long nanos) {
        hangWarningNanos = Math.max(0, nanos);
        HangWatchdog.INSTANCE.changed();
    }

    /** The {@code io_hang_warning} in force, in ns (0: off). */
    public long hangWarning() {
        return hangWarningNanos;
    }

    /** How many I/Os {@code io_hang_warning} reported in this JVM, in any context (tests assert none). */
    public static long hangWarnings() {
        return HangWatchdog.INSTANCE.warnings();
    }

    IoHandle[] handles() {
        return handles;
    }

    /**
     * How many times a method called {@link IoHandle#complete} on a handle that was not
     * {@code SUBMITTED} — completing an I/O twice, or completing one it was never given. The core
     * ignores such calls (the first completion wins), but a second completion that lands after
     * the handle was reused would complete someone else's I/O: a method must keep this at 0
     * (the conformance kit checks it). Any thread; a sum read without locks.
     *
     * @since 1.3
     */
    public long extraCompletions() {
        long n = 0;
        for (IoHandle h : handles) {
            n += h.extraCompletions();
        }
        return n;
    }

    /** The sessions open now. Any thread; a snapshot. */
    public List<IoSession> openSessions() {
        List<IoSession> open = new ArrayList<>();
        synchronized (lock) {
            for (IoSession s : sessions) {
                if (s.isOpen()) {
                    open.add(s);
                }
            }
        }
        return open;
    }

    /**
     * Offers {@code region}, the memory most I/Os of this context read into or write from (the
     * buffer pool's pages), to methods that can register it with the kernel once instead of
     * mapping it for every I/O: io_uring's registered ("fixed") buffers. A method that cannot, or
     * fails to (e.g. {@code RLIMIT_MEMLOCK}), ignores it and says why; I/Os outside the region
     * are unaffected. Sessions whose method state exists already pick it up when they next open
     * a ring (after a method swap); the pool registers before it opens sessions. Replaces any
     * region offered before. Any thread.
     *
     * @param region native memory that stays allocated until {@link #unregisterBuffers}
     */
    public void registerBuffers(MemorySegment region) {
        Objects.requireNonNull(region, "region");
        if (!region.isNative()) {
            throw new IllegalArgumentException("registered buffers must be native memory, not " + region);
        }
        registeredBuffers = region;
    }

    /**
     * Withdraws {@code region} if it is the one offered (before its memory is freed): methods
     * stop using it for new I/Os at once and release their registrations at their next I/O or
     * when their session closes. Any thread.
     */
    public void unregisterBuffers(MemorySegment region) {
        if (registeredBuffers == region) {
            registeredBuffers = null;
        }
    }

    /** The region offered by {@link #registerBuffers}, or {@code null}. Any thread. */
    public MemorySegment registeredBuffers() {
        return registeredBuffers;
    }

    /**
     * Frees the handles' native memory. Every session must have been closed by its owner.
     *
     * @throws IllegalStateException naming the sessions still open
     */
    @Override
    public void close() {
        synchronized (lock) {
            if (closed) {
                return;
            }
            List<String> open = new ArrayList<>();
            for (IoSession s : sessions) {
                if (s.isOpen()) {
                    open.add(s.id() + " (" + s.kind() + ", thread '" + s.owner().getName() + "')");
                }
            }
            if (!open.isEmpty()) {
                throw new IllegalStateException("cannot close the AIO context: sessions still open: " + open);
            }
            closed = true;
        }
        HangWatchdog.INSTANCE.unwatch(this);
        arena.close();
    }

    @Override
    public String toString() {
        Gate g = gate;
        return "AioContext[io_method=" + (g.method() == null ? "none" : g.method().name()) + " epoch " + g.epoch()
                + (g.open() ? "" : " (gate closed: " + g.reason() + ")") + ", " + config + "]";
    }
}
