package org.pageio.bufmgr;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import org.junit.jupiter.api.Test;
import org.pageio.api.AioException;
import org.pageio.bufmgr.smgr.RelFileLocator;
import org.pageio.bufmgr.smgr.SmgrRelation;
import org.pageio.bufmgr.smgr.StorageManager;
import org.pageio.bufmgr.stats.StatIo;
import org.pageio.bufmgr.stats.StatIo.Column;
import org.pageio.method.fault.FaultInjectingMethod;
import org.pageio.method.fault.FaultPlan.Kind;
import org.pageio.method.fault.FaultPlan.Op;
import org.pageio.method.fault.FaultPlan.Rule;
import org.pageio.posix.Errno;

/** The bulk writer: asynchronous combined writes from a private ring, retries, fsync, every page read back. */
class BulkWriterTest extends PoolTestBase {

    private long load(SmgrRelation rel, long relNumber, int blocks, int writeBlocks, int inFlight) throws Exception {
        return load(rel, relNumber, blocks, writeBlocks, inFlight, 0, null);
    }

    /** As above, with early fsyncs every {@code syncEvery} blocks; their count goes to {@code early[0]}. */
    private long load(SmgrRelation rel, long relNumber, int blocks, int writeBlocks, int inFlight, long syncEvery, long[] early)
            throws Exception {
        try (BufferSession s = pool.openSession("loader");
                BulkWriter w = new BulkWriter(s, rel, 0, writeBlocks, inFlight).syncEvery(syncEvery)) {
            if (early != null) {
                early[0] = -1; // set only after finish succeeded
            }
            for (int b = 0; b < blocks; b++) {
                MemorySegment page = w.nextPage();
                WriteTestPages.fill(page, relNumber, w.nextBlockNumber(), 1);
                w.pageFilled();
            }
            long n = w.finish();
            if (early != null) {
                early[0] = w.earlyFsyncs();
            }
            return w.writes() * 1_000_000 + n;
        }
    }

    private long kindTotal(String kind, StatIo.IoContext ctx, Column c) {
        long n = 0;
        for (StatIo.Row r : pool.stats().rows()) {
            if (r.kind().equals(kind) && r.context() == ctx) {
                n += r.value(c);
            }
        }
        return n;
    }

    @Test
    void writesEveryPageWithItsChecksumAcrossSegmentsAndCountsExtends() throws Exception {
        TestMethods.Threaded threaded = new TestMethods.Threaded(2);
        closeLast.add(threaded);
        pool(threaded, small().segmentBlocks(40).build());
        SmgrRelation rel = smgr.open(new RelFileLocator(StorageManager.DEFAULT_TABLESPACE, 72000));
        long r = load(rel, 72000, 100, 16, 4);
        assertEquals(100, r % 1_000_000);
        // segments of 40: 0..15, 16..31, 32..39 | 40..55, 56..71, 72..79 | 80..95, 96..99
        assertEquals(8, r / 1_000_000, "writes cut at io size and segment ends");
        assertEquals(100, rel.nblocks());
        BufferWriteTest.assertOnDisk(rel, 72000, 1, BufferWriteTest.range(0, 100));
        assertEquals(8, kindTotal("loader", StatIo.IoContext.BULKWRITE, Column.EXTENDS));
        assertEquals(100 * 8192L, kindTotal("loader", StatIo.IoContext.BULKWRITE, Column.EXTEND_BYTES));
        assertEquals(3, kindTotal("loader", StatIo.IoContext.BULKWRITE, Column.FSYNCS));
    }

    @Test
    void aFailedWriteIsRetriedFromTheRing() throws Exception {
        TestMethods.Threaded threaded = new TestMethods.Threaded(2);
        closeLast.add(threaded);
        FaultInjectingMethod m = faults(threaded, Rule.blocks(Kind.EIO, Op.WRITE, "pg_default/72001", 20, 1).times(2));
        pool(m, small().build());
        SmgrRelation rel = smgr.open(new RelFileLocator(StorageManager.DEFAULT_TABLESPACE, 72001));
        assertEquals(64, load(rel, 72001, 64, 16, 4) % 1_000_000);
        assertEquals(2, m.injected());
        BufferWriteTest.assertOnDisk(rel, 72001, 1, BufferWriteTest.range(0, 64));
    }

