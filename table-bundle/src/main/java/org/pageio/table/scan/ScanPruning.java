package org.pageio.table.scan;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import org.pageio.bufmgr.BufferSession;
import org.pageio.bufmgr.page.Page;
import org.pageio.bufmgr.smgr.SmgrRelation;
import org.pageio.heap.HeapPage;
import org.pageio.heap.PageReads;
import org.pageio.heap.prune.PruneHeap;
import org.pageio.heap.vm.VisibilityMap;
import org.pageio.heap.xact.Transactions;
import org.pageio.heap.xact.VacuumCutoffs;
import org.pageio.table.TableException;

/**
 * PostgreSQL 19's on-access pruning that sets the visibility map ({@code heap_page_prune_opt} with
 * {@code rel_read_only}, which adds {@code HEAP_PAGE_PRUNE_SET_VM}), for one sequential or bitmap
 * heap scan ({@code scan_sets_visibility_map = on}).
 *
 * <p>For a page the scan reads that lacks {@code PD_ALL_VISIBLE}: when
 * {@link PruneHeap#pruneWorthwhile} (its {@code pd_prune_xid} precedes {@code OldestXmin} and it is
 * nearly full: PostgreSQL 19's heuristic, unchanged), the map page is pinned first
 * ({@code visibilitymap_pin}), then the heap page's cleanup lock is tried
 * ({@code ConditionalLockBufferForCleanup}: skipped when another session pins the page), the test
 * repeated under it, and the page pruned. When the result is all-visible and the prune changed the
 * page (PostgreSQL 19's rule for read queries: set the map only when the page is written anyway),
 * {@code PD_ALL_VISIBLE} is set on the page and the map's bits with it, all-frozen too when every
 * tuple is frozen ({@link VisibilityMap#set(long, int, VisibilityMap.VmBuffer)}: the map page's
 * content lock inside the heap page's, PostgreSQL's order). {@code endModify} marks the heap page dirty.
 *
 * <p><b>Why the scan's count stays right.</b> The scan's snapshot is registered before the
 * cutoffs are taken, so {@code OldestXmin} is at most its {@code xmin}: pruning removes only tuples
 * the snapshot does not see, and a page marked all-visible holds only tuples it sees. The cutoffs
 * are taken once per scan; a deleter that commits later is left for a later scan.
 *
 * <p>One scan's: its session's thread. {@link #close} releases the map page.
 */
final class ScanPruning implements AutoCloseable {

    private final BufferSession session;
    private final String table;
    private final SmgrRelation heap;
    private final VacuumCutoffs cutoffs;
    private final VisibilityMap vm;
    /** Map page reads, counted in the scan's buffers. */
    final PageReads reads;
    private final VisibilityMap.VmBuffer vmbuf;
    private final PruneHeap.PruneResult result = new PruneHeap.PruneResult();
    /** Pages this scan pruned. */
    long pagesPruned;
    /** Pages this scan marked all-visible. */
    long pagesSetAllVisible;

    ScanPruning(BufferSession session, String table, SmgrRelation heap, Transactions xacts) {
        this.session = session;
        this.table = table;
        this.heap = heap;
        this.cutoffs = VacuumCutoffs.of(xacts, false);
        this.vm = new VisibilityMap(session, heap, null);
        this.reads = new PageReads(session);
        this.vmbuf = vm.buffer(reads);
    }

    /**
     * {@code heap_page_prune_opt(rel, buf, &vmbuffer, true)} for heap block {@code block}, pinned by
     * the scan in buffer {@code buf} (page {@code page}).
     */
    void pageOnAccess(int buf, MemorySegment page, long block) throws IOException {
        if (HeapPage.allVisible(page) || !PruneHeap.pruneWorthwhile(page, cutoffs)) {
            return;
        }
        try {
            vm.pin(block, vmbuf);
        } catch (IOException e) {
            throw new TableException("table " + table + " (relation " + heap + "): " + Scans.oneLine(e), e);
        }
        if (!session.conditionalLockForCleanup(buf)) {
            return; // another session reads the page: leave it, as PostgreSQL does
        }
        boolean changed = false;
        try {
            if (!PruneHeap.pruneWorthwhile(page, cutoffs)) {
                return;
            }
            try {
                PruneHeap.pruneAndFreeze(page, block, cutoffs, false, result);
            } catch (IllegalStateException e) {
                throw new TableException("table " + table + " (relation " + heap + "): " + e.getMessage(), e);
            }
            changed = result.changed;
            pagesPruned++;
            if (result.allVisible && result.changed) {
                Page.setFlags(page, Page.flags(page) | Page.PD_ALL_VISIBLE);
                vm.set(block, VisibilityMap.VISIBILITYMAP_ALL_VISIBLE
                        | (result.allFrozen ? VisibilityMap.VISIBILITYMAP_ALL_FROZEN : 0), vmbuf);
                pagesSetAllVisible++;
            }
        } finally {
            session.endModify(buf, changed);
        }
    }

    @Override
    public void close() {
        vmbuf.close();
    }
}
