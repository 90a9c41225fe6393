package org.pageio.table.vacuum;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.pageio.bufmgr.BufferAccessStrategy;
import org.pageio.bufmgr.BufferPool;
import org.pageio.bufmgr.BufferSession;
import org.pageio.bufmgr.CheckpointResult;
import org.pageio.bufmgr.page.Page;
import org.pageio.bufmgr.smgr.SmgrRelation;
import org.pageio.bufmgr.stats.StatIo;
import org.pageio.bufmgr.stream.ReadStream;
import org.pageio.bufmgr.stream.StreamStats;
import org.pageio.heap.HeapPage;
import org.pageio.heap.PageReads;
import org.pageio.heap.prune.PruneHeap;
import org.pageio.heap.vm.VisibilityMap;
import org.pageio.heap.xact.VacuumCutoffs;
import org.pageio.table.IndexInfo;
import org.pageio.table.StreamFigures;
import org.pageio.table.TableInfo;
import org.pageio.table.VacuumReport;
import org.pageio.table.index.IndexBulkDelete;

/**
 * {@code VACUUM} of one table: PostgreSQL's lazy vacuum ({@code vacuumlazy.c}'s
 * {@code heap_vacuum_rel}), in its three phases, on the caller's buffer session.
 *
 * <ol>
 *   <li><b>Scan the heap</b> ({@code lazy_scan_heap}): a read stream over the heap
 *       ({@code MAINTENANCE | USE_BATCHING}: {@code maintenance_io_concurrency}, the vacuum ring)
 *       whose callback is {@code heap_vac_scan_next_block}: it skips runs of at least
 *       {@link #SKIP_PAGES_THRESHOLD} pages the visibility map marks all-visible (all-frozen for an
 *       aggressive {@code VACUUM FREEZE}), never the last page. Each page read is pruned
 *       ({@code lazy_scan_prune}: {@link PruneHeap#pruneAndFreeze} under the cleanup lock), its dead
 *       line pointers' TIDs collected. A page another session pins cannot be cleaned: it is counted
 *       and left as it is ({@code lazy_scan_noprune}, without collecting its dead items).</li>
 *   <li><b>Vacuum the indexes</b> ({@code lazy_vacuum_all_indexes}): one bulk delete per index
 *       ({@link IndexBulkDelete}) removes every entry pointing at a collected TID.</li>
 *   <li><b>Vacuum the heap</b> ({@code lazy_vacuum_heap_rel}): a second read stream over the pages
 *       with dead items marks them {@code LP_UNUSED} ({@link PruneHeap#vacuumPage}). Without indexes
 *       this is done in the first pass, page by page, as PostgreSQL does.</li>
 * </ol>
 * A page left with every tuple visible to all and no dead item gets {@code PD_ALL_VISIBLE} in the
 * phase that found it so, and its visibility map bits at the end.
 *
 * <p><b>Ordered writes, without WAL.</b> PostgreSQL orders these writes with its WAL; pageio has
 * none, so it orders them with checkpoints ({@link BufferPool#checkpoint}: every dirty buffer
 * written on the bound method, every file fsynced):
 * <ul>
 *   <li>After the index bulk deletes and before phase 3: an {@code LP_UNUSED} line pointer can be
 *       reused by a later insert, so no index entry may still point at it after a crash.</li>
 *   <li>After phase 3 and before any map bit is set: a map page may reach disk whenever it is
 *       dirty, so a bit is set only once the pruned page with {@code PD_ALL_VISIBLE}, and the index
 *       pages without the dead entries, are on disk. The map then never claims a page all-visible
 *       that, after a crash, holds a dead tuple or is reached by an index entry for one.</li>
 * </ul>
 * A crash anywhere loses at most the work not yet made durable: dead tuples stay dead (their
 * deleters committed before VACUUM started), and the next VACUUM finds them again.
 *
 * <p><b>Who runs it.</b> The engine's writer lock is held (no row change on the table meanwhile);
 * scans may run. The calling thread only.
 */
