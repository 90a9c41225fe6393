package org.pageio.table.scan;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import org.pageio.bufmgr.BufferAccessStrategy;
import org.pageio.bufmgr.BufferSession;
import org.pageio.bufmgr.ReadBuffersOperation;
import org.pageio.bufmgr.page.PageVerifier;
import org.pageio.bufmgr.smgr.SmgrRelation;
import org.pageio.bufmgr.stream.ReadStream;
import org.pageio.table.BadBlock;
import org.pageio.table.Column;
import org.pageio.table.ColumnType;
import org.pageio.heap.HeapPage;
import org.pageio.table.IndexInfo;
import org.pageio.table.PlanNode;
import org.pageio.table.ScanReport;
import org.pageio.table.ScanRequest;
import org.pageio.table.TableException;
import org.pageio.table.TableInfo;
import org.pageio.table.TableShape;
import org.pageio.table.index.IndexBuilder;
import org.pageio.table.index.IndexCursor;
import org.pageio.table.index.IndexPage;
import org.pageio.heap.PageReads;
import org.pageio.heap.vm.VisibilityMap;
import org.pageio.heap.xact.Snapshot;
import org.pageio.heap.xact.Transactions;

/**
 * Runs one scan in the calling thread on a session it is given, reading every heap page through
 * a read stream, and builds its {@link ScanReport}. Tuples are read straight from the pinned
 * page; nothing is allocated per row or per block.
 *
 * <ul>
 *   <li>Sequential scan: {@code SEQUENTIAL | USE_BATCHING}, bulk-read ring.</li>
 *   <li>Bitmap heap scan: TIDs from the index, sorted; distinct blocks streamed in order with
 *       {@code DEFAULT | USE_BATCHING}; per-buffer data = where the block's TIDs start.</li>
 *   <li>Index scan: heap blocks in index order (they repeat and jump), {@code DEFAULT | USE_BATCHING}.
 *       The callback reads index pages and may wait for their reads, which is allowed in batch
 *       mode: a wait submits the session's staged reads first, and the callback takes no content
 *       lock, so nothing it waits for can depend on a read still staged.</li>
 *   <li>LIMIT n: the index scan with a tuple bound (the callback hands out at most 2n TIDs), whose
 *       stream is closed as soon as n rows came back; reads still in flight finish in the background.</li>
 *   <li>Index-only scan: the index's entries in range, the heap page read only for entries whose
 *       block is not all-visible in the visibility map (map page kept pinned across entries).</li>
 *   <li>With {@code scan_sets_visibility_map = on}, the sequential and bitmap heap scans prune the
 *       pages they read that are worth it and mark those that become all-visible in the visibility
 *       map ({@link ScanPruning}, PostgreSQL 19's on-access pruning for read-only scans).</li>
 *   <li>Checksum scan: {@code MAINTENANCE | SEQUENTIAL | USE_BATCHING} ({@code maintenance_io_concurrency}),
 *       vacuum ring; every page also goes through {@link PageVerifier}; a read that fails is
 *       localised (single-block read), recorded, and the scan goes on with a fresh stream.</li>
 * </ul>
 */
public final class Scans {

    private final BufferSession session;
    private final ReadStream.Options options;
    private final boolean checksums;
    private final Snapshot snapshot;
    /** The transactions whose horizon on-access pruning uses, or null: the scans set no visibility map bit. */
    private final Transactions pruneWith;

    /**
     * Scans on {@code session} that count the tuples {@code snapshot} sees. A page with
     * {@code PD_ALL_VISIBLE} skips the per-tuple check (every tuple on it is visible to everyone).
     * They prune no page and set no visibility map bit ({@code scan_sets_visibility_map = off}).
     */
    public Scans(BufferSession session, ReadStream.Options options, Snapshot snapshot) {
        this(session, options, snapshot, null);
    }

    /**
     * Scans as {@link #Scans(BufferSession, ReadStream.Options, Snapshot)}; with {@code pruneWith}
     * ({@code scan_sets_visibility_map = on}), the sequential and bitmap heap scans prune the pages
     * they read that are worth it and mark those that become all-visible in the visibility map
     * ({@link ScanPruning}), with the horizon of {@code pruneWith}, which registered
     * {@code snapshot}.
     */
    public Scans(BufferSession session, ReadStream.Options options, Snapshot snapshot, Transactions pruneWith) {
        this.session = session;
        this.options = options;
        this.checksums = session.pool().settings().dataChecksums();
        this.snapshot = snapshot;
        this.pruneWith = pruneWith;
    }

