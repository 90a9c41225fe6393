package org.pageio.api;

import org.osgi.annotation.versioning.ConsumerType;

/**
 * An I/O method: the one thing that differs between {@code sync}, {@code worker}, {@code io_uring},
 * {@code direct} and third-party methods. PostgreSQL's {@code IoMethodOps}, as a service.
 *
 * <p>Register an implementation as an OSGi service with the property {@code io.method=<name>}
 * ({@link #PROPERTY}); the buffer manager binds the one its {@code io_method} setting names. The
 * core ({@link AioContext}, {@link IoSession}, {@link IoHandle}) does everything else: handle
 * life cycle, callbacks, waiting, batching. A method implements only what differs.
 *
 * <h2>Threads</h2>
 * <ul>
 *   <li>{@link #openSession} and {@link #closeSession} run in the session's owner thread.</li>
 *   <li>{@link #needsSynchronousExecution} and {@link #submit} run in the owner thread of the
 *       handles passed, never concurrently for one session.</li>
 *   <li>{@link #waitOne} and {@link #checkOne} may be called by any thread that waits on a handle
 *       (the owner or another session holding a wait reference); they must be thread-safe.</li>
 *   <li>The method completes each I/O exactly once by calling {@link IoHandle#complete(int)} from
 *       any thread it likes; that call runs the shared completion callbacks in that thread and
 *       never throws.</li>
 * </ul>
 *
 * <p>Third parties implement this interface: it is a consumer type, so adding an abstract
 * method is a major version change. New optional operations get default implementations.
 */
@ConsumerType
public interface IoMethod {

    /** The service property that names a method, e.g. {@code io.method=sync}. */
    String PROPERTY = "io.method";

    /** The method's name, as users select it with {@code io_method}; equal to {@link #PROPERTY}. */
    String name();

    /**
     * Whether this method can run on this machine. Probed once, at activation; an unavailable
     * method stays registered so that a person can see why ({@code pageio:methods}).
     */
    default Availability availability() {
        return Availability.AVAILABLE;
    }

    /**
     * Per-session set-up, in the session's owner thread, when the session opens (io_uring binds
     * its ring here). The returned object is kept by the session ({@link IoSession#methodState()})
     * and handed back to {@link #closeSession}. May return {@code null}.
     */
    default Object openSession(IoSession session) {
        return null;
    }

    /**
     * Per-session tear-down, in the owner thread, after every I/O of the session has completed.
     */
    default void closeSession(IoSession session, Object methodState) {
    }

    /**
     * Whether this handle must be executed inline by the issuer at staging instead of being
     * submitted. {@code sync} says yes to everything. Called in the owner thread, after the stage
     * callbacks ran.
     */
    default boolean needsSynchronousExecution(IoHandle handle) {
        return false;
    }

    /**
     * Executes one I/O inline, in the issuing thread, and completes it: called by the core for
     * every I/O that runs synchronously (the caller's {@link IoHandle#FLAG_SYNCHRONOUS} hint, or
     * {@link #needsSynchronousExecution} said so). The default performs the system call
     * ({@link IoHandle#performSynchronously}); a decorator (fault injection, throttling) overrides
     * it so that it sees inline I/O too. Must complete the handle; must not throw.
     */
    default void performSynchronously(IoHandle handle, org.pageio.posix.CallState callState) {
        handle.performSynchronously(callState);
    }

    /**
     * Starts the I/O of {@code count} handles, {@code handles[0..count)}, at most
     * {@link IoSession#SUBMIT_BATCH_SIZE}. Every handle is already in state
     * {@link IoHandle#SUBMITTED} and on its session's in-flight list when this is called; the method
     * must eventually call {@link IoHandle#complete(int)} on each exactly once (it may do so before
     * returning). Runs in the owner thread. Must not throw for an I/O error: that is a result
     * (a negative errno) passed to {@code complete}. The array is the session's and is reused:
     * copy what you keep.
     *
     * @return the number of handles submitted, equal to {@code count}
     */
    int submit(IoHandle[] handles, int count);

    /**
     * Whether {@link #waitOne} does something useful. A method without it guarantees that every
     * submitted I/O completes without the issuer's help (worker threads); waiters then sleep on
     * the handle.
     */
    default boolean hasWaitOne() {
        return false;
    }

    /**
     * Waits until the handle's state is at least {@link IoHandle#COMPLETED_IO} or its generation
     * moved past {@code generation}, driving completions if the method needs a caller for that
     * (io_uring reaps its completion queue). Must return at once if already done. Any thread.
     */
    default void waitOne(IoHandle handle, long generation) {
    }

    /**
     * Waits until the handle is done (as {@link #waitOne}) or a completion of the handle's session
     * is ready, then processes at most {@code max} ready completions (0: none), leaving the rest
     * ready: lets a caller that waits for the oldest of many I/Os start new ones as others end,
     * before it pays for their completion callbacks ({@link #readyCompletions}). The default waits
     * for the handle. Any thread.
     */
    default void waitProgress(IoHandle handle, long generation, int max) {
        waitOne(handle, generation);
    }

    /**
     * How many of the session's I/Os have completed without their completions being processed yet
     * (io_uring: CQEs waiting in the session's completion queue); 0 for a method whose completions
     * are processed where they happen. A hint for a caller that keeps a number of I/Os in flight:
     * those I/Os are no longer in flight. Owner only; never blocks.
     */
    default int readyCompletions(IoSession session) {
        return 0;
    }

    /**
     * Non-blocking poll (PostgreSQL 19's {@code check_one}): process completions that are ready,
     * if any, without sleeping. Any thread; may take short locks.
     */
    default void checkOne(IoHandle handle, long generation) {
    }

    /**
     * Whether a file descriptor may be closed only after the I/O in flight on it has completed
     * (io_uring: the kernel holds a reference while an async request runs). The core then waits
     * for those I/Os in {@link IoSession#closingFd(int)}.
     */
    default boolean waitOnFdBeforeClose() {
        return false;
    }

    /**
     * Whether this method's reads and writes bypass the OS page cache (O_DIRECT), as
     * {@code io_method=direct}'s do. Such reads get no kernel read-ahead, so the buffer manager
     * opens relation files with O_DIRECT and read streams start sequential scans at full combine
     * size instead of ramping up (since 1.2.0).
     */
    default boolean bypassesPageCache() {
        return false;
    }

    /**
     * Whether each of this method's reads holds one thread of a bounded set for as long as it is
     * in flight (a blocking {@code preadv} in a pool of I/O threads, as {@code io_method=worker}'s):
     * the device then sees at most as many of its reads as it has threads, whatever
     * {@code effective_io_concurrency} asks for. Read streams then give {@code posix_fadvise(WILLNEED)}
     * advice on random jumps, as PostgreSQL does only for {@code io_method=sync}, so that the kernel
     * starts the reads no thread has reached yet (since 1.8.0).
     */
    default boolean readsHoldThreads() {
        return false;
    }

    /** Availability of a method, with the cause a person can act on when it is not available. */
    record Availability(boolean available, String cause) {
        public static final Availability AVAILABLE = new Availability(true, null);

        public static Availability unavailable(String cause) {
            return new Availability(false, cause);
        }
    }
}
