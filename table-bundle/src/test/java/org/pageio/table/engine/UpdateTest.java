package org.pageio.table.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.pageio.bufmgr.BufMgrSettings;
import org.pageio.bufmgr.BufferManagerCore;
import org.pageio.bufmgr.BufferSession;
import org.pageio.bufmgr.page.Page;
import org.pageio.heap.HeapPage;
import org.pageio.heap.xact.Snapshot;
import org.pageio.method.sync.SyncIoMethod;
import org.pageio.table.IndexInfo;
import org.pageio.table.RowFilter;
import org.pageio.table.ScanRequest;
import org.pageio.table.SetClause;
import org.pageio.table.TableInfo;
import org.pageio.table.TableShape;
import org.pageio.table.TupleStats;
import org.pageio.table.VisibilityMapSummary;
import org.pageio.table.index.IndexPage;

/**
 * {@code heap_update} on real files: HOT when no indexed value changes and the page has room,
 * otherwise a new version with an entry in every index, on the same page or moved to the table's
 * last or a new page. Every answer is checked against a model of the rows (each row's cat and
 * val), in every plan, after restarts and after an update that never committed.
 */
class UpdateTest {

    static final long SEED = 11;
    static final int ROWS = 2_000; // 43 blocks of 47 rows; the last one holds 26
    static final TableShape P = TableShape.PREFETCH_TEST;

    @TempDir
    Path dir;

    private BufferManagerCore bufmgr;
    private TableEngine engine;
    /** The model: cat and val of row g (1..ROWS) as a snapshot after the last commit sees them. */
    private final long[] cat = new long[ROWS + 1];
    private final long[] val = new long[ROWS + 1];

    @BeforeEach
    void load() throws Exception {
        open();
        engine.load("p", P, ROWS, SEED, null);
        engine.createIndex("p", "val");
        engine.createIndex("p", "cat,val");
        for (int g = 1; g <= ROWS; g++) {
            cat[g] = P.value(1, g, SEED);
            val[g] = P.value(2, g, SEED);
        }
    }

    private void open() throws Exception {
        bufmgr = BufferManagerCore.open(dir, new BufMgrSettings.Builder().sharedBuffers(128).maxSessions(4).segmentBlocks(10).build(),
                new SyncIoMethod());
        engine = new TableEngine(bufmgr.pool());
    }

    private void restart() throws Exception {
        bufmgr.close();
        open();
    }

    @AfterEach
    void close() {
        bufmgr.close();
    }

    private long rows(long catLo, long catHi, long valLo, long valHi) {
        long n = 0;
        for (int g = 1; g <= ROWS; g++) {
            n += cat[g] >= catLo && cat[g] <= catHi && val[g] >= valLo && val[g] <= valHi ? 1 : 0;
        }
        return n;
    }

    /** Every plan agrees with the model: counts over everything, per val, per (cat, val range). */
    private void agree(String when, long... vals) throws Exception {
        long all = Integer.MAX_VALUE;
        assertEquals(ROWS, engine.scan(ScanRequest.count("p")).count(), when + ": seq scan");
        assertEquals(ROWS, engine.scan(ScanRequest.bitmap("p", "val", 0, all)).count(), when + ": bitmap heap scan");
        assertEquals(ROWS, engine.scan(ScanRequest.index("p", "val", 0, all)).count(), when + ": index scan");
        assertEquals(ROWS, engine.scan(ScanRequest.indexOnly("p", "val", 0, all)).count(), when + ": index-only scan");
        for (long v : vals) {
            long expect = rows(Long.MIN_VALUE, Long.MAX_VALUE, v, v);
            assertEquals(expect, engine.scan(ScanRequest.index("p", "val", v, v)).count(), when + ": index scan val = " + v);
            assertEquals(expect, engine.scan(ScanRequest.bitmap("p", "val", v, v)).count(), when + ": bitmap scan val = " + v);
            assertEquals(expect, engine.scan(ScanRequest.indexOnly("p", "val", v, v)).count(), when + ": index-only val = " + v);
        }
        for (long c : new long[] {0, 7, 50, 100, 1000, 1001}) {
            assertEquals(rows(c, c, 0, all), engine.scan(ScanRequest.indexOnly("p", "cat", c, "val", 0, all)).count(),
                    when + ": index-only (cat, val), cat = " + c);
        }
        assertEquals(rows(1000, 2000, Long.MIN_VALUE, Long.MAX_VALUE), rowsWithCat(1000, 2000), when + ": cat by a seq filter");
    }

