package org.pageio.bufmgr;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.pageio.api.IoMethod;
import org.pageio.bufmgr.smgr.SmgrRelation;
import org.pageio.bufmgr.stats.StatIo.Column;
import org.pageio.bufmgr.stream.ReadStream;
import org.pageio.bufmgr.stream.StreamStats;
import org.pageio.method.sync.SyncIoMethod;
import org.pageio.method.worker.WorkerIoMethod;
import org.pageio.method.worker.WorkerSettings;

/**
 * The read stream's {@code ThreadPoolAdvice} policy: under {@code io_method=worker}, whose reads
 * each hold an I/O worker, a random stream gives {@code WILLNEED} advice on exactly the jumps where
 * {@code io_method=sync} gives it; a sequential stream, and {@code read_stream_policy = postgresql},
 * give none, as PostgreSQL gives none outside {@code sync}. Every block is still read by the method
 * and checked.
 */
class ReadStreamThreadPoolAdviceTest extends PoolTestBase {

    static final int BLOCKS = 256;
    /** Every third block, in runs of two: jumps of one block between runs of two. */
    static final long[] RANDOM = randomBlocks();

    static long[] randomBlocks() {
        long[] b = new long[BLOCKS / 3 * 2];
        int n = 0;
        for (long first = 0; first + 1 < BLOCKS && n < b.length; first += 3) {
            b[n++] = first;
            b[n++] = first + 1;
        }
        return b;
    }

    /** A stream over {@link #RANDOM} (or every block, {@code SEQUENTIAL}), each page checked; its counters. */
    StreamStats read(SmgrRelation rel, long relNumber, boolean sequential) throws Exception {
        long[] blocks = sequential ? null : RANDOM;
        int count = sequential ? BLOCKS : RANDOM.length;
        ReadStream.BlockCallback cb = sequential ? ReadStream.blockRange(0, BLOCKS) : new ReadStream.BlockCallback() {
            int i;

            @Override
            public long nextBlock(ReadStream stream) {
                return i < blocks.length ? blocks[i++] : ReadStream.END;
            }
        };
        try (BufferSession s = pool.openSession("client");
                ReadStream stream = new ReadStream(s, rel, cb, sequential ? ReadStream.SEQUENTIAL : 0, null)) {
            for (int i = 0; i < count; i++) {
                int buf = stream.next();
                long b = sequential ? i : blocks[i];
                assertNull(TestPages.check(relNumber, b, s.page(buf)), "block " + b);
                s.releaseBuffer(buf);
            }
            assertEquals(-1, stream.next());
            return stream.stats();
        }
    }

    StreamStats coldRead(IoMethod method, BufMgrSettings settings, long relNumber, boolean sequential) throws Exception {
        pool(method, settings);
        SmgrRelation rel = relation(relNumber, BLOCKS);
        try (BufferSession s = pool.openSession("client")) {
            pool.evictAll(s); // TestPages.fill wrote through the pool: start cold
        }
        long before = totalReadBlocks();
        StreamStats st = read(rel, relNumber, sequential);
        assertEquals(sequential ? BLOCKS : RANDOM.length, totalReadBlocks() - before, "every block read once, by the method");
        assertEquals(method.name(), pool.method().name());
        return st;
    }

    WorkerIoMethod worker() {
        WorkerIoMethod w = new WorkerIoMethod(WorkerSettings.DEFAULTS);
        closeLast.add(w::close);
        return w;
    }

    @Test
    void workerReadsHoldThreadsSyncsDoNot() {
        WorkerIoMethod w = worker();
        assertTrue(w.readsHoldThreads());
        assertFalse(new SyncIoMethod().readsHoldThreads());
    }

