package org.pageio.table.index;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import org.pageio.bufmgr.BufferSession;
import org.pageio.bufmgr.smgr.SmgrRelation;
import org.pageio.table.TableException;

/**
 * Inserts entries into an existing index through the buffer manager: nbtree's
 * {@code _bt_doinsert} reduced to pageio's pages ({@link IndexPage}), keeping (key, heap TID)
 * order.
 *
 * <p><b>Descent</b> ({@code _bt_search}): from the metapage's root to the leaf, at each internal
 * page the last child whose separator (key, TID) is below the new entry's (the first child when
 * none is); the blocks passed are kept per level (the stack). An index whose metapage predates
 * version 3 has separators without TIDs: there the descent compares keys only, reaching the
 * leftmost leaf that may hold the key, and moves right along the leaves from it. At every level,
 * when the descent leaves a page through its last entry and the page has a right sibling whose
 * first entry is below the new one, it moves right ({@code _bt_moveright}): what a split whose
 * parent entry never reached the disk (a crash) leaves, since separators are not logged.
 *
 * <p><b>In place</b> ({@code _bt_insertonpg}): a leaf with room gets the entry at its position,
 * the entries above shifted up by one, under the leaf's content lock.
 *
 * <p><b>Split</b> ({@code _bt_split} reduced): a full page's entries plus the new one are cut in
 * half; a new page appended at the relation's end ({@link BufferSession#extendBy}) gets the upper
 * half and the old page's right sibling, written completely before anyone can reach it; then,
 * under the old page's content lock, the old page keeps the lower half (with the new entry when
 * it falls there) and its right sibling becomes the new page. The new page's lowest (key, TID)
 * goes into the parent as its separator, right after the old page's entry
 * ({@code _bt_insert_parent}; the parent is found again by its child pointer, moving right when
 * it split meanwhile, as {@code _bt_getstackbuf} does), splitting parents in turn. When the root
 * splits, a new root with the two pages is appended and the metapage's root and height change
 * under its content lock ({@code _bt_newroot}). No high keys, no page deletion, no fill factor:
 * each split leaves both halves half full.
 *
 * <p><b>The metapage</b> counts entries: one more per insert, under its content lock.
 *
 * <p><b>Concurrent readers.</b> One writer per index at a time (the engine's lock; this object is
 * the calling thread's). {@link IndexCursor}s run concurrently without locks: they copy what they
 * read of a page under its change count ({@link IndexPage#beginChange}), which every change here
 * makes odd for its duration, and copy again when it moved. So a cursor sees each page either
 * before or after a change, never in between; and the order of a split (the new right page
 * complete before the left page points to it, the left page's count and sibling in one change) is
 * Lehman and Yao's: a cursor that read the left page before the split walks on to the old
 * sibling and sees the moved entries once, on the left page; one that reads it after goes to the
 * new right page and sees them there, once. A cursor that descended through a parent before the
 * separator reached it lands on the left page and reaches the moved entries along the sibling
 * link, skipping those below its range. What a cursor cannot promise is an entry inserted while
 * it walks: it sees it or not, depending on whether it reached that page before or after (such
 * entries point to row versions of a transaction that has not committed for a scan already
 * running, so its answer is the same either way).
 *
 * <p><b>Crash safety without WAL</b>: nbtree's WAL makes a split atomic; pageio orders its writes
 * instead ({@link BufferSession#flushBuffer}: written and fsynced before the next step), so that no
 * page on disk ever points at a page that is not there yet, and no entry is only on a page nothing
 * on disk reaches: the new right page is flushed before the left page gives up its upper half and
 * links to it; the halved left page is flushed before the parent gets the separator; a new root is
 * flushed before the metapage names it. A crash between two steps leaves either an unreachable
 * right page (its entries still on the left page on disk; an orphan the bulk delete passes over
 * harmlessly) or a right page reached only through its left sibling (the descent moves right, as
 * after a concurrent split). Two fsyncs per split: splits are rare (one per half a page of inserts).
 */
public final class IndexInserter {

    private final BufferSession session;
    private final SmgrRelation rel;
    private final String name;
    private final int[] extended = new int[1];
    /** Per level (1 = above the leaves): the internal page the last descent went through. */
    private long[] stack = new long[8];

