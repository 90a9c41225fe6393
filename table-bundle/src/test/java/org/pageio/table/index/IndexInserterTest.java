package org.pageio.table.index;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.SplittableRandom;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.pageio.bufmgr.BufMgrSettings;
import org.pageio.bufmgr.BufferManagerCore;
import org.pageio.bufmgr.BufferSession;
import org.pageio.bufmgr.smgr.RelFileLocator;
import org.pageio.bufmgr.smgr.SmgrRelation;
import org.pageio.bufmgr.smgr.StorageManager;
import org.pageio.heap.PageReads;
import org.pageio.method.sync.SyncIoMethod;
import org.pageio.table.TableException;

/**
 * Inserts into real index files through the buffer manager: every entry comes back, in (key, TID)
 * order, from full and partial cursor ranges, after leaf and root splits and after a restart.
 */
class IndexInserterTest {

    @TempDir
    Path dir;

    private BufferManagerCore bufmgr;
    private SmgrRelation rel;
    /** The entries the index should hold: keys and TIDs ({@link IndexBuilder#tid}), [0, n). */
    private long[] keys = new long[1024];
    private long[] tids = new long[1024];
    private int n;

    @BeforeEach
    void open() throws Exception {
        bufmgr = BufferManagerCore.open(dir, new BufMgrSettings.Builder().sharedBuffers(256).maxSessions(4).segmentBlocks(100)
                .build(), new SyncIoMethod());
        rel = bufmgr.pool().storage().open(new RelFileLocator(StorageManager.DEFAULT_TABLESPACE, 16500));
    }

    @AfterEach
    void close() {
        bufmgr.close();
    }

    private void restart() throws Exception {
        bufmgr.pool().checkpoint();
        bufmgr.close();
        open();
    }

    private void expect(long key, long tid) {
        if (n == keys.length) {
            keys = Arrays.copyOf(keys, n * 2);
            tids = Arrays.copyOf(tids, n * 2);
        }
        keys[n] = key;
        tids[n++] = tid;
    }

    private void insert(IndexInserter ins, long key, long block, int line) throws IOException {
        ins.insert(key, block, line);
        expect(key, IndexBuilder.tid(block, line));
    }

    /** What a cursor over [lo, hi] returns, as (key, TID) pairs. */
    private long[][] scan(long lo, long hi) throws IOException {
        try (BufferSession s = bufmgr.pool().openSession("client");
                IndexCursor c = new IndexCursor(s, new PageReads(s), rel, "i", lo, hi)) {
            long[] k = new long[16];
            long[] t = new long[16];
            int m = 0;
            while (c.next()) {
                if (m == k.length) {
                    k = Arrays.copyOf(k, m * 2);
                    t = Arrays.copyOf(t, m * 2);
                }
                k[m] = c.key;
                t[m++] = IndexBuilder.tid(c.block, c.line);
            }
            assertEquals(0, s.pinnedCount(), "the cursor pins nothing between pages");
            return new long[][] {Arrays.copyOf(k, m), Arrays.copyOf(t, m)};
        }
    }

    /** The index holds exactly the expected entries, in (key, TID) order, over the whole range and over {@code ranges} random sub-ranges. */
    private void check(SplittableRandom rnd, long keyLo, long keyHi, int ranges) throws IOException {
        long[] k = Arrays.copyOf(keys, n);
        long[] t = Arrays.copyOf(tids, n);
        IndexBuilder.sortPairs(k, t, n);
        long[][] all = scan(Long.MIN_VALUE, Long.MAX_VALUE);
        assertArrayEquals(k, all[0], "keys in order");
        assertArrayEquals(t, all[1], "TIDs in order within each key");
        for (int r = 0; r < ranges; r++) {
            long a = rnd.nextLong(keyLo - 10, keyHi + 10);
            long b = rnd.nextLong(a, keyHi + 20);
            int from = lowerBound(k, a);
            int to = lowerBound(k, b + 1);
            long[][] got = scan(a, b);
            assertArrayEquals(Arrays.copyOfRange(k, from, to), got[0], "keys in [" + a + ", " + b + "]");
            assertArrayEquals(Arrays.copyOfRange(t, from, to), got[1], "TIDs in [" + a + ", " + b + "]");
        }
        assertEquals(n, meta()[2], "the metapage's entry count");
    }

    private static int lowerBound(long[] a, long v) {
        int i = Arrays.binarySearch(a, v);
        if (i < 0) {
            return -i - 1;
        }
        while (i > 0 && a[i - 1] == v) {
            i--;
        }
        return i;
    }

