package org.pageio.table;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.pageio.bufmgr.BufMgrSettings;
import org.pageio.bufmgr.BufferManagerCore;
import org.pageio.bufmgr.BufferSession;
import org.pageio.method.sync.SyncIoMethod;
import org.pageio.table.engine.TableEngine;
import org.pageio.heap.vm.VisibilityMap;

/** The index-only scan on real files: its answer, its heap fetches against the visibility map, its EXPLAIN. */
class IndexOnlyScanTest {

    static final long SEED = 42;
    static final int ROWS = 20_000; // 426 blocks
    static final TableShape PT = TableShape.PREFETCH_TEST;

    @TempDir
    Path dir;

    private BufferManagerCore bufmgr;
    private TableEngine engine;

    @BeforeEach
    void load() throws Exception {
        bufmgr = BufferManagerCore.open(dir, new BufMgrSettings.Builder().sharedBuffers(512).maxSessions(8).segmentBlocks(100)
                .build(), new SyncIoMethod());
        engine = new TableEngine(bufmgr.pool());
        engine.load("p", PT, ROWS, SEED, null);
        engine.createIndex("p", "val");
        engine.createIndex("p", "cat,val");
    }

    @AfterEach
    void close() throws Exception {
        bufmgr.close();
    }

    static long cat(long g) {
        return PT.value(1, g, SEED);
    }

    static long val(long g) {
        return PT.value(2, g, SEED);
    }

    static long block(long g) {
        return (g - 1) / PT.rowsPerPage();
    }

    /** Rows with {@code val BETWEEN lo AND hi} (and {@code cat = c} unless c is null) whose block is a multiple of {@code every} (1: all). */
    static long rows(Long c, long lo, long hi, int every) {
        long n = 0;
        for (long g = 1; g <= ROWS; g++) {
            if ((c == null || cat(g) == c) && val(g) >= lo && val(g) <= hi && block(g) % every == 0) {
                n++;
            }
        }
        return n;
    }

    @Test
    void onAnAllVisibleTableItFetchesNoHeapPageAndAgreesWithTheIndexAndBitmapScans() throws Exception {
        long expected = rows(null, 100, 5000, 1);
        ScanReport ios = engine.scan(ScanRequest.indexOnly("p", "val", 100, 5000));
        ScanReport index = engine.scan(ScanRequest.index("p", "val", 100, 5000));
        ScanReport bitmap = engine.scan(ScanRequest.bitmap("p", "val", 100, 5000));
        assertEquals(expected, ios.count());
        assertEquals(index.count(), ios.count());
        assertEquals(bitmap.count(), ios.count());
        assertEquals(0, ios.heapFetches());
        // its buffers are the index pages the bitmap index scan reads over the same range, and one
        // map page kept pinned across all entries: not one heap page
        PlanNode bitmapIndex = bitmap.plan().children().get(0).children().get(0);
        assertEquals("Bitmap Index Scan", bitmapIndex.nodeType());
        assertEquals(bitmapIndex.sharedHit() + bitmapIndex.sharedRead() + 1, ios.sharedHit() + ios.sharedRead(), ios.summary());

        // the two-column form: PostgreSQL 19's cat = 50 AND val BETWEEN 100 AND 5000
        ScanReport pair = engine.scan(ScanRequest.indexOnly("p", "cat", 50, "val", 100, 5000));
        assertEquals(rows(50L, 100, 5000, 1), pair.count());
        assertTrue(pair.count() > 5, pair.summary());
        assertEquals(0, pair.heapFetches());
        assertTrue(pair.summary().startsWith("ios p: count=" + pair.count() + " heap_fetches=0 in "), pair.summary());
        assertEquals(0, engine.scan(ScanRequest.indexOnly("p", "cat", 50, "val", 5000, 100)).count(), "an empty range");
    }