    public IndexInserter(BufferSession session, SmgrRelation index, String name) {
        this.session = session;
        this.rel = index;
        this.name = name;
    }

    /**
     * Inserts the entry {@code (key, (heapBlock, line))}: a one-column index's key is the
     * column's value (32 signed bits), a two-column index's an {@link IndexPage#compositeKey}.
     * One writer per index at a time (the engine's lock).
     *
     * @throws IOException naming the index, relation and block when a page cannot be read or is not
     *         an index page of the kind expected
     */
    public void insert(long key, long heapBlock, int line) throws IOException {
        if (heapBlock < 0 || heapBlock >= IndexBuilder.MAX_BLOCKS || line < 1 || line > 0x1FF) {
            throw new IllegalArgumentException("index " + name + " (relation " + rel + "): heap TID (" + heapBlock + ","
                    + line + ") out of range (blocks below " + IndexBuilder.MAX_BLOCKS + ", lines 1..511)");
        }
        long tid = IndexBuilder.tid(heapBlock, line);
        int metaBuf = session.readBuffer(rel, 0, null);
        try {
            MemorySegment meta = session.page(metaBuf);
            if (IndexPage.magic(meta) != IndexPage.MAGIC || (IndexPage.flags(meta) & IndexPage.META) == 0) {
                throw new TableException("index " + name + " (relation " + rel + "): block 0 is not an index metapage");
            }
            if (IndexPage.metaKeyColumns(meta) == 1 && !IndexBuilder.keyFits(key)) {
                throw new TableException("index " + name + " (relation " + rel + "): key " + key + " does not fit in 32 bits");
            }
            boolean tidSeparators = IndexPage.metaVersion(meta) >= 3;
            int height = IndexPage.metaHeight(meta);
            long node = IndexPage.metaRoot(meta);
            if (stack.length <= height + 1) {
                stack = new long[height + 8];
            }
            for (int level = height; level > 0; level--) {
                int buf = read(node, IndexPage.INTERNAL);
                try {
                    MemorySegment page = session.page(buf);
                    int i = child(page, key, tid, tidSeparators);
                    while (i == IndexPage.count(page) - 1 && IndexPage.sibling(page) >= 0) { // _bt_moveright
                        long right = IndexPage.sibling(page);
                        int rbuf = read(right, IndexPage.INTERNAL);
                        MemorySegment rpage = session.page(rbuf);
                        if (IndexPage.count(rpage) == 0
                                || !below(IndexPage.key(rpage, 0), IndexPage.separatorTid(rpage, 0), key, tid, tidSeparators)) {
                            session.releaseBuffer(rbuf);
                            break;
                        }
                        session.releaseBuffer(buf);
                        buf = rbuf;
                        page = rpage;
                        node = right;
                        i = child(page, key, tid, tidSeparators);
                    }
                    stack[level] = node;
                    node = IndexPage.block(page, i);
                } finally {
                    session.releaseBuffer(buf);
                }
            }
            int leafBuf = read(node, IndexPage.LEAF);
            try {
                MemorySegment leaf = session.page(leafBuf);
                int pos = position(leaf, key, tid);
                while (pos == IndexPage.count(leaf) && IndexPage.sibling(leaf) >= 0) { // _bt_moveright (and _bt_findinsertloc)
                    long right = IndexPage.sibling(leaf);
                    int rbuf = read(right, IndexPage.LEAF);
                    MemorySegment rpage = session.page(rbuf);
                    if (IndexPage.count(rpage) == 0 || !entryBelow(rpage, 0, key, tid)) {
                        session.releaseBuffer(rbuf);
                        break;
                    }
                    session.releaseBuffer(leafBuf);
                    leafBuf = rbuf;
                    leaf = rpage;
                    node = right;
                    pos = position(leaf, key, tid);
                }
                insertOnPage(metaBuf, leafBuf, node, 0, height, pos, key, heapBlock, line, tid);
            } finally {
                session.releaseBuffer(leafBuf);
            }
            session.beginModify(metaBuf);
            try {
                IndexPage.beginChange(meta);
                IndexPage.setMetaEntries(meta, IndexPage.metaEntries(meta) + 1);
                IndexPage.endChange(meta);
            } finally {
                session.endModify(metaBuf, true);
            }
        } finally {
            session.releaseBuffer(metaBuf);
        }
    }

