package org.pageio.bufmgr;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.pageio.api.IoHandle;
import org.pageio.bufmgr.smgr.SmgrRelation;
import org.pageio.bufmgr.stream.ReadStream;
import org.pageio.bufmgr.stream.StreamStats;
import org.pageio.posix.CallState;

/**
 * A cold sequential scan over direct I/O: no kernel read-ahead stands behind the stream,
 * so its own look-ahead must reach {@code effective_io_concurrency} reads in flight within the first
 * few reads, whatever the device's speed, and once deep it refills in groups of at least three reads
 * (io_uring plugs the block layer, which merges adjacent reads, only for submissions of three or
 * more). Structural: counts reads and submissions, never time.
 */
class ReadStreamDirectRampTest extends PoolTestBase {

    static final int EIC = 16;
    static final int COMBINE = 16;
    static final int BLOCKS = 2048; // 128 reads of 16 blocks

    /**
     * A method that bypasses the page cache and records every submission's size. With
     * {@code latencyNanos} 0 it performs each read (a real {@code preadv}) inside {@code submit},
     * so every read is complete before the stream asks for it and the consumer never waits: a
     * device faster than the consumer. Otherwise four threads complete each read after that
     * latency, and the consumer waits as on a cold scan of a real device.
     */
    static TestMethods.Delaying directLike(long latencyNanos) {
        return new TestMethods.Delaying("test-direct", true, n -> true, latencyNanos);
    }

    StreamStats scan(TestMethods.Delaying m, int flags) throws Exception {
        return scan(m, flags, 1);
    }

    /**
     * Streams every {@code step}-th block of the relation ({@code step} 1: all of it; more: a bitmap
     * heap scan's distinct blocks, none adjacent, one block per read) and checks each page.
     */
    StreamStats scan(TestMethods.Delaying m, int flags, int step) throws Exception {
        closeLast.add(m);
        // 2048 / 4 sessions = 512 pins per session: the stream's own budget, (16 + 1) × 16 = 272, applies
        pool(m, small().sharedBuffers(2048).maxSessions(4).effectiveIoConcurrency(EIC).ioCombineLimit(COMBINE).build());
        SmgrRelation rel = relation(61001, BLOCKS);
        try (BufferSession s = pool.openSession("client");
                ReadStream stream = new ReadStream(s, rel, everyNth(step), flags, null)) {
            assertEquals(EIC, stream.maxIos());
            assertEquals((EIC + 1) * COMBINE, stream.maxPinned());
            for (long blk = 0; blk < BLOCKS; blk += step) {
                int buf = stream.next();
                assertNull(TestPages.check(61001, blk, s.page(buf)));
                s.releaseBuffer(buf);
            }
            assertEquals(-1, stream.next());
            StreamStats st = stream.stats();
            assertEquals(step == 1 ? BLOCKS / COMBINE : (BLOCKS + step - 1) / step, st.ioCount(),
                    (step == 1 ? "every read 16 blocks long: " : "one read per block: ") + st);
            return st;
        }
    }

    private static ReadStream.BlockCallback everyNth(int step) {
        long[] next = {0};
        return stream -> {
            long b = next[0];
            next[0] += step;
            return b < BLOCKS ? b : ReadStream.END;
        };
    }

    /**
     * A bitmap heap scan's stream ({@code USE_BATCHING}, not sequential: distinct blocks in block
     * order, none adjacent) over direct I/O keeps {@code effective_io_concurrency} reads started
     * and not yet consumed once warmed up, on a device faster than the consumer and on a slow one:
     * the look-ahead is not what leaves a random scan's device queue short.
     */
    @Test
    void aBitmapHeapScansStreamKeepsItsReadsInFlightOnceWarmedUp() throws Exception {
        for (long latency : new long[] {0, 300_000}) {
            TestMethods.Delaying m = directLike(latency);
            StreamStats st = scan(m, ReadStream.USE_BATCHING, 7);
            assertTrue(st.readsBeforeFullDepth() >= 0 && st.readsBeforeFullDepth() <= EIC + 6,
                    "latency " + latency + ": 16 reads in flight only after " + st.readsBeforeFullDepth() + " reads: " + st);
            assertTrue(st.averageIosInProgress() >= 12, "latency " + latency + ": average reads in flight: " + st);
            core.close();
            core = null;
        }
    }

