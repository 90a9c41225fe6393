package org.pageio.table.vacuum;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.pageio.bufmgr.BufMgrSettings;
import org.pageio.bufmgr.BufferManagerCore;
import org.pageio.heap.xact.Snapshot;
import org.pageio.method.sync.SyncIoMethod;
import org.pageio.table.RowFilter;
import org.pageio.table.ScanRequest;
import org.pageio.table.ScanSettings;
import org.pageio.table.TableInfo;
import org.pageio.table.TableShape;
import org.pageio.table.VacuumOptions;
import org.pageio.table.VacuumReport;
import org.pageio.table.VisibilityMapSummary;
import org.pageio.table.engine.TableEngine;

/**
 * VACUUM on real files: dead rows pruned and their index entries removed, pages set all-visible
 * in the header and the map, the next VACUUM skipping them, the index-only scan then reading no
 * heap page, rows a running snapshot may see kept, FREEZE, and every plan agreeing throughout.
 */
class VacuumTest {

    static final long SEED = 11;
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
        engine.createIndex("p", "cat,val");
    }

    private void open() throws Exception {
        bufmgr = BufferManagerCore.open(dir, new BufMgrSettings.Builder().sharedBuffers(64).maxSessions(4).segmentBlocks(10).build(),
                new SyncIoMethod());
        engine = new TableEngine(bufmgr.pool());
    }

    @AfterEach
    void close() {
        bufmgr.close();
    }

    /** count(*) by every plan: sequential, bitmap heap, index, index-only on (val) and on (cat, val). */
    private void assertCounts(long expect, String when) throws Exception {
        assertEquals(expect, engine.scan(ScanRequest.count("p")).count(), "seq scan " + when);
        assertEquals(expect, engine.scan(ScanRequest.bitmap("p", "val", Integer.MIN_VALUE, Integer.MAX_VALUE)).count(),
                "bitmap heap scan " + when);
        assertEquals(expect, engine.scan(ScanRequest.index("p", "val", Integer.MIN_VALUE, Integer.MAX_VALUE)).count(),
                "index scan " + when);
        assertEquals(expect, engine.scan(ScanRequest.indexOnly("p", "val", Integer.MIN_VALUE, Integer.MAX_VALUE)).count(),
                "index-only scan " + when);
    }

    private long rowsOfCat(long cat, java.util.function.LongPredicate deleted) {
        long n = 0;
        for (long g = 1; g <= ROWS; g++) {
            if (P.value(1, g, SEED) == cat && !deleted.test(g)) {
                n++;
            }
        }
        return n;
    }

    @Test
    void vacuumRemovesDeadRowsAndTheirIndexEntriesAndSetsThePagesAllVisible() throws Exception {
        TableInfo t = engine.table("p");
        long deleted = engine.delete("p", RowFilter.modulo("id", 5, 0));
        assertEquals(ROWS / 5, deleted);
        assertEquals(new VisibilityMapSummary(0, 0), engine.visibilityMapSummary("p"), "every page had a row deleted");
        long before = engine.scan(ScanRequest.indexOnly("p", "val", Integer.MIN_VALUE, Integer.MAX_VALUE)).heapFetches();
        assertEquals(ROWS, before, "before VACUUM every entry, a dead row's too, needs its heap page");

        VacuumReport r = engine.vacuum("p", VacuumOptions.DEFAULT);
        assertEquals(t.blocks(), r.relPages());
        assertEquals(t.blocks(), r.scannedPages(), "nothing all-visible to skip");
        assertEquals(deleted, r.tuplesRemoved());
        assertEquals(ROWS - deleted, r.liveTuples());
        assertEquals(0, r.recentlyDead());
        assertEquals(deleted, r.lpdeadItems());
        assertEquals(1, r.indexScans());
        assertEquals(2, r.indexes().size());
        for (VacuumReport.IndexVacuum i : r.indexes()) {
            assertEquals(deleted, i.entriesRemoved(), i.name());
            assertEquals(ROWS - deleted, i.entriesLeft(), i.name());
        }
        assertEquals(t.blocks(), r.vmAllVisible());
        assertEquals(t.blocks(), r.vmAllFrozen(), "the rows left were loaded frozen: the pages are all-frozen too");
        assertEquals(new VisibilityMapSummary(t.blocks(), t.blocks()), engine.visibilityMapSummary("p"));
        assertEquals(ROWS - deleted, engine.tupleStats("p").nLiveTup());
        assertEquals(0, engine.tupleStats("p").nDeadTup());
        assertTrue(r.text().contains("tuples: " + deleted + " removed, " + (ROWS - deleted) + " remain"), r.text());
        assertTrue(r.text().contains("buffer usage: "), r.text());

        assertCounts(ROWS - deleted, "after VACUUM");
        assertEquals(0, engine.scan(ScanRequest.indexOnly("p", "val", Integer.MIN_VALUE, Integer.MAX_VALUE)).heapFetches(),
                "all-visible pages: no heap fetch");
        long cat = P.value(1, 3, SEED);
        assertEquals(rowsOfCat(cat, g -> g % 5 == 0),
                engine.scan(ScanRequest.indexOnly("p", "cat", cat, "val", Integer.MIN_VALUE, Integer.MAX_VALUE)).count(),
                "two-column index-only scan after VACUUM");

        VacuumReport again = engine.vacuum("p", VacuumOptions.DEFAULT);
        assertEquals(1, again.scannedPages(), "a vacuumed page is skipped by the next VACUUM; the last page is always read");
        assertEquals(t.blocks() - 1, again.skippedAllVisible());
        assertEquals(0, again.tuplesRemoved());
        assertEquals(0, again.indexScans());

        bufmgr.close(); // a restart: what the last checkpoint did not write is gone, the answers are not
        open();
        assertCounts(ROWS - deleted, "after a restart");
    }

    @Test
    void rowsARunningSnapshotMaySeeAreKeptUntilItEnds() throws Exception {
        TableInfo t = engine.table("p");
        long deleted;
        try (Snapshot old = engine.transactions().snapshot()) {
            deleted = engine.delete("p", RowFilter.range("id", 1, 94)); // blocks 0 and 1
            VacuumReport r = engine.vacuum("p", VacuumOptions.DEFAULT);
            assertEquals(0, r.tuplesRemoved(), "the old snapshot still sees them");
            assertEquals(deleted, r.recentlyDead());
            assertEquals(0, r.indexScans());
            assertEquals(t.blocks() - 2, engine.visibilityMapSummary("p").allVisible(), "the two changed pages stay clear");
            assertTrue(old.xmax() > 0);
        }
        VacuumReport r = engine.vacuum("p", VacuumOptions.DEFAULT);
        assertEquals(deleted, r.tuplesRemoved());
        assertEquals(2, r.vmAllVisible());
        assertCounts(ROWS - deleted, "after the snapshot ended and VACUUM ran");
    }

    @Test
    void freezeFreezesEveryPageAndTheMapSaysSo() throws Exception {
        TableInfo t = engine.table("p");
        // a new row version: not frozen until a VACUUM FREEZE (the loaded ones are)
        engine.update("p", org.pageio.table.SetClause.parse("SET", "id", "=", "id", "+", "0"), RowFilter.range("id", ROWS, ROWS));
        VacuumReport plain = engine.vacuum("p", VacuumOptions.DEFAULT);
        assertEquals(0, plain.tuplesFrozen());
        VacuumReport frozen = engine.vacuum("p", new VacuumOptions(true, ScanSettings.parse("maintenance_io_concurrency=4")));
        assertTrue(frozen.tuplesFrozen() >= 1, frozen.text());
        assertEquals(new VisibilityMapSummary(t.blocks(), t.blocks()), engine.visibilityMapSummary("p"));
        assertCounts(ROWS, "after VACUUM FREEZE");
    }

    @Test
    void theRingsSizeChangesWhereThePagesWaitNotWhatVacuumDoes() throws Exception {
        long deleted = engine.delete("p", RowFilter.modulo("id", 3, 0));
        VacuumReport r = engine.vacuum("p", new VacuumOptions(false, ScanSettings.INHERIT, 0)); // no ring: shared buffers
        assertEquals(deleted, r.tuplesRemoved());
        assertEquals(engine.table("p").blocks(), r.vmAllVisible());
        assertCounts(ROWS - deleted, "after VACUUM without a ring");
        long more = engine.delete("p", RowFilter.modulo("id", 3, 1));
        r = engine.vacuum("p", new VacuumOptions(false, ScanSettings.INHERIT, VacuumOptions.parseBufferUsageLimit("128kB")));
        assertEquals(more, r.tuplesRemoved());
        assertCounts(ROWS - deleted - more, "after VACUUM with the smallest ring");
        assertEquals(256 * 1024, VacuumOptions.parseBufferUsageLimit("256MB"));
        assertThrows(IllegalArgumentException.class, () -> new VacuumOptions(false, null, 64));
    }

    @Test
    void aTableWithoutIndexesIsVacuumedInOnePass() throws Exception {
        engine.load("q", P, 500, SEED, null);
        long deleted = engine.delete("q", RowFilter.modulo("id", 2, 1));
        VacuumReport r = engine.vacuum("q", VacuumOptions.DEFAULT);
        assertEquals(deleted, r.tuplesRemoved());
        assertEquals(0, r.indexScans());
        assertEquals(deleted, r.lpdeadItems());
        assertEquals(engine.table("q").blocks(), engine.visibilityMapSummary("q").allVisible());
        assertEquals(500 - deleted, engine.scan(ScanRequest.count("q")).count());
    }
}
