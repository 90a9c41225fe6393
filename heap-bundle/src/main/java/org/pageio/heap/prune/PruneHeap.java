package org.pageio.heap.prune;

import java.lang.foreign.MemorySegment;
import org.pageio.bufmgr.page.Page;
import org.pageio.heap.HeapPage;
import org.pageio.heap.xact.Snapshot;
import org.pageio.heap.xact.Transactions;
import org.pageio.heap.xact.VacuumCutoffs;

/**
 * Pruning and freezing one heap page: PostgreSQL's {@code heap_page_prune_and_freeze}
 * (pruneheap.c) reduced to pageio's heap (no WAL, no multixacts, no {@code mark_unused_now}), the
 * test of {@code heap_page_prune_opt} ({@link #pruneWorthwhile}) and VACUUM's second heap pass over
 * a page, {@code lazy_vacuum_heap_page} ({@link #vacuumPage}).
 *
 * <p><b>What pruning does</b>, as {@code heap_page_prune_and_freeze}: every tuple is judged once by
 * {@link VacuumCutoffs#satisfiesVacuum} ({@code prune_freeze_plan}); then each HOT chain is walked
 * from its root ({@code heap_prune_chain}: a normal tuple that is not {@code HEAP_ONLY_TUPLE}, or a
 * root already {@code LP_REDIRECT}) through {@code t_ctid} while each member's {@code t_xmin} is its
 * predecessor's {@code t_xmax}, up to the first member that is not dead or recently dead:
 * <ul>
 *   <li>no {@code HEAPTUPLE_DEAD} member: the chain stays as it is;</li>
 *   <li>dead up to a surviving member: the root becomes {@code LP_REDIRECT} to the first survivor
 *       (its index entries keep working), the dead heap-only members before it {@code LP_UNUSED}
 *       (recently dead ones before a dead one go too: no snapshot can reach them any more);</li>
 *   <li>entirely dead: the root becomes {@code LP_DEAD} (index entries still point at it, VACUUM
 *       removes them and then the line: {@link #vacuumPage}), its heap-only members
 *       {@code LP_UNUSED};</li>
 *   <li>a dead tuple updated by no HOT update is a chain of one: {@code LP_DEAD}.</li>
 * </ul>
 * A dead heap-only tuple no chain reaches (its update aborted) becomes {@code LP_UNUSED}. Then
 * {@code heap_page_prune_execute}: line pointers changed and the tuple space compacted
 * ({@code PageRepairFragmentation}: the surviving tuples moved towards the page's end in the order
 * they were, {@code pd_upper} raised, {@code PD_HAS_FREE_LINES} set when a line is
 * {@code LP_UNUSED}); {@code pd_prune_xid} becomes the oldest deleter of a recently dead (or
 * being-deleted) tuple, else 0; {@code PD_PAGE_FULL} is cleared.
 *
 * <p><b>Freezing</b> ({@code freeze}, {@code heap_prepare_freeze_tuple} reduced): a tuple whose
 * inserter committed below {@link VacuumCutoffs#freezeLimit} gets {@code HEAP_XMIN_FROZEN} with
 * {@code t_xmin} kept (PostgreSQL 9.4 on); a live tuple's {@code t_xmax} of an aborted deleter or a
 * lock older than {@code OldestXmin} is cleared. A freeze limit of 0 freezes nothing.
 *
 * <p><b>What is the caller's</b>: {@code PD_ALL_VISIBLE} and the visibility map are not touched;
 * {@link PruneResult#allVisible} and {@link PruneResult#allFrozen} say whether the page may now be
 * marked, and the caller sets the flag and the bits (VACUUM, or a scan: heap-bundle/README.md,
 * "The visibility map"). Marking the buffer dirty when {@link PruneResult#changed} is the
 * caller's too ({@code BufferSession.endModify(buf, result.changed)}).
 *
 * <p><b>Locks.</b> {@link #pruneAndFreeze} moves tuples: the caller holds the page's cleanup lock
 * ({@code BufferSession.conditionalLockForCleanup}, PostgreSQL's
 * {@code ConditionalLockBufferForCleanup}: the content lock with no other pin, and no pin taken
 * while it is held), since pageio's scans read pinned pages without a content lock.
 * {@link #vacuumPage} moves no tuple and needs the content lock only ({@code beginModify}), as
 * {@code lazy_vacuum_heap_page} takes an exclusive lock, not a cleanup lock.
 *
 * <p>All methods are static; the working state lives in the caller's {@link PruneResult}, so a
 * page costs no allocation. Any thread; one result per thread.
 */
