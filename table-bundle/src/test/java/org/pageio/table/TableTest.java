package org.pageio.table;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.pageio.api.IoMethod;
import org.pageio.bufmgr.BufMgrSettings;
import org.pageio.bufmgr.BufferManagerCore;
import org.pageio.bufmgr.BufferPool;
import org.pageio.bufmgr.BufferSession;
import org.pageio.bufmgr.page.PageVerifier;
import org.pageio.bufmgr.smgr.SmgrRelation;
import org.pageio.bufmgr.stats.StatIo;
import org.pageio.method.sync.SyncIoMethod;
import org.pageio.table.engine.TableEngine;
import org.pageio.heap.HeapPage;

/** Load, index, every scan and the checksum scan, on real files in a temp dir, against the generator. */
class TableTest {

    static final long SEED = 42;
    static final int PT_ROWS = 20_000; // 426 blocks, 3.4 MB
    static final int T_ROWS = 10_000;  // 304 blocks, 2.5 MB

    @TempDir
    Path dir;

    private final List<AutoCloseable> open = new ArrayList<>();
    private BufferPool pool;
    private TableEngine engine;

    @AfterEach
    void tearDown() throws Exception {
        closePool();
    }

    private void closePool() throws Exception {
        for (int i = open.size() - 1; i >= 0; i--) {
            open.get(i).close();
        }
        open.clear();
    }

    private TableEngine engine(IoMethod method, BufMgrSettings s) throws IOException {
        BufferManagerCore bufmgr = BufferManagerCore.open(dir, s, method);
        pool = bufmgr.pool();
        open.add(bufmgr);
        engine = new TableEngine(pool);
        return engine;
    }

    private static BufMgrSettings.Builder small() {
        // small segments: scans cross segment boundaries
        return new BufMgrSettings.Builder().sharedBuffers(512).maxSessions(8).segmentBlocks(100);
    }

    private TableEngine loaded() throws IOException {
        engine(new SyncIoMethod(), small().build());
        engine.load("prefetch_test", TableShape.PREFETCH_TEST, PT_ROWS, SEED, null);
        engine.load("t", TableShape.T, T_ROWS, SEED, null);
        engine.createIndex("prefetch_test", "val");
        engine.createIndex("t", "id");
        return engine;
    }

    // ------------------------------------------------------------------ independent answers

    static long countVal(long lo, long hi) {
        TableShape s = TableShape.PREFETCH_TEST;
        long n = 0;
        for (long g = 1; g <= PT_ROWS; g++) {
            long v = s.value(2, g, SEED);
            if (v >= lo && v <= hi) {
                n++;
            }
        }
        return n;
    }

    static long countText(String sub) {
        byte[] p = sub.getBytes(StandardCharsets.US_ASCII);
        long n = 0;
        for (long g = 1; g <= PT_ROWS; g++) {
            if (TableShape.PREFETCH_TEST.textContains(g, SEED, p)) {
                n++;
            }
        }
        return n;
    }

    // ------------------------------------------------------------------ tests

    @Test
    void shapesMatchTheArticles() {
        assertEquals(33, TableShape.T.rowsPerPage());
        assertEquals(242_425, TableShape.T.blocksFor(8_000_000));
        assertEquals(47, TableShape.PREFETCH_TEST.rowsPerPage());
        assertEquals(236, TableShape.T.tupleLength());
    }

    @Test
    void loadedPagesPassTheBufferManagersVerificationAndHoldTheGeneratorsRows() throws Exception {
        engine(new SyncIoMethod(), small().build());
        LoadResult r = engine.load("prefetch_test", TableShape.PREFETCH_TEST, PT_ROWS, SEED, null);
        assertEquals(TableShape.PREFETCH_TEST.blocksFor(PT_ROWS), r.table().blocks());
        // the result says how the table was written: the default (bulk) sink through this pool's method
        assertEquals("bulk", r.sink());
        assertEquals("sync", r.ioMethod());
        assertEquals(org.pageio.table.load.Loader.defaultBuilders(), r.builders());
        assertTrue(r.toString().contains(", written through io_method=sync, " + r.builders() + " builder threads"), r.toString());
        SmgrRelation rel = engine.heap(r.table());
        assertEquals(r.table().blocks(), rel.nblocks());
        try (Arena a = Arena.ofConfined(); RandomAccessFile f = new RandomAccessFile(rel.segmentPath(0).toFile(), "r")) {
            byte[] bytes = new byte[8192];
            f.seek(3L * 8192);
            f.readFully(bytes);
            MemorySegment page = a.allocate(8192);
            MemorySegment.copy(MemorySegment.ofArray(bytes), 0, page, 0, 8192);
            assertEquals(PageVerifier.VALID, PageVerifier.verify(page, 3, true));
            assertEquals(47, HeapPage.lineCount(page));
            int off = HeapPage.tupleOffset(page, 5);
            long g = 3 * 47 + 5;
            assertEquals(g, HeapPage.getInt(page, off + 24));
            assertEquals(TableShape.PREFETCH_TEST.value(2, g, SEED), HeapPage.getInt(page, off + 32));
            assertEquals(128, HeapPage.textLength(page, off + 36));
            assertEquals(TableShape.PREFETCH_TEST.textByte(g, SEED, 77), page.get(java.lang.foreign.ValueLayout.JAVA_BYTE, off + 40 + 77));
            assertEquals(3, HeapPage.ctidBlock(page, off));
            assertEquals(5, HeapPage.ctidLine(page, off));
        }
    }

