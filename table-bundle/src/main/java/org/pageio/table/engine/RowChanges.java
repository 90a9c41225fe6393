package org.pageio.table.engine;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import org.pageio.bufmgr.BufferSession;
import org.pageio.bufmgr.page.Page;
import org.pageio.bufmgr.smgr.SmgrRelation;
import org.pageio.bufmgr.stream.ReadStream;
import java.util.List;
import org.pageio.table.Column;
import org.pageio.table.IndexInfo;
import org.pageio.table.index.IndexBuilder;
import org.pageio.table.index.IndexInserter;
import org.pageio.table.index.IndexPage;
import org.pageio.table.ColumnType;
import org.pageio.heap.HeapPage;
import org.pageio.table.RowFilter;
import org.pageio.table.SetClause;
import org.pageio.table.TableException;
import org.pageio.table.TableInfo;
import org.pageio.table.scan.Scans;
import org.pageio.heap.vm.VisibilityMap;
import org.pageio.heap.xact.Snapshot;

/**
 * Row changes on a table's heap and indexes through the buffer manager: PostgreSQL's
 * {@code heap_delete} and {@code heap_update} ({@link #update}) for every row a {@link RowFilter}
 * selects that the snapshot sees. The caller holds the table's one writer lock, has assigned the
 * transaction id, records {@link #blocks} in the catalog when the heap grew, and commits or aborts.
 *
 * <p>Delete, per page, under its content lock ({@code beginModify}): when the page is all-visible,
 * {@code PD_ALL_VISIBLE} is cleared and the page's visibility map bits with it
 * ({@link VisibilityMap#clear}, both bits), before any tuple changes; then each tuple gets
 * {@code t_xmax} = the id, {@code HEAP_XMAX_BITS} cleared (so {@code HEAP_XMAX_INVALID} too),
 * {@code HEAP_KEYS_UPDATED} set and {@code HEAP_HOT_UPDATED} cleared in {@code t_infomask2},
 * {@code t_ctid} pointing at itself, and the page {@code PageSetPrunable(xid)}; the buffer is left
 * dirty for checkpoints, the background writer or eviction to write.
 *
 * <p>One statement per object, on the session's thread; nothing is allocated per row.
 */
final class RowChanges {

    private final BufferSession session;
    private final TableInfo table;
    private final SmgrRelation heap;
    private final Snapshot snapshot;
    /** The relations of {@code table.indexes()}, in that order. */
    private final List<SmgrRelation> indexRels;
    /** The update's target page: its pinned buffer and block ({@code BulkInsertState}'s current buffer), -1 none. */
    private int targetBuf = -1;
    private long targetBlock = -1;
    /** Heap blocks: the table's, then past every page appended. */
    private long blocks;
    private long indexEntriesAdded;
    /** The statement's index entries, waiting for {@link #insertIndexEntries}; null before an update. */
    private Indexes indexes;
    private final int[] extended = new int[1];

    RowChanges(BufferSession session, TableInfo table, SmgrRelation heap, List<SmgrRelation> indexRels, Snapshot snapshot) {
        this.session = session;
        this.table = table;
        this.heap = heap;
        this.indexRels = indexRels;
        this.snapshot = snapshot;
        this.blocks = table.blocks();
    }

    /** The filter's column, checked against the table: an unknown column or a form its type cannot take is refused. */
    static Column column(TableInfo t, RowFilter f) throws TableException {
        Column c = t.shape().columns().stream().filter(x -> x.name().equals(f.column())).findFirst().orElse(null);
        if (c == null) {
            throw new TableException("table " + t.name() + " has no column \"" + f.column() + "\"; its columns are "
                    + String.join(", ", t.shape().columns().stream().map(Column::name).toList()));
        }
        if (f.kind() == RowFilter.Kind.LIKE) {
            if (c.type() != ColumnType.TEXT) {
                throw new IllegalArgumentException("column " + c.name() + " of " + t.name() + " is " + c.type().sqlName()
                        + ", not text: LIKE needs text");
            }
            Scans.likeSubstring(f.pattern());
        } else if (!c.type().isInteger()) {
            throw new IllegalArgumentException("column " + c.name() + " of " + t.name() + " is " + c.type().sqlName()
                    + ": WHERE " + f + " needs an integer column");
        }
        return c;
    }

