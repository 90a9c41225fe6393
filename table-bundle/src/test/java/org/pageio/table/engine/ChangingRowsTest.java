package org.pageio.table.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
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
import org.pageio.method.sync.SyncIoMethod;
import org.pageio.heap.HeapPage;
import org.pageio.table.RowFilter;
import org.pageio.table.ScanRequest;
import org.pageio.table.TableException;
import org.pageio.table.TableInfo;
import org.pageio.table.TableShape;
import org.pageio.table.VisibilityMapSummary;
import org.pageio.heap.vm.VisibilityMap;
import org.pageio.heap.xact.Snapshot;
import org.pageio.heap.xact.Transactions;

/**
 * Rows that change: the scans' visibility rule on pages without {@code PD_ALL_VISIBLE} (the
 * all-visible fast path on the others) and {@code DELETE}, on real files, every count checked
 * against the generator in all three scan kinds.
 */
class ChangingRowsTest {

    static final long SEED = 7;
    static final int ROWS = 2_000; // 43 blocks of 47 rows
    static final TableShape P = TableShape.PREFETCH_TEST;

    @TempDir
    Path dir;

    private BufferManagerCore bufmgr;
    private TableEngine engine;

    @BeforeEach
    void load() throws Exception {
        open();
        engine.load("p", P, ROWS, SEED, null);
        engine.createIndex("p", "val");
    }

    private void open() throws Exception {
        bufmgr = BufferManagerCore.open(dir, new BufMgrSettings.Builder().sharedBuffers(64).maxSessions(4).segmentBlocks(10).build(),
                new SyncIoMethod());
        engine = new TableEngine(bufmgr.pool());
        // these tests check what a change leaves on the pages and in the map: scans that prune and
        // mark pages would change both (ScanSetsVisibilityMapTest covers them)
        engine.setScanSetsVisibilityMap(false);
    }

    /** A restart: the pool goes away (what a checkpoint did not write is lost) and everything is opened again. */
    private void restart() throws Exception {
        bufmgr.close();
        open();
    }

    @AfterEach
    void close() {
        bufmgr.close();
    }

    /** count(*) by a sequential scan, a bitmap heap scan, an index scan and an index-only scan over the whole val range. */
    private long[] counts() throws Exception {
        return new long[] {engine.scan(ScanRequest.count("p")).count(), engine.scan(ScanRequest.bitmap("p", "val", 0, 50_000)).count(),
                engine.scan(ScanRequest.index("p", "val", 0, 50_000)).count(),
                engine.scan(ScanRequest.indexOnly("p", "val", 0, 50_000)).count()};
    }

    private void assertCounts(long expect) throws Exception {
        long[] c = counts();
        assertEquals(expect, c[0], "seq scan");
        assertEquals(expect, c[1], "bitmap heap scan");
        assertEquals(expect, c[2], "index scan");
        assertEquals(expect, c[3], "index-only scan");
    }

    private static long val(long g) {
        return P.value(2, g, SEED);
    }

    /** Rows among 1..ROWS with val = v, except those in {@code gone}. */
    private static long rowsWithVal(long v, long... gone) {
        long n = 0;
        outer:
        for (long g = 1; g <= ROWS; g++) {
            if (val(g) == v) {
                for (long x : gone) {
                    if (x == g) {
                        continue outer;
                    }
                }
                n++;
            }
        }
        return n;
    }

    /** Rewrites tuple headers of heap block {@code block} under the content lock. */
    private void rewrite(long block, boolean allVisible, java.util.function.Consumer<MemorySegment> change) throws Exception {
        TableInfo t = engine.table("p");
        try (BufferSession s = bufmgr.pool().openSession("client")) {
            int buf = s.readBuffer(engine.heap(t), block, null);
            try {
                s.beginModify(buf);
                MemorySegment page = s.page(buf);
                change.accept(page);
                int flags = Page.flags(page) & ~Page.PD_ALL_VISIBLE;
                Page.setFlags(page, allVisible ? flags | Page.PD_ALL_VISIBLE : flags);
                if (!allVisible) { // the map with the flag, as a change clears them
                    new VisibilityMap(s, engine.heap(t), null).clear(block, VisibilityMap.VISIBILITYMAP_VALID_BITS);
                }
                s.endModify(buf, true);
            } finally {
                s.releaseBuffer(buf);
            }
        }
    }