    @Test
    void everyScanReturnsTheGeneratorsAnswer() throws Exception {
        loaded();
        assertEquals(PT_ROWS, engine.scan(ScanRequest.count("prefetch_test")).count());
        assertEquals(T_ROWS, engine.scan(ScanRequest.count("t")).count());
        assertEquals(0, engine.scan(ScanRequest.filter("prefetch_test", "payload", "%zzz%")).count());
        long abc = countText("ab1");
        assertTrue(abc > 0 && abc < PT_ROWS, "a selective pattern: " + abc);
        assertEquals(abc, engine.scan(ScanRequest.filter("prefetch_test", "payload", "%ab1%")).count());
        assertEquals(T_ROWS, engine.scan(ScanRequest.filter("t", "pad", "%xxx%")).count());

        long expected = countVal(2000, 2150);
        assertTrue(expected > 20, "enough rows: " + expected);
        ScanReport bitmap = engine.scan(ScanRequest.bitmap("prefetch_test", "val", 2000, 2150));
        assertEquals(expected, bitmap.count());
        ScanReport index = engine.scan(ScanRequest.index("prefetch_test", "val", 2000, 2150));
        assertEquals(expected, index.count());
        assertEquals(expected * 128, index.sumLength());
        assertEquals(countVal(0, 50_000), engine.scan(ScanRequest.bitmap("prefetch_test", "val", -5, 60_000)).count());
        assertEquals(0, engine.scan(ScanRequest.index("prefetch_test", "val", 50_001, 90_000)).count());
        assertEquals(4901, engine.scan(ScanRequest.bitmap("t", "id", 100, 5000)).count());
        assertEquals(T_ROWS, engine.scan(ScanRequest.index("t", "id", 1, T_ROWS)).count());

        ScanReport lim = engine.scan(ScanRequest.limit("prefetch_test", "val", 1000, 10));
        assertEquals(10, lim.rows());
        assertTrue(lim.sharedHit() + lim.sharedRead() < 64, "LIMIT 10 touched " + (lim.sharedHit() + lim.sharedRead()));
        assertEquals(0, pool.pinnedBuffers(), "no pin left behind");
    }

    @Test
    void bitmapScanStreamsSortedBlocksAndIndexScanRepeatsThem() throws Exception {
        loaded();
        ScanReport bitmap = engine.scan(ScanRequest.bitmap("prefetch_test", "val", 0, 5000));
        ScanReport index = engine.scan(ScanRequest.index("prefetch_test", "val", 0, 5000));
        assertEquals(bitmap.count(), index.count());
        StreamFigures b = bitmap.stream();
        StreamFigures i = index.stream();
        // the index scan asks for a heap block once per row; the bitmap scan once per block
        assertEquals(index.count(), i.hits() + i.readBlocks());
        assertTrue(b.hits() + b.readBlocks() < index.count(), "bitmap " + b + " vs rows " + index.count());
    }