    /** Marks every visible row {@code where} selects deleted by {@code xid}; returns how many. */
    long delete(RowFilter where, int xid) throws IOException {
        Selection selection = new Selection(column(table, where), where);
        VisibilityMap vm = new VisibilityMap(session, heap, null);
        long deleted = 0;
        int[] hits = new int[HeapPage.MAX_TUPLES];
        try (ReadStream stream = new ReadStream(session, heap, ReadStream.blockRange(0, table.blocks()),
                ReadStream.SEQUENTIAL | ReadStream.USE_BATCHING, null, ReadStream.Options.DEFAULT)) {
            int buf;
            long block = 0;
            while ((buf = stream.next()) >= 0) {
                try {
                    MemorySegment page = session.page(buf);
                    int nhits = selected(page, HeapPage.lineCount(page), selection, hits);
                    if (nhits > 0) {
                        session.beginModify(buf);
                        try {
                            clearAllVisible(page, vm, block);
                            for (int i = 0; i < nhits; i++) {
                                markDeleted(page, HeapPage.tupleOffset(page, hits[i]), block, hits[i], xid);
                            }
                            HeapPage.setPrunable(page, xid);
                        } finally {
                            session.endModify(buf, true);
                        }
                        deleted += nhits;
                    }
                } finally {
                    session.releaseBuffer(buf);
                }
                block++;
            }
        }
        return deleted;
    }

    /** The columns of a SET, checked against the table; refused before a transaction id is used. */
    static Column[] setColumns(TableInfo t, SetClause set) throws TableException {
        Column target = column(t, RowFilter.range(set.column(), 0, 0));
        Column source = set.source() == null ? null : column(t, RowFilter.range(set.source(), 0, 0));
        return new Column[] {target, source};
    }

    /** {@code HEAP_XACT_MASK}: every transaction bit of {@code t_infomask}, cleared on a new version. */
    static final int HEAP_XACT_MASK = 0xFFF0;
    /** {@code HEAP2_XACT_MASK}: {@code HEAP_KEYS_UPDATED | HEAP_HOT_UPDATED | HEAP_ONLY_TUPLE}. */
    static final int HEAP2_XACT_MASK = 0xE000;
    /** {@code HEAP_MOVED} (old VACUUM FULL bits), cleared with {@code HEAP_XMAX_BITS} on the old version. */
    static final int HEAP_MOVED = 0xC000;

