package org.pageio.api;

/**
 * The settings the AIO core is sized by, fixed for the life of an {@link AioContext}
 * (PostgreSQL's postmaster-level GUCs). Immutable; any thread.
 *
 * @param maxSessions        how many sessions may be open at once (PostgreSQL's process slots)
 * @param ioMaxConcurrency   handles per session, {@code io_max_concurrency}, 1..1024
 * @param ioMaxCombineLimit  iovecs per handle in blocks, {@code io_max_combine_limit}, 1..128
 */
public record AioConfig(int maxSessions, int ioMaxConcurrency, int ioMaxCombineLimit) {

    /** PostgreSQL's {@code PG_IOV_MAX}: the largest {@code io_max_combine_limit}. */
    public static final int MAX_COMBINE_LIMIT = 128;
    /** The largest {@code io_max_concurrency}. */
    public static final int MAX_CONCURRENCY = 1024;
    /** {@code io_max_concurrency = -1} means: choose automatically, as PostgreSQL does. */
    public static final int AUTO = -1;
    /** PostgreSQL's default {@code io_max_combine_limit}: 128 kB = 16 blocks. */
    public static final int DEFAULT_COMBINE_LIMIT = 16;
    /** Default number of session slots. */
    public static final int DEFAULT_MAX_SESSIONS = 64;
    /** Default {@code shared_buffers} in 8 KiB pages (128 MB). */
    public static final int DEFAULT_SHARED_BUFFER_PAGES = 16384;

    public AioConfig {
        check("max_sessions", maxSessions, 1, 4096);
        check("io_max_concurrency", ioMaxConcurrency, 1, MAX_CONCURRENCY);
        check("io_max_combine_limit", ioMaxCombineLimit, 1, MAX_COMBINE_LIMIT);
    }

    /** The defaults: 64 sessions, {@code io_max_concurrency} auto for 128 MB of buffers, 16 iovecs. */
    public static AioConfig defaults() {
        return of(DEFAULT_MAX_SESSIONS, AUTO, DEFAULT_COMBINE_LIMIT, DEFAULT_SHARED_BUFFER_PAGES);
    }

    /**
     * Builds a configuration; {@code ioMaxConcurrency = -1} is resolved as PostgreSQL resolves it:
     * {@code min(max(sharedBufferPages / maxSessions, 1), 64)}.
     */
    public static AioConfig of(int maxSessions, int ioMaxConcurrency, int ioMaxCombineLimit, long sharedBufferPages) {
        if (ioMaxConcurrency == AUTO) {
            ioMaxConcurrency = autoConcurrency(sharedBufferPages, maxSessions);
        } else if (ioMaxConcurrency == 0) {
            throw new IllegalArgumentException("io_max_concurrency = 0 is invalid: use -1 (automatic) or 1.."
                    + MAX_CONCURRENCY);
        }
        return new AioConfig(maxSessions, ioMaxConcurrency, ioMaxCombineLimit);
    }

    /** PostgreSQL's automatic {@code io_max_concurrency}: buffers per session slot, 1..64. */
    public static int autoConcurrency(long sharedBufferPages, int maxSessions) {
        return (int) Math.min(Math.max(sharedBufferPages / Math.max(maxSessions, 1), 1), 64);
    }

    private static void check(String name, int value, int min, int max) {
        if (value < min || value > max) {
            throw new IllegalArgumentException(name + " = " + value + " is out of range: valid values are "
                    + min + ".." + max);
        }
    }
}