    @Test
    void aRandomStreamUnderWorkerAdvisesTheJumpsSyncAdvises() throws Exception {
        long syncAdvice = coldRead(new SyncIoMethod(), small().build(), 62001, false).adviceCalls();
        core.close();
        core = null;
        StreamStats worker = coldRead(worker(), small().build(), 62002, false);
        // one advice per run of two blocks, however the look-ahead cut them into reads: the jumps
        assertEquals(RANDOM.length / 2, syncAdvice, "io_method=sync, PostgreSQL's advice");
        assertEquals(syncAdvice, worker.adviceCalls(), "io_method=worker advises the same jumps: " + worker);
    }

    /**
     * Each read the stream advised reaches the method with {@link org.pageio.api.IoHandle#FLAG_ADVISED}
     * (the worker pool leaves those to their issuer), and no other read carries it.
     */
    @Test
    void theReadsTheStreamAdvisedCarryTheFlagAndNoOthers() throws Exception {
        TestMethods.Threaded threaded = new TestMethods.Threaded(4);
        closeLast.add(threaded);
        StreamStats random = coldRead(threaded, small().build(), 62006, false);
        assertEquals(RANDOM.length / 2, random.adviceCalls());
        assertEquals(random.adviceCalls(), threaded.advisedReads.get(), "one flagged read per advice: " + random);
        assertEquals(random.ioCount(), threaded.advisedReads.get() + threaded.otherReads.get(), "every read reached the method");
        long flagged = threaded.advisedReads.get();
        core.close();
        core = null;
        StreamStats seq = coldRead(threaded, small().build(), 62007, true);
        assertEquals(flagged, threaded.advisedReads.get(), "a sequential stream's reads are not advised: " + seq);
        assertTrue(threaded.otherReads.get() > 0);
    }

    /**
     * Advice goes only to reads that need I/O, as PostgreSQL's {@code StartReadBuffers} gives it:
     * the same random stream over blocks already in shared buffers advises nothing, under
     * {@code sync} and under {@code worker}.
     */
    @Test
    void aRandomStreamOverCachedBlocksAdvisesNothing() throws Exception {
        for (IoMethod m : new IoMethod[] {new SyncIoMethod(), worker()}) {
            pool(m, small().build());
            SmgrRelation rel = relation(62010, BLOCKS);
            StreamStats cold;
            try (BufferSession s = pool.openSession("client")) {
                pool.evictAll(s);
            }
            cold = read(rel, 62010, false);
            long readsBefore = totalReadBlocks();
            StreamStats hot = read(rel, 62010, false);
            assertEquals(RANDOM.length / 2, cold.adviceCalls(), m.name() + ", cold: " + cold);
            assertEquals(0, hot.adviceCalls(), m.name() + ", every block a hit: " + hot);
            assertEquals(RANDOM.length, hot.hits(), m.name());
            assertEquals(0, totalReadBlocks() - readsBefore, m.name() + ": nothing read");
            core.close();
            core = null;
        }
    }

    @Test
    void aSequentialStreamUnderWorkerGivesNoAdvice() throws Exception {
        StreamStats st = coldRead(worker(), small().build(), 62003, true);
        assertEquals(0, st.adviceCalls(), "the kernel's read-ahead serves a sequential stream: " + st);
        assertTrue(st.ioCount() > 0);
    }

    @Test
    void readStreamPolicyPostgresqlGivesWorkerNoAdviceAndSyncItsOwn() throws Exception {
        BufMgrSettings pg = small().readStreamPolicy(BufMgrSettings.ReadStreamPolicy.POSTGRESQL).build();
        StreamStats worker = coldRead(worker(), pg, 62004, false);
        assertEquals(0, worker.adviceCalls(), "read_stream.c advises only under sync: " + worker);
        core.close();
        core = null;
        StreamStats sync = coldRead(new SyncIoMethod(), pg, 62005, false);
        assertEquals(RANDOM.length / 2, sync.adviceCalls(), "PostgreSQL's own advice stays: " + sync);
        assertEquals(0, total(Column.HITS), "a cold pool: every block read");
    }
}