    /**
     * {@code heap_update} for every visible row {@code where} selects: a new version with the column
     * set, and the old version pointing to it. Per page, under its content lock, after
     * {@link #clearAllVisible}:
     * <ul>
     * <li><b>HOT</b> when the new version fits on the page and no indexed column's value changes
     * (values compared, as {@code HeapDetermineColumnsInfo} does: {@code SET val = val + 0} on an
     * indexed {@code val} is HOT): new line on the page, {@code HEAP_ONLY_TUPLE}; the old version
     * {@code HEAP_HOT_UPDATED}; no index entry.
     * <li><b>Non-HOT</b> otherwise: the new version on the same page when it fits, else on the
     * target page ({@code RelationGetBufferForTuple} without a free space map: the relation's last
     * page when it has room, else a page appended with {@link BufferSession#extendBy} and
     * initialised), which stays pinned while it has room; under its content lock too (old page
     * first: the lower block, as PostgreSQL orders the two), its {@code PD_ALL_VISIBLE} and map bits
     * cleared. The old version has neither HOT bit; the new one gets an entry in every index of the
     * table ({@link IndexInserter}, its key from the new version; {@code ExecInsertIndexTuples}),
     * inserted after the heap pass has been made durable ({@link #insertIndexEntries}).
     * </ul>
     * Both: the new version {@code t_xmin} = the id, transaction bits cleared, {@code HEAP_UPDATED |
     * HEAP_XMAX_INVALID}, {@code t_ctid} = itself; the old one {@code t_xmax} = the id,
     * {@code HEAP_XMAX_BITS} cleared, {@code HEAP_KEYS_UPDATED} when an indexed column's value
     * changed (PostgreSQL's key columns are those of unique indexes; pageio has none and counts
     * every indexed column), {@code t_ctid} → the new version; the old page
     * {@code PageSetPrunable(xid)}. New versions carry the id, which the statement's snapshot sees
     * as running, so neither the page pass nor a later page finds them again.
     */
    long update(SetClause set, RowFilter where, int xid) throws IOException {
        Column c = column(table, where);
        Column[] cols = setColumns(table, set);
        Column target = cols[0];
        Column source = cols[1];
        Selection selection = new Selection(c, where);
        VisibilityMap vm = new VisibilityMap(session, heap, null);
        Indexes ix = new Indexes(target);
        indexes = ix;
        long updated = 0;
        int[] hits = new int[HeapPage.MAX_TUPLES];
        try (ReadStream stream = new ReadStream(session, heap, ReadStream.blockRange(0, table.blocks()),
                ReadStream.SEQUENTIAL | ReadStream.USE_BATCHING, null, ReadStream.Options.DEFAULT)) {
            int buf;
            long block = 0;
            while ((buf = stream.next()) >= 0) {
                try {
                    MemorySegment page = session.page(buf);
                    int n = HeapPage.lineCount(page); // new versions get lines past n: not visited again
                    int nhits = selected(page, n, selection, hits);
                    if (nhits == 0) {
                        continue;
                    }
                    session.beginModify(buf);
                    try {
                        clearAllVisible(page, vm, block);
                        for (int i = 0; i < nhits; i++) {
                            int line = hits[i];
                            int off = HeapPage.tupleOffset(page, line);
                            long v = newValue(page, off, target, source, set);
                            long old = target.type() == ColumnType.INT8 ? HeapPage.getLong(page, off + target.offset())
                                    : HeapPage.getInt(page, off + target.offset());
                            boolean keyChanged = ix.targetIndexed && v != old;
                            int len = HeapPage.lpLen(HeapPage.linePointer(page, line));
                            boolean fits = fits(page, len);
                            boolean hot = fits && !keyChanged;
                            long newBlock = block;
                            int newLine;
                            if (fits) {
                                newLine = addVersion(page, block, off, page, len, xid, hot, target, v);
                            } else {
                                int tbuf = targetPage(len, block, vm);
                                MemorySegment tpage = session.page(tbuf);
                                newBlock = targetBlock;
                                session.beginModify(tbuf);
                                try {
                                    clearAllVisible(tpage, vm, newBlock);
                                    newLine = addVersion(page, newBlock, off, tpage, len, xid, false, target, v);
                                } finally {
                                    session.endModify(tbuf, true);
                                }
                            }
                            // the old version
                            HeapPage.setXmax(page, off, xid);
                            HeapPage.setInfomask(page, off, HeapPage.infomask(page, off) & ~(Snapshot.HEAP_XMAX_BITS | HEAP_MOVED));
                            int mask2 = HeapPage.infomask2(page, off) & ~(Snapshot.HEAP_KEYS_UPDATED | Snapshot.HEAP_HOT_UPDATED);
                            HeapPage.setInfomask2(page, off, mask2 | (keyChanged ? Snapshot.HEAP_KEYS_UPDATED : 0)
                                    | (hot ? Snapshot.HEAP_HOT_UPDATED : 0));
                            HeapPage.setCtid(page, off, newBlock, newLine);
                            if (!hot) {
                                ix.add(page, off, target, v, newBlock, newLine);
                            }
                        }
                        HeapPage.setPrunable(page, xid);
                    } finally {
                        session.endModify(buf, true);
                    }
                    updated += nhits;
                } finally {
                    session.releaseBuffer(buf);
                    block++;
                }
            }
        } finally {
            if (targetBuf >= 0) {
                session.releaseBuffer(targetBuf);
                targetBuf = -1;
            }
        }
        return updated;
    }

