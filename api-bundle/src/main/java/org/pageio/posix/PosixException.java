package org.pageio.posix;

import java.io.IOException;
import java.nio.file.Path;

/**
 * A libc call failed. The message reads
 * {@code "<call>(<file>) failed: <ERRNONAME> (<strerror text>)"}, followed by
 * {@code ", <context>"} when there is context such as {@code "offset 8192, length 4096"}; without a
 * file it reads {@code "<call>() failed: ..."}. Immutable; safe to share between threads.
 */
public final class PosixException extends IOException {
    private static final long serialVersionUID = 1L;

    private final String call;
    private final transient Path file;
    private final int errno;
    private final String context;

    /**
     * @param call    the libc function, e.g. {@code "open"}
     * @param file    the file it was called for, or {@code null}
     * @param errno   the error number
     * @param context more detail for the message, or {@code null}
     */
    public PosixException(String call, Path file, int errno, String context) {
        super(message(call, file, errno, context));
        this.call = call;
        this.file = file;
        this.errno = errno;
        this.context = context;
    }

    /** The libc function that failed. */
    public String call() {
        return call;
    }

    /** The file it was called for, or {@code null} (also after deserialisation). */
    public Path file() {
        return file;
    }

    /** The error number. */
    public int errno() {
        return errno;
    }

    /** The error's name, e.g. {@code "ENOENT"}. */
    public String errnoName() {
        return Errno.name(errno);
    }

    /** The extra detail given, or {@code null}. */
    public String context() {
        return context;
    }

    private static String message(String call, Path file, int errno, String context) {
        StringBuilder sb = new StringBuilder(call).append('(');
        if (file != null) {
            sb.append(file);
        }
        sb.append(") failed: ").append(Errno.name(errno)).append(" (").append(Errno.message(errno)).append(')');
        if (context != null) {
            sb.append(", ").append(context);
        }
        return sb.toString();
    }
}