    /** Rows with cat in [lo, hi] by a sequential filter: an uncommitted DELETE's count. */
    private long rowsWithCat(long lo, long hi) throws Exception {
        return engine.delete("p", RowFilter.range("cat", lo, hi), false);
    }

    private long metaEntries(IndexInfo i) throws Exception {
        try (BufferSession s = bufmgr.pool().openSession("client")) {
            int buf = s.readBuffer(engine.indexRelation(i), 0, null);
            long e = IndexPage.metaEntries(s.page(buf));
            s.releaseBuffer(buf);
            return e;
        }
    }

    private long[] entries() throws Exception {
        TableInfo t = engine.table("p");
        return new long[] {metaEntries(t.index("val")), metaEntries(t.index(java.util.List.of("cat", "val")))};
    }

    /** Reads the version of row g that heap block/line holds: {old infomask2, ctid block, ctid line, ...}. */
    private interface PageCheck {
        void check(MemorySegment page) throws Exception;
    }

    private void onPage(long block, PageCheck c) throws Exception {
        try (BufferSession s = bufmgr.pool().openSession("client")) {
            int buf = s.readBuffer(engine.heap(engine.table("p")), block, null);
            try {
                c.check(s.page(buf));
            } finally {
                s.releaseBuffer(buf);
            }
        }
    }

    private static long blockOf(long g) {
        return (g - 1) / P.rowsPerPage();
    }

    private static int lineOf(long g) {
        return (int) ((g - 1) % P.rowsPerPage()) + 1;
    }

    @Test
    void anUnchangedIndexedValueIsHotAndAChangedOneGetsNewEntries() throws Exception {
        long[] before = entries();
        // SET val = val + 0 on the last page (room for it): HOT, values compared, no entry
        assertEquals(11, engine.update("p", SetClause.parse("SET val = val + 0"), RowFilter.parse("WHERE id 1990 2000")));
        assertEquals(before[0], entries()[0], "HOT: no new entry in p_val_idx");
        assertEquals(before[1], entries()[1], "HOT: no new entry in p_cat_val_idx");
        onPage(blockOf(1990), page -> {
            int old = HeapPage.tupleOffset(page, lineOf(1990));
            assertEquals(Snapshot.HEAP_HOT_UPDATED, HeapPage.infomask2(page, old) & (Snapshot.HEAP_HOT_UPDATED | Snapshot.HEAP_KEYS_UPDATED));
            int nw = HeapPage.tupleOffset(page, HeapPage.ctidLine(page, old));
            assertEquals(Snapshot.HEAP_ONLY_TUPLE, HeapPage.infomask2(page, nw) & Snapshot.HEAP_ONLY_TUPLE);
            assertTrue(Page.pruneXid(page) != 0, "pd_prune_xid set");
        });
        agree("after a HOT update", val[1990], val[2000]);

        // SET val = 60000 + id on six rows of the same page: not HOT, new entries, old key gone
        long oldVal = val[1991];
        assertEquals(6, engine.update("p", SetClause.parse("SET val = id + 60000"), RowFilter.parse("WHERE id 1990 1995")));
        for (int g = 1990; g <= 1995; g++) {
            val[g] = g + 60000;
        }
        assertEquals(before[0] + 6, entries()[0], "one entry per new version in p_val_idx");
        assertEquals(before[1] + 6, entries()[1], "and in p_cat_val_idx");
        assertEquals(before[0] + 6, engine.table("p").index("val").entries(), "the catalog's entries");
        onPage(blockOf(1991), page -> {
            int first = HeapPage.tupleOffset(page, lineOf(1991));
            int hot = HeapPage.tupleOffset(page, HeapPage.ctidLine(page, first)); // the HOT version of the first update
            assertEquals(blockOf(1991), HeapPage.ctidBlock(page, hot), "the new version fits on the same page");
            assertEquals(Snapshot.HEAP_KEYS_UPDATED, HeapPage.infomask2(page, hot) & (Snapshot.HEAP_HOT_UPDATED | Snapshot.HEAP_KEYS_UPDATED),
                    "an indexed value changed: HEAP_KEYS_UPDATED, not HOT");
            int nw = HeapPage.tupleOffset(page, HeapPage.ctidLine(page, hot));
            assertEquals(0, HeapPage.infomask2(page, nw) & Snapshot.HEAP_ONLY_TUPLE, "not heap-only: it has its own entries");
            assertEquals(1991 + 60000, HeapPage.getInt(page, nw + 32));
        });
        assertEquals(rows(Long.MIN_VALUE, Long.MAX_VALUE, oldVal, oldVal), engine.scan(ScanRequest.index("p", "val", oldVal, oldVal)).count(),
                "the old key no longer finds the row");
        assertEquals(6, engine.scan(ScanRequest.index("p", "val", 61990, 61995)).count(), "the new keys do");
        assertEquals(6, engine.scan(ScanRequest.bitmap("p", "val", 61990, 61995)).count());
        agree("after a non-HOT update", oldVal, 61990, 61995, val[1996]);
        restart();
        agree("after a restart", oldVal, 61990, 61995, val[1996]);
        assertEquals(new TupleStats(ROWS, 17), engine.tupleStats("p"));
    }