public final class LazyVacuum {

    /** Runs of fewer all-visible pages are read anyway ({@code SKIP_PAGES_THRESHOLD}): skipping breaks sequential reads. */
    public static final int SKIP_PAGES_THRESHOLD = 32;

    /** The session kind the figures of {@code stat_io} are taken from. */
    private final String sessionKind;
    private final BufferPool pool;
    private final BufferSession session;
    private final TableInfo table;
    private final SmgrRelation heap;
    private final List<IndexInfo> indexes;
    private final List<SmgrRelation> indexRelations;
    private final VacuumCutoffs cutoffs;
    private final boolean aggressive;
    private final ReadStream.Options options;
    private final BufferAccessStrategy ring;
    private final VisibilityMap vm;
    /** The {@code stat_io} context of the reads and writes: vacuum with a ring, normal without. */
    private final StatIo.IoContext context;

    // ----- what the run found (vacrel's counters)
    private long scannedPages;
    private long skippedAllVisible;
    private long notPrunedPinned;
    private long tuplesRemoved;
    private long liveTuples;
    private long recentlyDead;
    private long frozenPages;
    private long tuplesFrozen;
    private long lpdeadItemPages;
    private long lpdeadItems;
    private long dirtied;
    private long vmAllVisible;
    private long vmAllFrozen;
    private long readWaitNanos;
    private long pruneNanos;
    private final List<VacuumReport.IndexVacuum> indexResults = new ArrayList<>();
    /** Dead TIDs ({@code IndexBuilder.tid} form), ascending: blocks are scanned in order, lines ascend. */
    private long[] deadTids = new long[1024];
    private int ndead;
    /** Heap blocks whose map bits are set at the end, with the bits ({@code block << 2 | flags}). */
    private long[] vmPending = new long[256];
    private int nvmPending;
    private StreamFigures firstPass = StreamFigures.NONE;

    /**
     * @param indexRelations the relations of {@code indexes}, in the same order
     * @param ioConcurrency  {@code maintenance_io_concurrency} for this run, or {@link ReadStream.Options#INHERIT}
     * @param ioCombineLimit {@code io_combine_limit}, or {@link ReadStream.Options#INHERIT}
     */
    public LazyVacuum(BufferPool pool, BufferSession session, String sessionKind, TableInfo table, SmgrRelation heap,
            List<IndexInfo> indexes, List<SmgrRelation> indexRelations, VacuumCutoffs cutoffs, boolean aggressive,
            int ioConcurrency, int ioCombineLimit, long bufferUsageLimitKb) {
        this.pool = pool;
        this.session = session;
        this.sessionKind = sessionKind;
        this.table = table;
        this.heap = heap;
        this.indexes = List.copyOf(indexes);
        this.indexRelations = List.copyOf(indexRelations);
        this.cutoffs = cutoffs;
        this.aggressive = aggressive;
        this.options = new ReadStream.Options(ioConcurrency, ioCombineLimit, null);
        this.ring = bufferUsageLimitKb < 0 ? pool.strategy(BufferAccessStrategy.Type.VACUUM)
                : pool.strategy(BufferAccessStrategy.Type.VACUUM, bufferUsageLimitKb);
        this.context = ring == null ? StatIo.IoContext.NORMAL : ring.context();
        this.vm = new VisibilityMap(session, heap, ring);
    }

