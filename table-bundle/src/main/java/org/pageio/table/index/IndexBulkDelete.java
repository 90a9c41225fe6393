package org.pageio.table.index;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import org.pageio.bufmgr.BufferAccessStrategy;
import org.pageio.bufmgr.BufferSession;
import org.pageio.bufmgr.page.Page;
import org.pageio.bufmgr.smgr.SmgrRelation;
import org.pageio.bufmgr.stream.ReadStream;
import org.pageio.table.TableException;

/**
 * VACUUM's pass over an index: nbtree's {@code btbulkdelete} and {@code btvacuumscan} reduced to
 * pageio's pages. Every block after the metapage is read in physical order through one read
 * stream ({@code MAINTENANCE | USE_BATCHING}, {@code maintenance_io_concurrency}, the caller's
 * {@code VACUUM} ring), not along the sibling links; on each leaf ({@code btvacuumpage}) the
 * entries whose heap TID is in the dead set are removed and the rest moved down over them, in
 * place, under the leaf's content lock and change count (so a concurrent {@link IndexCursor}
 * copies the page before or after, never in between); the buffer is dirtied only when an entry
 * went. Internal pages, the metapage and new (all-zero) pages are passed over. When the relation
 * grew during the pass, the new blocks are read too ({@code btvacuumscan}'s loop). The metapage's
 * entry count becomes the entries counted on the leaves ({@code num_index_tuples}).
 *
 * <p>One writer per index at a time, as for {@link IndexInserter}. Leaves left empty stay in the
 * tree, linked and with their parent entry: no page deletion ({@code _bt_pagedel}), so an index
 * never shrinks (see the README's known limits).
 */
public final class IndexBulkDelete {

    private IndexBulkDelete() {
    }

    /**
     * What the pass found, as {@code IndexBulkDeleteResult} and {@code VACUUM VERBOSE} report it.
     *
     * @param pages       blocks of the index, metapage included ({@code num_pages})
     * @param entries     entries left on the leaves ({@code num_index_tuples})
     * @param removed     entries removed ({@code tuples_removed})
     * @param emptyLeaves leaves without an entry after the pass (they stay: no page deletion)
     */
    public record Stats(long pages, long entries, long removed, long emptyLeaves) {
    }

    /** deadTids: sorted ascending, IndexBuilder.tid(block, line) values, [0, n). Returns entries removed. */
    public static long bulkDelete(BufferSession session, SmgrRelation index, String name, long[] deadTids, int n,
            BufferAccessStrategy strategy, int maintenanceIoConcurrency) throws IOException {
        return bulkDeleteStats(session, index, name, deadTids, n, strategy, maintenanceIoConcurrency).removed();
    }

    /**
     * {@link #bulkDelete} with the figures {@code VACUUM VERBOSE} prints for an index.
     *
     * @throws IOException naming the index, relation and block of a page that cannot be read or is
     *         not an index page
     */
    public static Stats bulkDeleteStats(BufferSession session, SmgrRelation index, String name, long[] deadTids, int n,
            BufferAccessStrategy strategy, int maintenanceIoConcurrency) throws IOException {
        long removed = 0;
        long remaining = 0;
        long empty = 0;
        long scanned = 1;
        long nblocks = index.nblocks();
        ReadStream.Options options = new ReadStream.Options(maintenanceIoConcurrency, ReadStream.Options.INHERIT, null);
        while (scanned < nblocks) { // btvacuumscan: again for pages added while the pass ran
            long block = scanned;
            try (ReadStream stream = new ReadStream(session, index, ReadStream.blockRange(scanned, nblocks - scanned),
                    ReadStream.MAINTENANCE | ReadStream.USE_BATCHING, strategy, options)) {
                int buf;
                while ((buf = stream.next()) >= 0) {
                    try {
                        MemorySegment page = session.page(buf);
                        if (Page.isNew(page)) {
                            continue; // extended, never written (a crash): holds nothing
                        }
                        if (IndexPage.magic(page) != IndexPage.MAGIC) {
                            throw new TableException("index " + name + " (relation " + index + "): block " + block
                                    + " is not an index page");
                        }
                        if ((IndexPage.flags(page) & IndexPage.LEAF) == 0) {
                            continue;
                        }
                        int before = IndexPage.count(page);
                        int kept = vacuumPage(session, buf, page, deadTids, n);
                        removed += before - kept;
                        remaining += kept;
                        empty += kept == 0 ? 1 : 0;
                    } finally {
                        session.releaseBuffer(buf);
                        block++;
                    }
                }
            }
            scanned = nblocks;
            nblocks = index.nblocks();
        }
        setEntries(session, index, name, remaining);
        return new Stats(nblocks, remaining, removed, empty);
    }

    /**
     * {@code btvacuumpage} for one leaf: removes its entries whose TID is dead, moving the others
     * down, under the content lock; returns the entries left.
     */
    private static int vacuumPage(BufferSession session, int buf, MemorySegment page, long[] dead, int n) {
        int count = IndexPage.count(page);
        int first = 0;
        while (first < count && !isDead(page, first, dead, n)) { // one writer: the page holds still for it
            first++;
        }
        if (first == count) {
            return count;
        }
        session.beginModify(buf);
        int kept = first;
        try {
            IndexPage.beginChange(page);
            for (int i = first + 1; i < count; i++) {
                if (!isDead(page, i, dead, n)) {
                    IndexPage.copyEntries(page, i, page, kept++, 1);
                }
            }
            IndexPage.setCount(page, kept);
            IndexPage.endChange(page);
        } finally {
            session.endModify(buf, true);
        }
        return kept;
    }

    private static boolean isDead(MemorySegment page, int i, long[] dead, int n) {
        return Arrays.binarySearch(dead, 0, n, IndexPage.tid(page, i)) >= 0;
    }

    /** Sets the metapage's entry count to {@code entries} (dirty only when it changes). */
    private static void setEntries(BufferSession session, SmgrRelation index, String name, long entries) throws IOException {
        int buf = session.readBuffer(index, 0, null);
        try {
            MemorySegment meta = session.page(buf);
            if (IndexPage.magic(meta) != IndexPage.MAGIC || (IndexPage.flags(meta) & IndexPage.META) == 0) {
                throw new TableException("index " + name + " (relation " + index + "): block 0 is not an index metapage");
            }
            if (IndexPage.metaEntries(meta) != entries) {
                session.beginModify(buf);
                try {
                    IndexPage.beginChange(meta);
                    IndexPage.setMetaEntries(meta, entries);
                    IndexPage.endChange(meta);
                } finally {
                    session.endModify(buf, true);
                }
            }
        } finally {
            session.releaseBuffer(buf);
        }
    }
}