    /**
     * A bitmap heap scan's stream that runs ahead of its reads (a device faster than the consumer:
     * every read is over before the consumer reaches it) refills in groups of at least three reads,
     * one submission each, once its share of time spent waiting decayed under an eighth (about 32
     * reads without a wait at {@code effective_io_concurrency} 16); on a
     * slow device, where the consumer waits, it starts each read alone as soon as its slot is free.
     */
    @Test
    void aRandomStreamThatRunsAheadRefillsInGroupsAndOneThatWaitsDoesNot() throws Exception {
        TestMethods.Delaying fast = directLike(0);
        StreamStats st = scan(fast, ReadStream.USE_BATCHING, 7);
        int reads = fast.submissions.stream().mapToInt(Integer::intValue).sum();
        assertEquals(st.ioCount(), reads, "reads submitted: " + st);
        assertEquals(0, st.waits(), "every read completed in submit: " + st);
        // the ramp-up and the first ~32 reads consumed start reads one or two at a time; after
        // that every refill waits for three free slots (and the stream's end may leave one short)
        long small = fast.submissions.stream().filter(n -> n < 3).count();
        assertTrue(small <= 2 * EIC + 4, small + " submissions of fewer than 3 reads of " + fast.submissions.size() + ": "
                + fast.submissions + " " + st);
        assertTrue(fast.submissions.size() <= reads / 3 + 2 * EIC + 4, fast.submissions.size() + " submissions for " + reads
                + " reads: " + fast.submissions);
        assertTrue(st.averageIosInProgress() >= 12, "average reads in flight: " + st);
        core.close();
        core = null;

        TestMethods.Delaying slow = directLike(300_000);
        st = scan(slow, ReadStream.USE_BATCHING, 7);
        assertTrue(st.waits() > 0, "a slow device makes the consumer wait: " + st);
        long singles = slow.submissions.stream().filter(n -> n == 1).count();
        assertTrue(singles >= slow.submissions.size() * 3 / 4, singles + " single-read submissions of "
                + slow.submissions.size() + " on a device the consumer waits for: " + slow.submissions + " " + st);
    }

    @Test
    void aColdDirectScanReachesFullDepthWithinTheFirstReadsEvenWhenItNeverWaits() throws Exception {
        TestMethods.Delaying m = directLike(0);
        StreamStats st = scan(m, ReadStream.SEQUENTIAL);
        assertEquals(0, st.waits(), "every read completed in submit: " + st);
        // the distance doubles on every read consumed (16, 32, 64, 128, 256, 272 buffers): 16 reads
        // in flight once the fifth read was consumed (a grouped refill may wait for the sixth's
        // head); under PostgreSQL 19's wait-only rule a stream that never waits stays at one read
        // in flight (before this rule: 195 buffers on a real device, bench/direct-vs-fio.sh)
        assertTrue(st.buffersBeforeFullDepth() >= 0 && st.buffersBeforeFullDepth() <= 6 * COMBINE,
                "16 reads in flight only after " + st.buffersBeforeFullDepth() + " buffers: " + st);
        assertTrue(st.readsBeforeFullDepth() <= 6 + EIC, st.readsBeforeFullDepth() + " reads before full depth: " + st);
        assertEquals((EIC + 1) * COMBINE, st.maxDistance());
        assertTrue(st.averageIosInProgress() > EIC - 2, "average reads in flight: " + st);
    }

    @Test
    void aColdDirectScanOnASlowDeviceReachesFullDepthAsFast() throws Exception {
        TestMethods.Delaying m = directLike(300_000);
        StreamStats st = scan(m, ReadStream.SEQUENTIAL | ReadStream.USE_BATCHING);
        assertTrue(st.buffersBeforeFullDepth() >= 0 && st.buffersBeforeFullDepth() <= 6 * COMBINE,
                "16 reads in flight only after " + st.buffersBeforeFullDepth() + " buffers: " + st);
    }

