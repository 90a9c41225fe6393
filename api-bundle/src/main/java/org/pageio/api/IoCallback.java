package org.pageio.api;

import org.osgi.annotation.versioning.ConsumerType;

/**
 * A completion callback, one layer's part of an I/O (PostgreSQL's {@code PgAioHandleCallbacks}).
 * Each layer registers its own on the same handle on the way down (storage manager, then buffer
 * manager); on completion they run innermost-first (last registered first), each turning the
 * previous {@link IoResult} into its own. A handle holds at most
 * {@link IoHandle#MAX_CALLBACKS} callbacks, each with a small int of private data.
 *
 * <h2>Threads</h2>
 * <ul>
 *   <li>{@link #stage}: the issuer (owner thread), while the handle is staged.</li>
 *   <li>{@link #completeShared}: whichever thread processes the completion (the issuer, an I/O
 *       worker, another session reaping an io_uring ring). It may touch only state that is safe
 *       to touch from any thread.</li>
 *   <li>{@link #completeLocal}: only the issuer, when it reclaims the handle, after every shared
 *       callback ran. Its result is handed to the issuer's {@link IoReturn}, not stored back.</li>
 * </ul>
 *
 * Completion callbacks must not throw; if one does, the core records an
 * {@link IoResult#ERROR} with {@link IoResult#ERROR_DATA_CALLBACK_THREW} and keeps the exception
 * for the issuer ({@link IoReturn#failure()}) instead of letting it escape. Implementations are
 * shared objects: no per-I/O allocation, no per-I/O state in fields.
 */
@ConsumerType
public interface IoCallback {

    /** A short name for messages and the {@code aios} view, e.g. {@code "md_readv"}. */
    String name();

    /** Runs in the issuer when the handle is staged, before submission. */
    default void stage(IoHandle handle, int data) {
    }

    /** Shared completion, any thread; returns this layer's result. */
    default long completeShared(IoHandle handle, long result, int data) {
        return result;
    }

    /** Issuer-local completion at reclaim; returns the result the issuer sees. */
    default long completeLocal(IoHandle handle, long result, int data) {
        return result;
    }

    /**
     * Turns a result whose status this callback set into a message for a person, naming the
     * object and what failed. Called only on error and warning paths; may allocate. Returning
     * {@code null} falls back to the core's message.
     */
    default String report(IoReturn ret) {
        return null;
    }
}
