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
 * search"), then right along the leaves. Holds a pin on the current leaf only; every page is read
 * through the buffer manager ({@link PageReads}). The session's thread; no allocation per entry.
 */
public final class IndexCursor implements AutoCloseable {

    private final BufferSession session;
    private final PageReads reads;
    private final SmgrRelation rel;
    private final String name;
    private final long hi;
    private int leafBuf = -1;
    private MemorySegment leaf;
    private int pos;
    private int count;
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
        this.hi = hi;
        int buf = reads.read(rel, 0, null);
        MemorySegment meta = session.page(buf);
        if (IndexPage.magic(meta) != IndexPage.MAGIC || (IndexPage.flags(meta) & IndexPage.META) == 0) {
            session.releaseBuffer(buf);
            throw new TableException("index " + name + " (relation " + rel + "): block 0 is not an index metapage");
        }
        long node = IndexPage.metaRoot(meta);
        int height = IndexPage.metaHeight(meta);
        keyColumns = IndexPage.metaKeyColumns(meta);
        session.releaseBuffer(buf);
        for (int level = height; level > 0; level--) {
            buf = reads.read(rel, node, null);
            MemorySegment page = session.page(buf);
            check(page, node, IndexPage.INTERNAL);
            int i = Math.max(0, IndexPage.lowerBound(page, lo) - 1);
            node = IndexPage.block(page, i);
            session.releaseBuffer(buf);
        }
        pin(node);
        pos = IndexPage.lowerBound(leaf, lo);
    }

    private void check(MemorySegment page, long blk, int kind) throws TableException {
        if (IndexPage.magic(page) != IndexPage.MAGIC || (IndexPage.flags(page) & kind) == 0) {
            throw new TableException("index " + name + " (relation " + rel + "): block " + blk + " is not an index "
                    + (kind == IndexPage.LEAF ? "leaf" : "internal") + " page");
        }
    }

    private void pin(long blk) throws IOException {
        leafBuf = reads.read(rel, blk, null);
        leaf = session.page(leafBuf);
        check(leaf, blk, IndexPage.LEAF);
        count = IndexPage.count(leaf);
    }

    /** Moves to the next entry in range; false at the end. */
    public boolean next() throws IOException {
        if (ended) {
            return false;
        }
        while (pos >= count) {
            long sib = IndexPage.sibling(leaf);
            session.releaseBuffer(leafBuf);
            leafBuf = -1;
            if (sib < 0) {
                ended = true;
                return false;
            }
            pin(sib);
            pos = 0;
        }
        long k = IndexPage.key(leaf, pos);
        if (k > hi) {
            ended = true;
            release();
            return false;
        }
        key = k;
        block = IndexPage.block(leaf, pos);
        line = IndexPage.line(leaf, pos);
        pos++;
        return true;
    }

    private void release() {
        if (leafBuf >= 0) {
            session.releaseBuffer(leafBuf);
            leafBuf = -1;
        }
    }

    @Override
    public void close() {
        release();
        ended = true;
    }
}
