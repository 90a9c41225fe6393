package org.pageio.itest;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.concurrent.ThreadLocalRandom;
import javax.inject.Inject;
import org.junit.Test;
import org.pageio.bufmgr.BufferManager;
import org.pageio.bufmgr.BufferSession;
import org.pageio.bufmgr.page.Page;
import org.pageio.bufmgr.smgr.RelFileLocator;
import org.pageio.bufmgr.smgr.SmgrRelation;
import org.pageio.bufmgr.smgr.StorageManager;
import org.pageio.bufmgr.stats.StatIo;
import org.pageio.bufmgr.stream.ReadStream;

/** The buffer manager service comes up in Felix bound to the configured method and reads real pages. */
public class BufferManagerIT extends PageioTestBase {

    @Inject
    private BufferManager bufmgr;

    @Test
    public void streamsAFreshRelationThroughTheService() throws Exception {
        assertEquals("the default io_method, as in PostgreSQL", "worker", bufmgr.pool().method().name());
        long relNumber = 100000 + ThreadLocalRandom.current().nextInt(100000);
        SmgrRelation rel = bufmgr.storage().open(new RelFileLocator(StorageManager.DEFAULT_TABLESPACE, relNumber));
        int blocks = 64;
        try (Arena a = Arena.ofConfined()) {
            MemorySegment page = a.allocate(8192, 4096);
            rel.create();
            for (int b = 0; b < blocks; b++) {
                Page.init(page, 0);
                page.set(ValueLayout.JAVA_LONG, 64, relNumber * 1000 + b);
                Page.setChecksum(page, b);
                rel.write(b, page, 1);
            }
        }
        try (BufferSession s = bufmgr.openSession("client");
                ReadStream stream = s.readStream(rel, ReadStream.blockRange(0, blocks), 0, null)) {
            for (int b = 0; b < blocks; b++) {
                int buf = stream.next();
                assertEquals(relNumber * 1000 + b, s.page(buf).get(ValueLayout.JAVA_LONG, 64));
                s.releaseBuffer(buf);
            }
            assertEquals(-1, stream.next());
        } finally {
            rel.unlink();
        }
        long readBytes = 0;
        for (StatIo.Row r : bufmgr.pool().stats().rows()) {
            readBytes += r.value(StatIo.Column.READ_BYTES);
        }
        assertTrue("stat_io counted the reads: " + readBytes, readBytes >= blocks * 8192L);
    }
}
