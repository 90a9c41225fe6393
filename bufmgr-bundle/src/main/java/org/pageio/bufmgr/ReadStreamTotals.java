package org.pageio.bufmgr;

import java.util.concurrent.atomic.LongAdder;

/**
 * What the pool's read streams did, summed over every stream that ended (was closed): buffers
 * returned, the look-ahead distance at each, reads started and how many were in flight at each
 * start, and waits. A stream adds its counts once, when it is closed, so nothing is counted per
 * block here; a stream still open is not in the sums yet. The sums make averages over any interval
 * (e.g. Prometheus' {@code rate(distance_sum) / rate(buffers)}): the mean look-ahead distance and
 * the mean reads in flight of the streams that ended in it. Any thread.
 */
public final class ReadStreamTotals {

    private final LongAdder streams = new LongAdder();
    private final LongAdder buffers = new LongAdder();
    private final LongAdder distanceSum = new LongAdder();
    private final LongAdder ios = new LongAdder();
    private final LongAdder inProgressSum = new LongAdder();
    private final LongAdder waits = new LongAdder();
    private final LongAdder waitNanos = new LongAdder();

    ReadStreamTotals() {
    }

    /**
     * Adds one ended stream's counts.
     *
     * @param buffers       buffers it returned
     * @param distanceSum   the sum, over those buffers, of its look-ahead distance when each was returned
     * @param ios           reads it started
     * @param inProgressSum the sum, over those reads, of the reads it had in flight once each started
     * @param waits         times its consumer blocked for a read
     * @param waitNanos     time blocked in those waits
     */
    public void add(long buffers, long distanceSum, long ios, long inProgressSum, long waits, long waitNanos) {
        streams.increment();
        this.buffers.add(buffers);
        this.distanceSum.add(distanceSum);
        this.ios.add(ios);
        this.inProgressSum.add(inProgressSum);
        this.waits.add(waits);
        this.waitNanos.add(waitNanos);
    }

    /** Streams that ended. */
    public long streams() {
        return streams.sum();
    }

    /** Buffers the ended streams returned. */
    public long buffers() {
        return buffers.sum();
    }

    /** The look-ahead distance at each returned buffer, summed. */
    public long distanceSum() {
        return distanceSum.sum();
    }

    /** Reads the ended streams started. */
    public long ios() {
        return ios.sum();
    }

    /** The reads in flight once each read started, summed. */
    public long inProgressSum() {
        return inProgressSum.sum();
    }

    /** Times a consumer blocked for a read. */
    public long waits() {
        return waits.sum();
    }

    /** Time blocked in those waits, in nanoseconds. */
    public long waitNanos() {
        return waitNanos.sum();
    }
}