public final class PruneHeap {

    private PruneHeap() {
    }

    /**
     * What a prune or a {@link #vacuumPage} did and found ({@code PruneFreezeResult}), and the
     * working state of the call ({@code PruneState}). Reusable: each call resets it; allocated once
     * per VACUUM or scan.
     */
    public static final class PruneResult {
        /** Tuples removed by this call: made {@code LP_DEAD} or {@code LP_UNUSED}, or a root redirected away. */
        public int ndeleted;
        /** Line pointers newly made {@code LP_DEAD} by this call. */
        public int nnewlpdead;
        /** {@code LP_DEAD} items on the page after the call, earlier ones included. */
        public int lpdeadItems;
        /** Their line numbers, ascending: what VACUUM removes from the indexes, then hands to {@link #vacuumPage}. */
        public final int[] deadOffsets = new int[HeapPage.MAX_TUPLES];
        /**
         * Tuples left that count as live ({@code live_tuples}): {@code HEAPTUPLE_LIVE}, and
         * {@code HEAPTUPLE_DELETE_IN_PROGRESS} (a delete not committed yet), as PostgreSQL counts them.
         */
        public int live;
        /** Tuples left that are dead but not removable yet: an open snapshot may see them ({@code recently_dead_tuples}). */
        public int recentlyDead;
        /** Tuples frozen by this call. */
        public int frozen;
        /**
         * No {@code LP_DEAD} item left and every remaining tuple visible to all: inserter committed
         * below {@code OldestXmin} (or frozen), not deleted (or the deleter aborted).
         */
        public boolean allVisible;
        /** {@link #allVisible}, and every remaining tuple frozen ({@code HEAP_XMIN_FROZEN}, no {@code t_xmax}). */
        public boolean allFrozen;
        /** The page has a tuple left (a normal or redirected line): {@code hastup}, for truncation. */
        public boolean hastup;
        /** The page was modified: the caller marks the buffer dirty. */
        public boolean changed;

        // ---- working state (PruneState), per call
        final byte[] htsv = new byte[HeapPage.MAX_TUPLES + 1];
        final boolean[] processed = new boolean[HeapPage.MAX_TUPLES + 1];
        final int[] rootItems = new int[HeapPage.MAX_TUPLES];
        final int[] heapOnlyItems = new int[HeapPage.MAX_TUPLES];
        final int[] chainItems = new int[HeapPage.MAX_TUPLES];
        final int[] redirected = new int[HeapPage.MAX_TUPLES * 2];
        final int[] nowDead = new int[HeapPage.MAX_TUPLES];
        final int[] nowUnused = new int[HeapPage.MAX_TUPLES];
        final int[] frozenLines = new int[HeapPage.MAX_TUPLES];
        final int[] itemLine = new int[HeapPage.MAX_TUPLES];
        final int[] itemOff = new int[HeapPage.MAX_TUPLES];
        int nroot;
        int nheapOnly;
        int nredirected;
        int ndead;
        int nunused;
        int newPruneXid;
        boolean attemptFreeze;

        void reset() {
            ndeleted = 0;
            nnewlpdead = 0;
            lpdeadItems = 0;
            live = 0;
            recentlyDead = 0;
            frozen = 0;
            allVisible = true; // set_all_visible: cleared by what is found
            allFrozen = true;
            hastup = false;
            changed = false;
            nroot = 0;
            nheapOnly = 0;
            nredirected = 0;
            ndead = 0;
            nunused = 0;
            newPruneXid = Transactions.INVALID_XID;
        }
    }

