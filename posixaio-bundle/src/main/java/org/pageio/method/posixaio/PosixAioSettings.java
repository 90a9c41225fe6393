package org.pageio.method.posixaio;

import java.util.Map;

/**
 * The settings of {@code io_method=posix_aio}: the sizes glibc's {@code aio_init} takes for its
 * own thread pool (PID {@value PosixAioIoMethod#PID}). Immutable and always valid: the constructor
 * refuses a value with a message naming the setting and its range. Any thread.
 *
 * @param threads  {@code posix_aio_threads}, glibc's {@code aio_threads}: the most threads glibc
 *                 runs requests in, 1..{@value #MAX_THREADS} (default {@value #DEFAULT_THREADS},
 *                 glibc's). One thread serves one file descriptor at a time
 * @param num      {@code posix_aio_num}, glibc's {@code aio_num}: the requests glibc preallocates
 *                 room for, {@value #MIN_NUM}..{@value #MAX_NUM}, rounded down to a multiple of 32
 *                 by glibc (default {@value #DEFAULT_NUM}); it allocates more when more are queued
 * @param idleTime {@code posix_aio_idle_time}, glibc's {@code aio_idle_time}: seconds an idle glibc
 *                 thread waits for work before it exits, 1..{@value #MAX_IDLE_TIME} (default
 *                 {@value #DEFAULT_IDLE_TIME})
 * @param fdsPerFile {@code posix_aio_fds_per_file}: descriptors a file's reads are spread over, its
 *                 own and duplicates of it, 1..{@value #MAX_FDS_PER_FILE} (default
 *                 {@value #DEFAULT_FDS_PER_FILE}); glibc runs one request per descriptor at a time,
 *                 so this many reads of one file at most. 1: every request on the handle's descriptor
 */
public record PosixAioSettings(int threads, int num, int idleTime, int fdsPerFile) {

    public static final String THREADS = "posix_aio_threads";
    public static final String NUM = "posix_aio_num";
    public static final String IDLE_TIME = "posix_aio_idle_time";
    public static final String FDS_PER_FILE = "posix_aio_fds_per_file";

    public static final int DEFAULT_THREADS = 20;
    public static final int MAX_THREADS = 1024;
    public static final int DEFAULT_NUM = 64;
    public static final int MIN_NUM = 32;
    public static final int MAX_NUM = 65536;
    public static final int DEFAULT_IDLE_TIME = 1;
    public static final int MAX_IDLE_TIME = 3600;
    public static final int DEFAULT_FDS_PER_FILE = 8;
    public static final int MAX_FDS_PER_FILE = 64;

    /** glibc's own pool defaults (20 threads, 64 requests, 1 s) and {@value #DEFAULT_FDS_PER_FILE} descriptors per file. */
    public static final PosixAioSettings DEFAULTS = new PosixAioSettings(DEFAULT_THREADS, DEFAULT_NUM, DEFAULT_IDLE_TIME,
            DEFAULT_FDS_PER_FILE);

    /** @throws IllegalArgumentException naming the setting, the value and the valid range */
    public PosixAioSettings {
        check(THREADS, threads, 1, MAX_THREADS);
        check(NUM, num, MIN_NUM, MAX_NUM);
        check(IDLE_TIME, idleTime, 1, MAX_IDLE_TIME);
        check(FDS_PER_FILE, fdsPerFile, 1, MAX_FDS_PER_FILE);
    }

    /** These settings with {@code posix_aio_fds_per_file = n}. */
    public PosixAioSettings withFdsPerFile(int n) {
        return new PosixAioSettings(threads, num, idleTime, n);
    }

    private static void check(String name, int v, int min, int max) {
        if (v < min || v > max) {
            throw new IllegalArgumentException(name + " = " + v + " is out of range: valid values are " + min + ".." + max);
        }
    }

    /** From the configuration's properties; a missing one takes its default. */
    static PosixAioSettings from(PosixAioConfig c) {
        return new PosixAioSettings(c.posix__aio__threads(), c.posix__aio__num(), c.posix__aio__idle__time(),
                c.posix__aio__fds__per__file());
    }

    /** From a property map (tests, embedding); a missing one takes its default. */
    public static PosixAioSettings from(Map<String, ?> props) {
        return new PosixAioSettings(intOf(props, THREADS, DEFAULT_THREADS), intOf(props, NUM, DEFAULT_NUM),
                intOf(props, IDLE_TIME, DEFAULT_IDLE_TIME), intOf(props, FDS_PER_FILE, DEFAULT_FDS_PER_FILE));
    }

    private static int intOf(Map<String, ?> props, String name, int dflt) {
        Object v = props.get(name);
        if (v == null) {
            return dflt;
        }
        try {
            return Integer.parseInt(v.toString().strip());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(name + " = " + v + " is not an integer");
        }
    }

    /**
     * The settings in their names, e.g. {@code posix_aio_threads = 20, posix_aio_num = 64,
     * posix_aio_idle_time = 1 s, posix_aio_fds_per_file = 8}.
     */
    public String describe() {
        return THREADS + " = " + threads + ", " + NUM + " = " + num + ", " + IDLE_TIME + " = " + idleTime + " s, "
                + FDS_PER_FILE + " = " + fdsPerFile;
    }
}
