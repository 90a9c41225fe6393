package org.pageio.bufmgr.stream;

/**
 * A read stream's counters, for an EXPLAIN (ANALYZE, IO)-style report (PostgreSQL 19's
 * {@code IOStats}): prefetch distance (average and most buffers pinned when a buffer was
 * returned, and the capacity), I/O count, average I/O size, waits and wait time, and the average
 * number of I/Os in flight when one was issued; the look-ahead distance (average, largest) and how
 * soon the stream first had {@code max_ios} reads in flight. Written by the stream's thread only.
 */
public final class StreamStats {

    long capacity;
    long returned;
    long fastPathReturns;
    long pinnedSum;
    long pinnedMax;
    long ios;
    long ioBlocks;
    long inProgressSum;
    long waits;
    long waitNanos;
    long hits;
    long adoptedBlocks;
    long advice;
    long maxIos;
    long distanceSum;
    long distanceMax;
    long fullDepthReturned = -1;
    long fullDepthIos = -1;

    public long capacity() {
        return capacity;
    }

    /** Buffers handed to the consumer. */
    public long buffersReturned() {
        return returned;
    }

    /**
     * Buffers among {@link #buffersReturned()} returned through the all-cached fast path
     * (PostgreSQL's {@code fast_path} in {@code read_stream_next_buffer}): without the look-ahead.
     */
    public long fastPathReturns() {
        return fastPathReturns;
    }

    public double averagePrefetchDistance() {
        return returned == 0 ? 0 : (double) pinnedSum / returned;
    }

    public long maxPrefetchDistance() {
        return pinnedMax;
    }

    /** Reads the stream started (each may combine several blocks). */
    public long ioCount() {
        return ios;
    }

    public double averageIoSizeBlocks() {
        return ios == 0 ? 0 : (double) ioBlocks / ios;
    }

    public double averageIosInProgress() {
        return ios == 0 ? 0 : (double) inProgressSum / ios;
    }

    /** Times the consumer had to wait for a read (synchronous execution counts). */
    public long waits() {
        return waits;
    }

    public long waitNanos() {
        return waitNanos;
    }

    /** Blocks that were already in shared buffers. */
    public long hits() {
        return hits;
    }

    /**
     * Blocks among {@link #ioCount()}'s whose read was already in flight when the stream asked
     * for them (e.g. an index scan asking again for a heap block still being read): the stream
     * waited for that read instead of starting one. PostgreSQL counts them as I/Os in progress
     * for the look-ahead and as hits in {@code Buffers}.
     */
    public long adoptedBlocks() {
        return adoptedBlocks;
    }

    /** The most reads this stream may have in flight ({@code max_ios}). */
    public long maxIos() {
        return maxIos;
    }

    /**
     * The look-ahead distance (in buffers) averaged over the buffers returned: with
     * {@code read_stream_lookahead = pg19}, the read-ahead distance; with {@code pg18}, the one
     * distance.
     */
    public double averageDistance() {
        return returned == 0 ? 0 : (double) distanceSum / returned;
    }

    public long maxDistance() {
        return distanceMax;
    }

    /**
     * How many buffers the consumer had been given when the stream first had {@link #maxIos()}
     * reads in flight (started, not yet consumed), or -1 if it never had: how fast the look-ahead
     * ramps up. Over direct I/O the figure does not depend on the device's speed (the distance
     * doubles on every read); over a buffered method it depends on when the consumer waits (see the
     * read stream's class comment).
     */
    public long buffersBeforeFullDepth() {
        return fullDepthReturned;
    }

    /** How many reads the stream had started when it first had {@link #maxIos()} in flight, or -1. */
    public long readsBeforeFullDepth() {
        return fullDepthIos;
    }

    /** posix_fadvise(WILLNEED) calls made (io_method=sync, and by {@link ThreadPoolAdvice} under a method whose reads hold threads). */
    public long adviceCalls() {
        return advice;
    }

    @Override
    public String toString() {
        return String.format(java.util.Locale.ROOT, "Prefetch: avg=%.2f max=%d capacity=%d%s", averagePrefetchDistance(),
                pinnedMax, capacity, ios == 0 ? "" : String.format(java.util.Locale.ROOT,
                        "  I/O: count=%d waits=%d size=%.2f in-progress=%.2f", ios, waits, averageIoSizeBlocks(),
                        averageIosInProgress()));
    }
}
