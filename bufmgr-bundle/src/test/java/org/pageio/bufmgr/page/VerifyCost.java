package org.pageio.bufmgr.page;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.management.ManagementFactory;

/**
 * A micro-measurement, not a test (no assertions, not run by the test suite): nanoseconds and
 * allocated bytes per {@link PageVerifier#verify} call: 3 warm-up rounds, then 5 rounds of 1M
 * calls each (median and minimum time, most bytes allocated in a round), on pages of a
 * 64-page native pool (cache-hot, as right after a read). Run with the Temurin 25 JDK:
 * <pre>
 * java -cp target/classes:target/test-classes org.pageio.bufmgr.page.VerifyCost
 * java -XX:-DoEscapeAnalysis -cp ... org.pageio.bufmgr.page.VerifyCost   # cost without scalar replacement
 * </pre>
 * For numbers to quote, prefer a JMH benchmark in {@code bench/}; this is the quick look.
 */
public final class VerifyCost {
    private static final int POOL_PAGES = 64;
    private static final int CALLS = 1_000_000;
    private static final int ROUNDS = 5;

    private interface Scenario {
        int run(int i);
    }

    private VerifyCost() { }

    public static void main(String[] args) {
        MemorySegment pool = Arena.global().allocate((long) POOL_PAGES * Page.SIZE, 4096);
        MemorySegment[] pages = new MemorySegment[POOL_PAGES];
        for (int i = 0; i < POOL_PAGES; i++) {
            pages[i] = pool.asSlice((long) i * Page.SIZE, Page.SIZE);
            PageVerifierTest.fillLikeAHeapPage(pages[i], i);
            Page.setChecksum(pages[i], i);
        }
        MemorySegment zero = Arena.global().allocate(Page.SIZE, 4096);
        MemorySegment corrupt = Arena.global().allocate(Page.SIZE, 4096);
        corrupt.copyFrom(pages[0]);
        corrupt.set(Page.U16, Page.OFFSET_CHECKSUM, (short) (Page.storedChecksum(corrupt) ^ 1));
        MemorySegment longBacked = MemorySegment.ofArray(new long[Page.SIZE / 8]);
        longBacked.copyFrom(pages[0]);

        measure("verify, checksums on (VALID)", CALLS, i -> PageVerifier.verify(pages[i & 63], i & 63, true));
        measure("verify, checksums off (header only)", CALLS, i -> PageVerifier.verify(pages[i & 63], i & 63, false));
        measure("verify, all-zero page (VALID_ZERO)", CALLS, i -> PageVerifier.verify(zero, i, true));
        measure("verify, BAD_CHECKSUM", CALLS, i -> PageVerifier.verify(corrupt, 0, true));
        measure("pool.asSlice + verify (callback shape)", CALLS,
                i -> PageVerifier.verify(pool.asSlice((long) (i & 63) * Page.SIZE, Page.SIZE), i & 63, true));
        measure("Page.checksum, long[]-backed heap page", CALLS / 50, i -> Page.checksum(longBacked, 0));
    }

    private static void measure(String name, int calls, Scenario scenario) {
        com.sun.management.ThreadMXBean threads =
                (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long thread = Thread.currentThread().threadId();
        long sink = 0;
        for (int round = 0; round < 3; round++) { // warm-up: C1, then C2
            for (int i = 0; i < calls; i++) {
                sink += scenario.run(i);
            }
        }
        long[] nanos = new long[ROUNDS];
        long maxBytes = 0;
        for (int round = 0; round < ROUNDS; round++) {
            long bytesBefore = threads.getThreadAllocatedBytes(thread);
            long start = System.nanoTime();
            for (int i = 0; i < calls; i++) {
                sink += scenario.run(i);
            }
            nanos[round] = System.nanoTime() - start;
            maxBytes = Math.max(maxBytes, threads.getThreadAllocatedBytes(thread) - bytesBefore);
        }
        java.util.Arrays.sort(nanos);
        System.out.printf("%-40s median %7.1f ns/call (min %7.1f)  allocated <= %d bytes per %d calls  [%d]%n",
                name, (double) nanos[ROUNDS / 2] / calls, (double) nanos[0] / calls, maxBytes, calls, sink & 1);
    }
}