    /** Runs the three phases and the map's update; returns the {@code VACUUM VERBOSE} figures. */
    public VacuumReport run(boolean trackIoTiming) throws IOException {
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        long cpu0 = threads.getCurrentThreadCpuTime();
        long user0 = threads.getCurrentThreadUserTime();
        long[] io0 = vacuumIo();
        long t0 = System.nanoTime();
        long written = 0;
        long writeNanos = 0;

        long p0 = System.nanoTime();
        scanHeap();
        long p1 = System.nanoTime();
        long checkpointNanos = 0;
        long indexNanos = 0;
        long heapVacuumNanos = 0;
        long mapNanos = 0;
        int indexScans = 0;
        if (ndead > 0 && !indexes.isEmpty()) {
            indexScans = 1;
            for (int i = 0; i < indexes.size(); i++) {
                IndexInfo info = indexes.get(i);
                IndexBulkDelete.Stats r = IndexBulkDelete.bulkDeleteStats(session, indexRelations.get(i), info.name(), deadTids,
                        ndead, ring, options.ioConcurrency());
                indexResults.add(new VacuumReport.IndexVacuum(info.name(), r.pages(), r.removed(), r.entries()));
            }
            long i1 = System.nanoTime();
            indexNanos = i1 - p1;
            CheckpointResult c = pool.checkpoint(); // index entries gone, on disk, before any line pointer is reused
            written += c.buffersWritten();
            writeNanos += c.writeNanos() + c.syncNanos();
            long v0 = System.nanoTime();
            checkpointNanos += v0 - i1;
            vacuumHeap();
            heapVacuumNanos = System.nanoTime() - v0;
        } else {
            for (int i = 0; i < indexes.size(); i++) {
                IndexInfo info = indexes.get(i);
                indexResults.add(new VacuumReport.IndexVacuum(info.name(), indexRelations.get(i).nblocks(), 0, info.entries()));
            }
        }
        if (nvmPending > 0) {
            long c0 = System.nanoTime();
            CheckpointResult c = pool.checkpoint(); // pruned pages and PD_ALL_VISIBLE on disk before a map bit
            written += c.buffersWritten();
            writeNanos += c.writeNanos() + c.syncNanos();
            long m0 = System.nanoTime();
            checkpointNanos += m0 - c0;
            setVisibilityMap();
            mapNanos = System.nanoTime() - m0;
        }
        long elapsed = System.nanoTime() - t0;
        long[] io1 = vacuumIo();
        long cpu = threads.getCurrentThreadCpuTime() - cpu0;
        long user = threads.getCurrentThreadUserTime() - user0;
        written += io1[2] - io0[2];
        writeNanos += io1[3] - io0[3];
        return new VacuumReport(table.name(), heap.toString(), aggressive, table.blocks(), scannedPages, skippedAllVisible,
                notPrunedPinned, tuplesRemoved, liveTuples, recentlyDead, cutoffs.oldestXmin(),
                frozenPages, tuplesFrozen, vmAllVisible, vmAllFrozen, lpdeadItemPages, lpdeadItems, indexScans, indexResults,
                io1[0] - io0[0], io1[1] - io0[1], dirtied, written, readWaitNanos, writeNanos, elapsed, user,
                Math.max(0, cpu - user), trackIoTiming, firstPass,
                new VacuumReport.Phases(p1 - p0, pruneNanos, indexNanos, heapVacuumNanos, checkpointNanos, mapNanos));
    }

    /** This session kind's hits, reads, writes and write time in its context of {@code stat_io} (other sessions of the kind add to them). */
    private long[] vacuumIo() {
        long[] v = new long[4];
        for (StatIo.Row r : pool.stats().rows()) {
            if (r.kind().equals(sessionKind) && r.context() == context) {
                v[0] += r.value(StatIo.Column.HITS);
                v[1] += r.value(StatIo.Column.READS) == 0 ? 0 : r.value(StatIo.Column.READ_BYTES) / Page.SIZE;
                v[2] += r.value(StatIo.Column.WRITE_BYTES) / Page.SIZE;
                v[3] += r.value(StatIo.Column.WRITE_TIME);
            }
        }
        return v;
    }

    // ------------------------------------------------------------------ phase 1

    /**
     * {@code heap_vac_scan_next_block} as a read stream callback: the next block to scan, skipping
     * runs of all-visible (aggressive: all-frozen) pages of at least {@link #SKIP_PAGES_THRESHOLD};
     * the per-buffer data is {@code block << 1 | all_visible_according_to_vm}. The map is read
     * here, through the stream's session, as PostgreSQL's callback reads it.
     */
    private final class NextBlock implements ReadStream.BlockCallback {
        private final VisibilityMap.VmBuffer vmbuf;
        private final long relPages;
        private long next;
        private long nextUnskippable = -1;
        private boolean nextUnskippableAllVisible;
        private boolean skippingRange;

