package org.pageio.api;

import java.io.IOException;
import org.pageio.posix.Errno;

/**
 * An I/O that failed, as the issuer reports it: the message names the operation, the object
 * (file or relation and block) and the errno by its symbolic name.
 */
public final class AioException extends IOException {

    private static final long serialVersionUID = 1L;
    private final int errno;

    public AioException(String message, int errno, Throwable cause) {
        super(message, cause);
        this.errno = errno;
    }

    /** The errno of the failed system call, or 0 when the failure was not a system call's. */
    public int errno() {
        return errno;
    }

    /** {@link #errno()} by its symbolic name, e.g. {@code EIO}; empty when there is none. */
    public String errnoName() {
        return errno == 0 ? "" : Errno.name(errno);
    }
}
