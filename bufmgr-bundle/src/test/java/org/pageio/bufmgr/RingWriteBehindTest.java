package org.pageio.bufmgr;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.pageio.bufmgr.smgr.SmgrRelation;
import org.pageio.bufmgr.stats.StatIo.Column;
import org.pageio.method.sync.SyncIoMethod;

/**
 * {@link RingWriteBehind} on real files: a VACUUM-like pass (every page read through the vacuum ring
 * and changed) fsyncs about once per lap of the ring instead of once per write, and every page
 * reads back as it was changed after a checkpoint and a restart of the pool.
 */
class RingWriteBehindTest extends PoolTestBase {

    static final int BLOCKS = 640;

    @Test
    void aRingOfDirtyPagesIsWrittenALapAheadAndFsyncedOnceALap() throws Exception {
        pool(new SyncIoMethod(), small().build()); // 512 buffers: the vacuum ring holds 64
        SmgrRelation rel = relation(16400, BLOCKS);
        BufferAccessStrategy ring = pool.strategy(BufferAccessStrategy.Type.VACUUM);
        assertEquals(64, ring.size());
        long fsyncs0 = total(Column.FSYNCS);
        long writes0 = total(Column.WRITES);
        try (BufferSession s = pool.openSession("client")) {
            for (long b = 0; b < BLOCKS; b++) {
                int buf = s.readBuffer(rel, b, ring);
                s.beginModify(buf);
                WriteTestPages.fill(s.page(buf), 16400, b, 2);
                s.endModify(buf, true);
                s.releaseBuffer(buf);
            }
        }
        long laps = BLOCKS / ring.size();
        long fsyncs = total(Column.FSYNCS) - fsyncs0;
        long writes = total(Column.WRITES) - writes0;
        // written at reuse, each write of up to 16 pages needs an fsync before the next reuse: 37 here
        assertTrue(fsyncs <= 2 * laps + 2, fsyncs + " fsyncs for " + laps + " laps of the ring (" + writes + " writes)");
        assertTrue(writes >= BLOCKS / 16 - ring.size() / 16, writes + " writes");
        pool.checkpoint();
        core.close();
        pool(new SyncIoMethod(), small().build());
        SmgrRelation again = smgr.open(rel.locator());
        try (BufferSession s = pool.openSession("client")) {
            for (long b = 0; b < BLOCKS; b++) {
                int buf = s.readBuffer(again, b, null);
                assertEquals(2, WriteTestPages.generation(s.page(buf), 16400, b, 2), "block " + b);
                s.releaseBuffer(buf);
            }
        }
    }
}