    /** Root, height and entries from the metapage. */
    private long[] meta() throws IOException {
        try (BufferSession s = bufmgr.pool().openSession("client")) {
            int buf = s.readBuffer(rel, 0, null);
            MemorySegment m = s.page(buf);
            long[] r = {IndexPage.metaRoot(m), IndexPage.metaHeight(m), IndexPage.metaEntries(m)};
            s.releaseBuffer(buf);
            return r;
        }
    }

    @Test
    void randomInsertsIntoABuiltIndexKeepEveryEntryInOrderThroughSplitsAndARestart() throws Exception {
        SplittableRandom rnd = new SplittableRandom(42);
        int built = 3000;
        long[] packed = new long[built];
        for (int i = 0; i < built; i++) {
            long key = rnd.nextInt(-1000, 1000);
            long block = i / 200;
            int line = i % 200 + 1;
            packed[i] = IndexBuilder.pack(key, block, line);
            expect(key, IndexBuilder.tid(block, line));
        }
        IndexBuilder.Built b = IndexBuilder.build(rel, packed, built, true);
        long blocksBefore = b.blocks();
        check(rnd, -1000, 1000, 10);
        int next = built;
        for (int batch = 0; batch < 4; batch++) {
            try (BufferSession s = bufmgr.pool().openSession("client")) {
                IndexInserter ins = new IndexInserter(s, rel, "i");
                for (int i = 0; i < 5000; i++, next++) {
                    // duplicates: 2000 keys for 23,000 entries; TIDs of a key arrive in random order
                    insert(ins, rnd.nextInt(-1000, 1000), rnd.nextInt(100_000) + 100, next % 300 + 1);
                }
                assertEquals(0, s.pinnedCount());
            }
            check(rnd, -1000, 1000, 20);
        }
        assertTrue(rel.nblocks() > blocksBefore + 40, "leaves split: " + rel.nblocks() + " blocks");
        assertEquals(1, meta()[1], "one level above the leaves");
        restart();
        check(rnd, -1000, 1000, 20);
        // and on after the restart, keys below and above everything
        try (BufferSession s = bufmgr.pool().openSession("client")) {
            IndexInserter ins = new IndexInserter(s, rel, "i");
            for (int i = 0; i < 600; i++) {
                insert(ins, -5000 - i, i, 1);
                insert(ins, 5000 + i, i, 2);
            }
        }
        check(rnd, -5600, 5600, 20);
    }

    @Test
    void insertsIntoAnEmptyIndexSplitTheRootTwice() throws Exception {
        IndexBuilder.build(rel, new long[0], 0, true);
        assertEquals(0, meta()[1]);
        SplittableRandom rnd = new SplittableRandom(7);
        long firstRoot = meta()[0];
        // mostly ascending keys with duplicates, each key's TIDs in random order: half-full leaves,
        // so 510 of them (a full root above) come after about 130,000 entries
        int total = 140_000;
        try (BufferSession s = bufmgr.pool().openSession("client")) {
            IndexInserter ins = new IndexInserter(s, rel, "i");
            for (int i = 0; i < total; i++) {
                insert(ins, i / 4, rnd.nextInt(1 << 22), rnd.nextInt(1, 512));
                if (i == 1000) {
                    assertEquals(1, meta()[1], "the first root split: a leaf root");
                }
            }
        }
        long[] m = meta();
        assertEquals(2, m[1], "the second root split: two levels above the leaves");
        assertTrue(m[0] != firstRoot);
        check(rnd, 0, total / 4, 30);
        restart();
        check(rnd, 0, total / 4, 30);
    }