    /**
     * {@code heap_page_prune_and_freeze}: prunes {@code page} (heap block {@code block}) with
     * {@code cutoffs}, freezes when {@code freeze}, and reports into {@code out}. The caller holds
     * the page's cleanup lock and marks the buffer dirty when {@code out.changed}.
     *
     * @throws IllegalStateException naming block and line when a line pointer points outside the
     *         tuple space or the page has more lines than a heap page can (nothing is changed then)
     */
    public static void pruneAndFreeze(MemorySegment page, long block, VacuumCutoffs cutoffs, boolean freeze, PruneResult out) {
        out.reset();
        out.attemptFreeze = freeze && cutoffs.freezeLimit() != Transactions.INVALID_XID;
        int maxoff = checkedLineCount(page, block);

        // prune_freeze_plan: judge every tuple once, collect roots and heap-only tuples (ascending)
        for (int off = 1; off <= maxoff; off++) {
            out.processed[off] = false;
            out.htsv[off] = -1;
            int lp = HeapPage.linePointer(page, off);
            switch (HeapPage.lpFlags(lp)) {
                case HeapPage.LP_UNUSED -> out.processed[off] = true; // heap_prune_record_unchanged_lp_unused
                case HeapPage.LP_DEAD -> recordUnchangedDead(out, off);
                case HeapPage.LP_REDIRECT -> out.rootItems[out.nroot++] = off;
                default -> {
                    int tup = tuple(page, block, off);
                    out.htsv[off] = (byte) cutoffs.satisfiesVacuum(page, tup);
                    if ((HeapPage.infomask2(page, tup) & Snapshot.HEAP_ONLY_TUPLE) == 0) {
                        out.rootItems[out.nroot++] = off;
                    } else {
                        out.heapOnlyItems[out.nheapOnly++] = off;
                    }
                }
            }
        }
        for (int i = 0; i < out.nroot; i++) {
            int root = out.rootItems[i];
            if (!out.processed[root]) { // not already part of an earlier chain
                pruneChain(page, block, maxoff, root, cutoffs, out);
            }
        }
        // heap-only tuples no chain reached: a dead one that chains to nothing (an aborted HOT
        // update) is removed; the rest are left as they are
        for (int i = 0; i < out.nheapOnly; i++) {
            int off = out.heapOnlyItems[i];
            if (out.processed[off]) {
                continue;
            }
            int tup = HeapPage.tupleOffset(page, off);
            if (out.htsv[off] == VacuumCutoffs.HEAPTUPLE_DEAD
                    && (HeapPage.infomask2(page, tup) & Snapshot.HEAP_HOT_UPDATED) == 0) {
                recordUnused(out, off, true);
            } else if (out.htsv[off] == VacuumCutoffs.HEAPTUPLE_DEAD) {
                // PostgreSQL stops with "dead heap-only tuple is not linked to from any HOT chain";
                // pageio keeps the tuple as evidence and only keeps the page from being all-visible
                out.processed[off] = true;
                out.hastup = true;
                out.allVisible = false;
                out.allFrozen = false;
            } else {
                recordUnchangedNormal(page, off, cutoffs, out);
            }
        }

        // heap_page_prune_execute, then the freeze plans and the page's hints
        boolean doPrune = out.nredirected > 0 || out.ndead > 0 || out.nunused > 0;
        boolean doFreeze = out.frozen > 0;
        boolean doHintPrune = Page.pruneXid(page) != out.newPruneXid || (Page.flags(page) & Page.PD_PAGE_FULL) != 0;
        if (doPrune) {
            for (int i = 0; i < out.nredirected; i++) {
                HeapPage.setLinePointer(page, out.redirected[2 * i], out.redirected[2 * i + 1], HeapPage.LP_REDIRECT, 0);
            }
            for (int i = 0; i < out.ndead; i++) {
                HeapPage.setLinePointer(page, out.nowDead[i], 0, HeapPage.LP_DEAD, 0);
            }
            for (int i = 0; i < out.nunused; i++) {
                HeapPage.setLinePointer(page, out.nowUnused[i], 0, HeapPage.LP_UNUSED, 0);
            }
            repairFragmentation(page, block, out);
        }
        if (doFreeze) {
            for (int i = 0; i < out.frozen; i++) {
                executeFreeze(page, HeapPage.tupleOffset(page, out.frozenLines[i]), cutoffs);
            }
        }
        if (doPrune || doFreeze || doHintPrune) {
            Page.setPruneXid(page, out.newPruneXid);
            Page.setFlags(page, Page.flags(page) & ~Page.PD_PAGE_FULL); // PageClearFull
            out.changed = true;
        }
        out.nnewlpdead = out.ndead;
        sortAscending(out.deadOffsets, out.lpdeadItems);
        // LP_DEAD items keep the page from being all-visible (set_all_visible is decided without
        // them first in PostgreSQL, for the freezing decision, then corrected)
        if (out.lpdeadItems > 0) {
            out.allVisible = false;
        }
        out.allFrozen &= out.allVisible;
    }