        NextBlock(VisibilityMap.VmBuffer vmbuf, long relPages) {
            this.vmbuf = vmbuf;
            this.relPages = relPages;
        }

        @Override
        public long nextBlock(ReadStream s) {
            if (next >= relPages) {
                return ReadStream.END;
            }
            if (next > nextUnskippable) {
                findNextUnskippable();
                skippingRange = nextUnskippable - next >= SKIP_PAGES_THRESHOLD;
                if (skippingRange) {
                    skippedAllVisible += nextUnskippable - next;
                    next = nextUnskippable;
                }
            }
            long block = next++;
            boolean allVisible = block < nextUnskippable || nextUnskippableAllVisible;
            s.setPerBufferData(block << 1 | (allVisible ? 1 : 0));
            return block;
        }

        /** {@code find_next_unskippable_block}: the first block from {@code next} the scan must read. */
        private void findNextUnskippable() {
            long b = next;
            try {
                for (; b < relPages - 1; b++) {
                    int bits = vm.getStatus(b, vmbuf);
                    boolean skippable = (bits & VisibilityMap.VISIBILITYMAP_ALL_VISIBLE) != 0
                            && (!aggressive || (bits & VisibilityMap.VISIBILITYMAP_ALL_FROZEN) != 0);
                    if (!skippable) {
                        nextUnskippableAllVisible = (bits & VisibilityMap.VISIBILITYMAP_ALL_VISIBLE) != 0;
                        break;
                    }
                }
                if (b >= relPages - 1) { // the last page is always scanned
                    b = relPages - 1;
                    nextUnskippableAllVisible = (vm.getStatus(b, vmbuf) & VisibilityMap.VISIBILITYMAP_ALL_VISIBLE) != 0;
                }
            } catch (IOException e) {
                throw new java.io.UncheckedIOException("reading the visibility map of " + heap + " at heap block " + b
                        + ": " + e.getMessage(), e);
            }
            nextUnskippable = b;
        }
    }

    /** Phase 1, {@code lazy_scan_heap}. */
    private void scanHeap() throws IOException {
        long relPages = table.blocks();
        if (relPages == 0) {
            return;
        }
        PruneHeap.PruneResult res = new PruneHeap.PruneResult();
        PruneHeap.PruneResult second = new PruneHeap.PruneResult();
        boolean onePass = indexes.isEmpty();
        try (VisibilityMap.VmBuffer vmbuf = vm.buffer(new PageReads(session));
                ReadStream stream = new ReadStream(session, heap, new NextBlock(vmbuf, relPages),
                        ReadStream.MAINTENANCE | ReadStream.USE_BATCHING, ring, options)) {
            int buf;
            while ((buf = stream.next()) >= 0) {
                long data = stream.perBufferData();
                long block = data >>> 1;
                boolean allVisibleInVm = (data & 1) != 0;
                try {
                    scannedPages++;
                    scanPage(buf, block, allVisibleInVm, onePass, res, second);
                } finally {
                    session.releaseBuffer(buf);
                }
            }
            StreamStats st = stream.stats();
            readWaitNanos += st.waitNanos();
            firstPass = new StreamFigures(st.capacity(), st.averagePrefetchDistance(), st.maxPrefetchDistance(), st.ioCount(),
                    st.waits(), st.averageIoSizeBlocks(), st.averageIosInProgress(), st.waitNanos(),
                    st.hits() + st.adoptedBlocks(), Math.round(st.averageIoSizeBlocks() * st.ioCount()) - st.adoptedBlocks());
        }
    }

