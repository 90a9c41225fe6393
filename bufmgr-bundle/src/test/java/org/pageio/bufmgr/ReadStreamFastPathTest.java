package org.pageio.bufmgr;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.pageio.bufmgr.smgr.SmgrRelation;
import org.pageio.bufmgr.stats.StatIo.Column;
import org.pageio.bufmgr.stream.ReadStream;
import org.pageio.bufmgr.stream.StreamStats;
import org.pageio.method.sync.SyncIoMethod;

/**
 * The read stream's all-cached fast path (PostgreSQL's {@code fast_path} in
 * {@code read_stream_next_buffer}): a stream over blocks already in shared buffers returns them
 * without the look-ahead from its second buffer on; a miss leaves the fast path and the stream
 * goes on through the ordinary path; the counters stay exact either way.
 */
class ReadStreamFastPathTest extends PoolTestBase {

    static final int BLOCKS = 64;

    /** A stream over {@code [0, BLOCKS)} of {@code rel}, checking every page; returns its counters. */
    StreamStats scanAll(SmgrRelation rel, long relNumber, int flags, BufMgrSettings.Lookahead lookahead) throws Exception {
        return scanAll(rel, relNumber, flags, new ReadStream.Options(ReadStream.Options.INHERIT, ReadStream.Options.INHERIT,
                lookahead));
    }

    StreamStats scanAll(SmgrRelation rel, long relNumber, int flags, ReadStream.Options options) throws Exception {
        try (BufferSession s = pool.openSession("client");
                ReadStream stream = new ReadStream(s, rel, ReadStream.blockRange(0, BLOCKS), flags, null, options)) {
            for (long b = 0; b < BLOCKS; b++) {
                int buf = stream.next();
                assertNull(TestPages.check(relNumber, b, s.page(buf)), "block " + b);
                s.releaseBuffer(buf);
            }
            assertEquals(-1, stream.next());
            return stream.stats();
        }
    }

    @ParameterizedTest
    @EnumSource(BufMgrSettings.Lookahead.class)
    void anAllCachedStreamReturnsEveryBlockThroughTheFastPath(BufMgrSettings.Lookahead lookahead) throws Exception {
        pool(new SyncIoMethod(), small().build());
        SmgrRelation rel = relation(61001, BLOCKS);
        scan(rel, 61001, 0, BLOCKS); // now all in shared buffers
        for (int flags : new int[] {0, ReadStream.SEQUENTIAL | ReadStream.USE_BATCHING}) {
            long hitsBefore = total(Column.HITS);
            long readsBefore = totalReadBlocks();
            StreamStats st = scanAll(rel, 61001, flags, lookahead);
            // the first buffer comes through the ordinary path (nothing pinned yet), every other
            // through the fast path, which also meets the end of the stream
            assertEquals(BLOCKS, st.buffersReturned());
            assertEquals(BLOCKS - 1, st.fastPathReturns(), "flags " + flags + ": " + st);
            assertEquals(BLOCKS, st.hits());
            assertEquals(0, st.ioCount());
            assertEquals(1.0, st.averagePrefetchDistance());
            assertEquals(BLOCKS, total(Column.HITS) - hitsBefore, "stat_io hits");
            assertEquals(0, totalReadBlocks() - readsBefore, "blocks read");
            assertEquals(0, pool.pinnedBuffers());
        }
    }

