package org.pageio.uring;

import org.pageio.posix.Errno;

/**
 * Setting up or tearing down a ring failed. The message names the operation (for example
 * {@code io_uring_setup(64 entries)}), the errno by its symbolic name, and what to do about it:
 * {@code "io_uring_setup(64 entries) failed: EMFILE (Too many open files): <likely cause and fix>"}.
 * The I/O path never throws this: an I/O error is a result ({@code -errno}) of the handle.
 * Immutable; safe to share between threads.
 */
public final class IoUringException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final String operation;
    private final int errno;

    /**
     * @param operation the call that failed, with its arguments, e.g. {@code "io_uring_setup(64 entries)"}
     * @param errno     the error number
     * @param message   the whole message (see {@link Diagnosis#failure})
     * @param cause     the underlying exception, or {@code null}
     */
    IoUringException(String operation, int errno, String message, Throwable cause) {
        super(message, cause);
        this.operation = operation;
        this.errno = errno;
    }

    /** The call that failed, with its arguments. */
    public String operation() {
        return operation;
    }

    /** The error number. */
    public int errno() {
        return errno;
    }

    /** The error's symbolic name, e.g. {@code "EPERM"}. */
    public String errnoName() {
        return Errno.name(errno);
    }
}