    /** Whether separator {@code (sk, st)} orders below {@code (key, tid)}; keys only without TID separators. */
    private static boolean below(long sk, long st, long key, long tid, boolean tidSeparators) {
        return sk < key || tidSeparators && sk == key && st < tid;
    }

    private static boolean entryBelow(MemorySegment leaf, int i, long key, long tid) {
        long k = IndexPage.key(leaf, i);
        return k < key || k == key && IndexPage.tid(leaf, i) < tid;
    }

    /** The child to descend to: the last entry whose separator is below {@code (key, tid)}, else the first. */
    private static int child(MemorySegment page, long key, long tid, boolean tidSeparators) {
        int lo = 0;
        int hi = IndexPage.count(page);
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (below(IndexPage.key(page, mid), IndexPage.separatorTid(page, mid), key, tid, tidSeparators)) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return Math.max(0, lo - 1);
    }

    /** The first leaf position whose entry is not below {@code (key, tid)}. */
    private static int position(MemorySegment leaf, long key, long tid) {
        int lo = 0;
        int hi = IndexPage.count(leaf);
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (entryBelow(leaf, mid, key, tid)) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return lo;
    }

    private int read(long block, int kind) throws IOException {
        int buf = session.readBuffer(rel, block, null);
        MemorySegment page = session.page(buf);
        if (IndexPage.magic(page) != IndexPage.MAGIC || (IndexPage.flags(page) & kind) == 0) {
            session.releaseBuffer(buf);
            throw new TableException("index " + name + " (relation " + rel + "): block " + block + " is not an index "
                    + (kind == IndexPage.LEAF ? "leaf" : "internal") + " page");
        }
        return buf;
    }

    /**
     * Puts entry {@code (key, b, l)} ({@code b} a child block on internal pages, {@code l} 0 there;
     * {@code tid} the heap TID or the separator's) at {@code pos} of the page in {@code buf}
     * (block {@code block}, at {@code level}), splitting it when full.
     */
    private void insertOnPage(int metaBuf, int buf, long block, int level, int height, int pos, long key, long b, int l,
            long tid) throws IOException {
        MemorySegment page = session.page(buf);
        int n = IndexPage.count(page);
        if (n < IndexPage.CAPACITY) {
            session.beginModify(buf);
            try {
                IndexPage.beginChange(page);
                IndexPage.copyEntries(page, pos, page, pos + 1, n - pos);
                put(page, pos, level, key, b, l, tid);
                IndexPage.setCount(page, n + 1);
                IndexPage.endChange(page);
            } finally {
                session.endModify(buf, true);
            }
            return;
        }
        // _bt_split: entries [0, n] with the new one at pos; the left page keeps [0, half)
        int half = (n + 1) / 2;
        long rightBlock = session.extendBy(rel, 1, extended, null);
        int rbuf = extended[0];
        long sepKey;
        long sepTid;
        try {
            MemorySegment right = session.page(rbuf);
            session.beginModify(rbuf);
            try {
                IndexPage.init(right, level == 0 ? IndexPage.LEAF : IndexPage.INTERNAL, level);
                if (pos >= half) {
                    IndexPage.copyEntries(page, half, right, 0, pos - half);
                    put(right, pos - half, level, key, b, l, tid);
                    IndexPage.copyEntries(page, pos, right, pos - half + 1, n - pos);
                } else {
                    IndexPage.copyEntries(page, half - 1, right, 0, n - half + 1);
                }
                IndexPage.setCount(right, n + 1 - half);
                IndexPage.setSibling(right, IndexPage.sibling(page) < 0 ? IndexPage.NO_SIBLING : IndexPage.sibling(page));
                sepKey = IndexPage.key(right, 0);
                sepTid = level == 0 ? IndexPage.tid(right, 0) : IndexPage.separatorTid(right, 0);
            } finally {
                session.endModify(rbuf, true);
            }
            session.flushBuffer(rbuf); // on disk before any page on disk can point at it
            // the right page is complete; only now does the left page lose its upper half
            session.beginModify(buf);
            try {
                IndexPage.beginChange(page);
                if (pos < half) {
                    IndexPage.copyEntries(page, pos, page, pos + 1, half - 1 - pos);
                    put(page, pos, level, key, b, l, tid);
                }
                IndexPage.setCount(page, half);
                IndexPage.setSibling(page, rightBlock);
                IndexPage.endChange(page);
            } finally {
                session.endModify(buf, true);
            }
            session.flushBuffer(buf); // the halved page on disk before its parent can send anyone past it
        } finally {
            session.releaseBuffer(rbuf);
        }
        insertParent(metaBuf, block, rightBlock, level + 1, height, sepKey, sepTid);
    }

