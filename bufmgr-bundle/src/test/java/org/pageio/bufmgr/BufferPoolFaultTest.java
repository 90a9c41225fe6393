package org.pageio.bufmgr;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.pageio.api.AioException;
import org.pageio.api.IoMethod;
import org.pageio.bufmgr.smgr.SmgrRelation;
import org.pageio.bufmgr.stats.StatIo.Column;
import org.pageio.bufmgr.stream.ReadStream;
import org.pageio.method.fault.FaultInjectingMethod;
import org.pageio.method.fault.FaultPlan.Kind;
import org.pageio.method.fault.FaultPlan.Op;
import org.pageio.method.fault.FaultPlan.Rule;
import org.pageio.method.sync.SyncIoMethod;
import org.pageio.posix.Errno;

/** The buffer manager under injected faults: errors named, buffers never valid, nothing leaked. */
class BufferPoolFaultTest extends PoolTestBase {

    @Test
    void eioIsReportedWithRelationBlockAndErrnoAndALaterReadRetries() throws Exception {
        FaultInjectingMethod m = faults(new SyncIoMethod(), Rule.blocks(Kind.EIO, Op.READ, "relation pg_default/61000", 5, 1).times(1));
        pool(m, small().build());
        SmgrRelation rel = relation(61000, 10);
        try (BufferSession s = pool.openSession("client")) {
            AioException e = assertThrows(AioException.class, () -> s.readBuffer(rel, 5, null));
            assertEquals(Errno.EIO, e.errno());
            assertTrue(e.getMessage().contains("EIO") && e.getMessage().contains("block 5")
                    && e.getMessage().contains("pg_default/61000"), e.getMessage());
            assertEquals(0, s.pinnedCount());
            int buf = s.readBuffer(rel, 5, null); // the fault fired once: the block is read again
            assertNull(TestPages.check(61000, 5, s.page(buf)));
            s.releaseBuffer(buf);
        }
        assertEquals(1, m.injected());
        assertEquals(0, pool.pinnedBuffers());
    }

    @Test
    void eioInTheMiddleOfAStreamStopsItThereAndLeaksNothing() throws Exception {
        TestMethods.Threaded threaded = new TestMethods.Threaded(2);
        closeLast.add(threaded);
        FaultInjectingMethod m = faults(threaded, Rule.blocks(Kind.EIO, Op.READ, "pg_default/61001", 40, 1));
        pool(m, small().build());
        SmgrRelation rel = relation(61001, 100);
        try (BufferSession s = pool.openSession("client")) {
            long delivered = 0;
            try (ReadStream stream = new ReadStream(s, rel, ReadStream.blockRange(0, 100), ReadStream.FULL, null)) {
                IOException e = assertThrows(IOException.class, () -> {
                    for (int i = 0; i < 100; i++) {
                        s.releaseBuffer(stream.next());
                    }
                });
                assertTrue(e.getMessage().contains("EIO") && e.getMessage().contains("pg_default/61001"), e.getMessage());
                delivered = stream.stats().buffersReturned();
            }
            assertTrue(delivered <= 40, "no buffer past the failed read was returned: " + delivered);
            s.io().drain();
            assertEquals(0, s.pinnedCount());
            assertEquals(0, s.io().inFlightCount());
        }
        assertEquals(0, pool.pinnedBuffers());
    }

    @Test
    void shortReadsAreReadAgainUntilEveryBlockArrived() throws Exception {
        FaultInjectingMethod m = faults(new SyncIoMethod(), Rule.always(Kind.SHORT_READ, Op.READ, "pg_default/61002").times(3));
        pool(m, small().build());
        SmgrRelation rel = relation(61002, 64);
        try (BufferSession s = pool.openSession("client");
                ReadStream stream = new ReadStream(s, rel, ReadStream.blockRange(0, 64), ReadStream.FULL, null)) {
            // FULL: the first read is 16 blocks; cut to 8, then 4, then 2, the rest is read whole
            for (long b = 0; b < 64; b++) {
                int buf = stream.next();
                assertNull(TestPages.check(61002, b, s.page(buf)));
                s.releaseBuffer(buf);
            }
        }
        assertEquals(3, m.injected());
        // stat_io charges a read at issue: the 8 + 4 + 2 blocks that did not arrive were asked again
        assertEquals(64 + 8 + 4 + 2, totalReadBlocks());
        assertTrue(total(Column.READS) > 4, "the partial reads were followed by reads of the rest");
        assertEquals(0, pool.pinnedBuffers());
    }

