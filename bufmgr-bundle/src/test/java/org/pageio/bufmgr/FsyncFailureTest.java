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
 * failed write-back and let the next fsync succeed without them. The checkpoint fails naming the
 * file, the errno and what to do; the other relations are still made durable; every later
 * checkpoint refuses the relation without fsyncing it again; its pages cannot be modified; its
 * reads go on, with the bytes last written.
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
}