    @Test
    void blocksWhoseAllVisibleBitIsClearAreFetchedOncePerMatchingEntry() throws Exception {
        TableInfo t = engine.table("p");
        try (BufferSession s = bufmgr.pool().openSession(TableEngine.SESSION_KIND)) {
            VisibilityMap vm = new VisibilityMap(s, engine.heap(t), null);
            for (long b = 0; b < t.blocks(); b += 3) {
                assertTrue(vm.clear(b, VisibilityMap.VISIBILITYMAP_ALL_VISIBLE));
            }
        }
        ScanReport one = engine.scan(ScanRequest.indexOnly("p", "val", 100, 5000));
        assertEquals(rows(null, 100, 5000, 1), one.count(), "the answer does not change");
        assertEquals(rows(null, 100, 5000, 3), one.heapFetches(), "entries on cleared blocks");
        assertTrue(one.heapFetches() > 0);
        ScanReport pair = engine.scan(ScanRequest.indexOnly("p", "cat", 50, "val", 100, 5000));
        assertEquals(rows(50L, 100, 5000, 1), pair.count());
        assertEquals(rows(50L, 100, 5000, 3), pair.heapFetches());
        String text = engine.scan(ScanRequest.indexOnly("p", "cat", 50, "val", 100, 5000)).explain(true, true, false, "text");
        assertTrue(text.contains("\n        Heap Fetches: " + pair.heapFetches() + "\n"), text);
    }

    @Test
    void explainShowsAnIndexOnlyScanWithItsHeapFetchesUnderAnalyzeOnly() throws Exception {
        ScanRequest req = ScanRequest.parse("ios", "p", "cat = 50", "val", "100", "5000");
        assertEquals("Aggregate\n  ->  Index Only Scan using p_cat_val_idx on p\n"
                + "        Index Cond: ((cat = 50) AND (val >= 100) AND (val <= 5000))", engine.plan(req).explain(false, false,
                false, "text"));
        String analyzed = engine.scan(req).explain(true, true, false, "text");
        assertTrue(analyzed.contains("->  Index Only Scan using p_cat_val_idx on p (actual time="), analyzed);
        assertTrue(analyzed.contains("\n        Index Cond: ((cat = 50) AND (val >= 100) AND (val <= 5000))\n"
                + "        Heap Fetches: 0\n        Index Searches: 1\n        Buffers: shared "), analyzed);
        String json = engine.scan(req).explain(true, false, false, "json");
        assertTrue(json.contains("\"Node Type\": \"Index Only Scan\"") && json.contains("\"Heap Fetches\": 0")
                && json.contains("\"Index Name\": \"p_cat_val_idx\""), json);
        assertEquals("Aggregate\n  ->  Index Only Scan using p_val_idx on p\n        Index Cond: ((val >= 1) AND (val <= 2))",
                engine.plan(ScanRequest.parse("ios", "p", "val", "1", "2")).explain(false, false, false, "text"));
        assertFalse(engine.scan(ScanRequest.indexOnly("p", "val", 1, 2)).explain(false, false, false, "text").contains("Heap"));
    }

    @Test
    void plansThatCannotBeAnsweredAreRefusedNamingWhatIsWrong() throws Exception {
        engine.load("q", PT, 100, SEED, null);
        Exception noPair = assertThrows(TableException.class,
                () -> engine.plan(ScanRequest.indexOnly("q", "cat", 50, "val", 100, 5000)));
        assertEquals("table q has no index on (cat, val) (pageio:index q cat,val builds one)", noPair.getMessage());
        Exception noOne = assertThrows(TableException.class, () -> engine.scan(ScanRequest.indexOnly("p", "cat", 1, 2)));
        assertTrue(noOne.getMessage().startsWith("table p has no index on cat"), noOne.getMessage());
        Exception reversed = assertThrows(TableException.class,
                () -> engine.scan(ScanRequest.indexOnly("p", "val", 50, "cat", 1, 2)));
        assertTrue(reversed.getMessage().contains("no index on (val, cat)"), reversed.getMessage());
        Exception same = assertThrows(IllegalArgumentException.class,
                () -> engine.plan(ScanRequest.indexOnly("p", "val", 50, "val", 1, 2)));
        assertTrue(same.getMessage().contains("name the same column"), same.getMessage());
        Exception big = assertThrows(IllegalArgumentException.class,
                () -> engine.scan(ScanRequest.indexOnly("p", "cat", 1L << 33, "val", 1, 2)));
        assertTrue(big.getMessage().startsWith("scan ios: X 8589934592 is out of range for the index on p"), big.getMessage());
        Exception hi = assertThrows(IllegalArgumentException.class,
                () -> engine.plan(ScanRequest.indexOnly("p", "val", 0, Long.MAX_VALUE)));
        assertTrue(hi.getMessage().startsWith("scan ios: HI " + Long.MAX_VALUE + " is out of range"), hi.getMessage());
        Exception text = assertThrows(IllegalArgumentException.class, () -> engine.plan(ScanRequest.indexOnly("p", "payload", 0, 1)));
        assertTrue(text.getMessage().contains("payload of p is text"), text.getMessage());
    }
}