    @Test
    void sequentialScanCombinesReadsAndExplainShowsThePg19Fields() throws Exception {
        loaded();
        // a fresh pool: the table is cold in shared buffers
        closePool();
        engine(new SyncIoMethod(), small().build());
        ScanReport r = engine.scan(ScanRequest.filter("prefetch_test", "payload", "%zzz%")
                .with(ScanSettings.parse("effective_io_concurrency=1,io_combine_limit=16,track_io_timing=on")));
        assertTrue(r.stream().avgIoSize() > 8, "reads combine at effective_io_concurrency=1: " + r.stream());
        String text = r.explain(true, true, true, "text");
        assertTrue(text.startsWith("Aggregate (actual time="), text);
        assertTrue(text.contains("\n  ->  Seq Scan on prefetch_test (actual time="), text);
        assertTrue(text.contains("        Filter: (payload ~~ '%zzz%'::text)\n        Rows Removed by Filter: 20000\n"), text);
        assertTrue(text.contains("        Buffers: shared read=426"), text);
        assertTrue(text.contains("        I/O Timings: shared read="), text);
        assertTrue(text.contains("        Prefetch: avg="), text);
        assertTrue(text.contains("        I/O: count="), text);
        assertTrue(text.contains("Execution Time: "), text);
        String json = r.explain(true, true, true, "json");
        assertTrue(json.contains("\"Node Type\": \"Seq Scan\"") && json.contains("\"Average I/O Size\": ")
                && json.contains("\"Shared Read Blocks\": 426"), json);
        String plain = r.explain(false, false, false, "text");
        assertEquals("Aggregate\n  ->  Seq Scan on prefetch_test\n        Filter: (payload ~~ '%zzz%'::text)", plain);
    }

    @Test
    void explainWithoutAnalyzeShowsThePlanAndReadsNothing() throws Exception {
        loaded();
        closePool();
        engine(new SyncIoMethod(), small().build());
        assertEquals("Aggregate\n  ->  Index Scan using prefetch_test_val_idx on prefetch_test\n"
                + "        Index Cond: ((val >= 10) AND (val <= 20))",
                engine.plan(ScanRequest.index("prefetch_test", "val", 10, 20)).explain(false, false, false, "text"));
        assertEquals("Limit\n  ->  Index Scan using t_id_idx on t\n        Index Cond: (id >= 5)",
                engine.plan(ScanRequest.limit("t", "id", 5, 10)).explain(false, false, false, "text"));
        assertEquals("Aggregate\n  ->  Seq Scan on prefetch_test\n        Filter: (payload ~~ '%zzz%'::text)",
                engine.plan(ScanRequest.filter("prefetch_test", "payload", "%zzz%")).explain(false, true, false, "text"));
        assertTrue(engine.plan(ScanRequest.bitmap("prefetch_test", "val", 1, 2)).explain(false, false, false, "json")
                .contains("\"Node Type\": \"Bitmap Index Scan\""));
        assertEquals("Checksum Scan on prefetch_test\n  Relations: 2",
                engine.plan(ScanRequest.checksums("prefetch_test")).explain(false, false, false, "text"));
        for (StatIo.Row row : pool.stats().rows()) {
            assertEquals(0, row.value(StatIo.Column.READS) + row.value(StatIo.Column.HITS), "nothing read: " + row.kind());
        }
        TableException e = assertThrows(TableException.class, () -> engine.plan(ScanRequest.index("prefetch_test", "cat", 1, 2)));
        assertTrue(e.getMessage().contains("has no index on cat"), e.getMessage());
        // a column that does not exist is named as such, with the table's columns, not as a missing index
        for (ScanRequest r : List.of(ScanRequest.index("t", "nosuchcol", 1, 2), ScanRequest.bitmap("t", "nosuchcol", 1, 2),
                ScanRequest.limit("t", "nosuchcol", 1, 2))) {
            TableException no = assertThrows(TableException.class, () -> engine.scan(r));
            assertEquals("table t has no column \"nosuchcol\"; its columns are id, pad", no.getMessage());
        }
        assertThrows(IllegalArgumentException.class, () -> engine.plan(ScanRequest.filter("prefetch_test", "val", "%1%")));
        assertThrows(TableException.class, () -> engine.plan(ScanRequest.count("nope")));
    }

