package org.pageio.table.engine;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import org.pageio.bufmgr.BufferSession;
import org.pageio.bufmgr.page.Page;
import org.pageio.bufmgr.smgr.SmgrRelation;
import org.pageio.bufmgr.stream.ReadStream;
import org.pageio.table.Column;
import org.pageio.table.ColumnType;
import org.pageio.table.HeapPage;
import org.pageio.table.RowFilter;
import org.pageio.table.TableException;
import org.pageio.table.TableInfo;
import org.pageio.table.scan.Scans;
import org.pageio.table.vm.VisibilityMap;
import org.pageio.table.xact.Snapshot;

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
        Column c = column(table, where);
        int at = c.offset();
        boolean wide = c.type() == ColumnType.INT8;
        byte[] pattern = where.kind() == RowFilter.Kind.LIKE ? Scans.likeSubstring(where.pattern()) : null;
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
                    boolean allVisible = HeapPage.allVisible(page);
                    int n = HeapPage.lineCount(page);
                    int nhits = 0;
                    for (int line = 1; line <= n; line++) {
                        int off = HeapPage.tupleOffset(page, line);
                        if (off < 0 || !allVisible && !snapshot.visible(page, off)) {
                            continue;
                        }
                        boolean match;
                        if (pattern != null) {
                            match = HeapPage.contains(page, off + at + 4L, HeapPage.textLength(page, off + at), pattern);
                        } else {
                            match = where.matches(wide ? HeapPage.getLong(page, off + at) : HeapPage.getInt(page, off + at));
                        }
                        if (match) {
                            hits[nhits++] = line;
                        }
                    }
                    if (nhits > 0) {
                        session.beginModify(buf);
                        try {
                            if (HeapPage.allVisible(page)) {
                                // heap_delete: the page flag and the map bits go first, under the page's content lock
                                Page.setFlags(page, Page.flags(page) & ~Page.PD_ALL_VISIBLE);
                                vm.clear(block, VisibilityMap.VISIBILITYMAP_VALID_BITS);
                            }
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

    /** {@code heap_delete}'s header changes on the tuple at {@code off}. */
    static void markDeleted(MemorySegment page, int off, long block, int line, int xid) {
        HeapPage.setXmax(page, off, xid);
        HeapPage.setInfomask(page, off, HeapPage.infomask(page, off) & ~Snapshot.HEAP_XMAX_BITS);
        HeapPage.setInfomask2(page, off, (HeapPage.infomask2(page, off) | Snapshot.HEAP_KEYS_UPDATED) & ~Snapshot.HEAP_HOT_UPDATED);
        HeapPage.setCtid(page, off, block, line);
    }
}