    /** The scan's on-access pruning, or null when the scans set no visibility map bit. */
    private ScanPruning pruning(TableInfo t, SmgrRelation heap) {
        return pruneWith == null ? null : new ScanPruning(session, t.name(), heap, pruneWith);
    }

    /**
     * What on-access pruning did, for EXPLAIN (ANALYZE): {@code Pages Pruned} and {@code Pages Set
     * All-Visible}, shown only when a page was pruned.
     */
    /** On-access pruning of the page in {@code buf}; when it fails (a map page that cannot be read), the scan's pin goes too. */
    private void pageOnAccess(ScanPruning pruning, int buf, MemorySegment page, long block) throws IOException {
        try {
            pruning.pageOnAccess(buf, page, block);
        } catch (IOException | RuntimeException e) {
            session.releaseBuffer(buf);
            throw e;
        }
    }

    private static void pruningProperties(ScanPruning pruning, List<String[]> props) {
        if (pruning != null && pruning.pagesPruned > 0) {
            props.add(new String[] {ScanReport.PAGES_PRUNED, Long.toString(pruning.pagesPruned)});
            props.add(new String[] {ScanReport.PAGES_SET_ALL_VISIBLE, Long.toString(pruning.pagesSetAllVisible)});
        }
    }

    // ------------------------------------------------------------------ sequential

    public ScanReport seqScan(ScanRequest req, TableInfo t, SmgrRelation heap, boolean timing) throws IOException {
        TableShape shape = t.shape();
        byte[] pattern = null;
        int textAt = 0;
        if (req.pattern() != null) {
            Column c = shape.column(req.column());
            if (c.type() != ColumnType.TEXT) {
                throw new IllegalArgumentException("column " + c.name() + " of " + t.name() + " is " + c.type().sqlName()
                        + ", not text: LIKE needs text");
            }
            textAt = c.offset();
            pattern = likeSubstring(req.pattern());
        }
        BufferAccessStrategy ring = session.pool().strategy(BufferAccessStrategy.Type.BULKREAD);
        long t0 = System.nanoTime();
        long first = 0;
        long rows = 0;
        long matched = 0;
        StreamTotals totals = new StreamTotals();
        ScanPruning pruning = pruning(t, heap);
        try (pruning; ReadStream stream = new ReadStream(session, heap, ReadStream.blockRange(0, t.blocks()),
                ReadStream.SEQUENTIAL | ReadStream.USE_BATCHING, ring, options)) {
            int buf;
            long block = 0;
            while ((buf = next(stream, t, heap)) >= 0) {
                MemorySegment page = session.page(buf);
                if (pruning != null) { // heap_prepare_pagescan's heap_page_prune_opt
                    pageOnAccess(pruning, buf, page, block);
                }
                block++;
                boolean allVisible = HeapPage.allVisible(page); // heapgetpage's all_visible: no per-tuple check
                int n = HeapPage.lineCount(page);
                for (int line = 1; line <= n; line++) {
                    int off = HeapPage.tupleOffset(page, line);
                    if (off < 0 || !allVisible && !snapshot.visible(page, off)) {
                        continue;
                    }
                    rows++;
                    if (pattern == null) {
                        matched++;
                    } else {
                        int at = off + textAt;
                        if (HeapPage.contains(page, at + 4L, HeapPage.textLength(page, at), pattern)) {
                            matched++;
                        }
                    }
                }
                session.releaseBuffer(buf);
                if (first == 0) {
                    first = System.nanoTime() - t0;
                }
            }
            totals.add(stream);
        }
        long total = System.nanoTime() - t0;
        List<String[]> props = new ArrayList<>();
        if (pattern != null) {
            props.add(new String[] {"Filter", "(" + req.column() + " ~~ '" + req.pattern().replace("'", "''") + "'::text)"});
            props.add(new String[] {"Rows Removed by Filter", Long.toString(rows - matched)});
        }
        pruningProperties(pruning, props);
        long vmHits = pruning == null ? 0 : pruning.reads.hits;
        long vmReads = pruning == null ? 0 : pruning.reads.reads;
        long vmWait = pruning == null ? 0 : pruning.reads.waitNanos;
        PlanNode scan = new PlanNode("Seq Scan", " on " + t.name(), first, total, pattern == null ? rows : matched, props,
                totals.hitBlocks() + vmHits, totals.readBlocks() + vmReads, totals.waitNanos + vmWait, totals.figures(), List.of());
        PlanNode agg = new PlanNode("Aggregate", "", total, total, 1, List.of(), scan.sharedHit(), scan.sharedRead(),
                scan.ioReadNanos(), null, List.of(scan));
        return new ScanReport(req, 1, matched, 0, total, timing, agg, List.of());
    }

