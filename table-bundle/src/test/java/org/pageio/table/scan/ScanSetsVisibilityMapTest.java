package org.pageio.table.scan;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.pageio.bufmgr.BufMgrSettings;
import org.pageio.bufmgr.BufferManagerCore;
import org.pageio.bufmgr.BufferSession;
import org.pageio.bufmgr.page.Page;
import org.pageio.heap.HeapPage;
import org.pageio.heap.prune.PruneHeap;
import org.pageio.heap.xact.Snapshot;
import org.pageio.method.sync.SyncIoMethod;
import org.pageio.table.RowFilter;
import org.pageio.table.ScanReport;
import org.pageio.table.ScanRequest;
import org.pageio.table.ScanSettings;
import org.pageio.table.SetClause;
import org.pageio.table.TableShape;
import org.pageio.table.VisibilityMapSummary;
import org.pageio.table.engine.TableEngine;

/**
 * {@code scan_sets_visibility_map}: PostgreSQL 19's on-access pruning in the sequential and bitmap
 * heap scans, which marks pages all-visible, on real files.
 *
 * <p>{@code p} holds 1,974 rows: 42 full pages of 47. Rows with {@code id % 6 = 0} are deleted and
 * VACUUMed away (pruned, their index entries removed, their lines freed, every page marked), which
 * leaves room on every page; then the rows with {@code id % 7 = 1} are HOT-updated,
 * which fills every page again to less than a tenth free, with {@code pd_prune_xid} set: every page
 * is worth pruning on access, and after pruning holds only redirects and visible tuples.
 */
class ScanSetsVisibilityMapTest {

    static final long SEED = 11;
    static final int ROWS = 42 * 47;
    static final long PAGES = 42;
    static final TableShape P = TableShape.PREFETCH_TEST;
    static final ScanSettings ON = ScanSettings.parse("scan_sets_visibility_map=on");
    static final ScanSettings OFF = ScanSettings.parse("scan_sets_visibility_map=off");

    @TempDir
    Path dir;

    private BufferManagerCore bufmgr;
    private TableEngine engine;
    /** Rows left after the delete. */
    private long live;

    @BeforeEach
    void deleteVacuumAndUpdate() throws Exception {
        bufmgr = BufferManagerCore.open(dir, new BufMgrSettings.Builder().sharedBuffers(128).maxSessions(4).segmentBlocks(10).build(),
                new SyncIoMethod());
        engine = new TableEngine(bufmgr.pool());
        engine.load("p", P, ROWS, SEED, null);
        engine.createIndex("p", "val");
        long deleted = engine.delete("p", RowFilter.parse("WHERE id % 6 = 0"));
        assertEquals(ROWS / 6, deleted);
        live = ROWS - deleted;
        engine.vacuum("p", org.pageio.table.VacuumOptions.DEFAULT); // room for the update on every page
        assertEquals(new VisibilityMapSummary(PAGES, PAGES), engine.visibilityMapSummary("p"), "VACUUM marked every page");
    }

    @AfterEach
    void close() {
        bufmgr.close();
    }

    /** The HOT update that fills the pages again; its row count. */
    private long update() throws Exception {
        long n = engine.update("p", SetClause.parse("SET cat = cat + 1000"), RowFilter.parse("WHERE id % 7 = 1"));
        long expect = 0;
        for (long g = 1; g <= ROWS; g++) {
            expect += g % 7 == 1 && g % 6 != 0 ? 1 : 0;
        }
        assertEquals(expect, n);
        for (long b = 0; b < PAGES; b++) {
            long block = b;
            withPage(b, page -> assertTrue(PruneHeap.heapFreeSpace(page) < Page.SIZE / 10, "block " + block + " nearly full"));
        }
        return n;
    }

    /** Runs {@code work} on heap block {@code block} under its cleanup lock (the page dirtied). */
    private void withPage(long block, Consumer<MemorySegment> work) throws Exception {
        try (BufferSession s = bufmgr.pool().openSession("client")) {
            int buf = s.readBuffer(engine.heap(engine.table("p")), block, null);
            try {
                assertTrue(s.conditionalLockForCleanup(buf));
                try {
                    work.accept(s.page(buf));
                } finally {
                    s.endModify(buf, true);
                }
            } finally {
                s.releaseBuffer(buf);
            }
        }
    }

    private ScanReport scan(ScanRequest req, ScanSettings set) throws Exception {
        return engine.scan(req.with(set));
    }

    /** count(*) by every plan, none of them pruning. */
    private void assertCounts(long expect) throws Exception {
        assertEquals(expect, scan(ScanRequest.count("p"), OFF).count(), "seq scan");
        assertEquals(expect, scan(ScanRequest.bitmap("p", "val", 0, 50_000), OFF).count(), "bitmap heap scan");
        assertEquals(expect, scan(ScanRequest.index("p", "val", 0, 50_000), OFF).count(), "index scan");
        assertEquals(expect, scan(ScanRequest.indexOnly("p", "val", 0, 50_000), OFF).count(), "index-only scan");
    }

