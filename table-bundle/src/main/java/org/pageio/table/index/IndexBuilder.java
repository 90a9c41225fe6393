package org.pageio.table.index;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import org.pageio.bufmgr.page.Page;
import org.pageio.bufmgr.smgr.SmgrRelation;

/**
 * Builds an index bottom-up from entries packed as {@link #pack}: sorts them, writes the leaves
 * (blocks 1..L, each linked to its right sibling), then each internal level above them until one
 * page remains (the root; each internal entry holds its child's lowest (key, TID) as the
 * separator), then the metapage at block 0 (version 3). Pages are built off-heap in chunks of
 * 512 and written with one {@code pwrite} per chunk, with checksums; the relation is fsynced.
 * Writes go around the buffer pool (the relation is new).
 */
public final class IndexBuilder {

    private static final int CHUNK = 512;
    /** Keys must fit in 32 signed bits, heap blocks in 23 bits, lines in 9 bits. */
    public static final long MAX_BLOCKS = 1L << 23;

    private IndexBuilder() {
    }

    /**
     * Packs an entry so that sorting the longs sorts by (key, block, line): the signed 32-bit key
     * in the high half (signed order of the longs is the keys' order, negative keys included), the
     * TID ({@link #tid}) unsigned in the low half.
     */
    public static long pack(long key, long block, int line) {
        return (key << 32) | (block << 9) | line;
    }

    public static boolean keyFits(long key) {
        return key >= Integer.MIN_VALUE && key <= Integer.MAX_VALUE;
    }

    static long key(long packed) {
        return packed >> 32;
    }

    static long block(long packed) {
        return (packed >>> 9) & (MAX_BLOCKS - 1);
    }

    static int line(long packed) {
        return (int) (packed & 0x1FF);
    }

    /** The result: blocks written and levels above the leaves. */
    public record Built(long blocks, int height) {
    }

    /** Entry {@code i} of the sorted entries: key, heap block, heap line. */
    private interface Entries {
        long key(int i);

        long block(int i);

        int line(int i);
    }

    /** Sorts {@code entries[0..n)} in place and writes the one-column index to {@code rel} (created here). */
    public static Built build(SmgrRelation rel, long[] entries, int n, boolean checksums) throws IOException {
        Arrays.sort(entries, 0, n);
        return write(rel, new Entries() {
            public long key(int i) {
                return IndexBuilder.key(entries[i]);
            }

            public long block(int i) {
                return IndexBuilder.block(entries[i]);
            }

            public int line(int i) {
                return IndexBuilder.line(entries[i]);
            }
        }, n, 1, checksums);
    }

    /** A heap TID as one long: {@code block << 9 | line}, ordered as (block, line). */
    public static long tid(long block, int line) {
        return (block << 9) | line;
    }

    /**
     * Sorts the pairs {@code (keys[i], tids[i])}, {@code i < n}, by key then TID (both arrays in
     * place) and writes the index on two columns to {@code rel} (created here). Keys are
     * {@link IndexPage#compositeKey}s, TIDs {@link #tid}s.
     */
    public static Built buildComposite(SmgrRelation rel, long[] keys, long[] tids, int n, boolean checksums) throws IOException {
        sortPairs(keys, tids, n);
        return write(rel, new Entries() {
            public long key(int i) {
                return keys[i];
            }

            public long block(int i) {
                return tids[i] >>> 9;
            }

            public int line(int i) {
                return (int) (tids[i] & 0x1FF);
            }
        }, n, 2, checksums);
    }

    /** Bottom-up merge sort of {@code (keys, tids)} pairs by key, then TID. */
    static void sortPairs(long[] keys, long[] tids, int n) {
        long[] k2 = new long[n];
        long[] t2 = new long[n];
        long[] ka = keys;
        long[] ta = tids;
        long[] kb = k2;
        long[] tb = t2;
        for (int width = 1; width < n; width *= 2) {
            for (int lo = 0; lo < n; lo += 2 * width) {
                int mid = Math.min(lo + width, n);
                int hi = Math.min(lo + 2 * width, n);
                int i = lo;
                int j = mid;
                for (int o = lo; o < hi; o++) {
                    if (i < mid && (j >= hi || ka[i] < ka[j] || ka[i] == ka[j] && ta[i] <= ta[j])) {
                        kb[o] = ka[i];
                        tb[o] = ta[i++];
                    } else {
                        kb[o] = ka[j];
                        tb[o] = ta[j++];
                    }
                }
            }
            long[] k = ka;
            ka = kb;
            kb = k;
            long[] t = ta;
            ta = tb;
            tb = t;
        }
        if (ka != keys) {
            System.arraycopy(ka, 0, keys, 0, n);
            System.arraycopy(ta, 0, tids, 0, n);
        }
    }