    /** {@code lazy_scan_prune} on one pinned page (or {@code lazy_scan_noprune} when it cannot be cleaned). */
    private void scanPage(int buf, long block, boolean allVisibleInVm, boolean onePass, PruneHeap.PruneResult res,
            PruneHeap.PruneResult second) throws IOException {
        MemorySegment page = session.page(buf);
        if (!session.conditionalLockForCleanup(buf)) {
            notPrunedPinned++;
            countWithoutPruning(page);
            return;
        }
        boolean changed = false;
        try {
            if (Page.isNew(page)) { // extended, never written (a crash): lazy_scan_new_or_empty
                HeapPage.init(page);
                changed = true;
            }
            long t0 = System.nanoTime();
            PruneHeap.pruneAndFreeze(page, block, cutoffs, aggressive, res);
            pruneNanos += System.nanoTime() - t0;
            changed |= res.changed;
            tuplesRemoved += res.ndeleted;
            liveTuples += res.live;
            recentlyDead += res.recentlyDead;
            if (res.frozen > 0) {
                frozenPages++;
                tuplesFrozen += res.frozen;
            }
            boolean allVisible = res.allVisible;
            boolean allFrozen = res.allFrozen;
            if (res.lpdeadItems > 0) {
                lpdeadItemPages++;
                lpdeadItems += res.lpdeadItems;
                if (onePass) { // no index points at them: unused at once
                    PruneHeap.vacuumPage(page, res.deadOffsets, res.lpdeadItems, cutoffs, second);
                    changed = true;
                    allVisible = second.allVisible;
                    allFrozen = second.allFrozen;
                } else {
                    for (int i = 0; i < res.lpdeadItems; i++) {
                        addDead(block << 9 | res.deadOffsets[i]);
                    }
                }
            }
            changed |= settleAllVisible(page, block, allVisible, allFrozen, allVisibleInVm);
        } finally {
            session.endModify(buf, changed);
        }
        if (changed) {
            dirtied++;
        }
    }

    /**
     * The page's visibility after a phase: all-visible pages get {@code PD_ALL_VISIBLE} now and their
     * map bits at the end; a page the map calls all-visible that is not loses the bits now
     * (PostgreSQL's "page is not marked all-visible but visibility map bit is set" repair). Returns
     * whether the page changed.
     */
    private boolean settleAllVisible(MemorySegment page, long block, boolean allVisible, boolean allFrozen, boolean allVisibleInVm)
            throws IOException {
        boolean changed = false;
        if (allVisible) {
            if (!HeapPage.allVisible(page)) {
                Page.setFlags(page, Page.flags(page) | Page.PD_ALL_VISIBLE);
                changed = true;
            }
            int flags = VisibilityMap.VISIBILITYMAP_ALL_VISIBLE | (allFrozen ? VisibilityMap.VISIBILITYMAP_ALL_FROZEN : 0);
            if (!allVisibleInVm || allFrozen) {
                addVmPending(block, flags);
            }
        } else {
            if (HeapPage.allVisible(page)) {
                Page.setFlags(page, Page.flags(page) & ~Page.PD_ALL_VISIBLE);
                changed = true;
            }
            if (allVisibleInVm) {
                vm.clear(block, VisibilityMap.VISIBILITYMAP_VALID_BITS);
            }
        }
        return changed;
    }

    /** A page another session pins: counted as it is, nothing changed. */
    private void countWithoutPruning(MemorySegment page) {
        int n = HeapPage.lineCount(page);
        for (int line = 1; line <= n; line++) {
            int off = HeapPage.tupleOffset(page, line);
            if (off < 0) {
                continue;
            }
            switch (cutoffs.satisfiesVacuum(page, off)) {
                case VacuumCutoffs.HEAPTUPLE_LIVE, VacuumCutoffs.HEAPTUPLE_INSERT_IN_PROGRESS,
                        VacuumCutoffs.HEAPTUPLE_DELETE_IN_PROGRESS -> liveTuples++;
                default -> recentlyDead++; // dead ones wait for the next VACUUM: counted as not yet removable
            }
        }
    }