    /** {@code heap_prune_chain}: the chain from {@code root}, recorded as unchanged, redirected or dead. */
    private static void pruneChain(MemorySegment page, long block, int maxoff, int root, VacuumCutoffs cutoffs, PruneResult out) {
        int rootLp = HeapPage.linePointer(page, root);
        boolean rootRedirected = HeapPage.lpFlags(rootLp) == HeapPage.LP_REDIRECT;
        int priorXmax = Transactions.INVALID_XID;
        int nchain = 0;
        int ndeadchain = 0;
        int off = root;
        boolean ended = false; // reached a member that survives, or the chain's last member (process_chain)
        for (;;) {
            if (off < 1 || off > maxoff || out.processed[off]) {
                break; // past the line array, or part of another chain
            }
            int lp = HeapPage.linePointer(page, off);
            int flags = HeapPage.lpFlags(lp);
            if (flags == HeapPage.LP_UNUSED || flags == HeapPage.LP_DEAD) {
                break;
            }
            if (flags == HeapPage.LP_REDIRECT) {
                if (nchain > 0) {
                    break; // a redirect only starts a chain
                }
                out.chainItems[nchain++] = off;
                off = HeapPage.lpOff(rootLp);
                continue;
            }
            int tup = HeapPage.tupleOffset(page, off);
            if (priorXmax != Transactions.INVALID_XID && HeapPage.xmin(page, tup) != priorXmax) {
                break; // not the version the previous member was updated to
            }
            out.chainItems[nchain++] = off;
            int status = out.htsv[off];
            if (status == VacuumCutoffs.HEAPTUPLE_DEAD) {
                ndeadchain = nchain; // the last DEAD member seen
            } else if (status != VacuumCutoffs.HEAPTUPLE_RECENTLY_DEAD) {
                ended = true; // LIVE, INSERT_IN_PROGRESS, DELETE_IN_PROGRESS: the chain survives from here
                break;
            }
            // dead or recently dead: go on, a DEAD member may follow
            if ((HeapPage.infomask2(page, tup) & Snapshot.HEAP_HOT_UPDATED) == 0) {
                ended = true;
                break;
            }
            off = HeapPage.ctidLine(page, tup);
            priorXmax = HeapPage.xmax(page, tup);
        }
        if (!ended && rootRedirected && nchain < 2) {
            // a redirect leading to no member (its target was removed with another chain): LP_DEAD
            recordDead(out, root, false);
            return;
        }
        // process_chain
        if (ndeadchain == 0) {
            int i = 0;
            if (rootRedirected) {
                out.processed[root] = true; // heap_prune_record_unchanged_lp_redirect
                out.hastup = true;
                i++;
            }
            for (; i < nchain; i++) {
                recordUnchangedNormal(page, out.chainItems[i], cutoffs, out);
            }
        } else if (ndeadchain == nchain) {
            recordDead(out, root, !rootRedirected); // the index entries still point at the root
            for (int i = 1; i < nchain; i++) {
                recordUnused(out, out.chainItems[i], true);
            }
        } else {
            recordRedirect(out, root, out.chainItems[ndeadchain], !rootRedirected);
            for (int i = 1; i < ndeadchain; i++) {
                recordUnused(out, out.chainItems[i], true);
            }
            for (int i = ndeadchain; i < nchain; i++) {
                recordUnchangedNormal(page, out.chainItems[i], cutoffs, out);
            }
        }
    }

