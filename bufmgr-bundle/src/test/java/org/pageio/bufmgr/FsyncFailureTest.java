package org.pageio.bufmgr;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import org.junit.jupiter.api.Test;
import org.pageio.api.AioException;
import org.pageio.bufmgr.smgr.SmgrRelation;
import org.pageio.bufmgr.stats.StatIo.Column;
import org.pageio.method.fault.FaultInjectingMethod;
import org.pageio.method.fault.FaultPlan.Kind;
import org.pageio.method.fault.FaultPlan.Op;
import org.pageio.method.fault.FaultPlan.Rule;
import org.pageio.method.sync.SyncIoMethod;
import org.pageio.posix.Errno;

/**
 * A failed fsync is never reported durable, now or later: Linux may drop the dirty pages of the
 * failed write-back and let the next fsync succeed without them. When every page written since the
 * relation's last good fsync is still in shared buffers, the checkpoint writes them again and
 * fsyncs again (the pool keeps every page it wrote until an fsync covers it); when that fails too,
 * or some of those pages were written around shared buffers, the checkpoint fails naming the file, the errno and what to do; the other relations
 * are still made durable; every later checkpoint refuses the relation without fsyncing it again;
 * its pages cannot be modified; its reads go on, with the bytes last written.
 */
class FsyncFailureTest extends PoolTestBase {

    @Test
    void aFailedFsyncIsNeverReportedDurableLaterChangesRefuseAndReadsGoOn() throws Exception {
        FaultInjectingMethod m = faults(new SyncIoMethod(), Rule.always(Kind.EIO, Op.FSYNC, "pg_default/71001").times(1));
        pool(m, small().build());
        SmgrRelation failing = relation(71001, 8);
        SmgrRelation healthy = relation(71002, 8);
        try (BufferSession s = pool.openSession("client")) {
            BufferWriteTest.modify(s, failing, 71001, 1, 2, 5);
            BufferWriteTest.modify(s, healthy, 71002, 1, 3);
        }
        long fsyncs0 = total(Column.FSYNCS);

        AioException first = assertThrows(AioException.class, pool::checkpoint);
        String msg = first.getMessage();
        assertTrue(msg.startsWith("checkpoint failed: could not fsync file " + failing.segmentPath(0) + ": EIO"), msg);
        assertTrue(msg.contains("relation " + failing.locator() + " is not durable") && msg.contains("restart"), msg);
        assertEquals(Errno.EIO, first.errno());
        assertEquals(1, m.injected(), "the one fsync fault fired");
        assertNotNull(failing.fsyncFailure());
        assertNull(healthy.fsyncFailure());
        assertEquals(0, healthy.takeDirtySegments().length, "the healthy relation was fsynced all the same");
        long fsyncs1 = total(Column.FSYNCS);
        assertEquals(2, fsyncs1 - fsyncs0, "one failed fsync, one good one");

        // No fault is left, yet the next checkpoint must not report the relation durable.
        AioException again = assertThrows(AioException.class, pool::checkpoint);
        assertTrue(again.getMessage().contains("could not fsync file " + failing.segmentPath(0) + ": EIO"),
                again.getMessage());
        assertEquals(fsyncs1, total(Column.FSYNCS), "the failed relation is not fsynced again");
        assertEquals(1, m.injected());

        try (BufferSession s = pool.openSession("client"); Arena a = Arena.ofConfined()) {
            int buf = s.readBuffer(failing, 5, null);
            try {
                assertEquals(1, WriteTestPages.generation(s.page(buf), 71001, 5, 1), "reads go on, with the last write");
                IllegalStateException refused = assertThrows(IllegalStateException.class, () -> s.beginModify(buf));
                assertTrue(refused.getMessage().startsWith("cannot modify relation " + failing.locator()
                        + ": could not fsync file "), refused.getMessage());
            } finally {
                s.releaseBuffer(buf);
            }
            assertEquals(1, WriteTestPages.generation(WriteTestPages.readFromDisk(a, failing, 2), 71001, 2, 1),
                    "the write itself reached the file");
            BufferWriteTest.modify(s, healthy, 71002, 2, 3); // other relations are still changed as before
        }
        assertEquals(0, pool.pinnedBuffers());
    }