    /** Heap blocks after the change: the table's, or more when pages were appended ({@code TableInfo.blocks} to record). */
    long blocks() {
        return blocks;
    }

    /** Index entries added (non-HOT updates × indexes). */
    long indexEntriesAdded() {
        return indexEntriesAdded;
    }

    /** New versions waiting for their index entries ({@link #insertIndexEntries}). */
    int pendingIndexEntries() {
        return indexes == null ? 0 : indexes.pending;
    }

    /**
     * {@code ExecInsertIndexTuples} for every new version the statement put off its HOT chain, after
     * the heap pass: the caller first makes the heap pass durable (a checkpoint), so that no index
     * entry can reach the disk before the cleared visibility map bits of the page it points into.
     * Otherwise a crash could leave an entry for a version of an aborted transaction on a page the
     * map still calls all-visible, which the index-only scan would count. No heap page is locked here.
     */
    void insertIndexEntries() throws IOException {
        if (indexes != null) {
            indexes.insertPending();
        }
    }

    private static boolean fits(MemorySegment page, int len) {
        return Page.upper(page) - Page.lower(page) >= Page.maxAlign(len) + HeapPage.LINE_POINTER_SIZE
                && HeapPage.lineCount(page) < HeapPage.MAX_TUPLES;
    }

    /**
     * {@code RelationGetBufferForTuple} without a free space map: the pinned target page when a
     * version of {@code len} bytes fits on it, else the relation's last page when it is not the page
     * being changed ({@code oldBlock}) and has room, else a new page appended and initialised.
     */
    private int targetPage(int len, long oldBlock, VisibilityMap vm) throws IOException {
        if (targetBuf >= 0 && fits(session.page(targetBuf), len)) {
            return targetBuf;
        }
        if (targetBuf < 0) {
            long last = heap.nblocks() - 1;
            if (last > oldBlock) {
                int b = session.readBuffer(heap, last, null);
                MemorySegment p = session.page(b);
                if (Page.isNew(p) || fits(p, len)) {
                    targetBuf = b;
                    targetBlock = last;
                    blocks = Math.max(blocks, last + 1);
                    if (Page.isNew(p)) { // extended, never written before a crash: PageInit, as RelationGetBufferForTuple
                        session.beginModify(b);
                        try {
                            HeapPage.init(p);
                        } finally {
                            session.endModify(b, true);
                        }
                    }
                    return b;
                }
                session.releaseBuffer(b);
            }
        } else {
            session.releaseBuffer(targetBuf);
            targetBuf = -1;
        }
        targetBlock = session.extendBy(heap, 1, extended, null); // RelationAddBlocks, one page at a time
        targetBuf = extended[0];
        if (targetBlock >= IndexBuilder.MAX_BLOCKS) {
            throw new TableException("UPDATE of " + table.name() + ": the heap (relation " + heap + ") would pass "
                    + IndexBuilder.MAX_BLOCKS + " blocks, the most a table may have");
        }
        blocks = Math.max(blocks, targetBlock + 1);
        session.beginModify(targetBuf);
        try {
            HeapPage.init(session.page(targetBuf));
        } finally {
            session.endModify(targetBuf, true);
        }
        return targetBuf;
    }

