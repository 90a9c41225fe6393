package org.pageio.table.engine;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.pageio.bufmgr.BufferAccessStrategy;
import org.pageio.bufmgr.BufferPool;
import org.pageio.bufmgr.BufferSession;
import org.pageio.bufmgr.smgr.RelFileLocator;
import org.pageio.bufmgr.smgr.SmgrRelation;
import org.pageio.bufmgr.smgr.StorageManager;
import org.pageio.bufmgr.stream.ReadStream;
import org.pageio.table.Column;
import org.pageio.table.ColumnType;
import org.pageio.heap.HeapPage;
import org.pageio.table.IndexInfo;
import org.pageio.table.LoadProgress;
import org.pageio.table.LoadResult;
import org.pageio.table.LoadSink;
import org.pageio.table.ScanRequest;
import org.pageio.table.ScanReport;
import org.pageio.table.ScanSettings;
import org.pageio.table.TableException;
import org.pageio.table.TableInfo;
import org.pageio.table.TableService;
import org.pageio.table.TableShape;
import org.pageio.table.VacuumOptions;
import org.pageio.table.VacuumReport;
import org.pageio.table.VisibilityMapSummary;
import org.pageio.table.catalog.Catalog;
import org.pageio.table.index.IndexBuilder;
import org.pageio.table.index.IndexPage;
import org.pageio.table.load.Loader;
import org.pageio.table.load.PageSink;
import org.pageio.table.scan.Scans;
import org.pageio.heap.vm.VisibilityMap;
import org.pageio.heap.xact.Snapshot;
import org.pageio.heap.xact.Transactions;
import org.pageio.heap.xact.VacuumCutoffs;
import org.pageio.table.vacuum.LazyVacuum;
import org.pageio.table.RowFilter;

/**
 * {@link TableService} over a {@link BufferPool} and its {@link StorageManager}: the catalog lives
 * in the storage manager's data directory, relations in its default tablespace. Each call opens a
 * buffer session for the calling thread and closes it before returning. Thread-safe: catalog
 * changes (load, index, drop) are serialised on this object; scans run concurrently.
 */
public final class TableEngine implements TableService {

    /** The session kind scans and loads use in {@code stat_io}. */
    public static final String SESSION_KIND = "client backend";

    private final BufferPool pool;
    private final StorageManager smgr;
    private final Catalog catalog;
    private final Transactions xacts;

    /** How long {@link #drop} waits for other sessions' pins (PostgreSQL's DROP waits for its lock). */
    private volatile Duration dropWait = Duration.ofSeconds(30);

    /**
     * {@code scan_sets_visibility_map}: whether sequential and bitmap heap scans prune the pages they
     * read and set visibility map bits (PostgreSQL 19), unless a scan's {@link ScanSettings} says
     * otherwise. Read at each scan's start: a change applies to the next scan.
     */
    private volatile boolean scanSetsVisibilityMap = true;

    /** Sets {@code scan_sets_visibility_map} for the scans that start from now on. */
    public void setScanSetsVisibilityMap(boolean on) {
        this.scanSetsVisibilityMap = on;
    }

    /** {@code scan_sets_visibility_map} now. */
    public boolean scanSetsVisibilityMap() {
        return scanSetsVisibilityMap;
    }

    /** Sets how long {@link #drop} waits for a scan that still pins the table before it refuses. */
    public void setDropWait(Duration wait) {
        this.dropWait = wait;
    }

    public TableEngine(BufferPool pool) throws IOException {
        this.pool = pool;
        this.smgr = pool.storage();
        this.catalog = new Catalog(smgr.dataDirectory());
        this.xacts = new Transactions(smgr.dataDirectory());
    }

    /** Transaction ids and the commit log of the data directory. */
    public Transactions transactions() {
        return xacts;
    }

    public Catalog catalog() {
        return catalog;
    }

    public BufferPool pool() {
        return pool;
    }

    @Override
    public List<TableInfo> tables() {
        return catalog.tables();
    }

