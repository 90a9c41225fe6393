package org.pageio.table;

import java.util.Locale;

/**
 * What a load did.
 *
 * @param table      the new table
 * @param bytes      bytes written
 * @param writeNanos time to build and write the pages
 * @param syncNanos  time of the final fsync
 * @param sink       the page sink that wrote it ({@link LoadSink#label()}), or {@code null} when not known
 * @param ioMethod   the {@code io_method} its writes went through (the bulk sink), or {@code null}
 *                   when they went around it (the {@code direct} and {@code buffered} sinks)
 * @param builders   builder threads (0: the issuing thread built the pages itself)
 */
public record LoadResult(TableInfo table, long bytes, long writeNanos, long syncNanos, String sink, String ioMethod,
        int builders) {

    /** Without the sink, method and builders (as 1.3 made it). */
    public LoadResult(TableInfo table, long bytes, long writeNanos, long syncNanos) {
        this(table, bytes, writeNanos, syncNanos, null, null, -1);
    }

    /** MB/s (10^6 bytes) including the fsync. */
    public double mbPerSecond() {
        long n = writeNanos + syncNanos;
        return n == 0 ? 0 : bytes / 1e6 / (n / 1e9);
    }

    @Override
    public String toString() {
        String how = "";
        if (sink != null) {
            how = ioMethod != null ? ", written through io_method=" + ioMethod : ", written around the I/O method";
            how += builders == 0 ? ", pages built by the issuing thread" : ", " + builders + " builder threads";
        }
        return String.format(Locale.ROOT, "loaded %,d rows into %s: %,d blocks (%.1f MB) in %.2f s + fsync %.2f s = %.0f MB/s%s",
                table.rows(), table.name(), table.blocks(), bytes / 1e6, writeNanos / 1e9, syncNanos / 1e9, mbPerSecond(), how);
    }
}
