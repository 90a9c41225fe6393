package org.pageio.measure.drill;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import org.pageio.bufmgr.BufferAccessStrategy;
import org.pageio.bufmgr.BufferPool;
import org.pageio.bufmgr.BufferSession;
import org.pageio.bufmgr.smgr.SmgrRelation;
import org.pageio.bufmgr.stream.ReadStream;
import org.pageio.bufmgr.stream.StreamStats;
import org.pageio.heap.HeapPage;

/**
 * {@code count(*)} of a range of a heap's blocks, as the table service's sequential scan
 * ({@code Scans.seqScan}) runs it on the whole table: one read stream with
 * {@code SEQUENTIAL | USE_BATCHING} and a bulk-read ring over the blocks, each pinned page's tuples
 * counted, the pin released. The table service's scan has no block range; the hot and concurrent
 * cases need one (sessions over disjoint slices) and a stream option the service does not set
 * (the fast path off), so they scan with this. Its per-page work ({@link #countPage}) is the
 * scan's for a page with {@code PD_ALL_VISIBLE}, the only kind a drill table has, and is also the
 * plain loop's ({@link PlainPages}), so that the two differ only by the buffer manager.
 *
 * <p>Each instance belongs to one thread (a session's); it keeps the counters of every stream it
 * ran. No allocation per block.
 */
final class SliceScan {

    /** The sequential scan's stream flags. */
    static final int FLAGS = ReadStream.SEQUENTIAL | ReadStream.USE_BATCHING;

    // the counters of every stream this scan ran (StreamStats)
    long returned;
    long hits;
    long ios;
    long waits;
    long fastPathReturns;

    /**
     * The tuples on {@code page} (every line pointer to a normal tuple), or -1 when the page is not
     * all-visible: {@code Scans.seqScan}'s per-page work for an all-visible page, which skips the
     * per-tuple visibility check.
     */
    static int countPage(MemorySegment page) {
        if (!HeapPage.allVisible(page)) {
            return -1;
        }
        int rows = 0;
        int n = HeapPage.lineCount(page);
        for (int line = 1; line <= n; line++) {
            if (HeapPage.tupleOffset(page, line) >= 0) {
                rows++;
            }
        }
        return rows;
    }

    /**
     * Counts the tuples of blocks {@code [first, first + count)} of {@code heap} on {@code session},
     * through one stream with {@code options}.
     *
     * @throws IllegalStateException when a page is not all-visible (a drill table always is)
     */
    long count(BufferSession session, SmgrRelation heap, long first, long count, ReadStream.Options options) throws IOException {
        BufferAccessStrategy ring = session.pool().strategy(BufferAccessStrategy.Type.BULKREAD);
        long rows = 0;
        try (ReadStream stream = new ReadStream(session, heap, ReadStream.blockRange(first, count), FLAGS, ring, options)) {
            int buf;
            long block = first;
            while ((buf = stream.next()) >= 0) {
                int n = countPage(session.page(buf));
                session.releaseBuffer(buf);
                if (n < 0) {
                    throw new IllegalStateException("block " + block + " of " + heap.segmentPath(block).getFileName()
                            + " is not all-visible: the drill's tables are loaded all-visible; load them again");
                }
                rows += n;
                block++;
            }
            add(stream.stats());
        }
        return rows;
    }

    private void add(StreamStats s) {
        returned += s.buffersReturned();
        hits += s.hits();
        ios += s.ioCount();
        waits += s.waits();
        fastPathReturns += s.fastPathReturns();
    }

    /**
     * Reads blocks {@code [0, blocks)} of {@code heap} into {@code pool}'s shared buffers without a
     * ring (pg_prewarm's {@code buffer} mode), so that a scan finds every one; returns the blocks it
     * had to read (0 when they were all there). The pool must hold them: see
     * {@link DrillPools#hotSharedBuffers}.
     */
    static long prewarm(BufferPool pool, SmgrRelation heap, long blocks) throws IOException {
        try (BufferSession s = pool.openSession("client");
                ReadStream stream = new ReadStream(s, heap, ReadStream.blockRange(0, blocks), FLAGS, null,
                        ReadStream.Options.DEFAULT)) {
            int buf;
            while ((buf = stream.next()) >= 0) {
                s.releaseBuffer(buf);
            }
            return stream.stats().buffersReturned() - stream.stats().hits();
        }
    }
}
