package org.pageio.bufmgr.internal;

import java.util.List;

/**
 * {@code stat_io} over JMX ({@code org.pageio:type=StatIo}), as JConsole and VisualVM show it: the
 * rows of {@code pg_stat_io} (a table of composite rows), totals that can be charted, the I/O
 * method in force and the last swap, and {@code reset()} ({@code pg_stat_reset_shared('io')}).
 */
public interface StatIoMXBean {

    /** One row of {@code pg_stat_io}; times in milliseconds. */
    record Row(String backendType, String object, String context, long reads, long readBytes, double readTimeMillis,
            long writes, long writeBytes, double writeTimeMillis, long extendsCount, long extendBytes, long hits,
            long evictions, long reuses, long fsyncs, double fsyncTimeMillis, double bytesPerRead) {}

    List<Row> getRows();

    long getReads();

    long getReadBytes();

    long getHits();

    long getEvictions();

    /** Average bytes per read over every row (the first article's figure). */
    double getBytesPerRead();

    /** When the counters were last reset, in milliseconds since the epoch. */
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

    void reset();
}
