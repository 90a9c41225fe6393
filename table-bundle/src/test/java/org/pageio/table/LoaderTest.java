package org.pageio.table;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.pageio.api.AioException;
import org.pageio.api.IoMethod;
import org.pageio.bufmgr.BufMgrSettings;
import org.pageio.bufmgr.BufferManagerCore;
import org.pageio.bufmgr.BufferPool;
import org.pageio.bufmgr.page.Page;
import org.pageio.bufmgr.page.PageVerifier;
import org.pageio.bufmgr.smgr.ForkNumber;
import org.pageio.bufmgr.stats.StatIo;
import org.pageio.bufmgr.stats.StatIo.Column;
import org.pageio.method.fault.FaultInjectingMethod;
import org.pageio.method.fault.FaultPlan;
import org.pageio.method.fault.FaultPlan.Kind;
import org.pageio.method.fault.FaultPlan.Op;
import org.pageio.method.fault.FaultPlan.Rule;
import org.pageio.method.sync.SyncIoMethod;
import org.pageio.method.worker.WorkerIoMethod;
import org.pageio.method.worker.WorkerSettings;
import org.pageio.posix.Errno;
import org.pageio.bufmgr.smgr.RelFileLocator;
import org.pageio.bufmgr.smgr.SmgrRelation;
import org.pageio.bufmgr.smgr.StorageManager;
import org.pageio.posix.PosixException;
import org.pageio.table.load.Loader;
import org.pageio.table.load.PageSink;
import org.pageio.heap.vm.VisibilityMap;
import org.pageio.heap.HeapPage;

/** The loader's builders and sinks: same bytes whichever way, every page valid, failures stop everything. */
class LoaderTest {

    @TempDir
    Path dir;

    /** Two full chunks and a bit, ending in a partial page, in 100-block segments. */
    static final long ROWS = 2L * Loader.CHUNK_BLOCKS * 47 + 100 * 47 + 5;

    private final List<AutoCloseable> open = new ArrayList<>();

    @AfterEach
    void tearDown() throws Exception {
        for (int i = open.size() - 1; i >= 0; i--) {
            open.get(i).close();
        }
        open.clear();
    }

    /** A pool over {@code smgr} reading and writing through {@code method}. */
    private BufferPool pool(StorageManager smgr, IoMethod method) {
        BufMgrSettings s = new BufMgrSettings.Builder().sharedBuffers(512).maxSessions(8).segmentBlocks(100).build();
        BufferManagerCore bufmgr = BufferManagerCore.on(smgr, s, method);
        open.add(bufmgr);
        return bufmgr.pool();
    }

    private WorkerIoMethod worker() {
        WorkerIoMethod w = new WorkerIoMethod(WorkerSettings.of(2, 4, WorkerSettings.DEFAULT_IDLE_TIMEOUT_MS,
                WorkerSettings.DEFAULT_LAUNCH_INTERVAL_MS));
        open.add(w);
        return w;
    }

