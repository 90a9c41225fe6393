package org.pageio.table;

import java.util.Locale;

/**
 * What a load did.
 *
 * @param table      the new table
 * @param bytes      bytes written
 * @param writeNanos time to build and write the pages
 * @param syncNanos  time of the final fsync
 */
public record LoadResult(TableInfo table, long bytes, long writeNanos, long syncNanos) {

    /** MB/s (10^6 bytes) including the fsync. */
    public double mbPerSecond() {
        long n = writeNanos + syncNanos;
        return n == 0 ? 0 : bytes / 1e6 / (n / 1e9);
    }

    @Override
    public String toString() {
        return String.format(Locale.ROOT, "loaded %,d rows into %s: %,d blocks (%.1f MB) in %.2f s + fsync %.2f s = %.0f MB/s",
                table.rows(), table.name(), table.blocks(), bytes / 1e6, writeNanos / 1e9, syncNanos / 1e9, mbPerSecond());
    }
}
