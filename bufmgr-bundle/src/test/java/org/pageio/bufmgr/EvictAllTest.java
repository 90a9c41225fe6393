package org.pageio.bufmgr;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.pageio.bufmgr.BufferPool.EvictAllResult;
import org.pageio.bufmgr.smgr.SmgrRelation;
import org.pageio.bufmgr.stats.StatIo.Column;
import org.pageio.method.fault.FaultInjectingMethod;
import org.pageio.method.fault.FaultPlan.Kind;
import org.pageio.method.fault.FaultPlan.Op;
import org.pageio.method.fault.FaultPlan.Rule;
import org.pageio.method.sync.SyncIoMethod;

/**
 * {@link BufferPool#evictAll} (PostgreSQL's {@code pg_buffercache_evict_all}) on real files:
 * every unpinned page dropped and read again from the file, pinned ones kept, dirty ones written
 * first, a buffer whose write keeps failing kept dirty.
 */
class EvictAllTest extends PoolTestBase {

    @Test
    void everyUnpinnedBufferIsDroppedAndTheNextScanReadsItAgain() throws Exception {
        pool(new SyncIoMethod(), small().build());
        SmgrRelation rel = relation(72000, 100);
        scan(rel, 72000, 0, 100);
        assertEquals(100, totalReadBlocks());
        assertEquals(100, pool.mappedBlocks());
        EvictAllResult r;
        try (BufferSession s = pool.openSession("client")) {
            r = pool.evictAll(s);
        }
        assertEquals(new EvictAllResult(100, 0, 0), r);
        assertEquals(0, pool.mappedBlocks());
        for (int b = 0; b < pool.nbuffers(); b++) {
            assertTrue(!pool.isValid(b) && pool.tags[b] == -1, "buffer " + b + " is empty");
        }
        assertEquals(0, total(Column.EVICTIONS), "not counted as evictions, as in PostgreSQL");
        long hits = total(Column.HITS);
        scan(rel, 72000, 0, 100); // every page checked again against what the file holds
        assertEquals(200, totalReadBlocks(), "every block was read from the file again");
        assertEquals(hits, total(Column.HITS), "no hit after the pool was emptied");
        try (BufferSession s = pool.openSession("client")) {
            assertEquals(new EvictAllResult(100, 0, 0), pool.evictAll(s));
            assertEquals(new EvictAllResult(0, 0, 0), pool.evictAll(s), "an empty pool has nothing to drop");
        }
        assertEquals(0, pool.pinnedBuffers());
    }

    @Test
    void aPinnedBufferStaysValidAndIsAHitAfterwards() throws Exception {
        pool(new SyncIoMethod(), small().build());
        SmgrRelation rel = relation(72001, 40);
        scan(rel, 72001, 0, 40);
        try (BufferSession s = pool.openSession("client")) {
            int pinned = s.readBuffer(rel, 7, null);
            assertEquals(new EvictAllResult(39, 0, 1), pool.evictAll(s));
            assertTrue(pool.isValid(pinned));
            assertEquals(1, pool.mappedBlocks());
            s.releaseBuffer(pinned);
            long reads = totalReadBlocks();
            int again = s.readBuffer(rel, 7, null);
            assertEquals(pinned, again, "block 7 kept its buffer");
            assertEquals(null, TestPages.check(72001, 7, s.page(again)));
            assertEquals(reads, totalReadBlocks(), "a hit, not a read");
            s.releaseBuffer(again);
        }
        assertEquals(0, pool.pinnedBuffers());
    }

    @Test
    void dirtyBuffersAreWrittenFirst() throws Exception {
        pool(new SyncIoMethod(), small().build());
        SmgrRelation rel = relation(72002, 30);
        scan(rel, 72002, 0, 30);
        EvictAllResult r;
        try (BufferSession s = pool.openSession("client")) {
            BufferWriteTest.modify(s, rel, 72002, 1, BufferWriteTest.range(10, 20));
            assertEquals(10, pool.dirtyBuffers());
            BufferWriteTest.assertOnDisk(rel, 72002, 0, BufferWriteTest.range(10, 20));
            r = pool.evictAll(s);
        }
        assertEquals(new EvictAllResult(30, 10, 0), r);
        assertEquals(0, pool.dirtyBuffers());
        assertEquals(0, pool.mappedBlocks());
        BufferWriteTest.assertOnDisk(rel, 72002, 1, BufferWriteTest.range(10, 20));
        BufferWriteTest.assertOnDisk(rel, 72002, 0, 0, 9, 20, 29);
        assertTrue(total(Column.WRITES) >= 1 && total(Column.WRITE_BYTES) == 10 * 8192L, "the writes are in stat_io");
    }

    @Test
    void aBufferWhoseWriteKeepsFailingStaysDirtyAndIsSkipped() throws Exception {
        FaultInjectingMethod m = faults(new SyncIoMethod(), Rule.blocks(Kind.ENOSPC, Op.WRITE, "pg_default/72003", 7, 1));
        pool(m, small().build());
        SmgrRelation rel = relation(72003, 10);
        EvictAllResult r;
        try (BufferSession s = pool.openSession("client")) {
            BufferWriteTest.modify(s, rel, 72003, 1, BufferWriteTest.range(0, 10));
            r = pool.evictAll(s);
        }
        assertEquals(9, r.evicted(), r.toString());
        assertEquals(1, r.skipped(), r.toString());
        assertTrue(r.flushed() >= 10, "the failed combined write counts, the retries too: " + r);
        assertEquals(1, pool.dirtyBuffers(), "block 7 stays dirty, with its page");
        assertEquals(1, pool.mappedBlocks());
        BufferWriteTest.assertOnDisk(rel, 72003, 1, 0, 1, 2, 3, 4, 5, 6, 8, 9);
        BufferWriteTest.assertOnDisk(rel, 72003, 0, 7);
        assertEquals(0, pool.pinnedBuffers());
    }
}