    @Test
    void everySinkAndBuilderCountWritesTheSameValidPages() throws Exception {
        try (StorageManager smgr = new StorageManager(dir, 100, false);
                StorageManager direct = new StorageManager(dir.resolve("odirect"), 100, true)) {
            List<byte[]> files = new ArrayList<>();
            List<byte[]> maps = new ArrayList<>();
            BufferPool syncPool = pool(smgr, new SyncIoMethod());
            BufferPool workerPool = pool(smgr, worker());
            // io_method=worker over O_DIRECT descriptors (what io_method=direct's storage manager opens)
            BufferPool directPool = pool(direct, worker());
            // builders = 0: the issuing thread builds every page itself (inline), the writes
            // overlap only through the method; early fsyncs at each 100-block segment end
            BufferPool inlineSyncPool = pool(smgr, new SyncIoMethod());
            BufferPool inlineWorkerPool = pool(smgr, worker());
            Object[][] cases = {{PageSink.plain(), 1, smgr}, {PageSink.buffered(), 3, smgr}, {PageSink.direct(), 2, smgr},
                    {PageSink.bulk(syncPool, "loader"), 2, smgr}, {PageSink.bulk(workerPool, "loader", 16, 4), 3, smgr},
                    {PageSink.bulk(directPool, "loader", 128, 8), 2, direct},
                    {PageSink.bulk(inlineSyncPool, "loader"), 0, smgr},
                    {PageSink.bulk(inlineWorkerPool, "loader", 128, 8, 1000), 0, smgr}};
            long rel = 20_000;
            for (Object[] c : cases) {
                SmgrRelation r = ((StorageManager) c[2]).open(new RelFileLocator(StorageManager.DEFAULT_TABLESPACE, rel++));
                List<Long> seen = new ArrayList<>();
                Loader l = new Loader((PageSink.Factory) c[0], (Integer) c[1]);
                long blocks = l.load(r, TableShape.PREFETCH_TEST, ROWS, 7, true, (done, total, bytes, nanos) -> seen.add(done));
                assertEquals(TableShape.PREFETCH_TEST.blocksFor(ROWS), blocks);
                assertEquals(blocks, r.nblocks());
                assertEquals(blocks * 8192, l.bytes());
                assertEquals(ROWS, seen.get(seen.size() - 1), "the last progress report is complete");
                files.add(concat(r, blocks));
                maps.add(Files.readAllBytes(r.fork(ForkNumber.VISIBILITYMAP_FORKNUM).segmentPath(0)));
            }
            // the bulk sinks wrote through their pools' sessions: one extend per write, one fsync per
            // segment; then the visibility map, one page (one extend, one fsync) after the heap
            long blocks = TableShape.PREFETCH_TEST.blocksFor(ROWS);
            long segments = (blocks + 99) / 100;
            assertEquals(1, VisibilityMap.mapBlocks(blocks));
            assertEquals((blocks + 1) * 8192, total(syncPool, Column.EXTEND_BYTES));
            assertEquals(segments + 2 + 1, total(syncPool, Column.EXTENDS),
                    "128-block writes cut at each 100-block segment end and at the chunk ends 1024 and 2048, and the map");
            assertEquals(segments + 1, total(syncPool, Column.FSYNCS));
            assertEquals((blocks + 1) * 8192, total(workerPool, Column.EXTEND_BYTES));
            assertTrue(total(workerPool, Column.EXTENDS) >= blocks / 16, "16-block writes");
            assertEquals((blocks + 1) * 8192, total(directPool, Column.EXTEND_BYTES));
            assertEquals(segments + 1, total(workerPool, Column.FSYNCS), "every segment fsynced once, early or at the end");
            assertEquals(segments + 2 + 1, total(inlineSyncPool, Column.EXTENDS), "built inline, written in the same pieces");
            assertEquals(segments + 1, total(inlineSyncPool, Column.FSYNCS), "sync: one fsync per segment, at the end");
            assertEquals((blocks + 1) * 8192, total(inlineWorkerPool, Column.EXTEND_BYTES));
            assertEquals(segments + 1, total(inlineWorkerPool, Column.FSYNCS), "early fsyncs at segment ends, each segment once");
            for (int i = 1; i < maps.size(); i++) {
                assertArrayEquals(maps.get(0), maps.get(i), "case " + i + " wrote another map");
            }
            assertEquals(8192, maps.get(0).length);
            assertEquals(PageVerifier.VALID, PageVerifier.verify(MemorySegment.ofArray(maps.get(0)), 0, true));
            for (long b = 0; b < VisibilityMap.HEAPBLOCKS_PER_PAGE; b++) {
                int bits = (maps.get(0)[VisibilityMap.MAP_OFFSET + VisibilityMap.heapBlkToMapByte(b)] >> VisibilityMap.heapBlkToOffset(b)) & 3;
                assertEquals(b < blocks ? VisibilityMap.VISIBILITYMAP_VALID_BITS : 0, bits, "map bits of heap block " + b);
            }
            for (int i = 1; i < files.size(); i++) {
                assertArrayEquals(files.get(0), files.get(i), "case " + i + " wrote other bytes");
            }
            byte[] all = files.get(0);
            try (Arena a = Arena.ofConfined()) {
                MemorySegment page = a.allocate(8192);
                for (long b = 0; b < blocks; b++) {
                    MemorySegment.copy(MemorySegment.ofArray(all), b * 8192, page, 0, 8192);
                    assertEquals(PageVerifier.VALID, PageVerifier.verify(page, b, true), "block " + b);
                    assertEquals(Page.PD_ALL_VISIBLE, Page.flags(page), "loaded frozen: block " + b + " is all-visible");
                    int lines = HeapPage.lineCount(page);
                    assertEquals(b == blocks - 1 ? 5 : 47, lines, "block " + b);
                    int line = (int) (b % lines) + 1;
                    int off = HeapPage.tupleOffset(page, line);
                    long g = b * 47 + line;
                    assertEquals(g, HeapPage.getInt(page, off + 24));
                    assertEquals(TableShape.PREFETCH_TEST.value(1, g, 7), HeapPage.getInt(page, off + 28));
                    assertEquals(TableShape.PREFETCH_TEST.value(2, g, 7), HeapPage.getInt(page, off + 32));
                    assertEquals(b, HeapPage.ctidBlock(page, off));
                    assertEquals(line, HeapPage.ctidLine(page, off));
                    for (int i = 0; i < 128; i += 13) {
                        assertEquals(TableShape.PREFETCH_TEST.textByte(g, 7, i),
                                page.get(java.lang.foreign.ValueLayout.JAVA_BYTE, off + 40 + i), "block " + b + " byte " + i);
                    }
                }
            }
        }
    }