    /** {@code heap_prune_record_redirect}: the redirect target is counted as an unchanged tuple by the caller. */
    private static void recordRedirect(PruneResult out, int off, int target, boolean wasNormal) {
        out.processed[off] = true;
        out.redirected[2 * out.nredirected] = off;
        out.redirected[2 * out.nredirected + 1] = target;
        out.nredirected++;
        if (wasNormal) {
            out.ndeleted++;
        }
        out.hastup = true;
    }

    /** {@code heap_prune_record_dead}: a line that becomes {@code LP_DEAD}, for VACUUM to remove. */
    private static void recordDead(PruneResult out, int off, boolean wasNormal) {
        out.processed[off] = true;
        out.nowDead[out.ndead++] = off;
        out.deadOffsets[out.lpdeadItems++] = off;
        if (wasNormal) {
            out.ndeleted++;
        }
    }

    /** {@code heap_prune_record_unused}: a line that becomes {@code LP_UNUSED}. */
    private static void recordUnused(PruneResult out, int off, boolean wasNormal) {
        out.processed[off] = true;
        out.nowUnused[out.nunused++] = off;
        if (wasNormal) {
            out.ndeleted++;
        }
    }

    /** {@code heap_prune_record_unchanged_lp_dead}: an {@code LP_DEAD} line from an earlier prune. */
    private static void recordUnchangedDead(PruneResult out, int off) {
        out.processed[off] = true;
        out.deadOffsets[out.lpdeadItems++] = off;
    }

    /**
     * {@code heap_prune_record_unchanged_lp_normal}: a tuple that stays; counted, its visibility to
     * all checked, and a freeze plan made for it ({@code heap_prepare_freeze_tuple} reduced).
     */
    private static void recordUnchangedNormal(MemorySegment page, int off, VacuumCutoffs cutoffs, PruneResult out) {
        out.processed[off] = true;
        out.hastup = true;
        int tup = HeapPage.tupleOffset(page, off);
        int infomask = HeapPage.infomask(page, tup);
        switch (out.htsv[off]) {
            case VacuumCutoffs.HEAPTUPLE_LIVE -> {
                out.live++;
                // visible to all: the inserter committed (HeapTupleSatisfiesVacuum said LIVE; pageio's
                // commits are synchronous, so no hint bit is needed as proof) below OldestXmin
                if ((infomask & Snapshot.HEAP_XMIN_FROZEN) != Snapshot.HEAP_XMIN_FROZEN
                        && !VacuumCutoffs.precedes(HeapPage.xmin(page, tup), cutoffs.oldestXmin())) {
                    out.allVisible = false;
                    out.allFrozen = false;
                }
            }
            case VacuumCutoffs.HEAPTUPLE_RECENTLY_DEAD -> {
                out.recentlyDead++;
                out.allVisible = false;
                out.allFrozen = false;
                recordPrunable(out, HeapPage.xmax(page, tup)); // soon DEAD: look at the page again then
            }
            case VacuumCutoffs.HEAPTUPLE_INSERT_IN_PROGRESS -> {
                out.allVisible = false; // not counted live: the inserter counts it when it commits
                out.allFrozen = false;
            }
            case VacuumCutoffs.HEAPTUPLE_DELETE_IN_PROGRESS -> {
                out.live++;
                out.allVisible = false;
                out.allFrozen = false;
                recordPrunable(out, HeapPage.xmax(page, tup));
            }
            default -> throw new IllegalStateException("pruning: unexpected HeapTupleSatisfiesVacuum result "
                    + out.htsv[off] + " for a tuple that stays at line " + off);
        }
        // heap_prepare_freeze_tuple: freeze what may be frozen; is the tuple totally frozen after?
        boolean xminFrozen = (infomask & Snapshot.HEAP_XMIN_FROZEN) == Snapshot.HEAP_XMIN_FROZEN;
        boolean noXmax = (infomask & Snapshot.HEAP_XMAX_INVALID) != 0;
        boolean freezeXmin = false;
        boolean freezeXmax = false;
        if (out.attemptFreeze) {
            int status = out.htsv[off];
            freezeXmin = !xminFrozen && status != VacuumCutoffs.HEAPTUPLE_INSERT_IN_PROGRESS
                    && VacuumCutoffs.precedes(HeapPage.xmin(page, tup), cutoffs.freezeLimit());
            // a live tuple's t_xmax is an aborted (or crashed) deleter or a lock: cleared once old
            freezeXmax = !noXmax && status == VacuumCutoffs.HEAPTUPLE_LIVE
                    && VacuumCutoffs.precedes(HeapPage.xmax(page, tup), cutoffs.oldestXmin());
        }
        if (freezeXmin || freezeXmax) {
            out.frozenLines[out.frozen++] = off;
        }
        if (!(xminFrozen || freezeXmin) || !(noXmax || freezeXmax)) {
            out.allFrozen = false;
        }
    }

