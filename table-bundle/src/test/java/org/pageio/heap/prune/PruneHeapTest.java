package org.pageio.heap.prune;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
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
import org.pageio.heap.xact.Snapshot;
import org.pageio.heap.xact.Transactions;
import org.pageio.heap.xact.VacuumCutoffs;
import org.pageio.method.sync.SyncIoMethod;
import org.pageio.table.RowFilter;
import org.pageio.table.ScanRequest;
import org.pageio.table.SetClause;
import org.pageio.table.TableInfo;
import org.pageio.table.TableShape;
import org.pageio.table.engine.TableEngine;

/**
 * {@code heap_page_prune_and_freeze} and {@code lazy_vacuum_heap_page} on real pages: a loaded
 * table whose rows are deleted and HOT-updated by the engine's {@code DELETE} and {@code UPDATE},
 * each page then pruned under its cleanup lock and read back; every plan's count checked after.
 *
 * <p>{@code p} holds 2,000 rows of 47 a page: blocks 0..41 full, block 42 holds rows 1975..2000 at
 * lines 1..26 and has room for new versions.
 */
class PruneHeapTest {

    static final long SEED = 7;
    static final int ROWS = 2_000;
    static final TableShape P = TableShape.PREFETCH_TEST;
    static final long LAST = 42;
    /** {@code MAXALIGN} of a prefetch_test tuple. */
    static final int TUPLE = 168;

    @TempDir
    Path dir;

    private BufferManagerCore bufmgr;
    private TableEngine engine;
    private final PruneHeap.PruneResult out = new PruneHeap.PruneResult();

    @BeforeEach
    void load() throws Exception {
        bufmgr = BufferManagerCore.open(dir, new BufMgrSettings.Builder().sharedBuffers(64).maxSessions(4).segmentBlocks(10).build(),
                new SyncIoMethod());
        engine = new TableEngine(bufmgr.pool());
        engine.load("p", P, ROWS, SEED, null);
        engine.createIndex("p", "val");
    }

    @AfterEach
    void close() {
        bufmgr.close();
    }

    private TableInfo table() throws Exception {
        return engine.table("p");
    }

    /** Runs {@code work} on heap block {@code block} under its cleanup lock; the buffer is dirtied when the page changed. */
    private void underCleanupLock(long block, Consumer<MemorySegment> work) throws Exception {
        try (BufferSession s = bufmgr.pool().openSession("client")) {
            int buf = s.readBuffer(engine.heap(table()), block, null);
            try {
                assertTrue(s.conditionalLockForCleanup(buf), "nobody else pins block " + block);
                boolean changed = false;
                try {
                    work.accept(s.page(buf));
                    changed = true;
                } finally {
                    s.endModify(buf, changed);
                }
            } finally {
                s.releaseBuffer(buf);
            }
        }
    }

    private void prune(long block, VacuumCutoffs cutoffs, boolean freeze) throws Exception {
        underCleanupLock(block, page -> PruneHeap.pruneAndFreeze(page, block, cutoffs, freeze, out));
    }

    private void prune(long block) throws Exception {
        prune(block, VacuumCutoffs.of(engine.transactions(), false), false);
    }

    /** A copy of the page, read under the cleanup lock. */
    private MemorySegment page(long block) throws Exception {
        MemorySegment[] copy = new MemorySegment[1];
        underCleanupLock(block, page -> copy[0] = MemorySegment.ofArray(page.toArray(ValueLayout.JAVA_BYTE)));
        return copy[0];
    }

    /**
     * {@code PageSetPrunable} on the pages a change left without {@code PD_ALL_VISIBLE}, as
     * {@code heap_delete} and {@code heap_update} do (an older hint is kept).
     */
    private void setPrunable(int xid) throws Exception {
        for (long b = 0; b < table().blocks(); b++) {
            underCleanupLock(b, page -> {
                if (!HeapPage.allVisible(page)) {
                    HeapPage.setPrunable(page, xid);
                }
            });
        }
    }