    private static void put(MemorySegment page, int i, int level, long key, long b, int l, long tid) {
        if (level == 0) {
            IndexPage.setEntry(page, i, key, b, l);
        } else {
            IndexPage.setInternal(page, i, key, b, tid);
        }
    }

    /**
     * {@code _bt_insert_parent}: the separator {@code (sepKey, sepTid)} of {@code right}, split off
     * {@code left}, goes into the parent at {@code level}, right after {@code left}'s entry; above
     * the root, a new root ({@code _bt_newroot}).
     */
    private void insertParent(int metaBuf, long left, long right, int level, int height, long sepKey, long sepTid)
            throws IOException {
        if (level > height) {
            newRoot(metaBuf, left, right, level, sepKey, sepTid);
            return;
        }
        long node = stack[level];
        int buf = read(node, IndexPage.INTERNAL);
        try {
            int at;
            while ((at = childAt(session.page(buf), left)) < 0) { // _bt_getstackbuf: the parent split meanwhile
                long next = IndexPage.sibling(session.page(buf));
                if (next < 0) {
                    throw new TableException("index " + name + " (relation " + rel + "): no entry for block " + left
                            + " at level " + level + " from block " + stack[level] + " rightwards");
                }
                session.releaseBuffer(buf);
                buf = -1;
                buf = read(next, IndexPage.INTERNAL);
                node = next;
            }
            insertOnPage(metaBuf, buf, node, level, height, at + 1, sepKey, right, 0, sepTid);
        } finally {
            if (buf >= 0) {
                session.releaseBuffer(buf);
            }
        }
    }

    private static int childAt(MemorySegment page, long child) {
        int n = IndexPage.count(page);
        for (int i = 0; i < n; i++) {
            if (IndexPage.block(page, i) == child) {
                return i;
            }
        }
        return -1;
    }

    /** {@code _bt_newroot}: a root over {@code left} and {@code right}, then the metapage's root and height. */
    private void newRoot(int metaBuf, long left, long right, int level, long sepKey, long sepTid) throws IOException {
        int lbuf = read(left, level == 1 ? IndexPage.LEAF : IndexPage.INTERNAL);
        long leftKey;
        long leftTid;
        try {
            MemorySegment lpage = session.page(lbuf);
            leftKey = IndexPage.count(lpage) == 0 ? Long.MIN_VALUE : IndexPage.key(lpage, 0);
            leftTid = IndexPage.count(lpage) == 0 ? 0 : level == 1 ? IndexPage.tid(lpage, 0) : IndexPage.separatorTid(lpage, 0);
        } finally {
            session.releaseBuffer(lbuf);
        }
        long rootBlock = session.extendBy(rel, 1, extended, null);
        int rbuf = extended[0];
        try {
            MemorySegment root = session.page(rbuf);
            session.beginModify(rbuf);
            try {
                IndexPage.init(root, IndexPage.INTERNAL, level);
                IndexPage.setInternal(root, 0, leftKey, left, leftTid);
                IndexPage.setInternal(root, 1, sepKey, right, sepTid);
                IndexPage.setCount(root, 2);
            } finally {
                session.endModify(rbuf, true);
            }
            session.flushBuffer(rbuf); // on disk before the metapage names it
        } finally {
            session.releaseBuffer(rbuf);
        }
        MemorySegment meta = session.page(metaBuf);
        session.beginModify(metaBuf);
        try {
            IndexPage.beginChange(meta);
            IndexPage.setMetaRoot(meta, rootBlock, level);
            IndexPage.endChange(meta);
        } finally {
            session.endModify(metaBuf, true);
        }
        if (stack.length <= level + 1) {
            stack = java.util.Arrays.copyOf(stack, level + 8);
        }
    }
}