    @Test
    void aFailingWriteStopsTheBuildersAndNamesTheFile() throws Exception {
        try (StorageManager smgr = new StorageManager(dir, 100, false)) {
            SmgrRelation r = smgr.open(new RelFileLocator(StorageManager.DEFAULT_TABLESPACE, 30_000));
            PageSink.Factory failing = (rel, blocks) -> new PageSink() {
                int writes;

                @Override
                public void write(long block, MemorySegment pages, int n) throws PosixException {
                    if (++writes == 2) {
                        throw new PosixException("pwrite", rel.segmentPath(block), 28, "blocks " + block + ".. of relation " + rel);
                    }
                }

                @Override
                public void finish() {
                }

                @Override
                public void close() {
                }
            };
            for (int builders : new int[] {2, 0}) { // builder threads, and the issuing thread building
                int before = Thread.activeCount();
                PosixException e = assertThrows(PosixException.class, () -> new Loader(failing, builders)
                        .load(r, TableShape.T, 40L * Loader.CHUNK_BLOCKS * 33, 1, true, LoadProgress.NONE));
                assertTrue(e.getMessage().contains("ENOSPC") && e.getMessage().contains("blocks 1024.."),
                        builders + " builders: " + e.getMessage());
                assertTrue(Thread.activeCount() <= before, "builders joined");
            }
        }
    }

    private static long total(BufferPool pool, Column c) {
        long n = 0;
        for (StatIo.Row r : pool.stats().rows()) {
            if (r.kind().equals("loader") && r.context() == StatIo.IoContext.BULKWRITE) {
                n += r.value(c);
            }
        }
        return n;
    }

    @Test
    void aWriteThatKeepsFailingThroughTheBulkSinkFailsTheLoadNamingRelationBlocksAndErrno() throws Exception {
        try (StorageManager smgr = new StorageManager(dir, 100, false)) {
            FaultInjectingMethod faulty = new FaultInjectingMethod(worker(),
                    FaultPlan.of(Rule.always(Kind.EIO, Op.WRITE, "blocks 1500..1599 of relation pg_default/30001")), 42);
            open.add(faulty);
            BufferPool pool = pool(smgr, faulty);
            SmgrRelation r = smgr.open(new RelFileLocator(StorageManager.DEFAULT_TABLESPACE, 30_001));
            int before = Thread.activeCount();
            AioException e = assertThrows(AioException.class, () -> new Loader(PageSink.bulk(pool, "loader"), 2)
                    .load(r, TableShape.T, 40L * Loader.CHUNK_BLOCKS * 33, 1, true, LoadProgress.NONE));
            assertEquals(Errno.EIO, e.errno());
            // 128-block writes cut at the 100-block segments: 1500..1599 is one write, failing every time
            assertTrue(e.getMessage().contains("after 3 attempts") && e.getMessage().contains("blocks 1500..1599")
                    && e.getMessage().contains("pg_default/30001") && e.getMessage().contains("EIO"), e.getMessage());
            assertEquals(3, faulty.injected(), "written three times, then reported");
            assertTrue(Thread.activeCount() <= before + 4, "builders joined");
            assertTrue(pool.aio().snapshot().isEmpty(), "nothing left in flight: " + pool.aio().snapshot());
        }
    }

    private static byte[] concat(SmgrRelation r, long blocks) throws Exception {
        byte[] out = new byte[(int) (blocks * 8192)];
        int at = 0;
        for (Path p : r.segmentPaths(blocks)) {
            byte[] b = Files.readAllBytes(p);
            System.arraycopy(b, 0, out, at, b.length);
            at += b.length;
        }
        assertEquals(out.length, at);
        return out;
    }
}