    @Override
    public TableInfo table(String name) throws TableException {
        TableInfo t = catalog.table(name);
        if (t == null) {
            throw new TableException("table \"" + name + "\" does not exist" + known());
        }
        return t;
    }

    private String known() {
        List<String> names = catalog.tables().stream().map(TableInfo::name).toList();
        return names.isEmpty() ? " (no tables yet: pageio:load creates one)" : "; tables: " + String.join(", ", names);
    }

    @Override
    public VisibilityMapSummary visibilityMapSummary(String name) throws IOException {
        TableInfo t = table(name);
        SmgrRelation heap = heap(t);
        try (BufferSession s = pool.openSession(SESSION_KIND)) {
            VisibilityMap.Counts c = new VisibilityMap(s, heap, null).count();
            return new VisibilityMapSummary(c.allVisible(), c.allFrozen());
        } catch (TableException e) {
            throw e;
        } catch (IOException e) {
            throw new TableException("table " + t.name() + ": " + e.getMessage(), e);
        }
    }

    /** The heap relation of a table (its main fork; its visibility map is the fork {@code vm} of it). */
    public SmgrRelation heap(TableInfo t) {
        return smgr.open(new RelFileLocator(StorageManager.DEFAULT_TABLESPACE, t.relNumber()));
    }

    public SmgrRelation indexRelation(IndexInfo i) {
        return smgr.open(new RelFileLocator(StorageManager.DEFAULT_TABLESPACE, i.relNumber()));
    }

    @Override
    public LoadResult load(String name, TableShape shape, long rows, long seed, LoadProgress progress) throws IOException {
        return load(name, shape, rows, seed, LoadSink.DEFAULT, progress);
    }

    /** The loader's page sink for {@code sink}: the bulk sink writes through this pool's I/O method. */
    public PageSink.Factory sinkFactory(LoadSink sink) {
        return switch (sink) {
            case BULK -> PageSink.bulk(pool, SESSION_KIND);
            case DIRECT -> PageSink.direct();
            case BUFFERED -> PageSink.buffered();
        };
    }