    @Test
    void twoColumnKeysOrderAsTheirPairs() throws Exception {
        SplittableRandom rnd = new SplittableRandom(3);
        int built = 1000;
        long[] k = new long[built];
        long[] t = new long[built];
        for (int i = 0; i < built; i++) {
            k[i] = IndexPage.compositeKey(rnd.nextInt(-3, 3), rnd.nextInt());
            t[i] = IndexBuilder.tid(i / 100, i % 100 + 1);
            expect(k[i], t[i]);
        }
        IndexBuilder.buildComposite(rel, k, t, built, true);
        try (BufferSession s = bufmgr.pool().openSession("client")) {
            IndexInserter ins = new IndexInserter(s, rel, "i");
            for (int i = 0; i < 4000; i++) {
                long c1 = rnd.nextInt(-3, 3);
                long c2 = rnd.nextBoolean() ? rnd.nextInt() : (rnd.nextBoolean() ? Integer.MIN_VALUE : Integer.MAX_VALUE);
                insert(ins, IndexPage.compositeKey(c1, c2), 20 + i / 300, i % 300 + 1);
            }
        }
        check(rnd, IndexPage.compositeKey(-3, Integer.MIN_VALUE), IndexPage.compositeKey(3, Integer.MIN_VALUE), 0);
        for (long c1 = -3; c1 < 3; c1++) { // c1 = x AND c2 BETWEEN -10^9 AND 10^9
            long lo = IndexPage.compositeKey(c1, -1_000_000_000);
            long hi = IndexPage.compositeKey(c1, 1_000_000_000);
            long[][] got = scan(lo, hi);
            long expected = 0;
            for (int i = 0; i < n; i++) {
                expected += keys[i] >= lo && keys[i] <= hi ? 1 : 0;
            }
            assertEquals(expected, got[0].length, "c1 = " + c1);
            for (long key : got[0]) {
                assertEquals(c1, IndexPage.compositeFirst(key));
            }
        }
    }

    @Test
    void aCursorRunningDuringInsertsAndSplitsSeesEveryEarlierEntryOnce() throws Exception {
        int built = 20_000; // even keys; the writer adds odd ones, splitting most leaves
        long[] packed = new long[built];
        for (int i = 0; i < built; i++) {
            packed[i] = IndexBuilder.pack(2L * (i / 2), i / 250, i % 250 + 1);
        }
        IndexBuilder.build(rel, packed, built, true);
        java.util.concurrent.atomic.AtomicBoolean done = new java.util.concurrent.atomic.AtomicBoolean();
        java.util.concurrent.atomic.AtomicReference<Throwable> failed = new java.util.concurrent.atomic.AtomicReference<>();
        int[] walks = new int[1];
        Thread reader = new Thread(() -> {
            try (BufferSession s = bufmgr.pool().openSession("client")) {
                while (!done.get() || walks[0] == 0) {
                    long even = 0;
                    long last = Long.MIN_VALUE;
                    try (IndexCursor c = new IndexCursor(s, new PageReads(s), rel, "i", Long.MIN_VALUE, Long.MAX_VALUE)) {
                        while (c.next()) {
                            long e = IndexBuilder.pack(c.key, c.block, c.line);
                            if (e < last) {
                                throw new AssertionError("out of order after " + last + ": " + e);
                            }
                            last = e;
                            even += (c.key & 1) == 0 ? 1 : 0;
                        }
                    }
                    if (even != built) {
                        throw new AssertionError("walk " + walks[0] + " saw " + even + " of the " + built + " earlier entries");
                    }
                    walks[0]++;
                }
            } catch (Throwable t) {
                failed.set(t);
            }
        });
        reader.start();
        SplittableRandom rnd = new SplittableRandom(11);
        try (BufferSession s = bufmgr.pool().openSession("client")) {
            IndexInserter ins = new IndexInserter(s, rel, "i");
            for (int i = 0; i < 30_000 && failed.get() == null; i++) {
                ins.insert(2L * rnd.nextInt(built / 2) + 1, 100 + i / 300, i % 300 + 1);
            }
        } finally {
            done.set(true);
            reader.join();
        }
        if (failed.get() != null) {
            throw new AssertionError(failed.get());
        }
        assertTrue(walks[0] > 0);
        assertEquals(built + 30_000, scan(Long.MIN_VALUE, Long.MAX_VALUE)[0].length);
    }

    @Test
    void refusalsNameTheIndex() throws Exception {
        IndexBuilder.build(rel, new long[0], 0, true);
        try (BufferSession s = bufmgr.pool().openSession("client")) {
            IndexInserter ins = new IndexInserter(s, rel, "p_val_idx");
            TableException big = assertThrows(TableException.class, () -> ins.insert(1L << 40, 0, 1));
            assertEquals("index p_val_idx (relation " + rel + "): key 1099511627776 does not fit in 32 bits", big.getMessage());
            IllegalArgumentException tid = assertThrows(IllegalArgumentException.class, () -> ins.insert(1, 0, 0));
            assertTrue(tid.getMessage().startsWith("index p_val_idx (relation " + rel + "): heap TID (0,0) out of range"),
                    tid.getMessage());
            assertEquals(0, s.pinnedCount());
        }
        assertEquals(0, meta()[2]);
    }
}
