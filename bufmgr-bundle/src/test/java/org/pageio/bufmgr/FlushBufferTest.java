package org.pageio.bufmgr;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.StandardOpenOption;
import org.junit.jupiter.api.Test;
import org.pageio.bufmgr.smgr.SmgrRelation;
import org.pageio.method.sync.SyncIoMethod;

/**
 * {@code flushBuffer} on real files: the page as changed is in the file when it returns, and the
 * buffer is clean and no longer waiting for an fsync (what ordering two page writes relies on).
 */
class FlushBufferTest extends PoolTestBase {

    @Test
    void theChangedPageIsInTheFileAndDurableWhenItReturns() throws Exception {
        pool(new SyncIoMethod(), small().build());
        SmgrRelation rel = relation(16390, 8);
        try (BufferSession s = pool.openSession("client")) {
            int buf = s.readBuffer(rel, 5, null);
            s.beginModify(buf);
            s.page(buf).set(ValueLayout.JAVA_LONG_UNALIGNED, 4000, 0x1234_5678_9ABC_DEF0L);
            s.endModify(buf, true);
            s.flushBuffer(buf);
            assertFalse(pool.isDirty(buf), "clean after the flush");
            assertFalse(pool.isUnsynced(buf), "its write is covered by an fsync");
            try (FileChannel f = FileChannel.open(rel.segmentPath(5), StandardOpenOption.READ)) {
                ByteBuffer b = ByteBuffer.allocate(8).order(ByteOrder.nativeOrder());
                f.read(b, (5 % smgr.segmentBlocks()) * 8192L + 4000);
                assertEquals(0x1234_5678_9ABC_DEF0L, b.flip().getLong());
            }
            s.flushBuffer(buf); // clean: nothing to do
            s.releaseBuffer(buf);
        }
    }
}