    @Test
    void checksumScanNamesEveryFlippedByteBlockWithoutStoppingAtTheFirst() throws Exception {
        loaded();
        TableInfo t = engine.table("prefetch_test");
        assertEquals(List.of(), engine.scan(ScanRequest.checksums("prefetch_test")).badBlocks());
        closePool();
        SmgrRelation heapRel;
        engine(new SyncIoMethod(), small().build());
        heapRel = engine.heap(t);
        Random rnd = new Random(7);
        Set<Long> flipped = new TreeSet<>();
        while (flipped.size() < 4) {
            long byteAt = (long) (rnd.nextDouble() * t.blocks() * 8192);
            long block = byteAt / 8192;
            if (flipped.add(block)) {
                flip(heapRel, block, (int) (byteAt % 8192));
            }
        }
        flipped.add(t.blocks() - 1);
        flip(heapRel, t.blocks() - 1, 8); // the checksum field of the last block
        SmgrRelation idxRel = engine.indexRelation(t.index("val"));
        flip(idxRel, 2, 100);
        ScanReport r = engine.scan(ScanRequest.checksums("prefetch_test"));
        Set<Long> heapBad = new TreeSet<>();
        boolean indexBad = false;
        for (BadBlock b : r.badBlocks()) {
            assertTrue(b.message().contains("block " + b.block()), b.message());
            if (b.relation().equals(heapRel.toString())) {
                heapBad.add(b.block());
            } else {
                assertEquals(idxRel.toString(), b.relation());
                assertEquals(2, b.block());
                assertTrue(b.message().startsWith("index prefetch_test_val_idx"), b.message());
                indexBad = true;
            }
        }
        assertEquals(flipped, heapBad);
        assertTrue(indexBad, "the index block was found: " + r.badBlocks());
        assertEquals(t.blocks() + t.index("val").blocks(), r.count(), "every block checked");
        assertTrue(r.explain(true, true, false, "text").contains("Bad Blocks: 6 ("), r.explain(true, true, false, "text"));
        assertEquals(0, pool.pinnedBuffers());
        // a normal scan fails on the first bad block, one line naming table, relation and block
        TableException e = assertThrows(TableException.class, () -> engine.scan(ScanRequest.count("prefetch_test")));
        long firstBad = flipped.iterator().next();
        assertTrue(e.getMessage().startsWith("table prefetch_test (relation " + heapRel + "): ")
                && e.getMessage().contains("block " + firstBad) && !e.getMessage().contains("\n"), e.getMessage());
    }

    /**
     * A verification reads the pages as they are on disk: with {@code zero_damaged_pages} or
     * {@code ignore_checksum_failure} on, the damaged blocks are still reported (a read that zeroed
     * or accepted them would report none), in a fresh pool and after an ordinary scan read on past them.
     */
    @Test
    void checksumScanReportsDamageWhateverTheReadSettings() throws Exception {
        loaded();
        closePool();
        engine(new SyncIoMethod(), small().build());
        SmgrRelation heapRel = engine.heap(engine.table("prefetch_test"));
        flip(heapRel, 3, 5000);
        flip(heapRel, 150, 6000); // past the first segment
        closePool();
        for (BufMgrSettings s : List.of(small().zeroDamagedPages(true).build(), small().ignoreChecksumFailure(true).build())) {
            engine(new SyncIoMethod(), s);
            String which = s.zeroDamagedPages() ? "zero_damaged_pages" : "ignore_checksum_failure";
            ScanReport r = engine.scan(ScanRequest.checksums("prefetch_test"));
            assertEquals(List.of(3L, 150L), r.badBlocks().stream().map(BadBlock::block).toList(), which + ": " + r.badBlocks());
            assertTrue(r.badBlocks().get(0).message().contains("invalid page in block 3 of relation " + heapRel)
                    && r.badBlocks().get(0).message().contains("page checksum mismatch"), r.badBlocks().get(0).message());
            assertEquals(0, pool.pinnedBuffers());
            closePool();
        }
    }

    private static void flip(SmgrRelation rel, long block, int offset) throws IOException {
        try (RandomAccessFile f = new RandomAccessFile(rel.segmentPath(block).toFile(), "rw")) {
            long pos = rel.segmentOffset(block) + offset;
            f.seek(pos);
            int b = f.read();
            f.seek(pos);
            f.write(b ^ 0x01);
        }
    }

    @Test
    void limitEndsItsStreamWithoutWaitingForReadsInFlight() throws Exception {
        engine(new SyncIoMethod(), small().build());
        engine.load("prefetch_test", TableShape.PREFETCH_TEST, PT_ROWS, SEED, null);
        engine.createIndex("prefetch_test", "val");
        closePool();
        SlowMethod slow = new SlowMethod(16, 30);
        engine(slow, small().effectiveIoConcurrency(16).build());
        open.add(0, slow);
        ScanReport r = engine.scan(ScanRequest.limit("prefetch_test", "val", 1000, 10));
        assertEquals(10, r.rows());
        assertTrue(r.sharedHit() + r.sharedRead() < 64, "touched " + (r.sharedHit() + r.sharedRead()));
        String text = r.explain(true, true, true, "text");
        String closed = text.substring(text.indexOf("Stream Closed Early: ") + 21);
        double ms = Double.parseDouble(closed.substring(0, closed.indexOf(" ms")));
        assertTrue(ms < 10, "close() returned at once although reads take 30 ms: " + text);
        assertTrue(r.stream().ioCount() > 10, "reads were in flight past the 10th row: " + r.stream());
        // reads still in flight hold only their own pin, dropped when they complete
        for (int i = 0; i < 400 && pool.pinnedBuffers() > 0; i++) {
            Thread.sleep(5);
        }
        assertEquals(0, pool.pinnedBuffers(), "nothing leaked once the background reads completed");
    }

