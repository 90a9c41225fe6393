package org.pageio.table.index;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
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
import org.pageio.bufmgr.BufferAccessStrategy;
import org.pageio.bufmgr.BufferManagerCore;
import org.pageio.bufmgr.BufferSession;
import org.pageio.bufmgr.smgr.RelFileLocator;
import org.pageio.bufmgr.smgr.SmgrRelation;
import org.pageio.bufmgr.smgr.StorageManager;
import org.pageio.heap.PageReads;
import org.pageio.method.sync.SyncIoMethod;

/** VACUUM's index pass on real index files: exactly the dead TIDs go, in place, and nothing else changes. */
class IndexBulkDeleteTest {

    @TempDir
    Path dir;

    private BufferManagerCore bufmgr;
    private SmgrRelation rel;

    @BeforeEach
    void open() throws Exception {
        bufmgr = BufferManagerCore.open(dir, new BufMgrSettings.Builder().sharedBuffers(128).maxSessions(4).segmentBlocks(10)
                .build(), new SyncIoMethod());
        rel = bufmgr.pool().storage().open(new RelFileLocator(StorageManager.DEFAULT_TABLESPACE, 16600));
    }

    @AfterEach
    void close() {
        bufmgr.close();
    }

    /** Every entry over the whole range as packed (key, block, line). */
    private long[] all() throws IOException {
        try (BufferSession s = bufmgr.pool().openSession("client");
                IndexCursor c = new IndexCursor(s, new PageReads(s), rel, "i", Long.MIN_VALUE, Long.MAX_VALUE)) {
            long[] out = new long[1024];
            int m = 0;
            while (c.next()) {
                if (m == out.length) {
                    out = Arrays.copyOf(out, m * 2);
                }
                out[m++] = IndexBuilder.pack(c.key, c.block, c.line);
            }
            return Arrays.copyOf(out, m);
        }
    }

    private long metaEntries() throws IOException {
        try (BufferSession s = bufmgr.pool().openSession("client")) {
            int buf = s.readBuffer(rel, 0, null);
            long e = IndexPage.metaEntries(s.page(buf));
            s.releaseBuffer(buf);
            return e;
        }
    }

    private IndexBulkDelete.Stats bulkDelete(long[] dead) throws IOException {
        try (BufferSession s = bufmgr.pool().openSession("client")) {
            IndexBulkDelete.Stats st = IndexBulkDelete.bulkDeleteStats(s, rel, "i", dead, dead.length,
                    bufmgr.pool().strategy(BufferAccessStrategy.Type.VACUUM), 4);
            assertEquals(0, s.pinnedCount());
            return st;
        }
    }

    @Test
    void removesExactlyTheDeadTidsKeepsOrderAndDirtiesOnlyChangedLeaves() throws Exception {
        int rows = 20_000; // 40 leaves of 509, keys with duplicates, 100 heap lines per block
        long[] packed = new long[rows];
        SplittableRandom rnd = new SplittableRandom(5);
        for (int i = 0; i < rows; i++) {
            packed[i] = IndexBuilder.pack(rnd.nextInt(-3000, 3000), i / 100, i % 100 + 1);
        }
        IndexBuilder.Built built = IndexBuilder.build(rel, packed, rows, true); // sorts packed
        // dead: every row of heap blocks 10..19 (keys spread over every leaf) and line 7 of every block
        long[] deadAll = new long[rows];
        int nd = 0;
        for (long b = 0; b < rows / 100; b++) {
            for (int l = 1; l <= 100; l++) {
                if (b >= 10 && b < 20 || l == 7) {
                    deadAll[nd++] = IndexBuilder.tid(b, l);
                }
            }
        }
        long[] dead = Arrays.copyOf(deadAll, nd);
        long[] expect = Arrays.stream(packed).filter(p -> Arrays.binarySearch(
                dead, IndexBuilder.tid(IndexBuilder.block(p), IndexBuilder.line(p))) < 0).toArray();
        IndexBulkDelete.Stats st = bulkDelete(dead);
        assertEquals(new IndexBulkDelete.Stats(built.blocks(), expect.length, rows - expect.length, 0), st);
        assertEquals(1000 + 190, st.removed());
        assertArrayEquals(expect, all());
        assertEquals(expect.length, metaEntries());
        assertEquals(0, bulkDelete(dead).removed(), "a second pass finds nothing");

        // a pass whose dead TIDs are on no leaf dirties nothing
        bufmgr.pool().checkpoint();
        try (BufferSession s = bufmgr.pool().openSession("client")) {
            assertEquals(0, IndexBulkDelete.bulkDelete(s, rel, "i", new long[] {IndexBuilder.tid(5000, 1)}, 1,
                    bufmgr.pool().strategy(BufferAccessStrategy.Type.VACUUM), 0));
            for (long b = 0; b < built.blocks(); b++) {
                int buf = s.readBuffer(rel, b, null);
                assertFalse(bufmgr.pool().isDirty(buf), "block " + b);
                s.releaseBuffer(buf);
            }
        }
        bufmgr.pool().checkpoint();
        bufmgr.close();
        open();
        assertArrayEquals(expect, all(), "after a restart");
        assertEquals(expect.length, metaEntries());
    }

    @Test
    void leavesThatLoseEveryEntryStayAndInsertsGoOn() throws Exception {
        IndexBuilder.build(rel, new long[0], 0, true);
        try (BufferSession s = bufmgr.pool().openSession("client")) {
            IndexInserter ins = new IndexInserter(s, rel, "i");
            for (int i = 0; i < 5000; i++) { // ascending keys: half-full leaves after splits
                ins.insert(i, i / 50, i % 50 + 1);
            }
        }
        long[] dead = new long[2500];
        for (int i = 0; i < 2500; i++) {
            dead[i] = IndexBuilder.tid(i / 50, i % 50 + 1);
        }
        IndexBulkDelete.Stats st = bulkDelete(dead);
        assertEquals(2500, st.removed());
        assertEquals(2500, st.entries());
        assertTrue(st.emptyLeaves() >= 8, "the lower half's leaves are empty and stay: " + st);
        assertEquals(rel.nblocks(), st.pages());
        long[] all = all();
        assertEquals(2500, all.length);
        assertEquals(2500, IndexBuilder.key(all[0]));
        try (BufferSession s = bufmgr.pool().openSession("client")) {
            IndexInserter ins = new IndexInserter(s, rel, "i");
            ins.insert(10, 1000, 1); // into an emptied leaf
            ins.insert(-1, 1000, 2);
        }
        all = all();
        assertEquals(2502, all.length);
        assertEquals(-1, IndexBuilder.key(all[0]));
        assertEquals(10, IndexBuilder.key(all[1]));
        assertEquals(2500, IndexBuilder.key(all[2]));
        assertEquals(2502, metaEntries());
    }
}
