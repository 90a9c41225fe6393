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
 */
public record PosixAioSettings(int threads, int num, int idleTime) {

    public static final String THREADS = "posix_aio_threads";
    public static final String NUM = "posix_aio_num";
    public static final String IDLE_TIME = "posix_aio_idle_time";

    public static final int DEFAULT_THREADS = 20;
    public static final int MAX_THREADS = 1024;
    public static final int DEFAULT_NUM = 64;
    public static final int MIN_NUM = 32;
    public static final int MAX_NUM = 65536;
    public static final int DEFAULT_IDLE_TIME = 1;
    public static final int MAX_IDLE_TIME = 3600;

    /** glibc's own defaults: 20 threads, 64 requests, 1 s. */
    public static final PosixAioSettings DEFAULTS = new PosixAioSettings(DEFAULT_THREADS, DEFAULT_NUM, DEFAULT_IDLE_TIME);

    /** @throws IllegalArgumentException naming the setting, the value and the valid range */
    public PosixAioSettings {
        check(THREADS, threads, 1, MAX_THREADS);
        check(NUM, num, MIN_NUM, MAX_NUM);
        check(IDLE_TIME, idleTime, 1, MAX_IDLE_TIME);
    }

    private static void check(String name, int v, int min, int max) {
        if (v < min || v > max) {
            throw new IllegalArgumentException(name + " = " + v + " is out of range: valid values are " + min + ".." + max);
        }
    }

    /** From the configuration's properties; a missing one takes its default. */
    static PosixAioSettings from(PosixAioConfig c) {
        return new PosixAioSettings(c.posix__aio__threads(), c.posix__aio__num(), c.posix__aio__idle__time());
    }

    /** From a property map (tests, embedding); a missing one takes its default. */
    public static PosixAioSettings from(Map<String, ?> props) {
        return new PosixAioSettings(intOf(props, THREADS, DEFAULT_THREADS), intOf(props, NUM, DEFAULT_NUM),
                intOf(props, IDLE_TIME, DEFAULT_IDLE_TIME));
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

    /** The settings in their names, e.g. {@code posix_aio_threads = 20, posix_aio_num = 64, posix_aio_idle_time = 1 s}. */
    public String describe() {
        return THREADS + " = " + threads + ", " + NUM + " = " + num + ", " + IDLE_TIME + " = " + idleTime + " s";
    }
}