    private static void header(MemorySegment page, int line, int xmin, int xmax, int infomask) {
        int off = HeapPage.tupleOffset(page, line);
        HeapPage.setXmin(page, off, xmin);
        HeapPage.setXmax(page, off, xmax);
        HeapPage.setInfomask(page, off, infomask);
    }

    @Test
    void aPageWithoutAllVisibleCountsExactlyTheTuplesTheSnapshotSees() throws Exception {
        Transactions x = engine.transactions();
        int committed = x.assign();
        x.commit(committed);
        int aborted = x.assign();
        x.abort(aborted);
        int running = x.assign();
        int crashed = new Transactions(dir).assign(); // handed out by an instance that then stopped: aborted
        final int frozen = Snapshot.HEAP_XMIN_FROZEN;
        final int noXmax = Snapshot.HEAP_XMAX_INVALID;
        rewrite(0, false, page -> {
            header(page, 1, committed, 0, noXmax);                                      // visible
            header(page, 2, aborted, 0, noXmax);                                        // inserter aborted
            header(page, 3, running, 0, noXmax);                                        // inserter still running
            header(page, 4, crashed, 0, noXmax);                                        // inserter stopped by a crash
            header(page, 5, Transactions.FROZEN_XID, committed, frozen);                // deleted, committed
            header(page, 6, Transactions.FROZEN_XID, aborted, frozen);                  // deleter aborted: visible
            header(page, 7, Transactions.FROZEN_XID, running, frozen);                  // deleter running: visible
            header(page, 8, Transactions.FROZEN_XID, crashed, frozen);                  // deleter crashed: visible
            header(page, 9, Transactions.FROZEN_XID, committed, frozen | Snapshot.HEAP_XMAX_COMMITTED); // hinted deleted
            header(page, 10, committed, 0, Snapshot.HEAP_XMIN_INVALID | noXmax);        // hinted aborted inserter
            header(page, 11, committed, aborted, Snapshot.HEAP_XMIN_COMMITTED);         // hinted inserter, deleter aborted: visible
        });
        long[] invisible = {2, 3, 4, 5, 9, 10};
        assertCounts(ROWS - invisible.length);
        for (long g : new long[] {1, 2, 5, 6, 7, 11}) {
            long v = val(g);
            long expect = rowsWithVal(v, invisible);
            assertEquals(expect, engine.scan(ScanRequest.index("p", "val", v, v)).count(), "index scan val = " + v + " (row " + g + ")");
            assertEquals(expect, engine.scan(ScanRequest.bitmap("p", "val", v, v)).count(), "bitmap scan val = " + v);
        }
        // the running deleter commits: its row goes for a scan that starts after
        x.commit(running);
        assertCounts(ROWS - invisible.length - 1 + 1); // row 3 (inserted by it) appears, row 7 (deleted by it) goes

        // PD_ALL_VISIBLE skips the check (heapgetpage's all_visible): the page is taken at its word
        rewrite(1, true, page -> header(page, 1, aborted, 0, noXmax));
        assertCounts(ROWS - invisible.length);
    }