    /** {@code %zzz%} → {@code zzz}; only the substring form is supported. */
    public static byte[] likeSubstring(String like) {
        String p = like;
        if (p.startsWith("%")) {
            p = p.substring(1);
        }
        if (p.endsWith("%")) {
            p = p.substring(0, p.length() - 1);
        }
        if (p.contains("%") || p.contains("_")) {
            throw new IllegalArgumentException("LIKE pattern '" + like + "': only '%substring%' is supported (no inner % or _)");
        }
        return p.getBytes(StandardCharsets.UTF_8);
    }

    // ------------------------------------------------------------------ bitmap heap scan

    public ScanReport bitmapScan(ScanRequest req, TableInfo t, SmgrRelation heap, IndexInfo idx, SmgrRelation idxRel,
            boolean timing) throws IOException {
        Column col = intColumn(t, req.column());
        int colAt = col.offset();
        boolean wide = col.type() == ColumnType.INT8;
        long t0 = System.nanoTime();
        PageReads reads = new PageReads(session);
        long[] tids = new long[1024];
        int n = 0;
        try (IndexCursor c = new IndexCursor(session, reads, idxRel, idx.name(), req.lo(), req.hi())) {
            while (c.next()) {
                if (n == tids.length) {
                    tids = Arrays.copyOf(tids, n * 2);
                }
                tids[n++] = (c.block << 9) | c.line;
            }
        }
        long indexNanos = System.nanoTime() - t0;
        Arrays.sort(tids, 0, n);
        // distinct blocks, each with the position of its first TID
        long[] blocks = new long[n];
        int[] starts = new int[n + 1];
        int nb = 0;
        for (int i = 0; i < n; i++) {
            long b = tids[i] >>> 9;
            if (nb == 0 || blocks[nb - 1] != b) {
                blocks[nb] = b;
                starts[nb++] = i;
            }
        }
        starts[nb] = n;
        final long[] fb = blocks;
        final int fnb = nb;
        ReadStream.BlockCallback cb = new ReadStream.BlockCallback() {
            int i;

            @Override
            public long nextBlock(ReadStream s) {
                if (i >= fnb) {
                    return ReadStream.END;
                }
                s.setPerBufferData(i);
                return fb[i++];
            }
        };
        long matched = 0;
        long first = 0;
        StreamTotals totals = new StreamTotals();
        ScanPruning pruning = pruning(t, heap);
        try (pruning; ReadStream stream = new ReadStream(session, heap, cb, ReadStream.USE_BATCHING, null, options)) {
            int buf;
            while ((buf = next(stream, t, heap)) >= 0) {
                int bi = (int) stream.perBufferData();
                MemorySegment page = session.page(buf);
                if (pruning != null) { // BitmapHeapScan's heap_page_prune_opt
                    pageOnAccess(pruning, buf, page, fb[bi]);
                }
                boolean allVisible = HeapPage.allVisible(page);
                for (int k = starts[bi]; k < starts[bi + 1]; k++) {
                    int off = visibleTuple(page, allVisible, (int) (tids[k] & 0x1FF));
                    if (off < 0) {
                        continue;
                    }
                    long v = wide ? HeapPage.getLong(page, off + colAt) : HeapPage.getInt(page, off + colAt);
                    if (v >= req.lo() && v <= req.hi()) { // recheck
                        matched++;
                    }
                }
                session.releaseBuffer(buf);
                if (first == 0) {
                    first = System.nanoTime() - t0;
                }
            }
            totals.add(stream);
        }
        long total = System.nanoTime() - t0;
        String cond = "((" + col.name() + " >= " + req.lo() + ") AND (" + col.name() + " <= " + req.hi() + "))";
        PlanNode ix = new PlanNode("Bitmap Index Scan", " on " + idx.name(), indexNanos, indexNanos, n,
                List.<String[]>of(new String[] {"Index Cond", cond}, new String[] {"Index Searches", "1"}), reads.hits,
                reads.reads, reads.waitNanos, null, List.of());
        List<String[]> heapProps = new ArrayList<>();
        heapProps.add(new String[] {"Recheck Cond", cond});
        heapProps.add(new String[] {"Heap Blocks", "exact=" + nb});
        pruningProperties(pruning, heapProps);
        long vmHits = pruning == null ? 0 : pruning.reads.hits;
        long vmReads = pruning == null ? 0 : pruning.reads.reads;
        long vmWait = pruning == null ? 0 : pruning.reads.waitNanos;
        PlanNode heapNode = new PlanNode("Bitmap Heap Scan", " on " + t.name(), first, total, matched, heapProps,
                totals.hitBlocks() + reads.hits + vmHits, totals.readBlocks() + reads.reads + vmReads,
                totals.waitNanos + reads.waitNanos + vmWait, totals.figures(), List.of(ix));
        PlanNode agg = new PlanNode("Aggregate", "", total, total, 1, List.of(), heapNode.sharedHit(), heapNode.sharedRead(),
                heapNode.ioReadNanos(), null, List.of(heapNode));
        return new ScanReport(req, 1, matched, 0, total, timing, agg, List.of());
    }

