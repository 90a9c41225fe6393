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
 * page remains (the root), then the metapage at block 0. Pages are built off-heap in chunks of
 * 512 and written with one {@code pwrite} per chunk, with checksums; the relation is fsynced.
 * Writes go around the buffer pool (the relation is new).
 */
public final class IndexBuilder {

    private static final int CHUNK = 512;
    /** Keys must fit in 32 signed bits, heap blocks in 23 bits, lines in 9 bits. */
    public static final long MAX_BLOCKS = 1L << 23;

    private IndexBuilder() {
    }

    /** Packs an entry so that sorting the longs sorts by (key, block, line). */
    public static long pack(long key, long block, int line) {
        return ((key + (1L << 31)) << 32) | (block << 9) | line;
    }

    public static boolean keyFits(long key) {
        return key >= Integer.MIN_VALUE && key <= Integer.MAX_VALUE;
    }

    static long key(long packed) {
        return (packed >>> 32) - (1L << 31);
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

    /** Sorts {@code entries[0..n)} in place and writes the index to {@code rel} (created here). */
    public static Built build(SmgrRelation rel, long[] entries, int n, boolean checksums) throws IOException {
        Arrays.sort(entries, 0, n);
        rel.create();
        try (Arena arena = Arena.ofConfined()) {
            Writer w = new Writer(rel, arena.allocate((long) CHUNK * Page.SIZE, 4096), checksums);
            int leaves = Math.max(1, (n + IndexPage.CAPACITY - 1) / IndexPage.CAPACITY);
            long[] childKeys = new long[leaves];
            long[] childBlocks = new long[leaves];
            for (int l = 0; l < leaves; l++) {
                long block = w.next;
                MemorySegment page = w.page();
                IndexPage.init(page, IndexPage.LEAF, 0);
                int from = l * IndexPage.CAPACITY;
                int to = Math.min(n, from + IndexPage.CAPACITY);
                for (int i = from; i < to; i++) {
                    long p = entries[i];
                    IndexPage.setEntry(page, i - from, key(p), block(p), line(p));
                }
                IndexPage.setCount(page, to - from);
                if (l + 1 < leaves) {
                    IndexPage.setSibling(page, block + 1);
                }
                childKeys[l] = to > from ? key(entries[from]) : Long.MIN_VALUE;
                childBlocks[l] = block;
                w.done(page, block);
            }
            int height = 0;
            int count = leaves;
            while (count > 1) {
                height++;
                int parents = (count + IndexPage.CAPACITY - 1) / IndexPage.CAPACITY;
                long[] pk = new long[parents];
                long[] pb = new long[parents];
                for (int p = 0; p < parents; p++) {
                    long block = w.next;
                    MemorySegment page = w.page();
                    IndexPage.init(page, IndexPage.INTERNAL, height);
                    int from = p * IndexPage.CAPACITY;
                    int to = Math.min(count, from + IndexPage.CAPACITY);
                    for (int i = from; i < to; i++) {
                        IndexPage.setEntry(page, i - from, childKeys[i], childBlocks[i], 0);
                    }
                    IndexPage.setCount(page, to - from);
                    if (p + 1 < parents) {
                        IndexPage.setSibling(page, block + 1);
                    }
                    pk[p] = childKeys[from];
                    pb[p] = block;
                    w.done(page, block);
                }
                childKeys = pk;
                childBlocks = pb;
                count = parents;
            }
            long total = w.next;
            w.flush();
            MemorySegment meta = arena.allocate(Page.SIZE, 4096);
            IndexPage.initMeta(meta, childBlocks[0], height, n);
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