    @Override
    public synchronized LoadResult load(String name, TableShape shape, long rows, long seed, LoadSink sink,
            LoadProgress progress) throws IOException {
        Catalog.checkName("table", name);
        if (catalog.table(name) != null) {
            throw new TableException("table \"" + name + "\" already exists; drop it first (pageio:drop " + name + ")");
        }
        long n = rows > 0 ? rows : shape.defaultRows();
        if (shape.blocksFor(n) >= IndexBuilder.MAX_BLOCKS) {
            throw new IllegalArgumentException(n + " rows of " + shape.shapeName() + " need more than " + IndexBuilder.MAX_BLOCKS
                    + " blocks (64 GiB), the most a table may have");
        }
        long relNumber = catalog.allocateRelNumber();
        SmgrRelation rel = smgr.open(new RelFileLocator(StorageManager.DEFAULT_TABLESPACE, relNumber));
        // the bulk sink's session is opened by Loader.load in this thread, the loader's writer
        Loader loader = new Loader(sinkFactory(sink), Loader.defaultBuilders());
        long blocks;
        try {
            blocks = loader.load(rel, shape, n, seed, pool.settings().dataChecksums(),
                    progress == null ? LoadProgress.NONE : progress);
        } catch (IOException e) {
            unlinkQuietly(rel);
            throw new TableException("loading table " + name + " (relation " + rel + ") failed: " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            unlinkQuietly(rel);
            throw new TableException("loading table " + name + " (relation " + rel + ") was interrupted");
        }
        TableInfo t = new TableInfo(name, relNumber, shape, n, seed, blocks, List.of());
        catalog.putTable(t);
        return new LoadResult(t, loader.bytes(), loader.writeNanos(), loader.syncNanos(), sink.label(),
                sink == LoadSink.BULK ? pool.aio().method().name() : null, loader.builders());
    }

    @Override
    public synchronized IndexInfo createIndex(String table, String column) throws IOException {
        TableInfo t = table(table);
        List<String> names = List.of(column.split(",", -1)).stream().map(String::trim).toList();
        if (names.size() > 2 || names.contains("") || names.size() == 2 && names.get(0).equals(names.get(1))) {
            throw new IllegalArgumentException("index on " + table + " (" + column + "): name one integer column or two"
                    + " different ones separated by a comma (pageio:index " + table + " cat,val)");
        }
        Column[] cols = new Column[names.size()];
        for (int c = 0; c < cols.length; c++) {
            cols[c] = t.shape().column(names.get(c));
            if (!cols[c].type().isInteger()) {
                throw new IllegalArgumentException("column " + names.get(c) + " of " + table + " is " + cols[c].type().sqlName()
                        + ": only integer columns can be indexed");
            }
        }
        boolean composite = cols.length == 2;
        String label = table + "(" + String.join(", ", names) + ")";
        SmgrRelation heap = heap(t);
        int cap = (int) Math.min(Integer.MAX_VALUE - 8, Math.max(16, t.rows()));
        long[] entries = new long[cap];
        long[] tids = composite ? new long[cap] : null;
        int n = 0;
        try (Snapshot snapshot = xacts.snapshot(); // no writer runs: this is the final state
                BufferSession s = pool.openSession(SESSION_KIND);
                ReadStream stream = new ReadStream(s, heap, ReadStream.blockRange(0, t.blocks()),
                        ReadStream.SEQUENTIAL | ReadStream.USE_BATCHING, pool.strategy(BufferAccessStrategy.Type.BULKREAD),
                        ReadStream.Options.DEFAULT)) {
            int buf;
            long block = 0;
            while ((buf = stream.next()) >= 0) {
                MemorySegment page = s.page(buf);
                boolean allVisible = HeapPage.allVisible(page);
                int lines = HeapPage.lineCount(page);
                for (int line = 1; line <= lines; line++) {
                    // a changed page: one entry per row, at its chain's root with the visible version's key
                    // (heap-only tuples get none; a row no snapshot sees any more gets none)
                    int off = rootVersion(snapshot, page, allVisible, line);
                    if (off < 0) {
                        continue;
                    }
                    long key = 0;
                    for (int c = 0; c < cols.length; c++) {
                        Column col = cols[c];
                        long v = col.type() == ColumnType.INT8 ? HeapPage.getLong(page, off + col.offset())
                                : HeapPage.getInt(page, off + col.offset());
                        if (!IndexBuilder.keyFits(v)) {
                            s.releaseBuffer(buf);
                            throw new TableException("index on " + label + ": key " + v + " of " + col.name() + " in block "
                                    + block + " of relation " + heap + " does not fit in 32 bits");
                        }
                        key = c == 0 ? v : IndexPage.compositeKey(key, v);
                    }
                    if (n == entries.length) {
                        int grown = (int) Math.min(Integer.MAX_VALUE - 8, (long) n * 2);
                        entries = Arrays.copyOf(entries, grown);
                        tids = composite ? Arrays.copyOf(tids, grown) : null;
                    }
                    if (composite) {
                        entries[n] = key;
                        tids[n++] = IndexBuilder.tid(block, line);
                    } else {
                        entries[n++] = IndexBuilder.pack(key, block, line);
                    }
                }
                s.releaseBuffer(buf);
                block++;
            }
        } catch (TableException e) {
            throw e;
        } catch (IOException e) {
            throw new TableException("building the index on " + label + " failed reading relation " + heap
                    + ": " + e.getMessage(), e);
        }
        IndexInfo old = t.index(names);
        long relNumber = catalog.allocateRelNumber();
        SmgrRelation rel = smgr.open(new RelFileLocator(StorageManager.DEFAULT_TABLESPACE, relNumber));
        IndexBuilder.Built built;
        try {
            built = composite ? IndexBuilder.buildComposite(rel, entries, tids, n, pool.settings().dataChecksums())
                    : IndexBuilder.build(rel, entries, n, pool.settings().dataChecksums());
        } catch (IOException e) {
            unlinkQuietly(rel);
            throw new TableException("writing the index on " + label + " (relation " + rel + ") failed: "
                    + e.getMessage(), e);
        }
        IndexInfo info = new IndexInfo(Catalog.indexName(table, names), names.get(0), relNumber, n, built.blocks(),
                built.height(), names);
        catalog.putIndex(table, info);
        if (old != null) {
            unlinkQuietly(indexRelation(old));
        }
        return info;
    }

    @Override
    public ScanReport scan(ScanRequest req) throws IOException {
        TableInfo t = table(req.table());
        ScanSettings set = req.settings();
        ReadStream.Options opts = new ReadStream.Options(set.effectiveIoConcurrency(), set.ioCombineLimit(),
                set.readStreamLookahead());
        boolean timing = set.trackIoTiming() != null ? set.trackIoTiming() : pool.settings().trackIoTiming();
        boolean setsVm = set.scanSetsVisibilityMap() != null ? set.scanSetsVisibilityMap() : scanSetsVisibilityMap;
        SmgrRelation heap = heap(t);
        try (Snapshot snapshot = xacts.snapshot(); // registered before the scan's cutoffs are taken
                BufferSession s = pool.openSession(SESSION_KIND)) {
            Scans scans = new Scans(s, opts, snapshot, setsVm ? xacts : null);
            return switch (req.kind()) {
                case COUNT, FILTER -> scans.seqScan(req, t, heap, timing);
                case BITMAP -> scans.bitmapScan(req, t, heap, index(t, req.column()), indexRelation(index(t, req.column())), timing);
                case INDEX, LIMIT -> scans.indexScan(req, t, heap, index(t, req.column()), indexRelation(index(t, req.column())),
                        timing);
                case IOS -> {
                    IndexInfo idx = Scans.indexOnlyIndex(t, req);
                    yield scans.indexOnlyScan(req, t, heap, idx, indexRelation(idx), timing);
                }
                case CHECKSUMS -> {
                    List<Scans.Target> targets = new ArrayList<>();
                    targets.add(new Scans.Target("table " + t.name(), heap));
                    for (IndexInfo i : t.indexes()) {
                        targets.add(new Scans.Target("index " + i.name(), indexRelation(i)));
                    }
                    yield scans.checksumScan(req, t, targets, timing);
                }
            };
        } catch (UncheckedIOException e) {
            throw new TableException("table " + t.name() + ": " + e.getCause().getMessage(), e.getCause());
        }
    }

    @Override
    public ScanReport plan(ScanRequest req) throws IOException {
        return Scans.plan(req, table(req.table()));
    }

    /**
     * The version of the row whose chain starts at {@code line} that {@code snapshot} sees (on an
     * all-visible page, the one version there is), or -1 when the line starts no chain (a heap-only
     * tuple, an {@code LP_DEAD} or {@code LP_UNUSED} line) or the snapshot sees none. A root
     * pruned to {@code LP_REDIRECT} is indexed at its own line with the key of the member it leads to.
     */
    private static int rootVersion(Snapshot snapshot, MemorySegment page, boolean allVisible, int line) {
        int lp = HeapPage.linePointer(page, line);
        if (HeapPage.lpFlags(lp) == HeapPage.LP_REDIRECT) {
            return allVisible ? HeapPage.tupleOffset(page, HeapPage.lpOff(lp)) : snapshot.hotSearch(page, line);
        }
        int off = HeapPage.tupleOffset(page, line);
        if (off < 0 || (HeapPage.infomask2(page, off) & Snapshot.HEAP_ONLY_TUPLE) != 0) {
            return -1;
        }
        return allVisible ? off : snapshot.hotSearch(page, line);
    }

    @Override
    public org.pageio.table.TupleStats tupleStats(String name) throws TableException {
        return catalog.tupleStats(table(name).name());
    }

    @Override
    public long delete(String table, RowFilter where) throws IOException {
        return delete(table, where, true);
    }

    @Override
    public long update(String table, org.pageio.table.SetClause set, RowFilter where) throws IOException {
        return update(table, set, where, true);
    }

    /**
     * {@code DELETE FROM table WHERE …} in a transaction of its own, one writer at a time (serialised
     * on this object, as catalog changes). {@code commit = false} stops before the commit, as a crash
     * there would (tests).
     */
    synchronized long delete(String table, RowFilter where, boolean commit) throws IOException {
        TableInfo t = table(table);
        RowChanges.column(t, where); // refused before a transaction id is used
        return change(t, commit, -1, (changes, xid) -> changes.delete(where, xid));
    }

    /** {@code UPDATE table SET … WHERE …} ({@code heap_update}, HOT or not), as {@link #delete(String, RowFilter, boolean)}. */
    synchronized long update(String table, org.pageio.table.SetClause set, RowFilter where, boolean commit) throws IOException {
        TableInfo t = table(table);
        RowChanges.column(t, where);
        RowChanges.setColumns(t, set);
        return change(t, commit, 0, (changes, xid) -> changes.update(set, where, xid));
    }

    private interface Change {
        long run(RowChanges changes, int xid) throws IOException;
    }

    /**
     * Runs a row change in a new transaction. Before the commit is written, a checkpoint makes the
     * changed heap, map and index pages durable: without WAL, a commit on disk must never name
     * changes that are not (see the README, "Changing rows"); then, when the heap grew or index
     * entries were added, the catalog records the heap's blocks (what scans read) and the indexes'
     * sizes. A crash between that catalog write and the commit leaves pages holding only versions of
     * an aborted transaction inside the recorded blocks: invisible. Any failure before the commit
     * aborts the id. After
     * the commit, {@code n_live_tup} changes by {@code live} per row and {@code n_dead_tup} by one.
     */
    private long change(TableInfo t, boolean commit, int live, Change change) throws IOException {
        int xid = xacts.assign();
        boolean done = false;
        try {
            long n;
            RowChanges changes;
            List<IndexInfo> sizes;
            try (Snapshot snapshot = xacts.snapshot();
                    BufferSession s = pool.openSession(SESSION_KIND)) {
                changes = new RowChanges(s, t, heap(t), t.indexes().stream().map(this::indexRelation).toList(), snapshot);
                n = change.run(changes, xid);
                if (changes.pendingIndexEntries() > 0) {
                    pool.checkpoint(); // the heap pass, with its cleared map bits, on disk before any index entry
                    changes.insertIndexEntries();
                }
                sizes = changes.indexEntriesAdded() > 0 ? indexSizes(s, t) : null;
            } catch (UncheckedIOException e) {
                throw new TableException("table " + t.name() + ": " + e.getCause().getMessage(), e.getCause());
            }
            if (!commit) {
                done = true; // left running: what a crash before the commit leaves
                return n;
            }
            if (n > 0) {
                pool.checkpoint();
            }
            if (changes.blocks() != t.blocks() || sizes != null) {
                // scans read the heap up to the catalog's blocks: the pages appended (durable since the
                // checkpoint) are recorded before the commit names the versions on them
                catalog.putSizes(t.name(), changes.blocks(), sizes == null ? t.indexes() : sizes);
            }
            xacts.commit(xid);
            done = true;
            if (n > 0) {
                try {
                    catalog.addTupleStats(t.name(), live * n, n);
                } catch (IOException e) { // statistics: the change itself is committed
                    System.getLogger("org.pageio.table").log(System.Logger.Level.WARNING, "could not save the row counts of "
                            + t.name() + " in the catalog: " + e.getMessage());
                }
            }
            return n;
        } finally {
            if (!done) {
                try {
                    xacts.abort(xid);
                } catch (IOException | RuntimeException e) {
                    System.getLogger("org.pageio.table").log(System.Logger.Level.WARNING, "could not record the abort of transaction "
                            + Integer.toUnsignedString(xid) + ": " + e.getMessage() + "; it reads as aborted after a restart");
                }
            }
        }
    }

    @Override
    public synchronized VacuumReport vacuum(String table, VacuumOptions options)
            throws IOException {
        TableInfo t = table(table);
        ScanSettings set = options.settings();
        boolean timing = set.trackIoTiming() != null ? set.trackIoTiming() : pool.settings().trackIoTiming();
        List<SmgrRelation> rels = t.indexes().stream().map(this::indexRelation).toList();
        VacuumReport r;
        try (BufferSession s = pool.openSession(SESSION_KIND)) {
            VacuumCutoffs cutoffs = VacuumCutoffs.of(xacts, options.freeze());
            r = new LazyVacuum(pool, s, SESSION_KIND, t, heap(t), t.indexes(), rels, cutoffs,
                    options.freeze(), set.effectiveIoConcurrency(), set.ioCombineLimit(), options.bufferUsageLimitKb()).run(timing);
        } catch (UncheckedIOException e) {
            throw new TableException("VACUUM of " + t.name() + ": " + e.getCause().getMessage(), e.getCause());
        } catch (TableException e) {
            throw e;
        } catch (IOException e) {
            throw new TableException("VACUUM of " + t.name() + " (relation " + heap(t) + "): " + e.getMessage(), e);
        }
        try { // statistics, as VACUUM reports them to pg_stat_user_tables
            catalog.setTupleStats(t.name(), r.liveTuples(), r.recentlyDead());
            for (VacuumReport.IndexVacuum v : r.indexes()) {
                for (IndexInfo i : t.indexes()) {
                    if (i.name().equals(v.name())) {
                        catalog.putIndex(t.name(), new IndexInfo(i.name(), i.column(), i.relNumber(), v.entriesLeft(), v.pages(),
                                i.height(), i.columns()));
                    }
                }
            }
        } catch (IOException e) {
            System.getLogger("org.pageio.table").log(System.Logger.Level.WARNING, "could not save the row counts of "
                    + t.name() + " after VACUUM in the catalog: " + e.getMessage());
        }
        return r;
    }

    /** The table's indexes with their entries, blocks and height as their metapages and files have them now. */
    private List<IndexInfo> indexSizes(BufferSession s, TableInfo t) throws IOException {
        List<IndexInfo> out = new ArrayList<>();
        for (IndexInfo i : t.indexes()) {
            SmgrRelation rel = indexRelation(i);
            int buf = s.readBuffer(rel, 0, null);
            try {
                MemorySegment meta = s.page(buf);
                out.add(new IndexInfo(i.name(), i.column(), i.relNumber(), IndexPage.metaEntries(meta), rel.nblocks(),
                        IndexPage.metaHeight(meta), i.columns()));
            } finally {
                s.releaseBuffer(buf);
            }
        }
        return out;
    }

    private static IndexInfo index(TableInfo t, String column) throws TableException {
        return Scans.indexOf(t, column);
    }

    @Override
    public synchronized void drop(String name) throws IOException {
        TableInfo t = table(name);
        // the relations' buffers go first (dirty ones discarded): none may be written to a file
        // that is gone, or be found by a later relation with the same number. Only then the
        // catalog entry: a drop refused because a scan still pins the table keeps the table whole.
        try (BufferSession s = pool.openSession(SESSION_KIND)) {
            s.dropRelationBuffers(heap(t), dropWait);
            for (IndexInfo i : t.indexes()) {
                s.dropRelationBuffers(indexRelation(i), dropWait);
            }
        } catch (IllegalStateException busy) {
            throw new TableException("could not drop table " + name + ": " + busy.getMessage()
                    + "; the table and its files stay: drop it again when the scan using it has ended");
        }
        catalog.removeTable(name);
        unlinkQuietly(heap(t));
        for (IndexInfo i : t.indexes()) {
            unlinkQuietly(indexRelation(i));
        }
    }

    private static void unlinkQuietly(SmgrRelation rel) {
        try {
            rel.unlink();
        } catch (IOException e) {
            System.getLogger("org.pageio.table").log(System.Logger.Level.WARNING,
                    "could not remove the files of relation " + rel + ": " + e.getMessage());
        }
    }
}
