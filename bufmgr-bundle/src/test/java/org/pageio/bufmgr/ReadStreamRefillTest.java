package org.pageio.bufmgr;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.pageio.api.IoMethod;
import org.pageio.bufmgr.smgr.SmgrRelation;
import org.pageio.bufmgr.stream.ReadStream;

/** A batching stream refills in groups once it is deep, so that reads reach the method several per submission. */
class ReadStreamRefillTest extends PoolTestBase {

    /**
     * Completes reads on four threads after 200 µs each (a device's latency, so that the consumer
     * waits and the look-ahead distance grows, as on a cold scan); records every batch's size.
     */
    static TestMethods.Delaying batches() {
        return new TestMethods.Delaying("test-batches", false, n -> true, 200_000);
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

    /** Scans every other block of a fresh pool over {@link #batches()}; returns the batch sizes. */
    List<Integer> batchesOfAScan(int flags, int blocks) throws Exception {
        TestMethods.Delaying m = batches();
        closeLast.add(m);
        pool(m, small().sharedBuffers(1024).maxSessions(4).build());
        scanEveryOtherBlock(flags, blocks);
        assertEquals(blocks, m.submissions.stream().mapToInt(Integer::intValue).sum(), "reads submitted");
        return List.copyOf(m.submissions);
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

    /** A sequential batching scan of 512 blocks (32 reads of 16) over {@code m}; returns the stream's counters. */
    org.pageio.bufmgr.stream.StreamStats scanSequentially(IoMethod m, long relNumber) throws Exception {
        pool(m, small().sharedBuffers(1024).maxSessions(4).build());
        SmgrRelation rel = relation(relNumber, 512);
        try (BufferSession s = pool.openSession("client");
                ReadStream stream = new ReadStream(s, rel, ReadStream.blockRange(0, 512),
                        ReadStream.SEQUENTIAL | ReadStream.USE_BATCHING, null, new ReadStream.Options(16, 16, null))) {
            for (long b = 0; b < 512; b++) {
                int buf = stream.next();
                assertNull(TestPages.check(relNumber, b, s.page(buf)));
                s.releaseBuffer(buf);
            }
            assertEquals(-1, stream.next());
            return stream.stats();
        }
    }

    @Test
    void readsThatCompleteWithinTheirSubmissionGoTwoPerSubmission() throws Exception {
        // every read performed inside submit, as io_uring does for pages the kernel has cached
        TestMethods.Delaying m = new TestMethods.Delaying("test-complete-at-submission", false, n -> false, 0);
        closeLast.add(m);
        var st = scanSequentially(m, 60101);
        List<Integer> batches = List.copyOf(m.submissions);
        long pairs = batches.stream().filter(n -> n == 2).count();
        // the ramp-up (1, 2, 4, 8 blocks, then full reads) and the counting look-aheads go one read
        // at a time; PostgreSQL's look-ahead would send every read alone: ~36 submissions of 1
        assertTrue(pairs >= 12, pairs + " submissions of two reads: " + batches);
        assertTrue(batches.stream().allMatch(n -> n <= 2), "never more than a pair: " + batches);
        assertTrue(st.averageIoSizeBlocks() > 12, "reads stay full-size: " + st);
        assertEquals(0, st.waits(), "a read over when submitted is never waited for: " + st);
    }

    @Test
    void onceAReadIsNotOverWhenSubmittedTheStreamStopsPairingReads() throws Exception {
        // reads 1-16 complete as submitted (pairs start), read 17 does not, the rest do again
        TestMethods.Delaying m = new TestMethods.Delaying("test-complete-at-submission", false, n -> n == 17, 2_000_000);
        closeLast.add(m);
        scanSequentially(m, 60102);
        List<Integer> batches = List.copyOf(m.submissions);
        int reads = 0;
        int at = -1;
        for (int i = 0; i < batches.size() && at < 0; i++) {
            reads += batches.get(i);
            if (reads >= 17) {
                at = i;
            }
        }
        assertTrue(batches.subList(0, at).contains(2), "pairs before the read that was not over: " + batches);
        // after it the usual look-ahead: the wait for it doubled the distance, which the next
        // look-ahead fills at once; from then on reads (over again as submitted) start as pins free
        // up, one per submission, where pairs would wait for the consumer to drain them
        assertTrue(batches.subList(at + 2, batches.size()).stream().allMatch(n -> n == 1),
                "one read per submission after it, for the rest of the stream: " + batches);
    }

    @Test
    void withoutBatchingEveryReadIsSubmittedAtOnce() throws Exception {
        TestMethods.Delaying m = batches();
        closeLast.add(m);
        pool(m, small().sharedBuffers(1024).maxSessions(4).build());
        scanEveryOtherBlock(0, 256);
        assertEquals(256, m.submissions.size(), "one submission per read, as before: " + m.submissions);
    }

    /**
     * {@code read_stream_policy = postgresql}: read_stream.c's look-ahead alone. The same deep
     * sequential stream that groups its refills under the default looks ahead at every consumed
     * buffer, so once deep most reads go out alone; reads that complete as they are submitted never
     * go in pairs.
     */
    @Test
    void underThePostgresqlPolicyNoLookAheadPolicyStepsIn() throws Exception {
        int blocks = 512;
        TestMethods.Delaying m = batches();
        closeLast.add(m);
        pool(m, small().sharedBuffers(1024).maxSessions(4).readStreamPolicy(BufMgrSettings.ReadStreamPolicy.POSTGRESQL)
                .build());
        scanEveryOtherBlock(ReadStream.SEQUENTIAL | ReadStream.USE_BATCHING, blocks);
        List<Integer> batches = List.copyOf(m.submissions);
        long singles = batches.stream().filter(n -> n == 1).count();
        assertTrue(singles >= blocks / 2, "PostgreSQL's refill at every buffer: " + singles + " single-read submissions of "
                + batches.size() + ": " + batches);

        TestMethods.Delaying cached = new TestMethods.Delaying("test-complete-at-submission", false, n -> false, 0);
        closeLast.add(cached);
        pool(cached, small().sharedBuffers(1024).maxSessions(4).readStreamPolicy(BufMgrSettings.ReadStreamPolicy.POSTGRESQL)
                .build());
        SmgrRelation rel = relation(60103, 512);
        try (BufferSession s = pool.openSession("client");
                ReadStream stream = new ReadStream(s, rel, ReadStream.blockRange(0, 512),
                        ReadStream.SEQUENTIAL | ReadStream.USE_BATCHING, null, new ReadStream.Options(16, 16, null))) {
            for (int buf; (buf = stream.next()) >= 0; ) {
                s.releaseBuffer(buf);
            }
        }
        assertTrue(cached.submissions.stream().allMatch(n -> n == 1), "no pairs: " + cached.submissions);
    }

    @Test
    void theSettingNamesItsValidValues() {
        assertEquals(BufMgrSettings.ReadStreamPolicy.POSTGRESQL, BufMgrSettings.ReadStreamPolicy.parse(" PostgreSQL "));
        IllegalArgumentException e = org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
                () -> BufMgrSettings.ReadStreamPolicy.parse("pg19"));
        assertEquals("read_stream_policy = 'pg19' is not valid: valid values are pageio, postgresql", e.getMessage());
        assertEquals(BufMgrSettings.ReadStreamPolicy.PAGEIO, BufMgrSettings.defaults().readStreamPolicy());
    }
}