    /** {@code heap_execute_freeze_tuple}: the plan {@link #recordUnchangedNormal} made, applied to the tuple at {@code tup}. */
    private static void executeFreeze(MemorySegment page, int tup, VacuumCutoffs cutoffs) {
        int infomask = HeapPage.infomask(page, tup);
        if ((infomask & Snapshot.HEAP_XMIN_FROZEN) != Snapshot.HEAP_XMIN_FROZEN
                && VacuumCutoffs.precedes(HeapPage.xmin(page, tup), cutoffs.freezeLimit())) {
            infomask |= Snapshot.HEAP_XMIN_FROZEN; // t_xmin kept, as PostgreSQL 9.4 on keeps it
        }
        if ((infomask & Snapshot.HEAP_XMAX_INVALID) == 0 && VacuumCutoffs.precedes(HeapPage.xmax(page, tup), cutoffs.oldestXmin())) {
            HeapPage.setXmax(page, tup, Transactions.INVALID_XID);
            infomask = (infomask & ~Snapshot.HEAP_XMAX_BITS) | Snapshot.HEAP_XMAX_INVALID;
            HeapPage.setInfomask2(page, tup, HeapPage.infomask2(page, tup) & ~(Snapshot.HEAP_HOT_UPDATED | Snapshot.HEAP_KEYS_UPDATED));
        }
        HeapPage.setInfomask(page, tup, infomask);
    }

    /** {@code heap_prune_record_prunable}: the oldest id whose end may make a tuple here removable. */
    private static void recordPrunable(PruneResult out, int xid) {
        if (out.newPruneXid == Transactions.INVALID_XID || Integer.compareUnsigned(xid, out.newPruneXid) < 0) {
            out.newPruneXid = xid;
        }
    }

    /**
     * {@code PageRepairFragmentation}: the tuples with storage moved together at the page's end in
     * the order of their offsets (highest first: each moves only towards the end, past no tuple
     * still to move, {@code compactify_tuples}' presorted case), {@code pd_upper} set, and
     * {@code PD_HAS_FREE_LINES} set when an {@code LP_UNUSED} line is left.
     */
    static void repairFragmentation(MemorySegment page, long block, PruneResult out) {
        int nline = HeapPage.lineCount(page);
        int nstorage = 0;
        int nunused = 0;
        for (int line = 1; line <= nline; line++) {
            int lp = HeapPage.linePointer(page, line);
            int flags = HeapPage.lpFlags(lp);
            if (flags == HeapPage.LP_NORMAL) {
                int at = nstorage++;
                // insertion by offset, highest first (already in that order for pages filled from the end)
                int off = HeapPage.lpOff(lp);
                while (at > 0 && out.itemOff[at - 1] < off) {
                    out.itemOff[at] = out.itemOff[at - 1];
                    out.itemLine[at] = out.itemLine[at - 1];
                    at--;
                }
                out.itemOff[at] = off;
                out.itemLine[at] = line;
            } else if (flags == HeapPage.LP_UNUSED) {
                HeapPage.setLinePointer(page, line, 0, HeapPage.LP_UNUSED, 0);
                nunused++;
            }
        }
        int upper = Page.special(page);
        for (int i = 0; i < nstorage; i++) {
            int line = out.itemLine[i];
            int lp = HeapPage.linePointer(page, line);
            int len = HeapPage.lpLen(lp);
            upper -= Page.maxAlign(len);
            if (upper < Page.lower(page)) {
                throw new IllegalStateException("pruning block " + block + ": the tuples' lengths exceed the page (line " + line
                        + "); the page is damaged");
            }
            if (upper != out.itemOff[i]) {
                MemorySegment.copy(page, out.itemOff[i], page, upper, len);
                HeapPage.setLinePointer(page, line, upper, HeapPage.LP_NORMAL, len);
            }
        }
        Page.setUpper(page, upper);
        int flags = Page.flags(page);
        Page.setFlags(page, nunused > 0 ? flags | Page.PD_HAS_FREE_LINES : flags & ~Page.PD_HAS_FREE_LINES);
    }