    /**
     * Adds to {@code dst} (block {@code dstBlock}; the caller holds its content lock and checked the
     * room) a copy of the version at {@code off} of {@code src} with {@code target} set to {@code v},
     * as a new version of transaction {@code xid}; returns its line.
     */
    private static int addVersion(MemorySegment src, long dstBlock, int off, MemorySegment dst, int len, int xid, boolean hot,
            Column target, long v) {
        int newLine = HeapPage.lineCount(dst) + 1;
        int newOff = Page.upper(dst) - Page.maxAlign(len);
        MemorySegment.copy(src, off, dst, newOff, len);
        HeapPage.setLinePointer(dst, newLine, newOff, HeapPage.LP_NORMAL, len);
        Page.setLower(dst, Page.lower(dst) + HeapPage.LINE_POINTER_SIZE);
        Page.setUpper(dst, newOff);
        HeapPage.setXmin(dst, newOff, xid);
        HeapPage.setXmax(dst, newOff, 0);
        HeapPage.setInfomask(dst, newOff, (HeapPage.infomask(dst, newOff) & ~HEAP_XACT_MASK)
                | Snapshot.HEAP_XMAX_INVALID | Snapshot.HEAP_UPDATED);
        HeapPage.setInfomask2(dst, newOff, (HeapPage.infomask2(dst, newOff) & ~HEAP2_XACT_MASK) | (hot ? Snapshot.HEAP_ONLY_TUPLE : 0));
        HeapPage.setCtid(dst, newOff, dstBlock, newLine);
        if (target.type() == ColumnType.INT8) {
            HeapPage.setLong(dst, newOff + target.offset(), v);
        } else {
            HeapPage.setInt(dst, newOff + target.offset(), (int) v);
        }
        return newLine;
    }

    /**
     * The table's indexes for a statement: their key columns, an {@link IndexInserter} each, and
     * the entries the statement's non-HOT versions need (key per index, heap TID), kept in arrays
     * that grow by doubling and inserted after the heap pass ({@link #insertIndexEntries}).
     */
    private final class Indexes {
        final Column[][] columns;
        final IndexInserter[] inserters;
        final boolean targetIndexed;
        long[] keys;
        long[] tidBlocks = new long[HeapPage.MAX_TUPLES];
        int[] tidLines = new int[HeapPage.MAX_TUPLES];
        int pending;

        Indexes(Column target) {
            List<IndexInfo> list = table.indexes();
            columns = new Column[list.size()][];
            inserters = new IndexInserter[list.size()];
            boolean indexed = false;
            for (int i = 0; i < columns.length; i++) {
                IndexInfo info = list.get(i);
                columns[i] = info.columns().stream().map(table.shape()::column).toArray(Column[]::new);
                inserters[i] = new IndexInserter(session, indexRels.get(i), info.name());
                indexed |= info.columns().contains(target.name());
            }
            targetIndexed = indexed;
            keys = new long[HeapPage.MAX_TUPLES * Math.max(1, columns.length)];
        }

        /** Records the entries of the new version of the row at {@code off} ({@code target} = {@code v}) at (block, line). */
        void add(MemorySegment page, int off, Column target, long v, long block, int line) {
            if (pending == tidBlocks.length) {
                int grown = pending * 2;
                keys = java.util.Arrays.copyOf(keys, grown * Math.max(1, columns.length));
                tidBlocks = java.util.Arrays.copyOf(tidBlocks, grown);
                tidLines = java.util.Arrays.copyOf(tidLines, grown);
            }
            for (int i = 0; i < columns.length; i++) {
                long key = 0;
                for (int k = 0; k < columns[i].length; k++) {
                    Column col = columns[i][k];
                    long x = col == target ? v : col.type() == ColumnType.INT8 ? HeapPage.getLong(page, off + col.offset())
                            : HeapPage.getInt(page, off + col.offset());
                    key = k == 0 ? x : IndexPage.compositeKey(key, x);
                }
                keys[pending * columns.length + i] = key;
            }
            tidBlocks[pending] = block;
            tidLines[pending++] = line;
        }

        void insertPending() throws IOException {
            for (int p = 0; p < pending; p++) {
                for (int i = 0; i < columns.length; i++) {
                    inserters[i].insert(keys[p * columns.length + i], tidBlocks[p], tidLines[p]);
                }
            }
            indexEntriesAdded += (long) pending * columns.length;
            pending = 0;
        }
    }