    @ParameterizedTest
    @EnumSource(BufMgrSettings.Lookahead.class)
    void aMissLeavesTheFastPathAndTheStreamGoesOn(BufMgrSettings.Lookahead lookahead) throws Exception {
        pool(new SyncIoMethod(), small().build());
        SmgrRelation rel = relation(61002, BLOCKS);
        int missing = 30;
        scan(rel, 61002, 0, missing); // every block but one in shared buffers
        scan(rel, 61002, missing + 1, BLOCKS - missing - 1);
        long hitsBefore = total(Column.HITS);
        long readsBefore = totalReadBlocks();
        StreamStats st = scanAll(rel, 61002, 0, lookahead);
        assertEquals(BLOCKS, st.buffersReturned());
        assertEquals(BLOCKS - 1, st.hits());
        assertEquals(1, st.ioCount(), "the missing block's read");
        assertEquals(BLOCKS - 1, total(Column.HITS) - hitsBefore, "stat_io hits");
        assertEquals(1, totalReadBlocks() - readsBefore, "blocks read");
        // blocks 1..29 through the fast path, whose pin of block 30 misses; block 30 is waited for
        // through the ordinary path, whose look-ahead grew after the read
        assertTrue(st.fastPathReturns() >= missing - 1, st.fastPathReturns() + " fast-path returns");
        assertTrue(st.fastPathReturns() < BLOCKS - 2, st.fastPathReturns() + " fast-path returns");
        assertTrue(st.maxDistance() > 1, "the look-ahead grew after the miss: " + st.maxDistance());
        assertEquals(0, pool.pinnedBuffers());
    }

    /**
     * {@code Options.fastPath = false}: the same blocks, the same hits and no read, every buffer
     * through the ordinary path; the same stream with it allowed takes it again.
     */
    @ParameterizedTest
    @EnumSource(BufMgrSettings.Lookahead.class)
    void theFastPathCanBeSwitchedOffForOneStream(BufMgrSettings.Lookahead lookahead) throws Exception {
        pool(new SyncIoMethod(), small().build());
        SmgrRelation rel = relation(61004, BLOCKS);
        scan(rel, 61004, 0, BLOCKS);
        ReadStream.Options on = new ReadStream.Options(ReadStream.Options.INHERIT, ReadStream.Options.INHERIT, lookahead);
        assertTrue(on.fastPath(), "allowed unless switched off");
        int flags = ReadStream.SEQUENTIAL | ReadStream.USE_BATCHING;
        long readsBefore = totalReadBlocks();
        long hitsBefore = total(Column.HITS);
        StreamStats off = scanAll(rel, 61004, flags, on.withFastPath(false));
        assertEquals(0, off.fastPathReturns(), off.toString());
        assertEquals(BLOCKS, off.buffersReturned());
        assertEquals(BLOCKS, off.hits());
        assertEquals(0, off.ioCount());
        StreamStats again = scanAll(rel, 61004, flags, on);
        assertEquals(BLOCKS - 1, again.fastPathReturns(), again.toString());
        assertEquals(BLOCKS, again.buffersReturned());
        assertEquals(BLOCKS, again.hits());
        assertEquals(2 * BLOCKS, total(Column.HITS) - hitsBefore, "stat_io hits");
        assertEquals(0, totalReadBlocks() - readsBefore, "blocks read");
        assertEquals(0, pool.pinnedBuffers());
    }

    @Test
    void aStreamWithPerBufferDataKeepsToTheOrdinaryPath() throws Exception {
        pool(new SyncIoMethod(), small().build());
        SmgrRelation rel = relation(61003, BLOCKS);
        scan(rel, 61003, 0, BLOCKS);
        long[] next = {0};
        try (BufferSession s = pool.openSession("client");
                ReadStream stream = new ReadStream(s, rel, st -> {
                    if (next[0] == BLOCKS) {
                        return ReadStream.END;
                    }
                    st.setPerBufferData(1000 + next[0]);
                    return next[0]++;
                }, 0, null)) {
            for (long b = 0; b < BLOCKS; b++) {
                int buf = stream.next();
                assertNull(TestPages.check(61003, b, s.page(buf)), "block " + b);
                assertEquals(1000 + b, stream.perBufferData());
                s.releaseBuffer(buf);
            }
            assertEquals(-1, stream.next());
            // as PostgreSQL, which takes the fast path only with per_buffer_data_size 0
            assertEquals(0, stream.stats().fastPathReturns());
            assertEquals(BLOCKS, stream.stats().hits());
        }
    }
}
