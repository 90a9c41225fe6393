package org.pageio.bufmgr;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.pageio.bufmgr.smgr.SmgrRelation;
import org.pageio.method.sync.SyncIoMethod;

/**
 * The cleanup lock ({@code ConditionalLockBufferForCleanup}) on real files: granted only to the
 * only pin, refused while another session pins the page, and a reader that pins a locked page
 * waits in {@code awaitUnlocked} until the holder is done, so it never sees the page mid-change.
 */
class CleanupLockTest extends PoolTestBase {

    @Test
    void grantedOnlyToTheOnlyPin() throws Exception {
        pool(new SyncIoMethod(), small().build());
        SmgrRelation rel = relation(16384, 4);
        try (BufferSession a = pool.openSession("client"); BufferSession b = pool.openSession("client")) {
            int buf = a.readBuffer(rel, 1, null);
            int other = b.readBuffer(rel, 1, null);
            assertEquals(buf, other);
            assertFalse(a.conditionalLockForCleanup(buf), "another session pins the page");
            b.releaseBuffer(other);
            assertTrue(a.conditionalLockForCleanup(buf), "the only pin");
            assertFalse(a.conditionalLockForCleanup(buf), "already locked");
            a.endModify(buf, false);
            a.beginModify(buf);
            assertFalse(a.conditionalLockForCleanup(buf), "an exclusive lock is held");
            a.endModify(buf, false);
            a.releaseBuffer(buf);
        }
    }

    @Test
    void aReaderThatPinsALockedPageWaitsUntilTheChangeIsWhole() throws Exception {
        pool(new SyncIoMethod(), small().build());
        SmgrRelation rel = relation(16385, 4);
        CountDownLatch pinned = new CountDownLatch(1);
        AtomicLong seen = new AtomicLong(-1);
        try (BufferSession a = pool.openSession("client")) {
            int buf = a.readBuffer(rel, 2, null);
            assertTrue(a.conditionalLockForCleanup(buf));
            java.lang.foreign.MemorySegment page = a.page(buf);
            page.set(java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED, 4096, 1L); // the change starts
            Thread reader = new Thread(() -> {
                try (BufferSession b = pool.openSession("client")) {
                    int rb = b.readBuffer(rel, 2, null);
                    pinned.countDown();
                    b.awaitUnlocked(rb);
                    seen.set(b.page(rb).get(java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED, 4096));
                    b.releaseBuffer(rb);
                } catch (Exception e) {
                    throw new RuntimeException(e);
                }
            });
            reader.start();
            assertTrue(pinned.await(10, TimeUnit.SECONDS));
            Thread.sleep(50);
            assertEquals(-1, seen.get(), "the reader read while the cleanup lock was held");
            page.set(java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED, 4096, 2L); // the change ends
            a.endModify(buf, true);
            reader.join(10_000);
            assertEquals(2L, seen.get());
            a.releaseBuffer(buf);
        }
    }
}