    /** A relation synced once, then changed through the pool: every unsynced write is in shared buffers. */
    private SmgrRelation syncedThenChanged(FaultInjectingMethod m, long number, int blocks, long... changed) throws Exception {
        SmgrRelation rel = relation(number, blocks);
        pool.checkpoint(); // its last good fsync: what the load wrote around the pool is durable
        m.setPlan(org.pageio.method.fault.FaultPlan.of(Rule.always(Kind.EIO, Op.FSYNC, "pg_default/" + number)
                .times(failures)));
        try (BufferSession s = pool.openSession("client")) {
            BufferWriteTest.modify(s, rel, number, 1, changed);
        }
        return rel;
    }

    private int failures;

    @Test
    void aFailedFsyncIsRepairedFromSharedBuffersWhenEveryUnsyncedPageIsThere() throws Exception {
        FaultInjectingMethod m = faults(new SyncIoMethod());
        pool(m, small().build());
        failures = 1;
        SmgrRelation rel = syncedThenChanged(m, 71011, 8, 1, 4, 6);
        long fsyncs0 = total(Column.FSYNCS);
        CheckpointResult r = pool.checkpoint(); // the first fsync fails; the pages are written again; the second holds
        assertEquals(1, m.injected(), "the fsync fault fired");
        assertEquals(2, total(Column.FSYNCS) - fsyncs0, "fsynced again after writing the pages again");
        assertNull(rel.fsyncFailure(), r.toString());
        BufferWriteTest.assertOnDisk(rel, 71011, 1, 1, 4, 6);
        BufferWriteTest.assertOnDisk(rel, 71011, 0, 0, 2, 3, 5, 7);
        try (BufferSession s = pool.openSession("client")) {
            BufferWriteTest.modify(s, rel, 71011, 2, 4); // still changeable: nothing was lost
        }
        pool.checkpoint();
        BufferWriteTest.assertOnDisk(rel, 71011, 2, 4);
    }

    @Test
    void aRepairWhoseFsyncFailsAgainMarksTheRelation() throws Exception {
        FaultInjectingMethod m = faults(new SyncIoMethod());
        pool(m, small().build());
        failures = 2;
        SmgrRelation rel = syncedThenChanged(m, 71012, 8, 2, 3);
        AioException e = assertThrows(AioException.class, pool::checkpoint);
        assertTrue(e.getMessage().contains("could not fsync file " + rel.segmentPath(0) + ": EIO")
                && e.getMessage().contains("is not durable"), e.getMessage());
        assertEquals(2, m.injected(), "the first fsync and the one after the pages were written again");
        assertNotNull(rel.fsyncFailure());
        assertThrows(AioException.class, pool::checkpoint);
        assertEquals(2, m.injected(), "not fsynced a third time");
    }

    @Test
    void aPageWrittenAroundThePoolSinceTheLastGoodFsyncMakesTheFailureFinal() throws Exception {
        FaultInjectingMethod m = faults(new SyncIoMethod());
        pool(m, small().build());
        failures = 1;
        SmgrRelation rel = syncedThenChanged(m, 71013, 8, 2, 3);
        try (Arena a = Arena.ofConfined()) {
            java.lang.foreign.MemorySegment page = a.allocate(TestPages.BLCKSZ, 4096);
            TestPages.page(71013, 8, page);
            rel.write(8, page, 1); // around the pool: no copy of it in shared buffers to write again
        }
        AioException e = assertThrows(AioException.class, pool::checkpoint);
        assertTrue(e.getMessage().contains("is not durable"), e.getMessage());
        assertEquals(1, m.injected(), "no repair was tried: the page written around the pool cannot be written again");
        assertNotNull(rel.fsyncFailure());
    }
}
