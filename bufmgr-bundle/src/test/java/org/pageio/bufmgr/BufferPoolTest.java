package org.pageio.bufmgr;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.pageio.api.AioContext;
import org.pageio.api.AioException;
import org.pageio.api.IoMethod;
import org.pageio.bufmgr.smgr.RelFileLocator;
import org.pageio.bufmgr.smgr.SmgrRelation;
import org.pageio.bufmgr.smgr.StorageManager;
import org.pageio.bufmgr.stats.StatIo;
import org.pageio.bufmgr.stats.StatIo.Column;
import org.pageio.bufmgr.stream.ReadStream;
import org.pageio.method.sync.SyncIoMethod;

/** The buffer pool, two-phase reads and read streams, on real files. */
class BufferPoolTest extends PoolTestBase {

    @Test
    void readBufferReadsOnceThenHits() throws IOException {
        pool(new SyncIoMethod(), small().build());
        SmgrRelation rel = relation(16384, 20);
        assertEquals(new BufferCacheSummary(0, pool.nbuffers(), 0, 0, 0), pool.summary(), "an empty pool");
        try (BufferSession s = pool.openSession("client")) {
            int buf = s.readBuffer(rel, 7, null);
            assertNull(TestPages.check(16384, 7, s.page(buf)));
            BufferCacheSummary held = pool.summary();
            assertEquals(1, held.used(), held.toString());
            assertEquals(pool.nbuffers() - 1, held.unused(), held.toString());
            assertEquals(1, held.pinned(), held.toString());
            assertEquals(0, held.dirty(), held.toString());
            s.releaseBuffer(buf);
            int again = s.readBuffer(rel, 7, null);
            assertEquals(buf, again, "the block stays in its buffer");
            s.releaseBuffer(again);
        }
        assertEquals(1, total(Column.READS));
        assertEquals(1, total(Column.HITS));
        assertEquals(0, pool.pinnedBuffers());
        BufferCacheSummary after = pool.summary();
        assertEquals(0, after.pinned(), after.toString());
        assertEquals(2.0, after.usageCountAvg(), after.toString()); // a read and a hit
        assertEquals(0, pool.checksumFailures());
    }

    @ParameterizedTest
    @EnumSource(BufMgrSettings.Lookahead.class)
    void streamReturnsEveryBlockInOrderWithCorrectContent(BufMgrSettings.Lookahead lookahead) throws Exception {
        TestMethods.Threaded m = new TestMethods.Threaded(2);
        closeLast.add(m);
        pool(m, small().readStreamLookahead(lookahead).build());
        SmgrRelation rel = relation(20000, 300);
        try (BufferSession s = pool.openSession("client");
                ReadStream stream = new ReadStream(s, rel, ReadStream.blockRange(0, 300), ReadStream.USE_BATCHING, null)) {
            for (long b = 0; b < 300; b++) {
                int buf = stream.next();
                assertTrue(buf >= 0, "stream ended early at block " + b);
                assertNull(TestPages.check(20000, b, s.page(buf)));
                s.releaseBuffer(buf);
            }
            assertEquals(-1, stream.next());
            assertTrue(stream.stats().averageIoSizeBlocks() > 4, "reads were combined: " + stream.stats());
        }
        assertEquals(300, totalReadBlocks());
        assertEquals(0, pool.pinnedBuffers());
    }

    @Test
    void combinedReadsRespectIoCombineLimitAndSegmentBoundaries() throws Exception {
        TestMethods.Recording m = new TestMethods.Recording();
        pool(m, small().segmentBlocks(10).ioCombineLimit(4).build());
        SmgrRelation rel = relation(30000, 40);
        assertTrue(rel.segmentPath(35).toString().endsWith("30000.3"), rel.segmentPath(35).toString());
        try (BufferSession s = pool.openSession("client");
                ReadStream stream = new ReadStream(s, rel, ReadStream.blockRange(0, 40), ReadStream.FULL, null)) {
            for (long b = 0; b < 40; b++) {
                int buf = stream.next();
                assertNull(TestPages.check(30000, b, s.page(buf)));
                s.releaseBuffer(buf);
            }
        }
        long blocks = 0;
        for (TestMethods.Recording.Io io : m.ios) {
            assertTrue(io.length() <= 4L * 8192, "read of " + io.length() + " bytes exceeds io_combine_limit");
            assertTrue(io.offset() + io.length() <= 10L * 8192, "read crosses a segment boundary: " + io);
            blocks += io.length() / 8192;
        }
        assertEquals(40, blocks);
        assertEquals(12, m.ios.size(), "each 10-block segment reads as 4 + 4 + 2: " + m.ios);
        assertEquals(12, total(Column.READS));
    }

