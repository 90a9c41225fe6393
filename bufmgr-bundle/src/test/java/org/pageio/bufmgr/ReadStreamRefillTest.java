package org.pageio.bufmgr;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.junit.jupiter.api.Test;
import org.pageio.api.IoHandle;
import org.pageio.api.IoMethod;
import org.pageio.bufmgr.smgr.SmgrRelation;
import org.pageio.bufmgr.stream.ReadStream;
import org.pageio.posix.CallState;

/** A batching stream refills in groups once it is deep, so that reads reach the method several per submission. */
class ReadStreamRefillTest extends PoolTestBase {

    /**
     * Completes reads on four threads after 200 µs each (a device's latency, so that the consumer
     * waits and the look-ahead distance grows, as on a cold scan); records every batch's size.
     */
    static final class Batches implements IoMethod, AutoCloseable {
        final List<Integer> batches = new CopyOnWriteArrayList<>();
        private final ExecutorService threads = Executors.newFixedThreadPool(4);
        private final ThreadLocal<CallState> cs = ThreadLocal.withInitial(() -> CallState.allocate(Arena.ofAuto()));

        @Override
        public String name() {
            return "test-batches";
        }

        @Override
        public int submit(IoHandle[] handles, int count) {
            batches.add(count);
            for (int i = 0; i < count; i++) {
                IoHandle h = handles[i];
                threads.execute(() -> {
                    java.util.concurrent.locks.LockSupport.parkNanos(200_000);
                    h.performSynchronously(cs.get());
                });
            }
            return count;
        }

        @Override
        public void close() {
            threads.shutdownNow();
        }
    }

    long[] scanEveryOtherBlock(int flags, int blocks) throws Exception {
        SmgrRelation rel = relation(60001, 2L * blocks);
        long[] order = new long[blocks];
        for (int i = 0; i < blocks; i++) {
            order[i] = 2L * ((i * 37L) % blocks); // non-adjacent, out of order: nothing combines
        }
        int[] next = {0};
        try (BufferSession s = pool.openSession("client");
                ReadStream stream = new ReadStream(s, rel, st -> next[0] < blocks ? order[next[0]++] : ReadStream.END, flags,
                        null, new ReadStream.Options(64, 1, null))) {
            for (int i = 0; i < blocks; i++) {
                int buf = stream.next();
                assertNull(TestPages.check(60001, order[i], s.page(buf)));
                s.releaseBuffer(buf);
            }
            assertEquals(-1, stream.next());
            assertEquals(64, stream.maxIos());
        }
        return order;
    }

    /** Scans every other block of a fresh pool over {@link Batches}; returns the batch sizes. */
    List<Integer> batchesOfAScan(int flags, int blocks) throws Exception {
        Batches m = new Batches();
        closeLast.add(m);
        pool(m, small().sharedBuffers(1024).maxSessions(4).build());
        scanEveryOtherBlock(flags, blocks);
        assertEquals(blocks, m.batches.stream().mapToInt(Integer::intValue).sum(), "reads submitted");
        return List.copyOf(m.batches);
    }

    @Test
    void aDeepBatchingSequentialStreamSubmitsSeveralReadsAtATime() throws Exception {
        int blocks = 512;
        List<Integer> batches = batchesOfAScan(ReadStream.SEQUENTIAL | ReadStream.USE_BATCHING, blocks);
        // without grouping, every consumed buffer would start one read in its own submission
        // (~500 batches of 1); grouped, each refill after the ramp-up waits for 8 free slots
        long singles = batches.stream().filter(n -> n == 1).count();
        assertTrue(batches.size() <= blocks / 4, batches.size() + " submissions: " + batches);
        assertTrue(singles <= 16, singles + " single-read submissions (the ramp-up only): " + batches);
    }

    @Test
    void aRandomBatchingStreamStartsEachReadAsSoonAsItsSlotIsFree() throws Exception {
        int blocks = 512;
        List<Integer> batches = batchesOfAScan(ReadStream.USE_BATCHING, blocks);
        // not SEQUENTIAL: PostgreSQL's look-ahead at every consumed buffer, so once deep each read
        // the consumer finishes frees one slot and one read goes out at once, alone
        long singles = batches.stream().filter(n -> n == 1).count();
        assertTrue(singles >= blocks / 2, singles + " single-read submissions of " + batches.size() + ": " + batches);
    }

    @Test
    void withoutBatchingEveryReadIsSubmittedAtOnce() throws Exception {
        Batches m = new Batches();
        closeLast.add(m);
        pool(m, small().sharedBuffers(1024).maxSessions(4).build());
        scanEveryOtherBlock(0, 256);
        assertEquals(256, m.batches.size(), "one submission per read, as before: " + m.batches);
    }
}