    // ------------------------------------------------------------------ index scan and LIMIT

    public ScanReport indexScan(ScanRequest req, TableInfo t, SmgrRelation heap, IndexInfo idx, SmgrRelation idxRel,
            boolean timing) throws IOException {
        Column col = intColumn(t, req.column());
        int textAt = t.shape().textColumn().offset();
        boolean limit = req.limit() > 0;
        long bound = limit ? 2 * req.limit() : Long.MAX_VALUE;
        long t0 = System.nanoTime();
        PageReads reads = new PageReads(session);
        long count = 0;
        long sumLength = 0;
        long first = 0;
        long closeNanos = 0;
        StreamTotals totals = new StreamTotals();
        try (IndexCursor c = new IndexCursor(session, reads, idxRel, idx.name(), req.lo(), req.hi())) {
            ReadStream.BlockCallback cb = new ReadStream.BlockCallback() {
                long handed;

                @Override
                public long nextBlock(ReadStream s) {
                    if (handed >= bound) {
                        return ReadStream.END;
                    }
                    try {
                        if (!c.next()) {
                            return ReadStream.END;
                        }
                    } catch (IOException e) {
                        throw new UncheckedIOException(e);
                    }
                    handed++;
                    s.setPerBufferData(c.line);
                    return c.block;
                }
            };
            ReadStream stream = new ReadStream(session, heap, cb, ReadStream.USE_BATCHING, null, options);
            try {
                int buf;
                while ((buf = next(stream, t, heap)) >= 0) {
                    MemorySegment page = session.page(buf);
                    int off = visibleTuple(page, HeapPage.allVisible(page), (int) stream.perBufferData());
                    if (off >= 0) {
                        count++;
                        sumLength += HeapPage.textLength(page, off + textAt);
                    }
                    session.releaseBuffer(buf);
                    if (first == 0) {
                        first = System.nanoTime() - t0;
                    }
                    if (limit && count >= req.limit()) {
                        break;
                    }
                }
            } finally {
                long c0 = System.nanoTime();
                stream.close(); // a LIMIT ends the stream here, with reads possibly in flight
                closeNanos = System.nanoTime() - c0;
                totals.add(stream);
            }
        }
        long total = System.nanoTime() - t0;
        String cond = limit ? "(" + col.name() + " >= " + req.lo() + ")"
                : "((" + col.name() + " >= " + req.lo() + ") AND (" + col.name() + " <= " + req.hi() + "))";
        List<String[]> props = new ArrayList<>();
        props.add(new String[] {"Index Cond", cond});
        props.add(new String[] {"Index Searches", "1"});
        PlanNode scan = new PlanNode("Index Scan", " using " + idx.name() + " on " + t.name(), first, total, count, props,
                totals.hitBlocks() + reads.hits, totals.readBlocks() + reads.reads, totals.waitNanos + reads.waitNanos,
                totals.figures(), List.of());
        PlanNode top;
        if (limit) {
            top = new PlanNode("Limit", "", first, total, count,
                    List.<String[]>of(new String[] {"Stream Closed Early", String.format(Locale.ROOT, "%.3f ms", closeNanos / 1e6)}),
                    scan.sharedHit(), scan.sharedRead(), scan.ioReadNanos(), null, List.of(scan));
        } else {
            top = new PlanNode("Aggregate", "", total, total, 1, List.of(), scan.sharedHit(), scan.sharedRead(),
                    scan.ioReadNanos(), null, List.of(scan));
        }
        return new ScanReport(req, limit ? count : 1, count, sumLength, total, timing, top, List.of());
    }