    @Test
    void deleteMarksTheRowsClearsTheMapBitsOfChangedPagesAndEveryScanAgrees() throws Exception {
        TableInfo t = engine.table("p");
        assertEquals(47, engine.delete("p", RowFilter.parse("WHERE", "id", "1", "47"))); // block 0 only
        assertCounts(ROWS - 47);
        try (BufferSession s = bufmgr.pool().openSession("client")) {
            VisibilityMap vm = new VisibilityMap(s, engine.heap(t), null);
            assertEquals(0, vm.getStatus(0), "the changed page's bits are clear");
            for (long b = 1; b < t.blocks(); b++) {
                assertEquals(VisibilityMap.VISIBILITYMAP_VALID_BITS, vm.getStatus(b), "block " + b + " untouched");
            }
            int buf = s.readBuffer(engine.heap(t), 0, null);
            MemorySegment page = s.page(buf);
            assertEquals(0, Page.flags(page) & Page.PD_ALL_VISIBLE);
            int off = HeapPage.tupleOffset(page, 5);
            assertEquals(0, HeapPage.infomask(page, off) & Snapshot.HEAP_XMAX_BITS, "HEAP_XMAX_INVALID cleared");
            assertEquals(Snapshot.HEAP_KEYS_UPDATED, HeapPage.infomask2(page, off) & Snapshot.HEAP_KEYS_UPDATED);
            assertEquals(Transactions.COMMITTED, engine.transactions().status(HeapPage.xmax(page, off)));
            assertEquals(5, HeapPage.ctidLine(page, off));
            s.releaseBuffer(buf);
        }
        assertEquals(new VisibilityMapSummary(t.blocks() - 1, t.blocks() - 1), engine.visibilityMapSummary("p"));

        long mod5 = ROWS / 5 - 47 / 5;
        assertEquals(mod5, engine.delete("p", RowFilter.parse("WHERE", "id", "%", "5", "=", "0")));
        assertEquals(0, engine.delete("p", RowFilter.parse("where", "id", "%", "5", "=", "0")), "deleted rows are not seen again");
        assertEquals(0, engine.delete("p", RowFilter.parse("WHERE", "payload", "LIKE", "%zzz%")));
        long left = ROWS - 47 - mod5;
        assertCounts(left);
        assertEquals(new VisibilityMapSummary(0, 0), engine.visibilityMapSummary("p"), "every page had a row with id % 5 = 0");
        long v = val(100); // row 100 is gone (100 % 5 = 0)
        java.util.List<Long> gone = new java.util.ArrayList<>();
        for (long g = 1; g <= ROWS; g++) {
            if (g <= 47 || g % 5 == 0) {
                gone.add(g);
            }
        }
        long[] goneArr = gone.stream().mapToLong(Long::longValue).toArray();
        assertEquals(rowsWithVal(v, goneArr), engine.scan(ScanRequest.index("p", "val", v, v)).count());

        assertEquals(new org.pageio.table.TupleStats(left, ROWS - left), engine.tupleStats("p"), "n_live_tup, n_dead_tup");
        restart(); // the commit was durable, and the pages with it
        assertCounts(left);
        assertEquals(new org.pageio.table.TupleStats(left, ROWS - left), engine.tupleStats("p"), "kept in the catalog");
        assertEquals(new VisibilityMapSummary(0, 0), engine.visibilityMapSummary("p"));
    }

    @Test
    void aCrashBeforeTheCommitLeavesTheRowsThere() throws Exception {
        TableInfo t = engine.table("p");
        assertEquals(ROWS / 5, engine.delete("p", RowFilter.parse("WHERE", "id", "%", "5", "=", "0"), false));
        assertCounts(ROWS); // not committed: still there
        assertEquals(new org.pageio.table.TupleStats(ROWS, 0), engine.tupleStats("p"), "nothing committed, nothing counted");
        bufmgr.pool().checkpoint(); // the worst case: the changed pages reached the disk, the commit never did
        restart();
        assertCounts(ROWS);
        assertEquals(new VisibilityMapSummary(0, 0), engine.visibilityMapSummary("p"), "cleared bits stay cleared: conservative");
        // the rows can be deleted again; the crashed transaction's t_xmax is overwritten
        assertEquals(ROWS / 5, engine.delete("p", RowFilter.parse("WHERE", "id", "%", "5", "=", "0")));
        assertCounts(ROWS - ROWS / 5);
        assertEquals(t.blocks(), engine.table("p").blocks());
    }