    /** The bytes of every normal line's tuple, by line. */
    private static Map<Integer, byte[]> tuples(MemorySegment page) {
        Map<Integer, byte[]> m = new HashMap<>();
        for (int line = 1; line <= HeapPage.lineCount(page); line++) {
            int off = HeapPage.tupleOffset(page, line);
            if (off >= 0) {
                m.put(line, page.asSlice(off, HeapPage.lpLen(HeapPage.linePointer(page, line))).toArray(ValueLayout.JAVA_BYTE));
            }
        }
        return m;
    }

    private static int flags(MemorySegment page, int line) {
        return HeapPage.lpFlags(HeapPage.linePointer(page, line));
    }

    private void assertCounts(long expect) throws Exception {
        assertEquals(expect, engine.scan(ScanRequest.count("p")).count(), "seq scan");
        assertEquals(expect, engine.scan(ScanRequest.bitmap("p", "val", 0, 50_000)).count(), "bitmap heap scan");
        assertEquals(expect, engine.scan(ScanRequest.index("p", "val", 0, 50_000)).count(), "index scan");
        assertEquals(expect, engine.scan(ScanRequest.indexOnly("p", "val", 0, 50_000)).count(), "index-only scan");
    }

    /** Line of row g on its page. */
    private static int line(long g) {
        return (int) ((g - 1) % P.rowsPerPage()) + 1;
    }

    @Test
    void aChainDeadUpToItsNewVersionIsRedirectedAndItsDeadMembersFreed() throws Exception {
        int xid = (int) engine.transactions().nextXid();
        assertEquals(11, engine.update("p", SetClause.parse("SET cat = cat + 1000"), RowFilter.parse("WHERE id 1990 2000")));
        MemorySegment before = page(LAST);
        Map<Integer, byte[]> kept = tuples(before);
        for (long g = 1990; g <= 2000; g++) {
            kept.remove(line(g)); // the old versions go
        }
        prune(LAST);
        assertEquals(11, out.ndeleted);
        assertEquals(0, out.nnewlpdead);
        assertEquals(0, out.lpdeadItems);
        assertEquals(26, out.live, "15 rows untouched, 11 new versions");
        assertEquals(0, out.recentlyDead);
        assertTrue(out.allVisible, "the update committed before every snapshot: visible to all");
        assertFalse(out.allFrozen, "the new versions are not frozen");
        assertTrue(out.changed);
        MemorySegment after = page(LAST);
        for (long g = 1990; g <= 2000; g++) {
            int root = line(g);
            assertEquals(HeapPage.LP_REDIRECT, flags(after, root), "root of row " + g);
            int target = HeapPage.lpOff(HeapPage.linePointer(after, root));
            assertEquals(26 + (int) (g - 1989), target, "redirected to the new version");
            assertEquals(xid, HeapPage.xmin(after, HeapPage.tupleOffset(after, target)));
        }
        Map<Integer, byte[]> now = tuples(after);
        assertEquals(kept.keySet(), now.keySet());
        kept.forEach((l, b) -> assertArrayEquals(b, now.get(l), "tuple at line " + l + " moved whole"));
        assertEquals(Page.upper(before) + 11 * TUPLE, Page.upper(after), "the old versions' space is free");
        assertEquals(0, Page.flags(after) & Page.PD_HAS_FREE_LINES, "no line is unused");
        assertEquals(0, Page.pruneXid(after));
        assertEquals(0, Page.flags(after) & Page.PD_ALL_VISIBLE, "the flag is the caller's to set");
        assertCounts(ROWS);
        for (long g = 1990; g <= 2000; g++) { // the index entries at the roots reach the new versions
            long v = P.value(2, g, SEED);
            long expect = 0;
            for (long h = 1; h <= ROWS; h++) {
                expect += P.value(2, h, SEED) == v ? 1 : 0;
            }
            assertEquals(expect, engine.scan(ScanRequest.index("p", "val", v, v)).count(), "index scan, row " + g);
            assertEquals(expect, engine.scan(ScanRequest.bitmap("p", "val", v, v)).count(), "bitmap scan, row " + g);
        }

        // again for six rows: the chains run root (redirect) -> dead heap-only -> new version
        int xid2 = (int) engine.transactions().nextXid();
        assertEquals(6, engine.update("p", SetClause.parse("SET cat = cat + 1000"), RowFilter.parse("WHERE id 1990 1995")));
        prune(LAST);
        assertEquals(6, out.ndeleted, "the heap-only versions; moving a redirect deletes nothing");
        MemorySegment third = page(LAST);
        for (long g = 1990; g <= 1995; g++) {
            int middle = 26 + (int) (g - 1989);
            assertEquals(HeapPage.LP_UNUSED, flags(third, middle), "the dead heap-only member of row " + g);
            int target = HeapPage.lpOff(HeapPage.linePointer(third, line(g)));
            assertEquals(HeapPage.LP_REDIRECT, flags(third, line(g)));
            assertEquals(xid2, HeapPage.xmin(third, HeapPage.tupleOffset(third, target)), "redirected past it");
        }
        assertEquals(Page.PD_HAS_FREE_LINES, Page.flags(third) & Page.PD_HAS_FREE_LINES);
        assertCounts(ROWS);
    }