    /**
     * {@code lazy_vacuum_heap_page}: the lines {@code deadOffsets[0..n)}, {@code LP_DEAD} and no
     * longer referenced by any index entry, become {@code LP_UNUSED}; the line pointer array is
     * truncated ({@code PageTruncateLinePointerArray}); then whether the page is all-visible and
     * all-frozen is worked out again ({@code heap_page_would_be_all_visible}) into {@code out}
     * ({@code live}, {@code recentlyDead}, {@code lpdeadItems} and {@code deadOffsets} of what is
     * left; {@code changed} when a line changed). The caller holds the content lock and marks the
     * buffer dirty when {@code out.changed}. {@code out.ndeleted}, {@code nnewlpdead} and
     * {@code frozen} are 0.
     *
     * @throws IllegalStateException naming the line when one of {@code deadOffsets} is not an
     *         {@code LP_DEAD} line of the page (nothing is changed then)
     */
    public static void vacuumPage(MemorySegment page, int[] deadOffsets, int n, VacuumCutoffs cutoffs, PruneResult out) {
        out.reset();
        out.attemptFreeze = false;
        int nline = HeapPage.lineCount(page);
        for (int i = 0; i < n; i++) {
            int line = deadOffsets[i];
            if (line < 1 || line > nline || HeapPage.lpFlags(HeapPage.linePointer(page, line)) != HeapPage.LP_DEAD) {
                throw new IllegalStateException("vacuuming a heap page: line " + line + " is not an LP_DEAD line of the page"
                        + (line >= 1 && line <= nline ? " (lp_flags " + HeapPage.lpFlags(HeapPage.linePointer(page, line)) + ")"
                                : " (it has " + nline + " lines)"));
            }
        }
        for (int i = 0; i < n; i++) {
            HeapPage.setLinePointer(page, deadOffsets[i], 0, HeapPage.LP_UNUSED, 0);
        }
        if (n > 0) {
            truncateLinePointerArray(page);
            out.changed = true;
        }
        pageWouldBeAllVisible(page, cutoffs, out);
    }

    /**
     * {@code PageTruncateLinePointerArray}: {@code LP_UNUSED} lines at the array's end are given
     * back to the free space (line 1 always stays); {@code PD_HAS_FREE_LINES} says whether one is
     * left before them.
     */
    static void truncateLinePointerArray(MemorySegment page) {
        int nline = HeapPage.lineCount(page);
        int nunusedEnd = 0;
        boolean countDone = false;
        boolean setHint = false;
        for (int line = nline; line >= 1; line--) {
            boolean unused = HeapPage.lpFlags(HeapPage.linePointer(page, line)) == HeapPage.LP_UNUSED;
            if (!countDone && line > 1) {
                if (unused) {
                    nunusedEnd++;
                } else {
                    countDone = true;
                }
            } else if (unused) {
                setHint = true;
                break;
            }
        }
        if (nunusedEnd > 0) {
            Page.setLower(page, Page.lower(page) - nunusedEnd * HeapPage.LINE_POINTER_SIZE);
        }
        int flags = Page.flags(page);
        Page.setFlags(page, setHint ? flags | Page.PD_HAS_FREE_LINES : flags & ~Page.PD_HAS_FREE_LINES);
    }

