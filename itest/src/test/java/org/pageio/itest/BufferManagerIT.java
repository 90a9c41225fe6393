package org.pageio.itest;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import javax.inject.Inject;
import org.junit.Test;
import org.pageio.bufmgr.BufferManager;
import org.pageio.itest.kit.NumberedRelation;
import org.pageio.bufmgr.stats.StatIo;

/** The buffer manager service comes up in Felix bound to the configured method and reads real pages. */
public class BufferManagerIT extends PageioTestBase {

    @Inject
    private BufferManager bufmgr;

    @Test
    public void streamsAFreshRelationThroughTheService() throws Exception {
        assertEquals("the default io_method, as in PostgreSQL", "worker", bufmgr.pool().method().name());
        int blocks = 64;
        NumberedRelation.roundTrip(bufmgr, 100000, blocks);
        long readBytes = 0;
        for (StatIo.Row r : bufmgr.pool().stats().rows()) {
            readBytes += r.value(StatIo.Column.READ_BYTES);
        }
        assertTrue("stat_io counted the reads: " + readBytes, readBytes >= blocks * 8192L);
    }
}