    @Test
    void anEntirelyDeadChainLeavesItsRootDeadAndADeadPlainTupleIsMadeDead() throws Exception {
        engine.update("p", SetClause.parse("SET cat = cat + 1000"), RowFilter.parse("WHERE id 1996 2000"));
        engine.delete("p", RowFilter.parse("WHERE id 1996 2000")); // the new versions go too
        assertEquals(5, engine.delete("p", RowFilter.parse("WHERE id 1 5"))); // block 0: plain tuples
        MemorySegment before = page(0);
        prune(LAST);
        assertEquals(10, out.ndeleted, "five roots and five heap-only versions");
        assertEquals(5, out.nnewlpdead);
        assertEquals(5, out.lpdeadItems);
        assertArrayEquals(new int[] {22, 23, 24, 25, 26}, Arrays.copyOf(out.deadOffsets, 5));
        assertFalse(out.allVisible, "LP_DEAD items keep the page from being all-visible");
        MemorySegment last = page(LAST);
        for (int l = 22; l <= 26; l++) {
            assertEquals(HeapPage.LP_DEAD, flags(last, l), "root " + l + ": its index entries still point here");
            assertEquals(0, HeapPage.linePointer(last, l) & ~(3 << 15), "no storage");
        }
        for (int l = 27; l <= 31; l++) {
            assertEquals(HeapPage.LP_UNUSED, flags(last, l), "heap-only version at " + l);
        }

        Map<Integer, byte[]> kept = tuples(before);
        prune(0);
        assertEquals(5, out.ndeleted);
        assertEquals(5, out.nnewlpdead);
        assertArrayEquals(new int[] {1, 2, 3, 4, 5}, Arrays.copyOf(out.deadOffsets, out.lpdeadItems));
        assertEquals(42, out.live);
        assertTrue(out.changed);
        MemorySegment after = page(0);
        for (int l = 1; l <= 5; l++) {
            assertEquals(HeapPage.LP_DEAD, flags(after, l));
            kept.remove(l);
        }
        Map<Integer, byte[]> now = tuples(after);
        assertEquals(kept.keySet(), now.keySet());
        kept.forEach((l, b) -> assertArrayEquals(b, now.get(l), "tuple at line " + l + " moved whole"));
        assertEquals(Page.upper(before) + 5 * TUPLE, Page.upper(after));
        assertCounts(ROWS - 10);

        // pruned again: nothing to do, the LP_DEAD items are reported again
        prune(0);
        assertEquals(0, out.ndeleted);
        assertEquals(5, out.lpdeadItems);
        assertFalse(out.changed);
    }