    private static Built write(SmgrRelation rel, Entries entries, int n, int keyColumns, boolean checksums) throws IOException {
        rel.create();
        try (Arena arena = Arena.ofConfined()) {
            Writer w = new Writer(rel, arena.allocate((long) CHUNK * Page.SIZE, 4096), checksums);
            int leaves = Math.max(1, (n + IndexPage.CAPACITY - 1) / IndexPage.CAPACITY);
            long[] childKeys = new long[leaves];
            long[] childTids = new long[leaves];
            long[] childBlocks = new long[leaves];
            for (int l = 0; l < leaves; l++) {
                long block = w.next;
                MemorySegment page = w.page();
                IndexPage.init(page, IndexPage.LEAF, 0);
                int from = l * IndexPage.CAPACITY;
                int to = Math.min(n, from + IndexPage.CAPACITY);
                for (int i = from; i < to; i++) {
                    IndexPage.setEntry(page, i - from, entries.key(i), entries.block(i), entries.line(i));
                }
                IndexPage.setCount(page, to - from);
                if (l + 1 < leaves) {
                    IndexPage.setSibling(page, block + 1);
                }
                childKeys[l] = to > from ? entries.key(from) : Long.MIN_VALUE;
                childTids[l] = to > from ? tid(entries.block(from), entries.line(from)) : 0;
                childBlocks[l] = block;
                w.done(page, block);
            }
            int height = 0;
            int count = leaves;
            while (count > 1) {
                height++;
                int parents = (count + IndexPage.CAPACITY - 1) / IndexPage.CAPACITY;
                long[] pk = new long[parents];
                long[] pt = new long[parents];
                long[] pb = new long[parents];
                for (int p = 0; p < parents; p++) {
                    long block = w.next;
                    MemorySegment page = w.page();
                    IndexPage.init(page, IndexPage.INTERNAL, height);
                    int from = p * IndexPage.CAPACITY;
                    int to = Math.min(count, from + IndexPage.CAPACITY);
                    for (int i = from; i < to; i++) {
                        IndexPage.setInternal(page, i - from, childKeys[i], childBlocks[i], childTids[i]);
                    }
                    IndexPage.setCount(page, to - from);
                    if (p + 1 < parents) {
                        IndexPage.setSibling(page, block + 1);
                    }
                    pk[p] = childKeys[from];
                    pt[p] = childTids[from];
                    pb[p] = block;
                    w.done(page, block);
                }
                childKeys = pk;
                childTids = pt;
                childBlocks = pb;
                count = parents;
            }
            long total = w.next;
            w.flush();
            MemorySegment meta = arena.allocate(Page.SIZE, 4096);
            IndexPage.initMeta(meta, childBlocks[0], height, n, keyColumns);
            if (checksums) {
                Page.setChecksum(meta, 0);
            }
            rel.write(0, meta, 1);
            rel.sync();
            return new Built(total, height);
        }
    }

    /** Hands out pages of a chunk that starts at block 1 and writes each full chunk. */
    private static final class Writer {
        final SmgrRelation rel;
        final MemorySegment chunk;
        final boolean checksums;
        long next = 1;
        long chunkStart = 1;
        int used;

        Writer(SmgrRelation rel, MemorySegment chunk, boolean checksums) {
            this.rel = rel;
            this.chunk = chunk;
            this.checksums = checksums;
        }

        MemorySegment page() throws IOException {
            if (used == CHUNK) {
                flush();
            }
            return chunk.asSlice((long) used * Page.SIZE, Page.SIZE);
        }

        void done(MemorySegment page, long block) {
            if (checksums) {
                Page.setChecksum(page, block);
            }
            used++;
            next++;
        }

        void flush() throws IOException {
            if (used > 0) {
                rel.write(chunkStart, chunk, used);
            }
            chunkStart += used;
            used = 0;
        }
    }
}
