package org.pageio.api;

/**
 * A distilled I/O result packed into one {@code long}, so that carrying it allocates nothing
 * (PostgreSQL's 8-byte {@code PgAioResult}).
 *
 * <pre>
 *  bits 0..31   result      int: bytes transferred, or a negative errno for a failed system call
 *  bits 32..34  status      UNKNOWN / OK / PARTIAL / WARNING / ERROR
 *  bits 35..37  callback    which callback slot (0..3) set the status; {@link #CALLBACK_CORE} = the core
 *  bits 38..63  error data  26 bits whose meaning the setting callback defines
 * </pre>
 *
 * Pure functions; any thread.
 */
public final class IoResult {

    public static final int UNKNOWN = 0;
    public static final int OK = 1;
    /** Shorter than asked, without an error (a read past end of file). */
    public static final int PARTIAL = 2;
    /** Succeeded, with something worth reporting (a page zeroed on request, say). */
    public static final int WARNING = 3;
    public static final int ERROR = 4;

    /** Callback id recorded when the core itself set the status. */
    public static final int CALLBACK_CORE = 7;

    /** Error data bit set by the core when a completion callback threw; see {@link IoReturn#failure()}. */
    public static final int ERROR_DATA_CALLBACK_THREW = 1 << 25;

    private static final long RESULT_MASK = 0xFFFF_FFFFL;

    private IoResult() {
    }

    public static long of(int status, int result) {
        return of(status, result, CALLBACK_CORE, 0);
    }

    public static long of(int status, int result, int callbackId, int errorData) {
        return (result & RESULT_MASK)
                | ((long) (status & 0x7) << 32)
                | ((long) (callbackId & 0x7) << 35)
                | ((long) (errorData & 0x3FF_FFFF) << 38);
    }

    public static int status(long packed) {
        return (int) (packed >>> 32) & 0x7;
    }

    public static int result(long packed) {
        return (int) packed;
    }

    public static int callbackId(long packed) {
        return (int) (packed >>> 35) & 0x7;
    }

    public static int errorData(long packed) {
        return (int) (packed >>> 38) & 0x3FF_FFFF;
    }

    /**
     * The same result with another status and error data. The core records which callback
     * changed a result, so callbacks need not know their slot.
     */
    public static long withStatus(long packed, int status, int errorData) {
        return of(status, result(packed), callbackId(packed), errorData);
    }

    /** The same result, marked as set by callback slot {@code callbackId}. */
    static long stamp(long packed, int callbackId) {
        return (packed & ~(0x7L << 35)) | ((long) (callbackId & 0x7) << 35);
    }

    public static String statusName(int status) {
        return switch (status) {
            case UNKNOWN -> "UNKNOWN";
            case OK -> "OK";
            case PARTIAL -> "PARTIAL";
            case WARNING -> "WARNING";
            case ERROR -> "ERROR";
            default -> "status " + status;
        };
    }

    public static String toString(long packed) {
        return statusName(status(packed)) + "(" + result(packed) + ")";
    }
}
