package org.pageio.bufmgr;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.pageio.api.IoHandle;
import org.pageio.api.IoMethod;
import org.pageio.bufmgr.smgr.SmgrRelation;
import org.pageio.bufmgr.smgr.StorageManager;
import org.pageio.posix.CallState;

/**
 * A live swap to a method that bypasses the page cache, and back: from the first I/O that reaches
 * the new method, every descriptor it is handed is in O_DIRECT mode ({@code /proc/self/fdinfo}) and
 * the storage manager already opens with O_DIRECT; after the swap back every descriptor is buffered
 * again. The method here does not put descriptors into O_DIRECT mode itself (as {@code direct}
 * does), so only the buffer manager's order of publication can make it so.
 */
class DirectSwapTest extends PoolTestBase {

    /** Inline real I/O; bypasses the page cache; records every I/O that met a buffered descriptor. */
    static class Checking implements IoMethod {
        final StorageManager smgr;
        final ConcurrentLinkedQueue<String> violations = new ConcurrentLinkedQueue<>();
        final AtomicLong checked = new AtomicLong();
        final java.util.Set<Integer> ops = java.util.concurrent.ConcurrentHashMap.newKeySet();

        Checking(StorageManager smgr) {
            this.smgr = smgr;
        }

        @Override
        public String name() {
            return "test-direct";
        }

        @Override
        public boolean bypassesPageCache() {
            return true;
        }

        @Override
        public boolean needsSynchronousExecution(IoHandle h) {
            return true;
        }

        @Override
        public void performSynchronously(IoHandle h, CallState cs) {
            checked.incrementAndGet();
            ops.add(h.op());
            try {
                if (!DirectStorageTest.openedWithODirect(h.fd())) {
                    violations.add(IoHandle.opName(h.op()) + " of " + h.target().describe(h.targetData())
                            + " on a buffered descriptor");
                }
            } catch (Exception e) {
                violations.add("fdinfo of descriptor " + h.fd() + ": " + e);
            }
            if (!smgr.directIo()) {
                violations.add("an I/O reached the method before the storage manager opened with O_DIRECT");
            }
            h.performSynchronously(cs);
        }

        @Override
        public int submit(IoHandle[] handles, int count) {
            throw new AssertionError("inline method");
        }
    }

    @Test
    void fromTheFirstIoOfTheNewMethodEveryDescriptorIsODirectAndBufferedAgainAfter() throws Exception {
        TestMethods.Threaded buffered = new TestMethods.Threaded(2);
        closeLast.add(buffered);
        pool(buffered, small().segmentBlocks(4).build());
        Checking direct = new Checking(smgr);
        SmgrRelation before = relation(77001, 16); // four segments, all opened buffered by the load
        SmgrRelation written = relation(77004, 8);
        scan(before, 77001, 0, 16);
        assertFalse(DirectStorageTest.openedWithODirect(before.fd(0)));

        core.swapMethod(direct, TimeUnit.SECONDS.toNanos(10));
        assertTrue(smgr.directIo());
        for (long b = 0; b < 16; b += 4) {
            assertTrue(DirectStorageTest.openedWithODirect(before.fd(b)), "segment of block " + b + " switched at the swap");
        }
        try (BufferSession s = pool.openSession("client")) {
            assertEquals(0, pool.evictAll(s).skipped());
            BufferWriteTest.modify(s, written, 77004, 1, 2, 5); // writes and fsyncs through the new method too
        }
        scan(before, 77001, 0, 16);
        randomReads(before, 77001, 1, 40);
        pool.checkpoint();
        BufferWriteTest.assertOnDisk(written, 77004, 1, 2, 5);
        assertTrue(direct.ops.containsAll(List.of(IoHandle.OP_READV, IoHandle.OP_WRITEV, IoHandle.OP_FSYNC)),
                "reads, writes and fsyncs reached the method: " + direct.ops);
        assertTrue(direct.violations.isEmpty(), direct.violations.toString());

        core.swapMethod(buffered, TimeUnit.SECONDS.toNanos(10));
        assertFalse(smgr.directIo());
        for (long b = 0; b < 16; b += 4) {
            assertFalse(DirectStorageTest.openedWithODirect(before.fd(b)), "segment of block " + b + " buffered again");
        }
        try (BufferSession s = pool.openSession("client")) {
            assertEquals(0, pool.evictAll(s).skipped());
        }
        randomReads(before, 77001, 2, 40);
        assertEquals(0, pool.pinnedBuffers());
    }