    @Test
    void aSequentialScanPrunesMarksEveryPageAndTheIndexOnlyScanNeedsNoHeapFetch() throws Exception {
        update();
        assertCounts(live);
        ScanReport before = scan(ScanRequest.indexOnly("p", "val", 0, 50_000), OFF);
        assertEquals(live, before.heapFetches(), "every entry's page is unmarked");

        ScanReport off = scan(ScanRequest.count("p"), OFF);
        assertEquals(live, off.count());
        assertEquals(0, off.pagesPruned());
        assertEquals(new VisibilityMapSummary(0, 0), engine.visibilityMapSummary("p"), "off: PostgreSQL 18, only VACUUM marks pages");

        ScanReport on = scan(ScanRequest.count("p"), ON);
        assertEquals(live, on.count(), "the scan counts what its snapshot sees, pruning or not");
        assertEquals(PAGES, on.pagesPruned());
        assertEquals(PAGES, on.pagesSetAllVisible());
        assertTrue(on.explain(true, false, false, "text").contains("Pages Set All-Visible: " + PAGES), on.explain(true, false, false, "text"));
        assertEquals(new VisibilityMapSummary(PAGES, 0), engine.visibilityMapSummary("p"),
                "all-visible, not all-frozen: the new versions are not frozen");
        for (long b = 0; b < PAGES; b++) {
            withPage(b, page -> assertTrue(HeapPage.allVisible(page), "PD_ALL_VISIBLE with the map bit"));
        }

        ScanReport ios = scan(ScanRequest.indexOnly("p", "val", 0, 50_000), OFF);
        assertEquals(live, ios.count());
        assertEquals(0, ios.heapFetches(), "every page all-visible: the index answers alone");
        assertCounts(live);
        assertEquals(0, scan(ScanRequest.count("p"), ON).pagesPruned(), "an all-visible page is not looked at again");

        // the new values are what every plan sees through the redirected roots
        long v = P.value(2, 8, SEED); // row 8 was updated (8 % 7 = 1)
        long expect = 0;
        for (long g = 1; g <= ROWS; g++) {
            expect += g % 6 != 0 && P.value(2, g, SEED) == v ? 1 : 0;
        }
        assertEquals(expect, scan(ScanRequest.index("p", "val", v, v), OFF).count());
        assertEquals(expect, scan(ScanRequest.indexOnly("p", "val", v, v), OFF).count());
        assertEquals(expect, scan(ScanRequest.bitmap("p", "val", v, v), OFF).count());
    }

    @Test
    void aBitmapHeapScanMarksThePagesItReads() throws Exception {
        update();
        ScanReport on = scan(ScanRequest.bitmap("p", "val", 0, 50_000), ON);
        assertEquals(live, on.count());
        assertEquals(PAGES, on.pagesPruned());
        assertEquals(PAGES, on.pagesSetAllVisible());
        assertEquals(new VisibilityMapSummary(PAGES, 0), engine.visibilityMapSummary("p"));
        assertEquals(0, scan(ScanRequest.indexOnly("p", "val", 0, 50_000), OFF).heapFetches());
        assertCounts(live);
    }

    @Test
    void theEngineSettingAppliesToTheNextScanAndAScanOverridesIt() throws Exception {
        update();
        engine.setScanSetsVisibilityMap(false);
        assertEquals(0, engine.scan(ScanRequest.count("p")).pagesPruned(), "off for the engine");
        assertEquals(new VisibilityMapSummary(0, 0), engine.visibilityMapSummary("p"));
        assertEquals(PAGES, scan(ScanRequest.count("p"), ON).pagesSetAllVisible(), "on for this scan");
        assertEquals(new VisibilityMapSummary(PAGES, 0), engine.visibilityMapSummary("p"));
    }

    @Test
    void aScanWhileAnOlderSnapshotIsOpenPrunesNothingItMaySeeAndMarksNothing() throws Exception {
        Snapshot old = engine.transactions().snapshot();
        try (old) {
            update();
            ScanReport on = scan(ScanRequest.count("p"), ON);
            assertEquals(live, on.count());
            assertEquals(0, on.pagesPruned(), "the updater is not below the horizon the old snapshot holds");
            assertEquals(new VisibilityMapSummary(0, 0), engine.visibilityMapSummary("p"));
            withPage(0, page -> { // row 8 (8 % 7 = 1) is at line 8 of block 0
                int off = HeapPage.tupleOffset(page, 8);
                assertTrue(off >= 0, "the old version is not pruned");
                assertTrue(old.visible(page, off), "and the old snapshot still sees it");
                assertTrue(!HeapPage.allVisible(page), "nor is the page marked");
            });
            assertCounts(live);
        }
        ScanReport after = scan(ScanRequest.count("p"), ON);
        assertEquals(PAGES, after.pagesSetAllVisible(), "once the snapshot is closed");
        withPage(0, page -> assertEquals(HeapPage.LP_REDIRECT, HeapPage.lpFlags(HeapPage.linePointer(page, 8))));
        assertCounts(live);
    }
}