    @Test
    void catalogNamesAreCheckedAndSurviveARestart() throws Exception {
        engine(new SyncIoMethod(), small().build());
        assertThrows(IllegalArgumentException.class, () -> engine.load("../etc", TableShape.T, 10, 1, null));
        assertThrows(IllegalArgumentException.class, () -> engine.load("T1", TableShape.T, 10, 1, null));
        engine.load("t1", TableShape.T, 100, 1, null);
        TableException dup = assertThrows(TableException.class, () -> engine.load("t1", TableShape.T, 10, 1, null));
        assertTrue(dup.getMessage().contains("\"t1\" already exists"), dup.getMessage());
        TableException missing = assertThrows(TableException.class, () -> engine.scan(ScanRequest.count("nope")));
        assertTrue(missing.getMessage().contains("\"nope\" does not exist; tables: t1"), missing.getMessage());
        engine.load("t2", TableShape.T, 10, 1, null);
        missing = assertThrows(TableException.class, () -> engine.scan(ScanRequest.count("nope")));
        assertTrue(missing.getMessage().endsWith("\"nope\" does not exist; tables: t1, t2"), missing.getMessage());
        engine.drop("t2");
        assertTrue(Files.exists(dir.resolve("catalog.properties")));
        TableEngine again = new TableEngine(pool);
        assertEquals(100, again.table("t1").rows());
        again.drop("t1");
        assertEquals(List.of(), new TableEngine(pool).tables());
    }

    /**
     * A drop while another session still pins a page of the table is refused after the wait,
     * naming the table and the pinned block, and loses nothing: the table stays in the catalog with
     * its files and still scans; once the pin is gone the drop goes through and the files are gone.
     */
    @Test
    void aDropRefusedBecauseAScanPinsThePageKeepsTheTableWhole() throws Exception {
        engine(new SyncIoMethod(), small().build());
        engine.load("t1", TableShape.T, 2_000, 1, null);
        long rows = engine.scan(ScanRequest.count("t1")).count();
        assertEquals(2_000, rows);
        SmgrRelation heap = engine.heap(engine.table("t1"));
        List<Path> files = heap.segmentPaths(heap.nblocks());
        CountDownLatch pinned = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        Thread scan = new Thread(() -> {
            try (BufferSession s = pool.openSession("scan")) {
                int buf = s.readBuffer(heap, 3, null);
                pinned.countDown();
                release.await();
                s.releaseBuffer(buf);
            } catch (Exception e) {
                throw new AssertionError(e);
            }
        }, "pinning scan");
        scan.start();
        try {
            assertTrue(pinned.await(10, TimeUnit.SECONDS));
            engine.setDropWait(Duration.ofMillis(200));
            TableException refused = assertThrows(TableException.class, () -> engine.drop("t1"));
            assertTrue(refused.getMessage().startsWith("could not drop table t1: cannot drop the buffers of relation "),
                    refused.getMessage());
            assertTrue(refused.getMessage().contains("block 3 ") && refused.getMessage().contains("still pinned by another session after 200 ms")
                    && refused.getMessage().endsWith("the table and its files stay: drop it again when the scan using it has ended"),
                    refused.getMessage());
            assertEquals(rows, engine.table("t1").rows(), "still in the catalog");
            assertEquals(rows, new TableEngine(pool).table("t1").rows(), "still in the saved catalog");
            for (Path f : files) {
                assertTrue(Files.exists(f), f + " is still there");
            }
        } finally {
            release.countDown();
            scan.join(10_000);
        }
        assertEquals(rows, engine.scan(ScanRequest.count("t1")).count(), "the table still scans, every row");
        engine.drop("t1");
        assertEquals(List.of(), engine.tables());
        for (Path f : files) {
            assertTrue(!Files.exists(f), f + " is removed");
        }
    }

    @Test
    void settingsParseWithPostgresNames() {
        ScanSettings s = ScanSettings.parse("effective_io_concurrency=1, io_combine_limit=128kB, read_stream_lookahead=pg18");
        assertEquals(1, s.effectiveIoConcurrency());
        assertEquals(16, s.ioCombineLimit());
        assertEquals(BufMgrSettings.Lookahead.PG18, s.readStreamLookahead());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> ScanSettings.parse("work_mem=4MB"));
        assertTrue(e.getMessage().contains("unknown setting \"work_mem\""), e.getMessage());
    }
}
