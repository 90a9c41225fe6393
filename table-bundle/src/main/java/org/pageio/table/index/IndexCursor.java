package org.pageio.table.index;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import org.pageio.bufmgr.BufferSession;
import org.pageio.bufmgr.smgr.SmgrRelation;
import org.pageio.table.TableException;
import org.pageio.heap.PageReads;

/**
 * Walks the entries with {@code lo <= key <= hi} in order (for an index on two columns, keys and
 * bounds are {@link IndexPage#compositeKey}s, so {@code c1 = x AND c2 BETWEEN a AND b} is the one
 * range {@code [compositeKey(x, a), compositeKey(x, b)]}): one descent from the root (an "index
 * search"), then right along the leaves. Every page is read through the buffer manager
 * ({@link PageReads}) and pinned only while its entries in range are copied out
 * ({@code _bt_readpage}'s {@code so->currPos}); the session's thread; no allocation per entry.
 *
 * <p>Without a lock: each copy is taken under the page's change count and taken again when an
 * {@link IndexInserter} or {@link IndexBulkDelete} changed the page meanwhile (see
 * {@link IndexPage}), and on each leaf the copy starts at the first entry {@code >= lo}, so a leaf
 * reached along a sibling link after a split skips what is below the range (Lehman and Yao's
 * move right). What a concurrent writer's changes let a cursor see is in {@link IndexInserter}.
 */
public final class IndexCursor implements AutoCloseable {

    private final BufferSession session;
    private final PageReads reads;
    private final SmgrRelation rel;
    private final String name;
    private final long lo;
    private final long hi;
    /** The current leaf's entries in range: keys, heap blocks, lines, [0, count). */
    private final long[] keys = new long[IndexPage.CAPACITY];
    private final long[] blocks = new long[IndexPage.CAPACITY];
    private final int[] lines = new int[IndexPage.CAPACITY];
    private int pos;
    private int count;
    /** The current leaf's right sibling, -1 at the end of the index or once an entry above {@code hi} was met. */
    private long next;
    private boolean ended;

    public long key;
    public long block;
    public int line;
    /** Key columns of the index, from its metapage: 1, or 2 ({@link IndexPage#compositeKey}s). */
    public final int keyColumns;

    public IndexCursor(BufferSession session, PageReads reads, SmgrRelation rel, String name, long lo, long hi) throws IOException {
        this.session = session;
        this.reads = reads;
        this.rel = rel;
        this.name = name;
        this.lo = lo;
        this.hi = hi;
        int buf = reads.read(rel, 0, null);
        long node;
        int columns;
        try {
            MemorySegment meta = session.page(buf);
            int c;
            do {
                c = IndexPage.stableCount(meta);
                if (IndexPage.magic(meta) != IndexPage.MAGIC || (IndexPage.flags(meta) & IndexPage.META) == 0) {
                    throw new TableException("index " + name + " (relation " + rel + "): block 0 is not an index metapage");
                }
                node = IndexPage.metaRoot(meta);
                columns = IndexPage.metaKeyColumns(meta);
            } while (!IndexPage.unchanged(meta, c));
        } finally {
            session.releaseBuffer(buf);
        }
        keyColumns = columns;
        // down from the root by the pages' own kind: a root split meanwhile only adds a level above
        while (true) {
            buf = reads.read(rel, node, null);
            try {
                MemorySegment page = session.page(buf);
                int c = IndexPage.stableCount(page);
                int flags = IndexPage.flags(page);
                if (IndexPage.magic(page) == IndexPage.MAGIC && (flags & IndexPage.LEAF) != 0) {
                    copy(page, node);
                    return;
                }
                check(page, node, IndexPage.INTERNAL);
                long child;
                while (true) {
                    int n = Math.min(IndexPage.CAPACITY, Math.max(0, IndexPage.count(page)));
                    child = IndexPage.block(page, Math.max(0, IndexPage.lowerBound(page, lo, n) - 1));
                    if (IndexPage.unchanged(page, c)) {
                        break;
                    }
                    c = IndexPage.stableCount(page);
                }
                node = child;
            } finally {
                session.releaseBuffer(buf);
            }
        }
    }

    private void check(MemorySegment page, long blk, int kind) throws TableException {
        if (IndexPage.magic(page) != IndexPage.MAGIC || (IndexPage.flags(page) & kind) == 0) {
            throw new TableException("index " + name + " (relation " + rel + "): block " + blk + " is not an index "
                    + (kind == IndexPage.LEAF ? "leaf" : "internal") + " page");
        }
    }

    /** Copies the entries in range of leaf {@code blk} (pinned by the caller), and its sibling, under its change count. */
    private void copy(MemorySegment leaf, long blk) throws TableException {
        check(leaf, blk, IndexPage.LEAF);
        int c;
        do {
            c = IndexPage.stableCount(leaf);
            int n = Math.min(IndexPage.CAPACITY, Math.max(0, IndexPage.count(leaf)));
            int i = IndexPage.lowerBound(leaf, lo, n);
            int k = 0;
            next = IndexPage.sibling(leaf);
            for (; i < n; i++) {
                long key = IndexPage.key(leaf, i);
                if (key > hi) {
                    next = -1;
                    break;
                }
                keys[k] = key;
                blocks[k] = IndexPage.block(leaf, i);
                lines[k++] = IndexPage.line(leaf, i);
            }
            count = k;
        } while (!IndexPage.unchanged(leaf, c));
        pos = 0;
    }

    /** Moves to the next entry in range; false at the end. */
    public boolean next() throws IOException {
        if (ended) {
            return false;
        }
        while (pos >= count) {
            if (next < 0) {
                ended = true;
                return false;
            }
            long blk = next;
            int buf = reads.read(rel, blk, null);
            try {
                copy(session.page(buf), blk);
            } finally {
                session.releaseBuffer(buf);
            }
        }
        key = keys[pos];
        block = blocks[pos];
        line = lines[pos];
        pos++;
        return true;
    }

    @Override
    public void close() {
        ended = true;
    }
}
