package org.pageio.bufmgr.internal;

import java.util.List;

/**
 * {@code stat_io} over JMX ({@code org.pageio:type=StatIo}), as JConsole and VisualVM show it: the
 * rows of {@code pg_stat_io} (a table of composite rows), totals that can be charted, the I/O
 * method in force and the last swap, and {@code reset()} ({@code pg_stat_reset_shared('io')}) or
 * {@code reset(object, context)} (pageio's: one object or context only).
 */
public interface StatIoMXBean {

    /**
     * One row of {@code pg_stat_io}, keyed also by the I/O method that did its I/O; times in
     * milliseconds; {@code statsReset} as PostgreSQL prints a {@code timestamptz}
     * ({@code 2026-05-01 14:03:07.120431+02}, the JVM's time zone).
     */
    record Row(String backendType, String object, String context, String ioMethod, long reads, long readBytes,
            double readTimeMillis, long writes, long writeBytes, double writeTimeMillis, long extendsCount, long extendBytes,
            long hits, long evictions, long reuses, long fsyncs, double fsyncTimeMillis, String statsReset,
            double bytesPerRead) {}

    List<Row> getRows();

    long getReads();

    long getReadBytes();

    long getHits();

    long getEvictions();

    /** Average bytes per read over every row (read_bytes / reads: how much reads were combined). */
    double getBytesPerRead();

    /** When any counter was last reset (at first: the buffer manager's start), in milliseconds since the epoch. */
    long getStatsReset();

    /** The I/O method reads go to now ({@code none} while reads wait for one). */
    String getIoMethod();

    /** What {@code io_method} asks for. */
    String getIoMethodWanted();

    long getMethodEpoch();

    long getMethodSwaps();

    /** The last swap, in words ({@code ""} when there was none). */
    String getLastMethodSwap();

    /** How long the method gate was closed at the last swap, in milliseconds. */
    double getLastSwapPauseMillis();

    /** Zeroes every counter ({@code pg_stat_reset_shared('io')}). */
    void reset();

    /**
     * Zeroes the rows of {@code object} ({@code relation}, {@code temp relation}) and {@code context}
     * ({@code normal}, {@code bulkread}, {@code bulkwrite}, {@code vacuum}); empty or null: any.
     *
     * @throws IllegalArgumentException for another name, naming the valid ones
     */
    void reset(String object, String context);
}