    @Test
    void updatesThatDoNotFitMoveRowsToTheLastPageAndToNewPages() throws Exception {
        TableInfo t = engine.table("p");
        long blocks = t.blocks();
        long[] before = entries();
        // SET val = val + 0 WHERE id % 5 = 0: loaded pages are full, so 400 rows move (not HOT)
        assertEquals(ROWS / 5, engine.update("p", SetClause.parse("SET val = val + 0"), RowFilter.parse("WHERE id % 5 = 0")));
        TableInfo after = engine.table("p");
        assertTrue(after.blocks() > blocks + 5, "pages appended: " + blocks + " -> " + after.blocks());
        assertEquals(engine.heap(after).nblocks(), after.blocks(), "the catalog records the heap's blocks");
        assertEquals(before[0] + ROWS / 5, entries()[0], "a new entry per moved row, in every index");
        assertEquals(before[1] + ROWS / 5, entries()[1]);
        onPage(0, page -> {
            int old = HeapPage.tupleOffset(page, 5);
            assertNotEquals(0L, HeapPage.ctidBlock(page, old), "row 5 moved");
            assertEquals(0, HeapPage.infomask2(page, old) & (Snapshot.HEAP_HOT_UPDATED | Snapshot.HEAP_KEYS_UPDATED),
                    "moved, value unchanged: neither HOT nor keys updated");
            assertEquals(0, Page.flags(page) & Page.PD_ALL_VISIBLE);
            assertTrue(Page.pruneXid(page) != 0);
            long nb = HeapPage.ctidBlock(page, old);
            int nl = HeapPage.ctidLine(page, old);
            onPage(nb, np -> {
                int nw = HeapPage.tupleOffset(np, nl);
                assertEquals(5, HeapPage.getInt(np, nw + 24), "row 5's new version");
                assertEquals(nb, HeapPage.ctidBlock(np, nw));
                assertEquals(Snapshot.HEAP_UPDATED | Snapshot.HEAP_XMAX_INVALID, HeapPage.infomask(np, nw) & 0xFFF0);
                assertEquals(0, HeapPage.infomask2(np, nw) & 0xE000);
            });
        });
        onPage(blocks - 1, page -> assertTrue(HeapPage.lineCount(page) > 26, "the last loaded page took moved rows first"));
        assertEquals(new VisibilityMapSummary(0, 0), engine.visibilityMapSummary("p"), "every page lost its bits");
        agree("after moving updates", val[5], val[10], val[1995], val[1]);

        // an indexed value changed on rows that moved before: moved again, with KEYS_UPDATED
        assertEquals(40, engine.update("p", SetClause.parse("SET cat = 1000"), RowFilter.parse("WHERE id % 50 = 0")));
        for (int g = 50; g <= ROWS; g += 50) {
            cat[g] = 1000;
        }
        agree("after changing cat", val[50], val[100]);
        restart();
        agree("after a restart", val[50], val[100], val[5]);
        assertEquals(new TupleStats(ROWS, ROWS / 5 + 40), engine.tupleStats("p"));

        // an update that never commits: moved versions and entries of an aborted transaction
        long committedBlocks = engine.table("p").blocks();
        assertEquals(ROWS / 7, engine.update("p", SetClause.parse("SET cat = cat + 1"), RowFilter.parse("WHERE id % 7 = 0"), false));
        agree("during an update that has not committed", val[7], val[14]);
        assertEquals(committedBlocks, engine.table("p").blocks(), "the catalog is not changed before a commit");
        bufmgr.pool().checkpoint(); // the worst case: its pages reached the disk, its commit never did
        restart();
        agree("after a restart, the update aborted", val[7], val[14]);
        assertEquals(new TupleStats(ROWS, ROWS / 5 + 40), engine.tupleStats("p"));
        // the next update appends past the aborted transaction's pages and counts them in
        assertEquals(ROWS / 7, engine.update("p", SetClause.parse("SET cat = cat + 1"), RowFilter.parse("WHERE id % 7 = 0")));
        for (int g = 7; g <= ROWS; g += 7) {
            cat[g]++;
        }
        assertEquals(engine.heap(engine.table("p")).nblocks(), engine.table("p").blocks());
        agree("after the update again", val[7], val[14], val[50]);
        restart();
        agree("after a last restart", val[7], val[14], val[50]);
    }