    @Test
    void onceDeepAGroupedDirectScanSubmitsAtLeastThreeReadsAtATime() throws Exception {
        TestMethods.Delaying m = directLike(0);
        StreamStats st = scan(m, ReadStream.SEQUENTIAL | ReadStream.USE_BATCHING);
        int reads = m.submissions.stream().mapToInt(Integer::intValue).sum();
        assertEquals(BLOCKS / COMBINE, reads);
        // the ramp-up starts reads one or two at a time (at most 5 submissions before full depth)
        // and the stream's end may leave a short last group; every other refill has 3 or more,
        // where an eighth of 16 would send 2 (no plug, no merged device requests)
        long small = m.submissions.stream().filter(n -> n < 3).count();
        assertTrue(small <= 7, small + " submissions of fewer than 3 reads: " + m.submissions + " " + st);
        assertTrue(m.submissions.size() <= reads / 3 + 7, m.submissions.size() + " submissions: " + m.submissions);
    }

    /**
     * A device that completes every read inside {@code submit} but every {@code heldEvery}-th, which
     * it holds until the issuer waits for it and then completes after {@code waitNanos} of the
     * issuer's time: a consumer meets exactly one wait of that length per {@code heldEvery} reads.
     */
    static final class OccasionallySlow extends TestMethods.RecordingSubmissions {
        private final int heldEvery;
        private final long waitNanos;
        private final java.util.Set<IoHandle> held = java.util.concurrent.ConcurrentHashMap.newKeySet();
        private final CallState cs = CallState.allocate(Arena.ofAuto());
        private int submitted;

        OccasionallySlow(int heldEvery, long waitNanos) {
            super("test-direct", true);
            this.heldEvery = heldEvery;
            this.waitNanos = waitNanos;
        }

        @Override
        void start(IoHandle h) {
            if (++submitted % heldEvery == 0) {
                held.add(h);
            } else {
                h.performSynchronously(cs);
            }
        }

        @Override
        public boolean hasWaitOne() {
            return true;
        }

        @Override
        public void waitOne(IoHandle handle, long generation) {
            if (held.remove(handle)) {
                spin(waitNanos);
                handle.performSynchronously(cs);
            }
        }
    }

    private static void spin(long nanos) {
        long end = System.nanoTime() + nanos;
        while (System.nanoTime() < end) {
            Thread.onSpinWait();
        }
    }

    /** A bitmap-like stream (every 7th block) whose consumer spends {@code workNanos} per block. */
    private List<Integer> scanWithWork(OccasionallySlow m, long workNanos) throws Exception {
        pool(m, small().sharedBuffers(2048).maxSessions(4).effectiveIoConcurrency(EIC).ioCombineLimit(COMBINE).build());
        SmgrRelation rel = relation(61002, BLOCKS);
        try (BufferSession s = pool.openSession("client");
                ReadStream stream = new ReadStream(s, rel, everyNth(7), ReadStream.USE_BATCHING, null)) {
            for (long blk = 0; blk < BLOCKS; blk += 7) {
                int buf = stream.next();
                assertNull(TestPages.check(61002, blk, s.page(buf)));
                spin(workNanos);
                s.releaseBuffer(buf);
            }
            assertEquals(-1, stream.next());
            assertTrue(stream.stats().waits() > 0, "the held reads were waited for: " + stream.stats());
        }
        core.close();
        core = null;
        return m.submissions;
    }

    /**
     * What decides whether a random stream groups is the share of its time it waits, not whether
     * it ever waits: a consumer that does real work per block and meets a short wait now and then
     * (one 40 µs wait per 32 reads of 20 µs work: about 6%) keeps refilling in groups; one that
     * waits most of its time (200 µs per 2 reads) refills one read at a time.
     */
    @Test
    void aRandomStreamThatWaitsRarelyKeepsGroupingAndOneThatWaitsMostlyDoesNot() throws Exception {
        List<Integer> rare = scanWithWork(new OccasionallySlow(32, 40_000), 20_000);
        int reads = rare.stream().mapToInt(Integer::intValue).sum();
        long small = rare.stream().filter(n -> n < 3).count();
        // the ramp-up and the first ~32 reads start reads one or two at a time; then groups of 3
        // (a rule that stopped grouping at every wait would start 16 single reads after each of
        // the 9 waits)
        assertTrue(small <= 2 * EIC + 8, small + " submissions of fewer than 3 reads of " + rare.size() + " for " + reads
                + " reads: " + rare);

        List<Integer> often = scanWithWork(new OccasionallySlow(2, 200_000), 20_000);
        long singles = often.stream().filter(n -> n == 1).count();
        assertTrue(singles >= often.size() * 3 / 4, singles + " single-read submissions of " + often.size()
                + " for a consumer that waits most of its time: " + often);
    }
}