    @Test
    void aTupleDeletedAfterAnOpenSnapshotIsKeptUntilTheSnapshotCloses() throws Exception {
        Transactions x = engine.transactions();
        int xid;
        try (Snapshot old = x.snapshot()) {
            xid = (int) x.nextXid();
            assertEquals(5, engine.delete("p", RowFilter.parse("WHERE id 48 52"))); // block 1, lines 1..5
            VacuumCutoffs cutoffs = VacuumCutoffs.of(x, false);
            assertEquals(old.xmin(), cutoffs.oldestXmin(), "the open snapshot holds the horizon");
            assertFalse(PruneHeap.pruneWorthwhile(page(1), cutoffs), "the deleter is not old enough yet");
            prune(1, cutoffs, false);
            assertEquals(0, out.ndeleted);
            assertEquals(5, out.recentlyDead);
            assertEquals(42, out.live);
            assertFalse(out.allVisible);
            MemorySegment page = page(1);
            assertEquals(xid, Page.pruneXid(page), "the deleter: look at the page again once it is old enough");
            for (int l = 1; l <= 5; l++) {
                int off = HeapPage.tupleOffset(page, l);
                assertTrue(off >= 0 && old.visible(page, off), "line " + l + " is still there for the old snapshot");
            }
        }
        VacuumCutoffs now = VacuumCutoffs.of(x, false);
        assertTrue(PruneHeap.pruneWorthwhile(page(1), now), "a full page whose deleter is below the horizon");
        prune(1, now, false);
        assertEquals(5, out.ndeleted);
        assertEquals(0, out.recentlyDead);
        assertEquals(0, Page.pruneXid(page(1)));
        assertFalse(PruneHeap.pruneWorthwhile(page(1), now), "nothing prunable left");
        assertCounts(ROWS - 5);
    }

    @Test
    void pruningIsWorthwhileOnlyOnANearlyFullPageWithAnOldEnoughDeleter() throws Exception {
        int xid = (int) engine.transactions().nextXid();
        engine.delete("p", RowFilter.parse("WHERE id 1 1"));
        engine.delete("p", RowFilter.parse("WHERE id 2000 2000"));
        VacuumCutoffs cutoffs = VacuumCutoffs.of(engine.transactions(), false);
        underCleanupLock(0, HeapPage::clearPrunable);
        assertFalse(PruneHeap.pruneWorthwhile(page(0), cutoffs), "no pd_prune_xid: nothing known prunable");
        setPrunable(xid); // as the delete set it
        assertTrue(PruneHeap.pruneWorthwhile(page(0), cutoffs), "84 bytes free, below BLCKSZ / 10");
        assertTrue(PruneHeap.heapFreeSpace(page(0)) < 819);
        assertFalse(PruneHeap.pruneWorthwhile(page(LAST), cutoffs), "the last page has room: left to VACUUM");
        assertFalse(PruneHeap.pruneWorthwhile(page(5), cutoffs), "an untouched page");
    }

    @Test
    void freezingFreezesCommittedInsertersBelowTheFreezeLimitKeepingXmin() throws Exception {
        int xid = (int) engine.transactions().nextXid();
        engine.update("p", SetClause.parse("SET cat = cat + 1000"), RowFilter.parse("WHERE id 1990 2000"));
        prune(LAST, VacuumCutoffs.of(engine.transactions(), false), true);
        assertEquals(0, out.frozen, "FreezeLimit 0 outside VACUUM FREEZE: nothing frozen");
        assertTrue(out.allVisible);
        assertFalse(out.allFrozen);

        prune(LAST, engine.transactions().vacuumCutoffs(true), true);
        assertEquals(11, out.frozen, "the new versions");
        assertTrue(out.allVisible);
        assertTrue(out.allFrozen);
        assertTrue(out.changed);
        MemorySegment page = page(LAST);
        for (int l = 27; l <= 37; l++) {
            int off = HeapPage.tupleOffset(page, l);
            assertEquals(Snapshot.HEAP_XMIN_FROZEN, HeapPage.infomask(page, off) & Snapshot.HEAP_XMIN_FROZEN, "line " + l);
            assertEquals(xid, HeapPage.xmin(page, off), "t_xmin kept");
        }
        prune(LAST, engine.transactions().vacuumCutoffs(true), true);
        assertEquals(0, out.frozen, "nothing left to freeze");
        assertTrue(out.allFrozen);
        assertFalse(out.changed);
        assertCounts(ROWS);
    }

