package org.pageio.api;

import org.pageio.posix.Errno;

/**
 * Where the issuer receives the outcome of an I/O (PostgreSQL's {@code PgAioReturn}): the
 * distilled result after the local callbacks, plus a copy of what the I/O was about, because the
 * handle itself is reset and reused as soon as it is reclaimed.
 *
 * <p>Owned by the issuer and reused across I/Os: allocate one per in-flight slot, never per I/O.
 * Filled by the owner thread at reclaim ({@link IoHandle#setReturn}); read by the owner thread.
 * Not thread-safe.
 */
public final class IoReturn {

    long result = IoResult.of(IoResult.UNKNOWN, 0);
    int op;
    int fd = -1;
    long offset;
    long length;
    IoTarget target = IoTarget.UNKNOWN;
    long targetData;
    IoCallback reporter;
    Throwable failure;

    /** The packed {@link IoResult}. */
    public long result() {
        return result;
    }

    public int status() {
        return IoResult.status(result);
    }

    public boolean isOk() {
        return IoResult.status(result) == IoResult.OK;
    }

    public int op() {
        return op;
    }

    public int fd() {
        return fd;
    }

    public long offset() {
        return offset;
    }

    /** Bytes the I/O asked for (0 for fsync). */
    public long length() {
        return length;
    }

    public IoTarget target() {
        return target;
    }

    public long targetData() {
        return targetData;
    }

    /** The exception a completion callback threw, or {@code null}. */
    public Throwable failure() {
        return failure;
    }

    /** The I/O's object, as its target describes it. */
    public String describeTarget() {
        return target.describe(targetData);
    }

    /**
     * A message for a person: what was attempted, on what, and what failed, with the errno by its
     * symbolic name. For an OK result, a short summary.
     */
    public String message() {
        if (reporter != null) {
            try {
                String m = reporter.report(this);
                if (m != null) {
                    return m;
                }
            } catch (RuntimeException e) {
                // fall back to the core's message below
            }
        }
        int status = status();
        int value = IoResult.result(result);
        String what = IoHandle.opName(op);
        String where = (op == IoHandle.OP_FSYNC ? "" : length + " bytes at offset " + offset + " of ")
                + describeTarget();
        if (failure != null && status == IoResult.ERROR && value < 0
                && (IoResult.errorData(result) & IoResult.ERROR_DATA_CALLBACK_THREW) == 0) {
            // refused by the method before the kernel saw it (IoHandle.fail)
            return "could not " + what + " " + where + ": " + Errno.name(-value) + ": " + failure.getMessage();
        }
        if (failure != null) {
            return what + " of " + where + ": completion callback "
                    + (reporter == null ? "" : reporter.name() + " ") + "failed: " + failure;
        }
        return switch (status) {
            case IoResult.OK -> what + " of " + where + ": OK, " + value + " bytes";
            case IoResult.PARTIAL -> what + " of " + where + ": only " + value + " of " + length
                    + " bytes (end of file)";
            case IoResult.ERROR -> value < 0
                    ? "could not " + what + " " + where + ": " + Errno.name(-value) + " (" + Errno.message(-value) + ")"
                    : "could not " + what + " " + where + ": error " + IoResult.errorData(result);
            default -> what + " of " + where + ": " + IoResult.toString(result);
        };
    }

    /** Throws {@link AioException} with {@link #message()} unless the status is OK or WARNING. */
    public void throwIfFailed() throws AioException {
        int status = status();
        if (status != IoResult.OK && status != IoResult.WARNING) {
            int value = IoResult.result(result);
            throw new AioException(message(), status == IoResult.ERROR && value < 0 ? -value : 0, failure);
        }
    }

    void clear() {
        result = IoResult.of(IoResult.UNKNOWN, 0);
        op = IoHandle.OP_INVALID;
        fd = -1;
        offset = 0;
        length = 0;
        target = IoTarget.UNKNOWN;
        targetData = 0;
        reporter = null;
        failure = null;
    }

    @Override
    public String toString() {
        return "IoReturn[" + IoResult.toString(result) + ", " + IoHandle.opName(op) + " " + describeTarget() + "]";
    }
}
