package org.pageio.table;

import java.util.Locale;

/**
 * A scan's read-stream counters, summed over its streams (PostgreSQL 19's EXPLAIN IO fields).
 *
 * @param capacity      most buffers a stream may pin ({@code max_pinned_buffers})
 * @param avgPrefetch   mean buffers pinned when a buffer was returned
 * @param maxPrefetch   most buffers pinned when a buffer was returned
 * @param ioCount       reads started (each may combine blocks)
 * @param waits         times the scan waited for a read (synchronous execution counts)
 * @param avgIoSize     mean blocks per read
 * @param avgInProgress mean reads in flight when one was started
 * @param waitNanos     time spent waiting
 * @param hits          blocks found in shared buffers, or already being read (waited for, not read again)
 * @param readBlocks    blocks this scan read
 */
public record StreamFigures(long capacity, double avgPrefetch, long maxPrefetch, long ioCount, long waits, double avgIoSize,
        double avgInProgress, long waitNanos, long hits, long readBlocks) {

    public static final StreamFigures NONE = new StreamFigures(0, 0, 0, 0, 0, 0, 0, 0, 0, 0);

    /** {@code Prefetch: avg=… max=… capacity=…} */
    public String prefetchLine() {
        return String.format(Locale.ROOT, "Prefetch: avg=%.2f max=%d capacity=%d", avgPrefetch, maxPrefetch, capacity);
    }

    /** {@code I/O: count=… waits=… size=… in-progress=…} */
    public String ioLine() {
        return String.format(Locale.ROOT, "I/O: count=%d waits=%d size=%.2f in-progress=%.2f", ioCount, waits, avgIoSize,
                avgInProgress);
    }
}