    @Test
    void aPageIsAllVisibleOnlyWhenEveryTupleIsVisibleToEverySnapshot() throws Exception {
        Transactions x = engine.transactions();
        try (Snapshot old = x.snapshot()) {
            engine.update("p", SetClause.parse("SET cat = cat + 1000"), RowFilter.parse("WHERE id 1990 2000"));
            prune(LAST);
            assertFalse(out.allVisible, "the old snapshot does not see the new versions");
            assertEquals(11, out.recentlyDead, "and still sees the old ones");
            assertEquals(0, out.ndeleted);
        }
        int running = x.assign(); // a delete under way, written as heap_delete writes it
        underCleanupLock(LAST, page -> {
            int off = HeapPage.tupleOffset(page, 1);
            HeapPage.setXmax(page, off, running);
            HeapPage.setInfomask(page, off, HeapPage.infomask(page, off) & ~Snapshot.HEAP_XMAX_BITS);
        });
        prune(LAST);
        assertEquals(11, out.ndeleted, "the old versions, now below the horizon");
        assertFalse(out.allVisible, "a delete in progress");
        assertEquals(26, out.live, "a row being deleted still counts live");
        assertEquals(running, Page.pruneXid(page(LAST)));
        x.abort(running);
        prune(LAST);
        assertTrue(out.allVisible, "the deleter aborted: the row is visible to all");
        assertEquals(0, Page.pruneXid(page(LAST)));
        assertCounts(ROWS);
    }

    @Test
    void vacuumPageFreesDeadLinesTruncatesTheArrayAndJudgesThePageAgain() throws Exception {
        engine.delete("p", RowFilter.parse("WHERE id 1996 2000")); // lines 22..26 of the last page
        engine.delete("p", RowFilter.parse("WHERE id 1 3"));       // lines 1..3 of block 0
        VacuumCutoffs cutoffs = VacuumCutoffs.of(engine.transactions(), false);
        prune(LAST, cutoffs, false);
        int[] dead = Arrays.copyOf(out.deadOffsets, out.lpdeadItems);
        assertArrayEquals(new int[] {22, 23, 24, 25, 26}, dead);
        int lowerBefore = Page.lower(page(LAST));
        IllegalStateException notDead = assertThrows(IllegalStateException.class,
                () -> underCleanupLock(LAST, page -> PruneHeap.vacuumPage(page, new int[] {22, 21}, 2, cutoffs, out)));
        assertTrue(notDead.getMessage().contains("line 21 is not an LP_DEAD line"), notDead.getMessage());
        assertEquals(HeapPage.LP_DEAD, flags(page(LAST), 22), "nothing changed by the refusal");

        underCleanupLock(LAST, page -> PruneHeap.vacuumPage(page, dead, dead.length, cutoffs, out));
        assertTrue(out.changed);
        assertTrue(out.allVisible);
        assertTrue(out.allFrozen, "the loaded rows left are frozen");
        assertEquals(21, out.live);
        assertEquals(0, out.lpdeadItems);
        MemorySegment last = page(LAST);
        assertEquals(21, HeapPage.lineCount(last), "the unused lines at the array's end are given back");
        assertEquals(lowerBefore - 5 * HeapPage.LINE_POINTER_SIZE, Page.lower(last));
        assertEquals(0, Page.flags(last) & Page.PD_HAS_FREE_LINES);

        prune(0, cutoffs, false);
        int[] dead0 = Arrays.copyOf(out.deadOffsets, out.lpdeadItems);
        underCleanupLock(0, page -> PruneHeap.vacuumPage(page, dead0, dead0.length, cutoffs, out));
        MemorySegment first = page(0);
        assertEquals(47, HeapPage.lineCount(first), "unused lines before used ones stay");
        assertEquals(HeapPage.LP_UNUSED, flags(first, 1));
        assertEquals(Page.PD_HAS_FREE_LINES, Page.flags(first) & Page.PD_HAS_FREE_LINES);
        assertTrue(out.allVisible);
        assertCounts(ROWS - 8);
    }
}