    /**
     * {@code heap_page_would_be_all_visible} with the counts VACUUM wants: every line judged again
     * after {@link #vacuumPage}.
     */
    private static void pageWouldBeAllVisible(MemorySegment page, VacuumCutoffs cutoffs, PruneResult out) {
        int nline = HeapPage.lineCount(page);
        for (int line = 1; line <= nline; line++) {
            int lp = HeapPage.linePointer(page, line);
            switch (HeapPage.lpFlags(lp)) {
                case HeapPage.LP_UNUSED -> {
                }
                case HeapPage.LP_REDIRECT -> out.hastup = true;
                case HeapPage.LP_DEAD -> {
                    out.deadOffsets[out.lpdeadItems++] = line;
                    out.allVisible = false;
                }
                default -> {
                    int tup = HeapPage.tupleOffset(page, line);
                    if (tup < 0) {
                        throw new IllegalStateException("vacuuming a heap page: line pointer " + line
                                + " points outside the tuple space; the page is damaged");
                    }
                    out.hastup = true;
                    out.htsv[line] = (byte) cutoffs.satisfiesVacuum(page, tup);
                    if (out.htsv[line] == VacuumCutoffs.HEAPTUPLE_DEAD) {
                        out.allVisible = false; // pruned later: a tuple died since the first pass
                        out.allFrozen = false;
                    } else {
                        recordUnchangedNormal(page, line, cutoffs, out); // attemptFreeze is false: counts only
                    }
                }
            }
        }
        out.allFrozen &= out.allVisible;
    }

    /**
     * {@code heap_page_prune_opt}'s test: whether an on-access prune is worth its cost. The page's
     * {@code pd_prune_xid} is set and precedes {@code OldestXmin} (some deleter is old enough for
     * its tuples to be removable: {@code GlobalVisTestIsRemovableXid}), and the page is nearly full:
     * {@code PD_PAGE_FULL} (an update found no room), or less free space than
     * {@code max(BLCKSZ / 10, what fillfactor 100 leaves)} = 819 bytes. Reads the header without a
     * lock, as PostgreSQL does: a heuristic; the caller checks again under the lock.
     */
    public static boolean pruneWorthwhile(MemorySegment page, VacuumCutoffs cutoffs) {
        int pruneXid = Page.pruneXid(page);
        if (pruneXid == Transactions.INVALID_XID || !VacuumCutoffs.precedes(pruneXid, cutoffs.oldestXmin())) {
            return false;
        }
        int minfree = Math.max(Page.SIZE / 10, 0); // RelationGetTargetPageFreeSpace at fillfactor 100 is 0
        return (Page.flags(page) & Page.PD_PAGE_FULL) != 0 || heapFreeSpace(page) < minfree;
    }

    /**
     * {@code PageGetHeapFreeSpace}: room for one more tuple with its line pointer, or 0 when the
     * page has {@link HeapPage#MAX_TUPLES} lines and none of them is free.
     */
    public static int heapFreeSpace(MemorySegment page) {
        int space = Math.max(0, Page.exactFreeSpace(page) - HeapPage.LINE_POINTER_SIZE);
        if (space > 0 && HeapPage.lineCount(page) >= HeapPage.MAX_TUPLES) {
            if ((Page.flags(page) & Page.PD_HAS_FREE_LINES) == 0) {
                return 0;
            }
            for (int line = 1; line <= HeapPage.lineCount(page); line++) {
                if (HeapPage.lpFlags(HeapPage.linePointer(page, line)) == HeapPage.LP_UNUSED) {
                    return space;
                }
            }
            return 0;
        }
        return space;
    }

    private static int checkedLineCount(MemorySegment page, long block) {
        int maxoff = HeapPage.lineCount(page);
        if (maxoff > HeapPage.MAX_TUPLES) {
            throw new IllegalStateException("pruning block " + block + ": the page has " + maxoff + " line pointers, more than a"
                    + " heap page can hold (" + HeapPage.MAX_TUPLES + "); the page is damaged");
        }
        return maxoff;
    }

    /** The tuple of a normal line, or an error naming block and line when its line pointer is damaged. */
    private static int tuple(MemorySegment page, long block, int line) {
        int tup = HeapPage.tupleOffset(page, line);
        if (tup < 0) {
            throw new IllegalStateException("pruning block " + block + ": line pointer " + line
                    + " points outside the tuple space; the page is damaged");
        }
        return tup;
    }

    private static void sortAscending(int[] a, int n) {
        for (int i = 1; i < n; i++) {
            int v = a[i];
            int j = i - 1;
            while (j >= 0 && a[j] > v) {
                a[j + 1] = a[j];
                j--;
            }
            a[j + 1] = v;
        }
    }
}