    // ------------------------------------------------------------------ index-only scan

    /**
     * {@code count(*) WHERE [c1 = x AND] col BETWEEN lo AND hi} answered from the index
     * (nodeIndexonlyscan.c's {@code IndexOnlyNext}): for each entry in range, the visibility map's
     * all-visible bit of its heap block, read with the map page kept pinned across entries
     * ({@code ioss_VMBuffer}); only when the bit is clear is the heap page read (a heap fetch,
     * {@code ioss_HeapFetches}) and the tuple checked as the index scan checks it (the snapshot's
     * visibility, following a HOT chain from the entry's line). The heap page of
     * the last fetch stays pinned while the entries point into it, as {@code index_fetch_heap} keeps
     * its buffer. No read stream: PostgreSQL's index-only scan fetches one heap page at a time too.
     */
    public ScanReport indexOnlyScan(ScanRequest req, TableInfo t, SmgrRelation heap, IndexInfo idx, SmgrRelation idxRel,
            boolean timing) throws IOException {
        long[] range = indexOnlyRange(req, t);
        long t0 = System.nanoTime();
        PageReads reads = new PageReads(session);
        PageReads vmReads = new PageReads(session);
        PageReads heapReads = new PageReads(session);
        VisibilityMap vm = new VisibilityMap(session, heap, null);
        long count = 0;
        long fetches = 0;
        long first = 0;
        int heapBuf = -1;
        long heapBlock = -1;
        try (IndexCursor c = new IndexCursor(session, reads, idxRel, idx.name(), range[0], range[1]);
                VisibilityMap.VmBuffer vmbuf = vm.buffer(vmReads)) {
            if (c.keyColumns != idx.columns().size()) {
                throw new TableException("index " + idx.name() + " (relation " + idxRel + "): its metapage has "
                        + c.keyColumns + " key column(s), the catalog " + idx.columns().size() + "; rebuild it (pageio:index "
                        + t.name() + " " + String.join(",", idx.columns()) + ")");
            }
            while (c.next()) {
                if ((vm.getStatus(c.block, vmbuf) & VisibilityMap.VISIBILITYMAP_ALL_VISIBLE) == 0) {
                    fetches++;
                    if (heapBlock != c.block) {
                        if (heapBuf >= 0) {
                            session.releaseBuffer(heapBuf);
                            heapBuf = -1;
                        }
                        try {
                            heapBuf = heapReads.read(heap, c.block, null);
                        } catch (IOException e) {
                            throw new TableException("table " + t.name() + " (relation " + heap + "): " + oneLine(e), e);
                        }
                        heapBlock = c.block;
                    }
                    MemorySegment page = session.page(heapBuf);
                    if (visibleTuple(page, HeapPage.allVisible(page), c.line) < 0) { // the snapshot, and a HOT chain
                        continue;
                    }
                }
                count++;
                if (first == 0) {
                    first = System.nanoTime() - t0;
                }
            }
        } finally {
            if (heapBuf >= 0) {
                session.releaseBuffer(heapBuf);
            }
        }
        long total = System.nanoTime() - t0;
        List<String[]> props = new ArrayList<>();
        props.add(new String[] {"Index Cond", indexOnlyCond(req)});
        props.add(new String[] {"Heap Fetches", Long.toString(fetches)});
        props.add(new String[] {"Index Searches", "1"});
        PlanNode scan = new PlanNode("Index Only Scan", " using " + idx.name() + " on " + t.name(), first, total, count, props,
                reads.hits + vmReads.hits + heapReads.hits, reads.reads + vmReads.reads + heapReads.reads,
                reads.waitNanos + vmReads.waitNanos + heapReads.waitNanos, null, List.of());
        PlanNode agg = new PlanNode("Aggregate", "", total, total, 1, List.of(), scan.sharedHit(), scan.sharedRead(),
                scan.ioReadNanos(), null, List.of(scan));
        return new ScanReport(req, 1, count, 0, total, timing, agg, List.of());
    }