    @Test
    void allZeroPagesACrashLeftInsideTheTableAreSkipped() throws Exception {
        TableInfo t = engine.table("p");
        // two pages extended and never written, as a crash after the extension leaves them
        try (BufferSession s = bufmgr.pool().openSession("client")) {
            int[] bufs = new int[2];
            s.extendBy(engine.heap(t), 2, bufs, null);
            s.releaseBuffer(bufs[0]);
            s.releaseBuffer(bufs[1]);
        }
        restart();
        // the moving update takes the last (new) page, initialises it and appends after it; the
        // other zero page is now inside the table's blocks
        assertEquals(ROWS / 5, engine.update("p", SetClause.parse("SET val = val + 0"), RowFilter.parse("WHERE id % 5 = 0")));
        TableInfo after = engine.table("p");
        onPage(t.blocks(), page -> assertTrue(Page.isNew(page), "block " + t.blocks() + " stays all zero"));
        onPage(t.blocks() + 1, page -> assertTrue(HeapPage.lineCount(page) > 0, "the last page was initialised and used"));
        assertTrue(after.blocks() > t.blocks() + 2);
        agree("with a zero page inside", val[5], val[10]);
        assertEquals(0, engine.scan(ScanRequest.checksums("p")).badBlocks().size(), "verify accepts the zero page");
        restart();
        agree("after a restart", val[5], val[10]);
    }

    @Test
    void updatingTwoHundredThousandRowsMovesAFifthOfThem() throws Exception {
        bufmgr.close();
        bufmgr = BufferManagerCore.open(dir.resolve("big"), new BufMgrSettings.Builder().sharedBuffers(8192).maxSessions(4)
                .build(), new SyncIoMethod());
        engine = new TableEngine(bufmgr.pool());
        int rows = 200_000;
        engine.load("prefetch_test", P, rows, SEED, null);
        engine.createIndex("prefetch_test", "val");
        long blocks = engine.table("prefetch_test").blocks();
        long t0 = System.nanoTime();
        long n = engine.update("prefetch_test", SetClause.parse("SET val = val + 0"), RowFilter.parse("WHERE id % 5 = 0"));
        long ms = (System.nanoTime() - t0) / 1_000_000;
        assertEquals(rows / 5, n);
        TableInfo t = engine.table("prefetch_test");
        System.out.println("UPDATE prefetch_test SET val = val + 0 WHERE id % 5 = 0: " + n + " rows of " + rows + " in " + ms
                + " ms (checkpoint included), heap " + blocks + " -> " + t.blocks() + " blocks, p_val_idx "
                + t.index("val").blocks() + " blocks");
        assertEquals(rows + rows / 5, t.index("val").entries());
        assertEquals(rows, engine.scan(ScanRequest.count("prefetch_test")).count());
        assertEquals(rows, engine.scan(ScanRequest.index("prefetch_test", "val", 0, 50_000)).count());
    }
}