    private void addDead(long tid) {
        if (ndead == deadTids.length) {
            deadTids = Arrays.copyOf(deadTids, ndead * 2);
        }
        deadTids[ndead++] = tid;
    }

    private void addVmPending(long block, int flags) {
        if (nvmPending == vmPending.length) {
            vmPending = Arrays.copyOf(vmPending, nvmPending * 2);
        }
        vmPending[nvmPending++] = block << 2 | flags;
    }

    // ------------------------------------------------------------------ phase 3

    /** Phase 3, {@code lazy_vacuum_heap_rel}: the pages with dead items, through a read stream, their items made unused. */
    private void vacuumHeap() throws IOException {
        // the distinct blocks of the dead TIDs, each with where its TIDs start
        long[] blocks = new long[(int) Math.min(ndead, lpdeadItemPages)];
        int[] starts = new int[blocks.length + 1];
        int nb = 0;
        for (int i = 0; i < ndead; i++) {
            long b = deadTids[i] >>> 9;
            if (nb == 0 || blocks[nb - 1] != b) {
                blocks[nb] = b;
                starts[nb++] = i;
            }
        }
        starts[nb] = ndead;
        final int count = nb;
        ReadStream.BlockCallback cb = new ReadStream.BlockCallback() {
            int i;

            @Override
            public long nextBlock(ReadStream s) {
                if (i >= count) {
                    return ReadStream.END;
                }
                s.setPerBufferData(i);
                return blocks[i++];
            }
        };
        int[] offsets = new int[HeapPage.MAX_TUPLES];
        PruneHeap.PruneResult res = new PruneHeap.PruneResult();
        try (ReadStream stream = new ReadStream(session, heap, cb, ReadStream.MAINTENANCE | ReadStream.USE_BATCHING, ring,
                options)) {
            int buf;
            while ((buf = stream.next()) >= 0) {
                int i = (int) stream.perBufferData();
                long block = blocks[i];
                int n = 0;
                for (int t = starts[i]; t < starts[i + 1]; t++) {
                    offsets[n++] = (int) (deadTids[t] & 0x1FF);
                }
                try {
                    MemorySegment page = session.page(buf);
                    session.beginModify(buf); // an exclusive lock is enough: no tuple moves
                    try {
                        PruneHeap.vacuumPage(page, offsets, n, cutoffs, res);
                        settleAllVisible(page, block, res.allVisible, res.allFrozen, false);
                    } finally {
                        session.endModify(buf, true);
                    }
                    dirtied++;
                } finally {
                    session.releaseBuffer(buf);
                }
            }
            readWaitNanos += stream.stats().waitNanos();
        }
    }

    // ------------------------------------------------------------------ the map

    /**
     * Sets the pending map bits ({@code visibilitymap_set}), after the checkpoint that made their
     * pages durable, keeping the map page pinned across blocks ({@code vmbuffer}).
     */
    private void setVisibilityMap() throws IOException {
        long lastMapBlock = -1;
        try (VisibilityMap.VmBuffer vmbuf = vm.buffer(new PageReads(session))) {
            for (int i = 0; i < nvmPending; i++) {
                long block = vmPending[i] >>> 2;
                int flags = (int) (vmPending[i] & 3);
                vm.pin(block, vmbuf);
                int old = vm.set(block, flags, vmbuf);
                if ((old & VisibilityMap.VISIBILITYMAP_ALL_VISIBLE) == 0) {
                    vmAllVisible++;
                }
                if ((flags & VisibilityMap.VISIBILITYMAP_ALL_FROZEN) != 0 && (old & VisibilityMap.VISIBILITYMAP_ALL_FROZEN) == 0) {
                    vmAllFrozen++;
                }
                long mapBlock = VisibilityMap.heapBlkToMapBlock(block);
                if ((old | flags) != old && mapBlock != lastMapBlock) {
                    dirtied++;
                    lastMapBlock = mapBlock;
                }
            }
        }
    }
}