    @Test
    void aShortReadOfLessThanOneBlockIsAnErrorNotAnEndlessRetry() throws Exception {
        FaultInjectingMethod m = faults(new SyncIoMethod(), Rule.blocks(Kind.SHORT_READ, Op.READ, "pg_default/61003", 2, 1));
        pool(m, small().build());
        SmgrRelation rel = relation(61003, 10);
        try (BufferSession s = pool.openSession("client")) {
            // a one-block read cut in half delivers 4096 bytes: less than a block
            AioException e = assertThrows(AioException.class, () -> s.readBuffer(rel, 2, null));
            assertTrue(e.getMessage().contains("read only 4096 of 8192 bytes") && e.getMessage().contains("block 2"),
                    e.getMessage());
            assertEquals(0, s.pinnedCount());
        }
    }

    @Test
    void delaysAndOutOfOrderCompletionsNeverReturnAWrongByte() throws Exception {
        TestMethods.Threaded threaded = new TestMethods.Threaded(2);
        closeLast.add(threaded);
        FaultInjectingMethod m = faults(threaded,
                new Rule(Kind.DELAY, Op.READ, null, 0, Long.MAX_VALUE, 0.2, -1, 3),
                new Rule(Kind.REORDER, Op.READ, null, 0, Long.MAX_VALUE, 0.3, -1, 0));
        pool(m, new BufMgrSettings.Builder().sharedBuffers(64).maxSessions(4).segmentBlocks(50).build());
        SmgrRelation rel = relation(61004, 300);
        List<CompletableFuture<Void>> all = new ArrayList<>();
        for (int t = 0; t < 2; t++) {
            int seed = t;
            all.add(CompletableFuture.runAsync(() -> randomReads(rel, 61004, seed, 300)));
        }
        all.add(CompletableFuture.runAsync(() -> scan(rel, 61004, 0, 300)));
        all.add(CompletableFuture.runAsync(() -> scan(rel, 61004, 100, 200)));
        for (CompletableFuture<Void> f : all) {
            f.get(120, TimeUnit.SECONDS);
        }
        assertTrue(m.injected() > 20, "faults were injected: " + m.injected());
        assertEquals(0, pool.pinnedBuffers());
    }

    @Test
    void aSegmentFileThatCannotBeOpenedIsNamedAndLeavesNoPin() throws Exception {
        TestMethods.Threaded threaded = new TestMethods.Threaded(1);
        closeLast.add(threaded);
        pool(threaded, small().segmentBlocks(10).build()); // a method that does not defer reads to the wait
        SmgrRelation rel = relation(61005, 30);
        java.nio.file.Files.delete(rel.segmentPath(15));
        rel.close(); // the writes' descriptors: the next read opens the segment again
        try (BufferSession s = pool.openSession("client")) {
            IOException e = assertThrows(IOException.class, () -> s.readBuffer(rel, 15, null));
            assertTrue(e.getMessage().contains("ENOENT") && e.getMessage().contains("61005.1")
                    && e.getMessage().contains("block 15"), e.getMessage());
            assertEquals(0, s.pinnedCount());
            int buf = s.readBuffer(rel, 25, null);
            assertNull(TestPages.check(61005, 25, s.page(buf)));
            s.releaseBuffer(buf);
        }
        assertEquals(0, pool.pinnedBuffers());
    }
}
