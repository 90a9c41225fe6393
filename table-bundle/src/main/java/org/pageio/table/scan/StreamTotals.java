package org.pageio.table.scan;

import org.pageio.bufmgr.stream.ReadStream;
import org.pageio.bufmgr.stream.StreamStats;
import org.pageio.table.StreamFigures;

/** Sums the counters of one or more read streams (a checksum scan restarts its stream after a bad block). */
final class StreamTotals {
    long capacity;
    long returned;
    double pinnedSum;
    long pinnedMax;
    long ios;
    double ioBlocks;
    double inProgressSum;
    long waits;
    long waitNanos;
    long hits;
    long adopted;

    void add(ReadStream stream) {
        StreamStats s = stream.stats();
        capacity = Math.max(capacity, s.capacity());
        returned += s.buffersReturned();
        pinnedSum += s.averagePrefetchDistance() * s.buffersReturned();
        pinnedMax = Math.max(pinnedMax, s.maxPrefetchDistance());
        ios += s.ioCount();
        ioBlocks += s.averageIoSizeBlocks() * s.ioCount();
        inProgressSum += s.averageIosInProgress() * s.ioCount();
        waits += s.waits();
        waitNanos += s.waitNanos();
        hits += s.hits();
        adopted += s.adoptedBlocks();
    }

    /** Blocks this scan read itself; a read already in flight that it waited for counts as a hit, as in PostgreSQL. */
    long readBlocks() {
        return Math.round(ioBlocks) - adopted;
    }

    long hitBlocks() {
        return hits + adopted;
    }

    StreamFigures figures() {
        return new StreamFigures(capacity, returned == 0 ? 0 : pinnedSum / returned, pinnedMax, ios, waits,
                ios == 0 ? 0 : ioBlocks / ios, ios == 0 ? 0 : inProgressSum / ios, waitNanos, hitBlocks(), readBlocks());
    }
}
