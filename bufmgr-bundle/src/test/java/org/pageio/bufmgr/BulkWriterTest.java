package org.pageio.bufmgr;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import org.junit.jupiter.api.Test;
import org.pageio.api.AioException;
import org.pageio.api.IoMethod;
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
        try (BufferSession s = pool.openSession("loader");
                BulkWriter w = new BulkWriter(s, rel, 0, writeBlocks, inFlight)) {
            for (int b = 0; b < blocks; b++) {
                MemorySegment page = w.nextPage();
                WriteTestPages.fill(page, relNumber, w.nextBlockNumber(), 1);
                w.pageFilled();
            }
            long n = w.finish();
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
}