    @Test
    void adjacentBuffersBecomeOneIovec() throws Exception {
        TestMethods.Recording m = new TestMethods.Recording();
        pool(m, small().build());
        SmgrRelation rel = relation(30001, 16);
        try (BufferSession s = pool.openSession("client");
                ReadStream stream = new ReadStream(s, rel, ReadStream.blockRange(0, 16), ReadStream.FULL, null)) {
            for (int b = 0; b < 16; b++) {
                s.releaseBuffer(stream.next());
            }
        }
        // a fresh pool hands out consecutive buffers, so a 16-block read is one contiguous iovec
        assertEquals(1, m.ios.get(0).iovcnt(), m.ios.toString());
        assertEquals(16L * 8192, m.ios.get(0).length());
    }

    @Test
    void concurrentSessionsNeverReadOneBlockTwice() throws Exception {
        TestMethods.Threaded m = new TestMethods.Threaded(2);
        closeLast.add(m);
        pool(m, small().sharedBuffers(1024).build());
        SmgrRelation rel = relation(40000, 256);
        int threads = 4;
        List<CompletableFuture<Void>> all = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            long first = t * 32L;
            all.add(CompletableFuture.runAsync(() -> scan(rel, 40000, first, 160)));
        }
        for (CompletableFuture<Void> f : all) {
            f.get(60, TimeUnit.SECONDS);
        }
        // The union of the ranges is 0..255: with no eviction, each block is read exactly once.
        assertEquals(256, totalReadBlocks(), "reads counted equal the distinct misses");
        assertEquals(0, pool.pinnedBuffers());
    }

    @Test
    void corruptPageNamesRelationAndBlockAndIsNeverValid() throws Exception {
        pool(new SyncIoMethod(), small().build());
        SmgrRelation rel = relation(50000, 10);
        TestPages.corrupt(rel, 5, 0x10);
        try (BufferSession s = pool.openSession("client")) {
            AioException e = assertThrows(AioException.class, () -> s.readBuffer(rel, 5, null));
            assertTrue(e.getMessage().contains("block 5") && e.getMessage().contains("pg_default/50000")
                    && e.getMessage().contains("checksum"), e.getMessage());
            assertEquals(0, s.pinnedCount());
            // a stream through the bad block fails there, and the neighbours were fine
            try (ReadStream stream = new ReadStream(s, rel, ReadStream.blockRange(0, 10), 0, null)) {
                IOException se = assertThrows(IOException.class, () -> {
                    for (int i = 0; i < 10; i++) {
                        s.releaseBuffer(stream.next());
                    }
                });
                assertTrue(se.getMessage().contains("block 5"), se.getMessage());
            }
            assertEquals(0, s.pinnedCount());
        }
        assertEquals(0, pool.pinnedBuffers());
        assertEquals(2, pool.checksumFailures(), "each read of the bad page counts");
    }

    @Test
    void zeroDamagedPagesZeroesTheBadPageAndGoesOn() throws Exception {
        pool(new SyncIoMethod(), small().zeroDamagedPages(true).build());
        SmgrRelation rel = relation(50001, 10);
        TestPages.corrupt(rel, 3, 0x10);
        try (BufferSession s = pool.openSession("client")) {
            int buf = s.readBuffer(rel, 3, null);
            byte[] zero = new byte[8192];
            assertArrayEquals(zero, s.page(buf).toArray(ValueLayout.JAVA_BYTE), "the damaged page is zeroed");
            s.releaseBuffer(buf);
            int next = s.readBuffer(rel, 4, null);
            assertNull(TestPages.check(50001, 4, s.page(next)));
            s.releaseBuffer(next);
        }
    }

    @Test
    void ignoreChecksumFailureUsesThePageButNeverAcceptsABadHeader() throws Exception {
        pool(new SyncIoMethod(), small().ignoreChecksumFailure(true).build());
        SmgrRelation rel = relation(50003, 10);
        TestPages.corrupt(rel, 6, 0x10); // payload byte: the header stays sane, the checksum fails
        try (BufferSession s = pool.openSession("client")) {
            int buf = s.readBuffer(rel, 6, null);
            assertTrue(pool.isValid(buf));
            assertTrue(TestPages.check(50003, 6, s.page(buf)) != null, "the page is used as it is, damage included");
            s.releaseBuffer(buf);
        }
        try (RandomAccessFile f = new RandomAccessFile(rel.segmentPath(7).toFile(), "rw")) {
            f.seek(rel.segmentOffset(7) + 12); // pd_lower := 0xFFFF: a header no flag excuses
            f.write(0xFF);
            f.write(0xFF);
        }
        try (BufferSession s = pool.openSession("client")) {
            AioException e = assertThrows(AioException.class, () -> s.readBuffer(rel, 7, null));
            assertTrue(e.getMessage().contains("invalid page header") && e.getMessage().contains("block 7"), e.getMessage());
        }
        assertEquals(1, pool.checksumFailures(), "the ignored checksum counts, the bad header is no checksum failure");
    }


    @Test
    void readPastTheEndIsAnErrorNamingTheShortRead() throws Exception {
        pool(new SyncIoMethod(), small().build());
        SmgrRelation rel = relation(50002, 10);
        try (BufferSession s = pool.openSession("client")) {
            ReadBuffersOperation op = s.newOperation(4);
            int[] bufs = new int[4];
            assertTrue(s.startReadBuffers(op, bufs, 0, 0, rel, 8, 4, 0, null));
            AioException e = assertThrows(AioException.class, () -> s.waitReadBuffers(op));
            // blocks 8 and 9 arrived (a partial read), the retry of 10..11 found nothing
            assertTrue(e.getMessage().contains("read only 0 of 16384 bytes") && e.getMessage().contains("blocks 10..11"),
                    e.getMessage());
            assertTrue(pool.isValid(bufs[0]) && pool.isValid(bufs[1]), "the blocks that arrived are valid");
            assertFalse(pool.isValid(bufs[2]));
            for (int b : bufs) {
                s.releaseBuffer(b);
            }
        }
        assertEquals(0, pool.pinnedBuffers());
    }

    @Test
    void earlyEndedStreamLeavesNoPinAndNoHandle() throws Exception {
        TestMethods.Threaded m = new TestMethods.Threaded(2);
        closeLast.add(m);
        pool(m, small().effectiveIoConcurrency(8).build());
        SmgrRelation rel = relation(60000, 200);
        try (BufferSession s = pool.openSession("client")) {
            try (ReadStream stream = new ReadStream(s, rel, ReadStream.blockRange(0, 200), ReadStream.FULL, null)) {
                for (int i = 0; i < 3; i++) {
                    s.releaseBuffer(stream.next()); // a LIMIT 3
                }
            }
            assertEquals(0, s.pinnedCount(), "closing the stream dropped its pins at once");
            s.io().drain();
            assertEquals(0, s.io().inFlightCount(), "every handle came back");
            // whatever was read in the background is valid and correct for later readers
            for (long b = 0; b < 200; b += 7) {
                int buf = s.readBuffer(rel, b, null);
                assertNull(TestPages.check(60000, b, s.page(buf)));
                s.releaseBuffer(buf);
            }
        }
        assertEquals(0, pool.pinnedBuffers());
    }

    @Test
    void evictionUnderATinyPoolNeverReturnsAWrongPage() throws Exception {
        TestMethods.Threaded m = new TestMethods.Threaded(2);
        closeLast.add(m);
        pool(m, new BufMgrSettings.Builder().sharedBuffers(48).maxSessions(4).segmentBlocks(64).build());
        SmgrRelation rel = relation(70000, 400);
        List<CompletableFuture<Void>> all = new ArrayList<>();
        for (int t = 0; t < 3; t++) {
            int seed = t;
            all.add(CompletableFuture.runAsync(() -> randomReads(rel, 70000, seed, 400)));
        }
        all.add(CompletableFuture.runAsync(() -> scan(rel, 70000, 0, 400)));
        for (CompletableFuture<Void> f : all) {
            f.get(120, TimeUnit.SECONDS);
        }
        assertTrue(total(Column.EVICTIONS) > 100, "the pool evicted constantly: " + total(Column.EVICTIONS));
        assertEquals(0, pool.pinnedBuffers());
    }

    @Test
    void bulkReadRingKeepsAScanFromFloodingThePool() throws Exception {
        pool(new SyncIoMethod(), small().build());
        SmgrRelation rel = relation(80000, 400);
        try (BufferSession s = pool.openSession("client")) {
            BufferAccessStrategy ring = pool.strategy(BufferAccessStrategy.Type.BULKREAD);
            try (ReadStream stream = new ReadStream(s, rel, ReadStream.blockRange(0, 400), ReadStream.SEQUENTIAL, ring)) {
                for (long b = 0; b < 400; b++) {
                    int buf = stream.next();
                    assertNull(TestPages.check(80000, b, s.page(buf)));
                    s.releaseBuffer(buf);
                }
            }
            assertTrue(ring.size() <= 512 / 8, "ring capped at shared_buffers / 8: " + ring.size());
        }
        assertTrue(pool.mappedBlocks() <= 64, "a bulk read stays in its ring: " + pool.mappedBlocks() + " blocks mapped");
        assertTrue(total(Column.REUSES) > 0);
    }

    @Test
    void streamsRespectTheSessionPinLimitAndTablespaceOverrides() throws Exception {
        pool(new SyncIoMethod(), small().build()); // 512 buffers / 8 sessions = 64 pins each
        SmgrRelation rel = relation(90000, 100);
        smgr.createTablespace("slow_disk", null, 1, 2);
        SmgrRelation slow = smgr.open(new RelFileLocator("slow_disk", 90001));
        TestPages.fill(slow, 10);
        try (BufferSession s = pool.openSession("client")) {
            int held = s.readBuffer(rel, 0, null);
            try (ReadStream stream = new ReadStream(s, rel, ReadStream.blockRange(0, 100), 0, null)) {
                assertEquals(63, stream.maxPinned(), "the stream fits in what the session may still pin");
            }
            s.releaseBuffer(held);
            try (ReadStream stream = new ReadStream(s, slow, ReadStream.blockRange(0, 10), 0, null)) {
                assertEquals(1, stream.maxIos(), "the tablespace's effective_io_concurrency = 1 applies");
            }
            try (ReadStream stream = new ReadStream(s, slow, ReadStream.blockRange(0, 10), ReadStream.MAINTENANCE, null)) {
                assertEquals(2, stream.maxIos(), "and its maintenance_io_concurrency = 2");
            }
        }
    }

    @Test
    void namesThatWouldLeaveTheDataDirectoryAreRefused() {
        pool(new SyncIoMethod(), small().build());
        for (String bad : new String[] {"../etc", "a/b", "", "Upper", "x".repeat(64)}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> new RelFileLocator(bad, 1), bad);
            assertTrue(e.getMessage().contains("invalid tablespace name"), e.getMessage());
        }
        assertThrows(IllegalArgumentException.class, () -> new RelFileLocator(StorageManager.DEFAULT_TABLESPACE, -5));
        assertThrows(IllegalArgumentException.class, () -> smgr.createTablespace("../up", null, -1, -1));
        assertThrows(IllegalArgumentException.class, () -> smgr.createTablespace("rel_loc", Path.of("relative/dir"), -1, -1));
        SmgrRelation rel = smgr.open(new RelFileLocator(StorageManager.DEFAULT_TABLESPACE, 4294967295L));
        assertTrue(rel.segmentPath(0).startsWith(dir), rel.segmentPath(0).toString());
    }

    @Test
    void combineLimitAboveTheMaximumIsCappedWithAWarningNamingBoth() {
        BufMgrSettings s = new BufMgrSettings.Builder().ioCombineLimit(32).build();
        assertEquals(16, s.effectiveIoCombineLimit());
        assertTrue(s.combineLimitWarning().contains("io_combine_limit = 256kB")
                && s.combineLimitWarning().contains("io_max_combine_limit = 128kB"), s.combineLimitWarning());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> new BufMgrSettings.Builder().effectiveIoConcurrency(1001).build());
        assertTrue(e.getMessage().contains("effective_io_concurrency = 1001") && e.getMessage().contains("0..1000"));
    }
}