    /**
     * The index an index-only scan reads: the one on {@code column}, or on {@code (eqColumn,
     * column)}. Fails naming the columns, or the command that builds the index.
     */
    public static IndexInfo indexOnlyIndex(TableInfo t, ScanRequest req) throws TableException {
        if (req.eqColumn() == null) {
            intColumn(t, req.column());
            return indexOf(t, req.column());
        }
        intColumn(t, req.eqColumn());
        intColumn(t, req.column());
        if (req.eqColumn().equals(req.column())) {
            throw new IllegalArgumentException("scan ios: '" + req.eqColumn() + " = " + req.eqValue() + "' and the range name the"
                    + " same column; the index-only scan on two columns takes 'COL1 = X' COL2 LO HI");
        }
        List<String> pair = List.of(req.eqColumn(), req.column());
        IndexInfo i = t.index(pair);
        if (i == null) {
            throw new TableException("table " + t.name() + " has no index on (" + req.eqColumn() + ", " + req.column()
                    + ") (pageio:index " + t.name() + " " + req.eqColumn() + "," + req.column() + " builds one)");
        }
        return i;
    }

    /** The index-only scan's key range, {@code [lo, hi]}; bounds outside the 32-bit keys are refused. */
    private static long[] indexOnlyRange(ScanRequest req, TableInfo t) {
        checkKey(t, req.column(), "LO", req.lo());
        checkKey(t, req.column(), "HI", req.hi());
        if (req.eqColumn() == null) {
            return new long[] {req.lo(), req.hi()};
        }
        checkKey(t, req.eqColumn(), "X", req.eqValue());
        return new long[] {IndexPage.compositeKey(req.eqValue(), req.lo()), IndexPage.compositeKey(req.eqValue(), req.hi())};
    }

    private static void checkKey(TableInfo t, String column, String what, long v) {
        if (!IndexBuilder.keyFits(v)) {
            throw new IllegalArgumentException("scan ios: " + what + " " + v + " is out of range for the index on " + t.name()
                    + ": its keys are 32-bit integers (" + Integer.MIN_VALUE + " to " + Integer.MAX_VALUE + ")");
        }
    }

    private static String indexOnlyCond(ScanRequest req) {
        String range = "(" + req.column() + " >= " + req.lo() + ") AND (" + req.column() + " <= " + req.hi() + ")";
        return req.eqColumn() == null ? "(" + range + ")" : "((" + req.eqColumn() + " = " + req.eqValue() + ") AND " + range + ")";
    }

    // ------------------------------------------------------------------ checksum scan

    /** One relation to check: what to call it and its storage. */
    public record Target(String label, SmgrRelation rel) {
    }