    @Test
    void refusalsNameWhatIsWrong() throws Exception {
        TableException noTable = assertThrows(TableException.class, () -> engine.delete("q", RowFilter.range("id", 1, 2)));
        assertTrue(noTable.getMessage().startsWith("table \"q\" does not exist"), noTable.getMessage());
        TableException noColumn = assertThrows(TableException.class, () -> engine.delete("p", RowFilter.range("nope", 1, 2)));
        assertEquals("table p has no column \"nope\"; its columns are id, cat, val, payload", noColumn.getMessage());
        IllegalArgumentException like = assertThrows(IllegalArgumentException.class,
                () -> engine.delete("p", RowFilter.like("id", "%1%")));
        assertEquals("column id of p is int, not text: LIKE needs text", like.getMessage());
        IllegalArgumentException mod = assertThrows(IllegalArgumentException.class,
                () -> engine.delete("p", RowFilter.modulo("payload", 2, 0)));
        assertEquals("column payload of p is text: WHERE (payload % 2) = 0 needs an integer column", mod.getMessage());
        assertEquals("bad WHERE \"WHERE id > 3\"; the forms: " + RowFilter.USAGE,
                assertThrows(IllegalArgumentException.class, () -> RowFilter.parse("WHERE", "id", ">", "3")).getMessage());
        assertEquals(RowFilter.range("id", 1, 9), RowFilter.parse("WHERE", "id", "between", "1", "and", "9"));
        assertEquals(RowFilter.modulo("id", 5, 0), RowFilter.parse("WHERE", "id % 5 = 0"), "a condition quoted whole");
        assertEquals(RowFilter.modulo("id", 5, 0), RowFilter.parse("WHERE", "id", "mod", "5", "=", "0"));
        assertEquals("expected WHERE and a condition; the forms: " + RowFilter.USAGE,
                assertThrows(IllegalArgumentException.class, () -> RowFilter.parse("id", "1", "2")).getMessage());
        assertEquals("WHERE: HI takes a whole number (got \"x\"); the forms: " + RowFilter.USAGE,
                assertThrows(IllegalArgumentException.class, () -> RowFilter.parse("WHERE", "id", "1", "x")).getMessage());
        assertEquals("WHERE id % 0 = 0: N takes a whole number, 1 or more",
                assertThrows(IllegalArgumentException.class, () -> RowFilter.parse("WHERE", "id", "%", "0", "=", "0")).getMessage());
        assertCounts(ROWS);
        assertEquals(Transactions.FIRST_NORMAL_XID, engine.transactions().nextXid(), "no transaction id used by a refusal");
    }

    /** Rows with cat in [lo, hi] by a sequential filter: an uncommitted DELETE's count, rolled back. */
    private long rowsWithCat(long lo, long hi) throws Exception {
        return engine.delete("p", RowFilter.range("cat", lo, hi), false);
    }