    /**
     * Sessions read through twenty swaps back and forth, opening segments as they first reach them
     * (the windows of a swap included): no I/O of the method that bypasses the page cache meets a
     * buffered descriptor, every page reads right.
     */
    @Test
    void readsRunningThroughSwapsNeverGiveTheDirectMethodABufferedDescriptor() throws Exception {
        TestMethods.Threaded buffered = new TestMethods.Threaded(2);
        closeLast.add(buffered);
        pool(buffered, small().sharedBuffers(32).segmentBlocks(2).build());
        Checking direct = new Checking(smgr);
        SmgrRelation rel = relation(77002, 96);
        rel.close(); // segments open lazily, as the sessions reach them
        AtomicBoolean done = new AtomicBoolean();
        ExecutorService readers = Executors.newFixedThreadPool(3);
        List<Future<?>> all = new ArrayList<>();
        try {
            for (int i = 0; i < 3; i++) {
                int seed = i;
                all.add(readers.submit(() -> {
                    Random rnd = new Random(seed);
                    try (BufferSession s = pool.openSession("reader-" + seed)) {
                        while (!done.get()) {
                            long b = rnd.nextInt(96);
                            int buf = s.readBuffer(rel, b, null);
                            String wrong = TestPages.check(77002, b, s.page(buf));
                            s.releaseBuffer(buf);
                            if (wrong != null) {
                                throw new AssertionError(wrong);
                            }
                        }
                    }
                    return null;
                }));
            }
            for (int i = 0; i < 20; i++) {
                core.swapMethod(i % 2 == 0 ? direct : buffered, TimeUnit.SECONDS.toNanos(10));
                long reads = totalReadBlocks();
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60); // a bound against a hang, never a result
                while (totalReadBlocks() < reads + 8 && System.nanoTime() < deadline && !anyDone(all)) {
                    Thread.onSpinWait(); // the readers read through this method before the next swap
                }
            }
            done.set(true);
            for (Future<?> f : all) {
                f.get(60, TimeUnit.SECONDS);
            }
        } finally {
            done.set(true);
            readers.shutdownNow();
        }
        assertTrue(direct.checked.get() > 0, "reads reached the method that bypasses the page cache");
        assertTrue(direct.violations.isEmpty(), direct.violations.toString());
        assertFalse(smgr.directIo());
        assertEquals(0, pool.pinnedBuffers());
    }

    private static boolean anyDone(List<Future<?>> all) {
        return all.stream().anyMatch(Future::isDone);
    }

    /** A swap that cannot happen (the method is not available) leaves the storage manager buffered. */
    @Test
    void aRefusedSwapLeavesTheDescriptorsBuffered() throws Exception {
        TestMethods.Threaded buffered = new TestMethods.Threaded(1);
        closeLast.add(buffered);
        pool(buffered, small().segmentBlocks(4).build());
        SmgrRelation rel = relation(77003, 8);
        IoMethod unavailable = new Checking(smgr) {
            @Override
            public Availability availability() {
                return Availability.unavailable("not here");
            }
        };
        try {
            core.swapMethod(unavailable, TimeUnit.SECONDS.toNanos(1));
            throw new AssertionError("swapped to an unavailable method");
        } catch (IllegalArgumentException expected) {
            assertTrue(expected.getMessage().contains("not here"), expected.getMessage());
        }
        assertFalse(smgr.directIo());
        assertFalse(DirectStorageTest.openedWithODirect(rel.fd(0)));
        scan(rel, 77003, 0, 8);
    }
}
