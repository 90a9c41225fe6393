package org.pageio.table.engine;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import org.pageio.bufmgr.BufferSession;
import org.pageio.bufmgr.page.Page;
import org.pageio.bufmgr.smgr.SmgrRelation;
import org.pageio.bufmgr.stream.ReadStream;
import org.pageio.table.Column;
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
 * Row changes on a table's heap through the buffer manager: PostgreSQL's {@code heap_delete} for
 * every row a {@link RowFilter} selects that the snapshot sees. The caller holds the table's one
 * writer lock, has assigned the transaction id, and commits or aborts it.
 *
 * <p>Per page, under its content lock ({@code beginModify}): when the page is all-visible,
 * {@code PD_ALL_VISIBLE} is cleared and the page's visibility map bits with it
 * ({@link VisibilityMap#clear}, both bits), before any tuple changes; then each tuple gets
 * {@code t_xmax} = the id, {@code HEAP_XMAX_BITS} cleared (so {@code HEAP_XMAX_INVALID} too),
 * {@code HEAP_KEYS_UPDATED} set and {@code HEAP_HOT_UPDATED} cleared in {@code t_infomask2},
 * {@code t_ctid} pointing at itself; the buffer is left dirty for checkpoints, the background writer
 * or eviction to write.
 */
final class RowChanges {

    private final BufferSession session;
    private final TableInfo table;
    private final SmgrRelation heap;
    private final Snapshot snapshot;

    RowChanges(BufferSession session, TableInfo table, SmgrRelation heap, Snapshot snapshot) {
        this.session = session;
        this.table = table;
        this.heap = heap;
        this.snapshot = snapshot;
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

    /** The refusal when a new row version does not fit on its page. */
    static final String NO_ROOM = "the new row version does not fit on its page; updates that move a row to another page"
            + " are not supported yet";

    /** The columns of a SET, checked against the table and its indexes; refused before a transaction id is used. */
    static Column[] setColumns(TableInfo t, SetClause set) throws TableException {
        Column target = column(t, RowFilter.range(set.column(), 0, 0));
        for (org.pageio.table.IndexInfo i : t.indexes()) {
            if (i.columns().contains(target.name())) {
                throw new TableException("UPDATE of " + t.name() + "." + target.name() + ": the column has index "
                        + i.name() + ", and changing an indexed column needs a new index entry, which"
                        + " is not supported yet (only heap-only updates of columns without an index)");
            }
        }
        Column source = set.source() == null ? null : column(t, RowFilter.range(set.source(), 0, 0));
        return new Column[] {target, source};
    }

    /**
     * {@code heap_update} as a heap-only (HOT) update: for every visible row {@code where} selects, a
     * new version with the column set, on the same page (new line pointer; {@code t_xmin} = the id,
     * {@code HEAP_UPDATED | HEAP_XMAX_INVALID}, {@code HEAP_ONLY_TUPLE}); the old version gets
     * {@code t_xmax} = the id, {@code HEAP_HOT_UPDATED} and {@code t_ctid} → the new line. No index
     * changes: index scans reach the new version through the chain from the root line pointer.
     * A page without room for all its new versions refuses the whole statement (the caller aborts).
     */
    long update(SetClause set, RowFilter where, int xid) throws IOException {
        Column c = column(table, where);
        Column[] cols = setColumns(table, set);
        Column target = cols[0];
        Column source = cols[1];
        Selection selection = new Selection(c, where);
        VisibilityMap vm = new VisibilityMap(session, heap, null);
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
                    int need = 0;
                    for (int i = 0; i < nhits; i++) {
                        need += Page.maxAlign(HeapPage.lpLen(HeapPage.linePointer(page, hits[i]))) + HeapPage.LINE_POINTER_SIZE;
                    }
                    if (Page.upper(page) - Page.lower(page) < need || n + nhits > HeapPage.MAX_TUPLES) {
                        throw new TableException("UPDATE of " + table.name() + " refused at block " + block + ": " + NO_ROOM);
                    }
                    session.beginModify(buf);
                    try {
                        clearAllVisible(page, vm, block);
                        for (int i = 0; i < nhits; i++) {
                            int line = hits[i];
                            int off = HeapPage.tupleOffset(page, line);
                            long v = newValue(page, off, target, source, set);
                            int len = HeapPage.lpLen(HeapPage.linePointer(page, line));
                            int newLine = HeapPage.lineCount(page) + 1;
                            int newOff = Page.upper(page) - Page.maxAlign(len);
                            MemorySegment.copy(page, off, page, newOff, len);
                            page.set(java.lang.foreign.ValueLayout.JAVA_INT_UNALIGNED.withOrder(java.nio.ByteOrder.LITTLE_ENDIAN),
                                    Page.lower(page), newOff | (HeapPage.LP_NORMAL << 15) | (len << 17));
                            Page.setLower(page, Page.lower(page) + HeapPage.LINE_POINTER_SIZE);
                            Page.setUpper(page, newOff);
                            // the new version
                            HeapPage.setXmin(page, newOff, xid);
                            HeapPage.setXmax(page, newOff, 0);
                            HeapPage.setInfomask(page, newOff, (HeapPage.infomask(page, newOff)
                                    & ~(Snapshot.HEAP_XMIN_FROZEN | Snapshot.HEAP_XMAX_BITS))
                                    | Snapshot.HEAP_XMAX_INVALID | Snapshot.HEAP_UPDATED);
                            HeapPage.setInfomask2(page, newOff, (HeapPage.infomask2(page, newOff)
                                    & ~(Snapshot.HEAP_KEYS_UPDATED | Snapshot.HEAP_HOT_UPDATED)) | Snapshot.HEAP_ONLY_TUPLE);
                            HeapPage.setCtid(page, newOff, block, newLine);
                            if (target.type() == ColumnType.INT8) {
                                HeapPage.setLong(page, newOff + target.offset(), v);
                            } else {
                                HeapPage.setInt(page, newOff + target.offset(), (int) v);
                            }
                            // the old version
                            HeapPage.setXmax(page, off, xid);
                            HeapPage.setInfomask(page, off, HeapPage.infomask(page, off) & ~Snapshot.HEAP_XMAX_BITS);
                            HeapPage.setInfomask2(page, off, HeapPage.infomask2(page, off) | Snapshot.HEAP_HOT_UPDATED);
                            HeapPage.setCtid(page, off, block, newLine);
                        }
                    } finally {
                        session.endModify(buf, true);
                    }
                    updated += nhits;
                } finally {
                    session.releaseBuffer(buf);
                    block++;
                }
            }
        }
        return updated;
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
     * heap_delete's and heap_update's first step on a page they change, under its content lock: an
     * all-visible page loses {@code PD_ALL_VISIBLE} and both its visibility map bits before any tuple
     * changes.
     */
    private static void clearAllVisible(MemorySegment page, VisibilityMap vm, long block) throws IOException {
        if (HeapPage.allVisible(page)) {
            Page.setFlags(page, Page.flags(page) & ~Page.PD_ALL_VISIBLE);
            vm.clear(block, VisibilityMap.VISIBILITYMAP_VALID_BITS);
        }
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