    @Test
    void aHotUpdateWritesANewVersionOnItsPageAddsNoIndexEntryAndEveryPlanAgrees() throws Exception {
        TableInfo t = engine.table("p");
        long lastBlock = t.blocks() - 1; // rows 1975..2000, half empty
        long entries = t.index("val").entries();
        long catBefore = rowsWithCat(1000, 1_000_000);
        assertEquals(0, catBefore);
        assertEquals(11, engine.update("p", org.pageio.table.SetClause.parse("SET", "cat", "=", "cat", "+", "1000"),
                RowFilter.parse("WHERE", "id", "BETWEEN", "1990", "AND", "2000")));
        assertCounts(ROWS);
        assertEquals(entries, engine.table("p").index("val").entries(), "no index entry added");
        for (long g = 1990; g <= 2000; g++) {
            long v = val(g);
            assertEquals(rowsWithVal(v), engine.scan(ScanRequest.index("p", "val", v, v)).count(), "index scan, row " + g);
            assertEquals(rowsWithVal(v), engine.scan(ScanRequest.bitmap("p", "val", v, v)).count(), "bitmap scan, row " + g);
        }
        try (BufferSession s = bufmgr.pool().openSession("client")) {
            int buf = s.readBuffer(engine.heap(t), lastBlock, null);
            MemorySegment page = s.page(buf);
            int root = (int) (1990 - 1 - lastBlock * P.rowsPerPage()) + 1;
            int old = HeapPage.tupleOffset(page, root);
            int next = HeapPage.ctidLine(page, old);
            assertTrue(next > ROWS - lastBlock * P.rowsPerPage(), "the new version is on the same page, past the loaded lines");
            assertEquals(Snapshot.HEAP_HOT_UPDATED, HeapPage.infomask2(page, old) & Snapshot.HEAP_HOT_UPDATED);
            int nw = HeapPage.tupleOffset(page, next);
            assertEquals(Snapshot.HEAP_ONLY_TUPLE, HeapPage.infomask2(page, nw) & Snapshot.HEAP_ONLY_TUPLE);
            assertEquals(Snapshot.HEAP_UPDATED | Snapshot.HEAP_XMAX_INVALID,
                    HeapPage.infomask(page, nw) & (Snapshot.HEAP_UPDATED | Snapshot.HEAP_XMAX_INVALID | Snapshot.HEAP_XMIN_FROZEN));
            assertEquals(P.value(1, 1990, SEED) + 1000, HeapPage.getInt(page, nw + 28));
            assertEquals(1990, HeapPage.getInt(page, nw + 24));
            s.releaseBuffer(buf);
        }
        assertEquals(11, rowsWithCat(1000, 1100), "the new values, by a sequential filter");
        // again, for six of them: chains of three versions (the page has room for six more, not eleven)
        assertEquals(6, engine.update("p", org.pageio.table.SetClause.parse("SET cat = cat + 1000"),
                RowFilter.parse("WHERE", "id", "BETWEEN", "1990", "AND", "1995")));
        assertCounts(ROWS);
        assertEquals(6, rowsWithCat(2000, 2100));
        assertEquals(5, rowsWithCat(1000, 1100));
        // an index built after the update indexes each row once, at its root, with the visible key
        engine.createIndex("p", "cat");
        assertEquals(ROWS, engine.table("p").index("cat").entries());
        assertEquals(6, engine.scan(ScanRequest.index("p", "cat", 2000, 2100)).count());
        assertEquals(6, engine.scan(ScanRequest.bitmap("p", "cat", 2000, 2100)).count());
        assertEquals(5, engine.scan(ScanRequest.index("p", "cat", 1000, 1100)).count());
        assertEquals(ROWS, engine.scan(ScanRequest.index("p", "cat", 0, 1_000_000)).count());
        restart();
        assertCounts(ROWS);
        assertEquals(6, engine.scan(ScanRequest.index("p", "cat", 2000, 2100)).count());
        assertEquals(new org.pageio.table.TupleStats(ROWS, 11 + 6), engine.tupleStats("p"), "one dead version per row updated");
    }

    @Test
    void anUpdateOutsideTheTypesRangeIsRefusedAndChangesNothing() throws Exception {
        int next = (int) engine.transactions().nextXid();
        TableException range = assertThrows(TableException.class, () -> engine.update("p",
                org.pageio.table.SetClause.parse("SET cat = id + 2147483647"), RowFilter.parse("WHERE id 1990 2000")));
        assertEquals("UPDATE of p: integer out of range for column cat (2147485637)", range.getMessage());
        assertEquals(Transactions.ABORTED, engine.transactions().status(next), "the statement's id is aborted");
        assertCounts(ROWS);
        assertEquals(0, rowsWithCat(2_000_000_000L, Integer.MAX_VALUE), "rolled back");
        assertEquals("bad SET \"SET cat cat\"; the forms: " + org.pageio.table.SetClause.USAGE,
                assertThrows(IllegalArgumentException.class, () -> org.pageio.table.SetClause.parse("SET", "cat", "cat")).getMessage());
    }
}
