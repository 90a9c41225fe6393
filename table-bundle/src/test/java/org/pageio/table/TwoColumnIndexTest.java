package org.pageio.table;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.pageio.bufmgr.BufMgrSettings;
import org.pageio.bufmgr.BufferManagerCore;
import org.pageio.bufmgr.BufferSession;
import org.pageio.method.sync.SyncIoMethod;
import org.pageio.table.engine.TableEngine;
import org.pageio.table.index.IndexCursor;
import org.pageio.table.index.IndexPage;
import org.pageio.heap.PageReads;

/** An index on (cat, val) of prefetch_test, on real files: its order, a range of it, its catalog entry. */
class TwoColumnIndexTest {

    static final long SEED = 42;
    static final int ROWS = 20_000;
    static final TableShape PT = TableShape.PREFETCH_TEST;

    @TempDir
    Path dir;

    private BufferManagerCore bufmgr;

    @AfterEach
    void close() throws Exception {
        if (bufmgr != null) {
            bufmgr.close();
        }
    }

    private TableEngine engine() throws Exception {
        bufmgr = BufferManagerCore.open(dir, new BufMgrSettings.Builder().sharedBuffers(512).maxSessions(8).segmentBlocks(100)
                .build(), new SyncIoMethod());
        return new TableEngine(bufmgr.pool());
    }

    static long cat(long g) {
        return PT.value(1, g, SEED);
    }

    static long val(long g) {
        return PT.value(2, g, SEED);
    }

    static long row(long block, int line) {
        return block * PT.rowsPerPage() + line;
    }

    @Test
    void compositeKeysOrderAsThePairs() {
        long[] xs = {Integer.MIN_VALUE, -1, 0, 1, 50, Integer.MAX_VALUE};
        for (long a : xs) {
            for (long b : xs) {
                long k = IndexPage.compositeKey(a, b);
                assertEquals(a, IndexPage.compositeFirst(k));
                assertEquals(b, IndexPage.compositeSecond(k));
                for (long c : xs) {
                    for (long d : xs) {
                        int pair = a != c ? Long.compare(a, c) : Long.compare(b, d);
                        assertEquals(Integer.signum(pair), Integer.signum(Long.compare(k, IndexPage.compositeKey(c, d))),
                                "(" + a + "," + b + ") vs (" + c + "," + d + ")");
                    }
                }
            }
        }
    }

    @Test
    void anIndexOnCatValHoldsEveryRowInPairOrderAndARangeOfOneCat() throws Exception {
        TableEngine engine = engine();
        engine.load("p", PT, ROWS, SEED, null);
        engine.createIndex("p", "val");
        IndexInfo i = engine.createIndex("p", "cat,val");
        assertEquals("p_cat_val_idx", i.name());
        assertEquals(List.of("cat", "val"), i.columns());
        assertEquals("(cat, val)", i.columnList());
        assertEquals(ROWS, i.entries());
        TableInfo t = engine.table("p");
        assertEquals(i, t.index(List.of("cat", "val")));
        assertNull(t.index("cat"), "an index on (cat, val) is not a one-column index on cat");
        assertEquals(List.of("val"), t.index("val").columns());

        try (BufferSession s = bufmgr.pool().openSession(TableEngine.SESSION_KIND)) {
            // the whole index: every row once, in (cat, val, tid) order, keys as the heap's values
            boolean[] seen = new boolean[ROWS + 1];
            long prevKey = Long.MIN_VALUE;
            long prevTid = -1;
            try (IndexCursor c = new IndexCursor(s, new PageReads(s), engine.indexRelation(i), i.name(), Long.MIN_VALUE,
                    Long.MAX_VALUE)) {
                assertEquals(2, c.keyColumns);
                while (c.next()) {
                    long g = row(c.block, c.line);
                    long tid = (c.block << 9) | c.line;
                    assertTrue(c.key > prevKey || c.key == prevKey && tid > prevTid, "order at row " + g);
                    assertEquals(cat(g), IndexPage.compositeFirst(c.key), "cat of row " + g);
                    assertEquals(val(g), IndexPage.compositeSecond(c.key), "val of row " + g);
                    assertTrue(!seen[(int) g], "row " + g + " twice");
                    seen[(int) g] = true;
                    prevKey = c.key;
                    prevTid = tid;
                }
            }
            for (int g = 1; g <= ROWS; g++) {
                assertTrue(seen[g], "row " + g + " missing");
            }

            // cat = 50 AND val BETWEEN 100 AND 5000: one range of keys, exactly the generator's rows
            List<Long> expected = new ArrayList<>();
            for (long g = 1; g <= ROWS; g++) {
                if (cat(g) == 50 && val(g) >= 100 && val(g) <= 5000) {
                    expected.add(g);
                }
            }
            expected.sort((a, b) -> val(a) != val(b) ? Long.compare(val(a), val(b)) : Long.compare(a, b));
            assertTrue(expected.size() > 5, "the range is not empty: " + expected.size());
            List<Long> got = new ArrayList<>();
            try (IndexCursor c = new IndexCursor(s, new PageReads(s), engine.indexRelation(i), i.name(),
                    IndexPage.compositeKey(50, 100), IndexPage.compositeKey(50, 5000))) {
                while (c.next()) {
                    got.add(row(c.block, c.line));
                }
            }
            assertEquals(expected, got);

            // the one-column index is untouched: a version 1 reader's view
            try (IndexCursor c = new IndexCursor(s, new PageReads(s), engine.indexRelation(t.index("val")), "p_val_idx", 100,
                    100)) {
                assertEquals(1, c.keyColumns);
            }
        }
        bufmgr.close();
        bufmgr = null;
        // the catalog records the columns: they survive a restart
        TableEngine again = engine();
        assertEquals(List.of("cat", "val"), again.table("p").index(List.of("cat", "val")).columns());
        assertEquals(2, again.table("p").indexes().size());
    }

    @Test
    void columnListsThatAreNotOneOrTwoIntegerColumnsAreRefused() throws Exception {
        TableEngine engine = engine();
        engine.load("p", PT, 500, SEED, null);
        for (String bad : List.of("cat,val,id", "cat,", "cat,cat", ",val")) {
            Exception e = assertThrows(IllegalArgumentException.class, () -> engine.createIndex("p", bad), bad);
            assertTrue(e.getMessage().contains("one integer column or two"), e.getMessage());
        }
        Exception text = assertThrows(IllegalArgumentException.class, () -> engine.createIndex("p", "cat,payload"));
        assertTrue(text.getMessage().contains("payload of p is text"), text.getMessage());
        assertEquals(List.of(), engine.table("p").indexes());
    }
}
