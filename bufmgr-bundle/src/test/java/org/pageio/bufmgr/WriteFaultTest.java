package org.pageio.bufmgr;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import org.junit.jupiter.api.Test;
import org.pageio.bufmgr.smgr.SmgrRelation;
import org.pageio.method.fault.FaultInjectingMethod;
import org.pageio.method.fault.FaultPlan;
import org.pageio.method.fault.FaultPlan.Kind;
import org.pageio.method.fault.FaultPlan.Op;
import org.pageio.method.fault.FaultPlan.Rule;
import org.pageio.method.sync.SyncIoMethod;

/**
 * Write-side faults on real files: a short write leaves the blocks it did not write dirty, and the
 * checkpoint writes them again, so every byte reaches the file; ENOSPC on the checkpoint's writes
 * fails it naming the block and keeps the buffer dirty; a torn write (a page half on disk,
 * reported done) is never read back as good: its checksum names it.
 */
class WriteFaultTest extends PoolTestBase {

    @Test
    void aShortWriteLeavesTheRestDirtyAndTheCheckpointWritesItAgain() throws Exception {
        FaultInjectingMethod m = faults(new SyncIoMethod(), FaultPlan.parseRule("short_write file=pg_default/73001 times=1"));
        pool(m, small().build());
        SmgrRelation rel = relation(73001, 16);
        long[] blocks = BufferWriteTest.range(0, 16);
        try (BufferSession s = pool.openSession("client")) {
            BufferWriteTest.modify(s, rel, 73001, 1, blocks); // 16 adjacent dirty blocks: combined writes
        }
        CheckpointResult r = pool.checkpoint();
        assertEquals(1, m.injected(), "the short write happened");
        assertTrue(r.buffersWritten() > 16, "the blocks the short write left were written again: " + r);
        assertEquals(0, pool.dirtyBuffers());
        BufferWriteTest.assertOnDisk(rel, 73001, 1, blocks);
    }

    @Test
    void aTornPageIsNeverReadBackAsGood() throws Exception {
        FaultInjectingMethod m = faults(new SyncIoMethod(), FaultPlan.parseRule("torn_write file=pg_default/73002 times=1"));
        pool(m, small().build());
        SmgrRelation rel = relation(73002, 8);
        try (BufferSession s = pool.openSession("client")) {
            BufferWriteTest.modify(s, rel, 73002, 1, 4);
        }
        pool.checkpoint(); // the torn write reports success: only the checksum can tell now
        assertEquals(1, m.injected());
        try (BufferSession s = pool.openSession("client")) {
            assertEquals(0, pool.evictAll(s).skipped(), "shared buffers emptied: the next read goes to the file");
            IOException e = assertThrows(IOException.class, () -> s.readBuffer(rel, 4, null));
            assertTrue(e.getMessage().startsWith("invalid page in block 4 of relation pg_default/73002")
                    && e.getMessage().contains("checksum"), e.getMessage());
            int buf = s.readBuffer(rel, 5, null); // its neighbour reads as before
            assertEquals(0, WriteTestPages.generation(s.page(buf), 73002, 5, 1));
            s.releaseBuffer(buf);
        }
        assertEquals(0, pool.pinnedBuffers());
    }

    /**
     * ENOSPC on the checkpoint's own writes (the pool writes through the method's handles, so the
     * plan sees them): three in a row fail the checkpoint naming relation, block and errno, the
     * buffer stays dirty, and the next checkpoint writes it.
     */
    @Test
    void enospcOnTheCheckpointsWritesFailsItNamingTheBlockAndTheNextWritesIt() throws Exception {
        FaultInjectingMethod m = faults(new SyncIoMethod(), FaultPlan.parseRule("enospc write file=pg_default/73003 blocks=2 times=3"));
        pool(m, small().build());
        SmgrRelation rel = relation(73003, 8);
        try (BufferSession s = pool.openSession("client")) {
            BufferWriteTest.modify(s, rel, 73003, 1, 2, 5);
        }
        org.pageio.api.AioException e = assertThrows(org.pageio.api.AioException.class, pool::checkpoint);
        assertTrue(e.getMessage().startsWith("checkpoint failed: could not write block 2 of relation pg_default/73003")
                && e.getMessage().contains("ENOSPC") && e.getMessage().contains("after 3 attempts"), e.getMessage());
        assertEquals(org.pageio.posix.Errno.ENOSPC, e.errno());
        assertEquals(3, m.injected(), "the first write and both retries met the plan");
        assertEquals(1, pool.dirtyBuffers(), "block 2 stays dirty, block 5 was written");
        pool.checkpoint();
        assertEquals(0, pool.dirtyBuffers());
        BufferWriteTest.assertOnDisk(rel, 73003, 1, 2, 5);
    }

    @Test
    void theWriteFaultsParseAsWritesAndRefuseNothingElse() {
        assertEquals(Op.WRITE, FaultPlan.parseRule("short_write").op());
        assertEquals(Op.WRITE, FaultPlan.parseRule("torn_write blocks=3").op());
        assertEquals(Kind.TORN_WRITE, FaultPlan.parseRule("torn_write").kind());
        Rule slowFsync = FaultPlan.parseRule("delay fsync delay=50");
        assertEquals(Op.FSYNC, slowFsync.op());
        assertEquals(50, slowFsync.delayMillis());
    }
}
