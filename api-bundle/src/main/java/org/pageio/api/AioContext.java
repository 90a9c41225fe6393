package org.pageio.api;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
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
 */
public final class AioContext implements AutoCloseable {

    private final IoMethod method;
    private final AioConfig config;
    private final Arena arena;
    private final IoSession[] sessions;
    private final IoHandle[] handles;
    private final Object lock = new Object();
    private boolean closed;

    private AioContext(IoMethod method, AioConfig config) {
        this.method = Objects.requireNonNull(method, "method");
        this.config = Objects.requireNonNull(config, "config");
        IoMethod.Availability a = method.availability();
        if (!a.available()) {
            throw new IllegalStateException("io_method=" + method.name() + " is not available: " + a.cause());
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
    }

    /**
     * Creates the core for {@code method}. Fails with the method's own cause if it is not
     * available, never falling back to another method.
     */
    public static AioContext create(IoMethod method, AioConfig config) {
        return new AioContext(method, config);
    }

    public IoMethod method() {
        return method;
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
                throw new IllegalStateException("AIO context for io_method=" + method.name() + " is closed");
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
            session.setMethodState(method.openSession(session));
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
            if (s == IoHandle.SUBMITTED && method.hasWaitOne() && (h.flags() & IoHandle.FLAG_SYNCHRONOUS) == 0) {
                method.waitOne(h, generation);
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
            method.checkOne(h, generation);
        }
        return h.completedOrRecycled(generation);
    }

    /**
     * The {@code aios} view: every handle that is not idle, read without locks as PostgreSQL's
     * {@code pg_get_aios} does (generation, then state and fields, then the generation again; a
     * row whose handle moved on meanwhile is skipped). Any thread; allocates, for views only.
     */
    public List<AioHandleInfo> snapshot() {
        List<AioHandleInfo> rows = new ArrayList<>();
        for (IoHandle h : handles) {
            long gen = h.generation();
            int state = h.state();
            if (state == IoHandle.IDLE) {
                continue;
            }
            int session = h.session().id();
            if (state == IoHandle.HANDED_OUT) {
                rows.add(new AioHandleInfo(session, h.index(), gen, IoHandle.stateName(state), "", 0, 0, "", 0, "", false,
                        false, false));
                continue;
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
                continue; // reused while we looked
            }
            String desc;
            try {
                desc = target == null ? "" : target.describe(targetData);
            } catch (RuntimeException e) {
                desc = "?";
            }
            rows.add(new AioHandleInfo(session, h.index(), gen, IoHandle.stateName(state), IoHandle.opName(op), offset,
                    length, desc, raw, IoResult.statusName(IoResult.status(distilled)),
                    (flags & IoHandle.FLAG_SYNCHRONOUS) != 0, (flags & IoHandle.FLAG_REFERENCES_LOCAL) != 0,
                    (flags & IoHandle.FLAG_BUFFERED) != 0));
        }
        return rows;
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
        arena.close();
    }

    @Override
    public String toString() {
        return "AioContext[io_method=" + method.name() + ", " + config + "]";
    }
}