    /**
     * {@code pageio:verify}: every block of every target through a read stream, each page's header
     * and checksum checked. The reads are {@link ReadStream#STRICT}: a verification reads the pages
     * as they are on disk, so {@code zero_damaged_pages} and {@code ignore_checksum_failure} neither
     * zero nor accept a damaged page here (they would report it as sound). A read that fails is
     * retried block by block from its first block to find the damaged one; the scan goes on after it.
     */
    public ScanReport checksumScan(ScanRequest req, TableInfo t, List<Target> targets, boolean timing) throws IOException {
        long t0 = System.nanoTime();
        long checked = 0;
        long first = 0;
        List<BadBlock> bad = new ArrayList<>();
        StreamTotals totals = new StreamTotals();
        PageReads reads = new PageReads(session);
        for (Target target : targets) {
            SmgrRelation rel = target.rel();
            long nblocks = rel.nblocks();
            BufferAccessStrategy ring = session.pool().strategy(BufferAccessStrategy.Type.VACUUM);
            long next = 0;
            while (next < nblocks) {
                long expect = next;
                try (ReadStream stream = new ReadStream(session, rel, ReadStream.blockRange(next, nblocks - next),
                        ReadStream.MAINTENANCE | ReadStream.SEQUENTIAL | ReadStream.USE_BATCHING | ReadStream.STRICT, ring,
                        options)) {
                    try {
                        int buf;
                        while ((buf = stream.next()) >= 0) {
                            verify(buf, expect, target, bad);
                            session.releaseBuffer(buf);
                            expect++;
                            checked++;
                            if (first == 0) {
                                first = System.nanoTime() - t0;
                            }
                        }
                        next = nblocks;
                    } catch (IOException e) {
                        // The read that failed starts at 'expect'; find out whether 'expect' itself is bad.
                        try {
                            int buf = session.readBuffer(rel, expect, ring, ReadBuffersOperation.STRICT);
                            verify(buf, expect, target, bad);
                            session.releaseBuffer(buf);
                        } catch (IOException single) {
                            bad.add(new BadBlock(rel.toString(), expect, target.label() + ": " + oneLine(single)));
                        }
                        checked++;
                        next = expect + 1;
                    } finally {
                        totals.add(stream);
                    }
                }
            }
        }
        long total = System.nanoTime() - t0;
        StringBuilder list = new StringBuilder(Integer.toString(bad.size()));
        for (int i = 0; i < Math.min(bad.size(), 20); i++) {
            list.append(i == 0 ? " (" : ", ").append(bad.get(i).block());
        }
        if (!bad.isEmpty()) {
            list.append(bad.size() > 20 ? ", …)" : ")");
        }
        PlanNode scan = new PlanNode("Checksum Scan", " on " + t.name(), first, total, checked,
                List.<String[]>of(new String[] {"Relations", Integer.toString(targets.size())},
                        new String[] {"Blocks Checked", Long.toString(checked)}, new String[] {"Bad Blocks", list.toString()}),
                totals.hitBlocks() + reads.hits, totals.readBlocks() + reads.reads, totals.waitNanos + reads.waitNanos,
                totals.figures(), List.of());
        return new ScanReport(req, checked, checked, 0, total, timing, scan, bad);
    }

    /**
     * Checks the page of a pinned buffer: header always, checksum only when the buffer is clean. A
     * dirty buffer's checksum is stale by design (it is computed when the page is written), and what
     * it will write gets a fresh one; its last written image was checked when it was read.
     */
    private void verify(int buf, long block, Target target, List<BadBlock> bad) {
        MemorySegment page = session.page(buf);
        int code = PageVerifier.verify(page, block, checksums && !session.pool().isDirty(buf));
        if (code != PageVerifier.VALID && code != PageVerifier.VALID_ZERO) {
            bad.add(new BadBlock(target.rel().toString(), block, target.label() + " (relation " + target.rel() + "): "
                    + PageVerifier.describe(code, page, block)));
        }
    }

    // ------------------------------------------------------------------ plan only (EXPLAIN without ANALYZE)

    /**
     * The plan a scan would run, without running it (EXPLAIN without ANALYZE reads no table
     * page): the same nodes and conditions as the scan's report, no figures. Checks what running
     * would check first: columns, their types, the {@code LIKE} pattern, the index.
     */
    public static ScanReport plan(ScanRequest req, TableInfo t) throws TableException {
        List<String[]> none = List.of();
        PlanNode top = switch (req.kind()) {
            case COUNT, FILTER -> {
                List<String[]> props = new ArrayList<>();
                if (req.pattern() != null) {
                    Column c = t.shape().column(req.column());
                    if (c.type() != ColumnType.TEXT) {
                        throw new IllegalArgumentException("column " + c.name() + " of " + t.name() + " is " + c.type().sqlName()
                                + ", not text: LIKE needs text");
                    }
                    likeSubstring(req.pattern());
                    props.add(new String[] {"Filter", "(" + req.column() + " ~~ '" + req.pattern().replace("'", "''") + "'::text)"});
                }
                yield node("Aggregate", "", none, node("Seq Scan", " on " + t.name(), props));
            }
            case BITMAP -> {
                Column col = intColumn(t, req.column());
                IndexInfo idx = indexOf(t, req.column());
                String cond = "((" + col.name() + " >= " + req.lo() + ") AND (" + col.name() + " <= " + req.hi() + "))";
                yield node("Aggregate", "", none, node("Bitmap Heap Scan", " on " + t.name(),
                        List.<String[]>of(new String[] {"Recheck Cond", cond}),
                        node("Bitmap Index Scan", " on " + idx.name(), List.<String[]>of(new String[] {"Index Cond", cond}))));
            }
            case INDEX, LIMIT -> {
                Column col = intColumn(t, req.column());
                IndexInfo idx = indexOf(t, req.column());
                boolean limit = req.limit() > 0;
                String cond = limit ? "(" + col.name() + " >= " + req.lo() + ")"
                        : "((" + col.name() + " >= " + req.lo() + ") AND (" + col.name() + " <= " + req.hi() + "))";
                PlanNode scan = node("Index Scan", " using " + idx.name() + " on " + t.name(),
                        List.<String[]>of(new String[] {"Index Cond", cond}));
                yield limit ? node("Limit", "", none, scan) : node("Aggregate", "", none, scan);
            }
            case IOS -> {
                IndexInfo idx = indexOnlyIndex(t, req);
                indexOnlyRange(req, t);
                yield node("Aggregate", "", none, node("Index Only Scan", " using " + idx.name() + " on " + t.name(),
                        List.<String[]>of(new String[] {"Index Cond", indexOnlyCond(req)})));
            }
            case CHECKSUMS -> node("Checksum Scan", " on " + t.name(),
                    List.<String[]>of(new String[] {"Relations", Integer.toString(1 + t.indexes().size())}));
        };
        return new ScanReport(req, 0, 0, 0, 0, false, top, List.of());
    }