    @Test
    void aPersistentWriteErrorFailsTheLoadNamingRelationBlocksAndErrno() throws Exception {
        FaultInjectingMethod m = faults(new org.pageio.method.sync.SyncIoMethod(),
                Rule.blocks(Kind.ENOSPC, Op.WRITE, "pg_default/72002", 20, 1));
        pool(m, small().build());
        SmgrRelation rel = smgr.open(new RelFileLocator(StorageManager.DEFAULT_TABLESPACE, 72002));
        AioException e = assertThrows(AioException.class, () -> load(rel, 72002, 64, 16, 4));
        assertEquals(Errno.ENOSPC, e.errno());
        assertTrue(e.getMessage().startsWith("bulk write failed after 3 attempts:") && e.getMessage().contains("blocks 16..31")
                && e.getMessage().contains("pg_default/72002") && e.getMessage().contains("ENOSPC"), e.getMessage());
    }

    @Test
    void earlyFsyncsCoverEachSegmentOnceAndFinishSyncsOnlyWhatIsLeft() throws Exception {
        // io_method=sync: every write and fsync completes inline, so the schedule is exact
        pool(new org.pageio.method.sync.SyncIoMethod(), small().segmentBlocks(40).build());
        SmgrRelation rel = smgr.open(new RelFileLocator(StorageManager.DEFAULT_TABLESPACE, 72003));
        long[] early = new long[1];
        assertEquals(100, load(rel, 72003, 100, 16, 4, 1000, early) % 1_000_000);
        // segments 0..39 and 40..79 fsynced as soon as they were written; 80..99 by finish
        assertEquals(2, early[0]);
        assertEquals(3, kindTotal("loader", StatIo.IoContext.BULKWRITE, Column.FSYNCS), "each segment once");
        BufferWriteTest.assertOnDisk(rel, 72003, 1, BufferWriteTest.range(0, 100));
        assertEquals(0, rel.takeDirtySegments().length, "finish took every dirty segment");
    }

    @Test
    void earlyFsyncsEveryFewBlocksWithinASegment() throws Exception {
        pool(new org.pageio.method.sync.SyncIoMethod(), small().segmentBlocks(40).build());
        SmgrRelation rel = smgr.open(new RelFileLocator(StorageManager.DEFAULT_TABLESPACE, 72004));
        long[] early = new long[1];
        load(rel, 72004, 100, 16, 4, 10, early);
        // one at a time, each started once the previous completed and 10 more blocks were written:
        // through 16, 32, 40 (segment end) | 56, 72, 80 | 96; finish fsyncs the last segment (96..99 not covered)
        assertEquals(7, early[0]);
        assertEquals(8, kindTotal("loader", StatIo.IoContext.BULKWRITE, Column.FSYNCS));
        BufferWriteTest.assertOnDisk(rel, 72004, 1, BufferWriteTest.range(0, 100));
    }

    @Test
    void earlyFsyncsOverlapWritesOnAThreadedMethodAndStillCoverEverySegment() throws Exception {
        TestMethods.Threaded threaded = new TestMethods.Threaded(2);
        closeLast.add(threaded);
        pool(threaded, small().segmentBlocks(40).build());
        SmgrRelation rel = smgr.open(new RelFileLocator(StorageManager.DEFAULT_TABLESPACE, 72005));
        long[] early = new long[1];
        assertEquals(100, load(rel, 72005, 100, 16, 4, 1000, early) % 1_000_000);
        // whichever ran early, each segment is fsynced exactly once, the last one by finish
        assertTrue(early[0] >= 0 && early[0] <= 2, "early fsyncs: " + early[0]);
        assertEquals(3, kindTotal("loader", StatIo.IoContext.BULKWRITE, Column.FSYNCS));
        BufferWriteTest.assertOnDisk(rel, 72005, 1, BufferWriteTest.range(0, 100));
    }

    @Test
    void aFailedEarlyFsyncFailsTheLoadNamingTheFileAndErrno() throws Exception {
        TestMethods.FailingFsyncs m = new TestMethods.FailingFsyncs(Integer.MAX_VALUE); // every fsync fails
        pool(m, small().segmentBlocks(40).build());
        SmgrRelation rel = smgr.open(new RelFileLocator(StorageManager.DEFAULT_TABLESPACE, 72006));
        long[] early = new long[1];
        AioException e = assertThrows(AioException.class, () -> load(rel, 72006, 100, 16, 4, 1000, early));
        assertEquals(Errno.EIO, e.errno());
        assertTrue(e.getMessage().startsWith("bulk write failed: could not fsync file ") && e.getMessage().contains("72006")
                && e.getMessage().contains("EIO"), e.getMessage());
        assertEquals(-1, early[0], "the load did not finish");
        assertEquals(1, m.fsyncs.get(), "failed at the first early fsync");
        assertEquals(40 * 8192L, m.bytesBeforeFirstFsync.get(), "started once segment 0 (blocks 0..39) was written, not before");
        assertTrue(java.util.Arrays.stream(rel.takeDirtySegments()).anyMatch(seg -> seg == 0), "segment 0 still owes its fsync");
    }
}