    /** What a {@link RowFilter} compares, resolved once per statement: the column's offset and width, a LIKE's bytes. */
    private record Selection(RowFilter where, int at, boolean wide, byte[] pattern) {
        Selection(Column c, RowFilter where) {
            this(where, c.offset(), c.type() == ColumnType.INT8,
                    where.kind() == RowFilter.Kind.LIKE ? Scans.likeSubstring(where.pattern()) : null);
        }

        boolean matches(MemorySegment page, int off) {
            return pattern != null
                    ? HeapPage.contains(page, off + at + 4L, HeapPage.textLength(page, off + at), pattern)
                    : where.matches(wide ? HeapPage.getLong(page, off + at) : HeapPage.getInt(page, off + at));
        }
    }

    /**
     * The lines among the first {@code n} of {@code page} whose tuple the snapshot sees (every one on
     * an all-visible page) and {@code selection} selects, into {@code hits}; returns how many.
     */
    private int selected(MemorySegment page, int n, Selection selection, int[] hits) {
        boolean allVisible = HeapPage.allVisible(page);
        int nhits = 0;
        for (int line = 1; line <= n; line++) {
            int off = HeapPage.tupleOffset(page, line);
            if (off >= 0 && (allVisible || snapshot.visible(page, off)) && selection.matches(page, off)) {
                hits[nhits++] = line;
            }
        }
        return nhits;
    }

    /**
     * heap_delete's and heap_update's first step on a page they change, under its content lock: the
     * page loses {@code PD_ALL_VISIBLE} and both its visibility map bits before any tuple changes.
     * The map is cleared whether or not the flag was set: without WAL, a crash can leave a map bit on
     * disk whose page's flag was never written (a scan set both, only the map page reached the disk),
     * and a change under such a bit would let the index-only scan count rows that are gone.
     * {@code visibilitymap_clear} dirties the map page only when a bit was set.
     */
    private static void clearAllVisible(MemorySegment page, VisibilityMap vm, long block) throws IOException {
        if (HeapPage.allVisible(page)) {
            Page.setFlags(page, Page.flags(page) & ~Page.PD_ALL_VISIBLE);
        }
        vm.clear(block, VisibilityMap.VISIBILITYMAP_VALID_BITS);
    }

    /** The SET's value for the row at {@code off}; an int column refuses a value outside 32 bits, as PostgreSQL does. */
    private long newValue(MemorySegment page, int off, Column target, Column source, SetClause set) throws TableException {
        long v;
        if (source == null) {
            v = set.value();
        } else {
            long s = source.type() == ColumnType.INT8 ? HeapPage.getLong(page, off + source.offset())
                    : HeapPage.getInt(page, off + source.offset());
            try {
                v = Math.addExact(s, set.value());
            } catch (ArithmeticException e) {
                throw new TableException("UPDATE of " + table.name() + ": bigint out of range (" + s + " + " + set.value() + ")");
            }
        }
        if (target.type() != ColumnType.INT8 && (v < Integer.MIN_VALUE || v > Integer.MAX_VALUE)) {
            throw new TableException("UPDATE of " + table.name() + ": integer out of range for column " + target.name()
                    + " (" + v + ")");
        }
        return v;
    }

    /** {@code heap_delete}'s header changes on the tuple at {@code off}. */
    static void markDeleted(MemorySegment page, int off, long block, int line, int xid) {
        HeapPage.setXmax(page, off, xid);
        HeapPage.setInfomask(page, off, HeapPage.infomask(page, off) & ~Snapshot.HEAP_XMAX_BITS);
        HeapPage.setInfomask2(page, off, (HeapPage.infomask2(page, off) | Snapshot.HEAP_KEYS_UPDATED) & ~Snapshot.HEAP_HOT_UPDATED);
        HeapPage.setCtid(page, off, block, line);
    }
}