    private static PlanNode node(String type, String on, List<String[]> props, PlanNode... children) {
        return new PlanNode(type, on, 0, 0, 0, props, 0, 0, 0, null, List.of(children));
    }

    /**
     * The index on {@code column} of {@code t}. Fails naming the table's columns when there is no
     * such column, or with the command that builds the index when the column has none.
     */
    public static IndexInfo indexOf(TableInfo t, String column) throws TableException {
        if (t.shape().columns().stream().noneMatch(c -> c.name().equals(column))) {
            throw new TableException("table " + t.name() + " has no column \"" + column + "\"; its columns are "
                    + String.join(", ", t.shape().columns().stream().map(Column::name).toList()));
        }
        IndexInfo i = t.index(column);
        if (i == null) {
            throw new TableException("table " + t.name() + " has no index on " + column + " (pageio:index " + t.name() + " "
                    + column + " builds one)");
        }
        return i;
    }

    // ------------------------------------------------------------------ helpers

    /**
     * The offset of the version of the row at {@code line} (an index entry's TID) that the snapshot
     * sees, or -1 when it sees none ({@code heap_hot_search_buffer}, {@link Snapshot#hotSearch}): the
     * chain from that line is followed through a root pruned to {@code LP_REDIRECT}, then
     * {@code HEAP_HOT_UPDATED} tuples and their {@code t_ctid} on the same page, and the first visible
     * version is returned (at most one version of a row is visible to a snapshot). On an all-visible
     * page every tuple is visible and a chain has one member left: the tuple at the line, or the one
     * its redirect leads to.
     */
    int visibleTuple(MemorySegment page, boolean allVisible, int line) {
        if (!allVisible) {
            return snapshot.hotSearch(page, line);
        }
        int lines = HeapPage.lineCount(page);
        if (line < 1 || line > lines) {
            return -1;
        }
        int lp = HeapPage.linePointer(page, line);
        if (HeapPage.lpFlags(lp) == HeapPage.LP_REDIRECT) {
            line = HeapPage.lpOff(lp);
            if (line < 1 || line > lines) {
                return -1;
            }
        }
        return HeapPage.tupleOffset(page, line);
    }

    private static Column intColumn(TableInfo t, String name) {
        Column c = t.shape().column(name);
        if (!c.type().isInteger()) {
            throw new IllegalArgumentException("column " + name + " of " + t.name() + " is " + c.type().sqlName()
                    + ": the index scans need an integer column");
        }
        return c;
    }

    /** {@link ReadStream#next()} with its errors named after the table. */
    private static int next(ReadStream stream, TableInfo t, SmgrRelation heap) throws IOException {
        try {
            return stream.next();
        } catch (UncheckedIOException e) {
            throw new TableException("table " + t.name() + ": " + oneLine(e.getCause()), e.getCause());
        } catch (IOException e) {
            throw new TableException("table " + t.name() + " (relation " + heap + "): " + oneLine(e), e);
        }
    }

    static String oneLine(Throwable e) {
        String m = e.getMessage() == null ? e.toString() : e.getMessage();
        int nl = m.indexOf('\n');
        return nl < 0 ? m : m.substring(0, nl);
    }
}
